"""The converter's counts: each finished batch's observed metrics, folded once into progress.json.

The driver's main thread reads the query's own progress (``lastProgress``, and
``recentProgress`` when it fell behind) between waits, and once more after the query ended.
No Python ``StreamingQueryListener`` is involved on purpose: its events reach Python through a
Py4J callback on Spark's asynchronous listener bus, so the last batch's event can still be in
flight when the query has ended and the driver exits, and a slow first callback then dies with
"Received empty command" and the batch is never counted. Reading progress synchronously makes the
counts independent of timing.

Beside the totals, each batch leaves one line in ``progress-history.jsonl`` (when, the batch id,
the totals after it, the v2 lag Spark saw): the counts and lag over time that ``schemacli report``
draws. The file is bounded: past ``HISTORY_LIMIT`` bytes its older half is thinned to every other
point, so a converter that runs for months keeps a coarse past and a fine present.
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
HISTORY = "progress-history.jsonl"
HISTORY_LIMIT = 2 * 1024 * 1024  # bytes; then the older half is thinned


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
        if batch > int(self.data.get("history_batch", -1)):
            # one point per batch, in both delivery modes: the exactly-once writer's counts were
            # committed (``committed``) before Spark reports the batch's progress
            self.data["history_batch"] = batch
            append_history(
                self.path.parent / HISTORY,
                {
                    "time": self.data["updated"],
                    "batch": batch,
                    "rows": progress.get("numInputRows"),
                    "totals": dict(self.data["totals"]),
                    "lag": source_lag(progress.get("sources")),
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


def source_lag(sources: Any) -> int | None:
    """Messages the Kafka source had not read when the batch ended: per partition, Spark's
    ``latestOffset`` less its ``endOffset`` (None when the report does not carry both)."""
    if not isinstance(sources, list):
        return None
    lag, seen = 0, False
    for source in sources:
        if not isinstance(source, dict):
            continue
        end, latest = _offsets(source.get("endOffset")), _offsets(source.get("latestOffset"))
        for topic, parts in latest.items():
            for partition, offset in parts.items():
                done = end.get(topic, {}).get(partition)
                if done is not None:
                    lag, seen = lag + max(0, offset - done), True
    return lag if seen else None


def _offsets(value: Any) -> dict[str, dict[str, int]]:
    """Spark's ``{topic: {partition: offset}}`` (a JSON text in pyspark's reports, an object in
    the JVM's); {} for anything else."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if not isinstance(value, dict):
        return {}
    return {
        str(topic): {
            str(p): o for p, o in parts.items() if isinstance(o, int) and not isinstance(o, bool)
        }
        for topic, parts in value.items()
        if isinstance(parts, dict)
    }


def append_history(path: Path, point: dict[str, Any]) -> None:
    """Add one point to the history file; past ``HISTORY_LIMIT`` bytes, first thin the older
    half to every other point (rewritten through a temporary file and a rename)."""
    line = json.dumps(point, default=str) + "\n"
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = 0
    if size + len(line) > HISTORY_LIMIT:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        half = len(lines) // 2
        kept = lines[:half][::2] + lines[half:]
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text("".join(kept) + line, encoding="utf-8")
        os.replace(tmp, path)
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)


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
