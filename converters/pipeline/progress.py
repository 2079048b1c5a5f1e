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
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from converters.pipeline.txsink import Counts, totals
from converters.state import read_state

METRICS = "schemacli_converter"  # the name of the job's observed metrics
KINDS = ("converted", "dead_letter", "skipped", "tombstone")


class ProgressFile:
    """Folds per-batch observed metrics into totals, once per batch id, in ``progress.json``;
    or, ``counted_by="transactions"``, keeps the counts the exactly-once writer committed."""

    def __init__(self, path: Path, *, counted_by: str = "observed-metrics") -> None:
        self.path = path
        self.counted_by = counted_by
        self.data: dict[str, Any] = {"totals": {"in": 0, **{k: 0 for k in KINDS}}, "last_batch": -1}
        self.data.update(read_state(path))
        self.data["counted_by"] = counted_by
        self._lock = threading.Lock()  # the batch callback and the main thread both write

    @property
    def last_batch(self) -> int:
        return int(self.data.get("last_batch", -1))

    def record(self, progress: dict[str, Any]) -> bool:
        """Fold one progress report in; True when it added a batch not counted before."""
        batch = int(progress.get("batchId", -1))
        metrics = (progress.get("observedMetrics") or {}).get(METRICS) or {}
        added = batch > self.last_batch and bool(metrics) and self.counted_by != "transactions"
        with self._lock:
            self._record(progress, batch, metrics, added)
        return added

    def committed(self, batch: int, partitions: Mapping[int, Any]) -> None:
        """Take the cumulative counts the writer committed (v2 partition -> ``txsink.Counts``)
        after ``batch`` (-1: read at start) and print the progress line."""
        with self._lock:
            # at start (-1) the broker's word replaces the file's; after a batch it adds to it
            before = {} if batch < 0 else self.data.get("partitions") or {}
            known = {int(p): Counts(**c) for p, c in before.items()}
            known.update(partitions)
            self.data["partitions"] = {str(p): c.as_dict() for p, c in sorted(known.items())}
            self.data["totals"] = totals(known)
            self.data["last_batch"] = max(self.last_batch, batch)
            self.data["updated"] = time.time()
            self._write()
        if batch >= 0:
            print(self.line(), file=sys.stderr, flush=True)

    def _record(
        self, progress: dict[str, Any], batch: int, metrics: dict[str, Any], added: bool
    ) -> None:
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
        self._write()

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=2, default=str))
        os.replace(tmp, self.path)

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
