"""The converter's counts: each finished batch's observed metrics, folded once into progress.json.

The driver's main thread reads the query's own progress (``lastProgress``, and
``recentProgress`` when it fell behind) between waits, and once more after the query ended.
No Python ``StreamingQueryListener`` is involved on purpose: its events reach Python through a
Py4J callback on Spark's asynchronous listener bus, so the last batch's event can still be in
flight when the query has ended and the driver exits, and a slow first callback then dies with
"Received empty command" and the batch is never counted. Reading progress synchronously makes the
counts independent of timing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from converters.statefile import read_state

METRICS = "schemacli_converter"  # the name of the job's observed metrics
KINDS = ("converted", "dead_letter", "skipped", "tombstone")


class ProgressFile:
    """Folds per-batch observed metrics into totals, once per batch id, in ``progress.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {"totals": {"in": 0, **{k: 0 for k in KINDS}}, "last_batch": -1}
        self.data.update(read_state(path))

    @property
    def last_batch(self) -> int:
        return int(self.data.get("last_batch", -1))

    def record(self, progress: dict[str, Any]) -> bool:
        """Fold one progress report in; True when it added a batch not counted before."""
        batch = int(progress.get("batchId", -1))
        metrics = (progress.get("observedMetrics") or {}).get(METRICS) or {}
        added = batch > self.last_batch and bool(metrics)
        if added:
            for key in self.data["totals"]:
                self.data["totals"][key] += int(metrics.get(key) or 0)
            self.data["last_batch"] = batch
        self.data.update(
            updated=time.time(),
            input_rows_per_second=progress.get("inputRowsPerSecond"),
            processed_rows_per_second=progress.get("processedRowsPerSecond"),
            last_progress={
                k: progress.get(k) for k in ("batchId", "numInputRows", "timestamp", "sources")
            },
        )
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=2, default=str))
        os.replace(tmp, self.path)
        return added

    def line(self) -> str:
        """The cumulative progress line the job prints after each counted batch."""
        t = self.data["totals"]
        return (
            f"batch {self.last_batch}: in {t['in']} converted {t['converted']} "
            f"dead-lettered {t['dead_letter']} skipped {t['skipped']}"
        )


class Query(Protocol):
    """What the follower needs of a ``pyspark.sql.streaming.StreamingQuery``."""

    @property
    def lastProgress(self) -> Any: ...  # noqa: N802 (Spark's name)

    @property
    def recentProgress(self) -> list[Any]: ...  # noqa: N802 (Spark's name)


def _as_dict(progress: Any) -> dict[str, Any]:
    # pyspark's StreamingQueryProgress renders itself as the JVM's JSON; a dict passes as it is
    return json.loads(progress.json) if hasattr(progress, "json") else dict(progress)


def follow(query: Query, progress: ProgressFile, *, out: Any = None) -> int:
    """Record every batch the query finished since the last call, in order; returns how many.

    ``lastProgress`` is enough while the driver keeps up (one batch per wait); when it shows a
    batch beyond the next one, the query's ``recentProgress`` (its last 100 reports) fills the gap.
    """
    out = out if out is not None else sys.stderr
    last = query.lastProgress
    if last is None:
        return 0
    report = _as_dict(last)
    if int(report.get("batchId", -1)) > progress.last_batch + 1:
        reports = [_as_dict(p) for p in query.recentProgress]
    else:
        reports = [report]
    added = 0
    for report in sorted(reports, key=lambda r: int(r.get("batchId", -1))):
        if progress.record(report):
            added += 1
            print(progress.line(), file=out, flush=True)
    return added
