"""Close the migration window: refuse while v1 has dependents, drain the converter, stop it, and
leave a final report beside its state.

``finish`` looks at v1's dependents twice (``interval`` s apart, so a group that reads shows as
moving); any active v1 consumer group or direct v1 write refuses (CheckFailed, exit 1, each
reason listed) unless ``force``. Then the window is *draining*: it waits until the converter has
read every v2 message (lag 0), stops it (SIGTERM after its batch), counts the dead letters by
error, marks the window *finished* and writes ``final-report.json`` and ``final-report.txt``.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping as AnyMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from converters.census.guard import kept_because, stamp
from converters.census.model import Mode
from converters.census.take import take_census
from converters.kafka import topicend
from converters.kafka.settings import client_config
from converters.mapping.model import Mapping
from converters.ops.dependents import Dependents
from converters.ops.status import dependents_of, status
from converters.ops.stop import stop
from converters.ops.window import advance, read_window
from converters.pipeline.headers import ERROR_HEADER
from converters.state import write_state, write_text
from schemacli.errors import CheckFailed

DEAD_LETTER_SCAN = 100_000


@dataclass(frozen=True)
class FinalReport:
    v2_topic: str
    v1_topic: str
    dead_letter_topic: str | None
    window_start: float | None
    window_end: float
    totals: dict[str, int]
    dead_letters_by_error: dict[str, int]
    moved_groups: list[str]
    forced: bool = False
    overridden: list[str] = field(default_factory=list)  # the reasons --force went past
    v1_data: dict[str, Any] | None = None  # what v1 still holds and when it ages out (v1_data_left)

    def text(self) -> str:
        def when(t: float | None) -> str:
            return "-" if t is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))

        t = self.totals
        lines = [
            f"migration {self.v2_topic} -> {self.v1_topic}: finished",
            f"  window: {when(self.window_start)} to {when(self.window_end)}",
            f"  in {t.get('in', 0)}, converted {t.get('converted', 0)}, dead-lettered "
            f"{t.get('dead_letter', 0)}, skipped {t.get('skipped', 0)}",
        ]
        if self.dead_letters_by_error:
            lines.append(f"  dead letters in {self.dead_letter_topic}, by error:")
            for error, count in sorted(self.dead_letters_by_error.items(), key=lambda e: -e[1]):
                lines.append(f"    {count:>7}  {error}")
        moved = ", ".join(self.moved_groups) or "none seen"
        lines.append(f"  consumer groups on v2: {moved}")
        if self.v1_data is not None:
            lines += v1_data_lines(self.v1_data)
        if self.forced:
            lines.append("  finished with --force past:")
            lines += [f"    {reason}" for reason in self.overridden]
        return "\n".join(lines)


V1_CENSUS_TIMEOUT = 300.0  # seconds: the census of v1 says "incomplete" past it


def v1_data_left(
    bootstrap: str,
    topic: str,
    properties: AnyMapping[str, str] | None = None,
    timeout: float = V1_CENSUS_TIMEOUT,
) -> dict[str, Any]:
    """What the v1 topic still holds once nobody writes it: a census of its values (docs/census.md)
    cut to each writer id's count, times and age-out, the unframed and null values, and when
    the last of it ages out (None: kept, see ``kept``)."""
    doc = take_census(bootstrap, topic, mode=Mode(), client=None, store=None,
                      properties=properties, timeout=timeout)  # fmt: skip
    values = doc["values"]
    versions = [
        {k: v[k] for k in ("id", "count", "first_timestamp_ms", "last_timestamp_ms",
                           "oldest_ages_out_at_ms", "all_aged_out_at_ms")}
        for v in values["versions"]
    ]  # fmt: skip
    outs = [v["all_aged_out_at_ms"] for v in versions]
    return {
        "topic": topic,
        "scanned_at": doc["scanned_at"],
        "complete": doc["complete"],
        "records": doc["totals"]["messages"],
        "retention": doc["retention"],
        "versions": versions,
        "unframed": values["unframed"]["count"],
        "tombstones": values["null"]["count"],
        "all_aged_out_at_ms": max(outs) if outs and None not in outs else None,
        "kept": None if not outs or None not in outs else kept_because(doc["retention"]),
    }


def v1_data_lines(data: dict[str, Any]) -> list[str]:
    """The final report's words for :func:`v1_data_left`."""
    partial = "" if data["complete"] else " (read cut short: a lower bound)"
    lines = [f"  v1 data left in {data['topic']}: {data['records']} record(s){partial}"]
    for v in data["versions"]:
        lines.append(
            f"    writer id {v['id']}: {v['count']} record(s), written "
            f"{stamp(v['first_timestamp_ms'])} .. {stamp(v['last_timestamp_ms'])}, ages out "
            f"from {stamp(v['oldest_ages_out_at_ms'])}"
        )
    if data["unframed"] or data["tombstones"]:
        lines.append(f"    unframed {data['unframed']}, tombstones {data['tombstones']}")
    if data["versions"]:
        lines.append(
            f"  v1's data is all aged out by {stamp(data['all_aged_out_at_ms'])}"
            if data["kept"] is None and data["all_aged_out_at_ms"] is not None
            else f"  v1's data is kept until deleted ({data['kept'] or 'unframed or null only'})"
        )
    return lines


def dead_letters_by_error(
    bootstrap: str,
    topic: str,
    limit: int = DEAD_LETTER_SCAN,
    properties: AnyMapping[str, str] | None = None,
) -> dict[str, int]:
    """How many dead letters the topic holds for each error (the ``schemacli.error`` header,
    its first line, cut at 120 characters), reading at most ``limit`` messages."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        client_config(
            bootstrap,
            properties,
            {
                "group.id": f"schemacli-finish-{uuid.uuid4().hex[:8]}",  # never commits
                "enable.auto.commit": False,
                # written in transactions: a partition may end in a commit marker, which is
                # never delivered; its end of partition is
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
            },
        )
    )
    counts: Counter[str] = Counter()
    try:
        spans = topicend.ranges(consumer, topic)
        if spans is None:
            return {}
        # a scan, not a proof: what two minutes or ``limit`` messages show is what is said
        with contextlib.suppress(topicend.EndNotReached):
            dead = topicend.read_to_end(consumer, topic, spans, timeout=120, errors="skip")
            for read, msg in enumerate(dead, 1):
                headers = dict(msg.headers() or ())
                error = headers.get(ERROR_HEADER, b"(no error header)")
                text = error.decode("utf-8", "replace") if isinstance(error, bytes) else str(error)
                counts[text.splitlines()[0][:120] if text else "(empty)"] += 1
                if read >= limit:
                    break
    finally:
        consumer.close()
    return dict(counts)


def finish(
    state_dir: Path,
    mapping: Mapping,
    bootstrap: str,
    *,
    force: bool = False,
    window_seconds: float,
    interval: float = 5.0,
    timeout: float = 600.0,
    properties: AnyMapping[str, str] | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> FinalReport:
    """Close the window (see the module docstring). Raises CheckFailed (exit 1) listing the
    reasons while v1 has dependents (unless ``force``), or when the converter cannot drain."""

    v2, v1 = mapping.topics()
    # the state files read as the converter writes them (else an InputError naming the file)
    # before Kafka is asked anything
    status(state_dir, topic=v2, bootstrap=None)
    read_window(state_dir)

    def look() -> Dependents:
        return dependents_of(
            state_dir, bootstrap, v1, v2, window_seconds=window_seconds, properties=properties
        )

    look()
    time.sleep(interval)  # the second look tells a reading group from one with old offsets
    deps = look()
    blockers = deps.blockers()
    if blockers and not force:
        raise CheckFailed(
            f"v1 ({v1}) still has dependents; the converter keeps running:\n  "
            + "\n  ".join(blockers),
            hint="Move them to v2 (or stop them), then run finish again; --force finishes "
            "anyway (they will read or write a topic nobody converts to any more).",
        )
    advance(state_dir, "draining")
    say("draining: waiting for the converter to read every v2 message")
    deadline = time.monotonic() + timeout
    while True:
        st = status(state_dir, topic=v2, bootstrap=bootstrap, properties=properties)
        lag = sum(p.lag or 0 for p in st.partitions)
        if lag == 0:
            break
        if not st.running:
            raise CheckFailed(
                f"the converter is not running and {lag} v2 message(s) are not converted",
                hint="Deploy it again (with --available-now it drains and stops), then finish.",
            )
        if time.monotonic() > deadline:
            raise CheckFailed(
                f"the converter still had {lag} v2 message(s) to convert after {timeout:g} s",
                hint="Give it more time (--timeout), or check its progress with migrate status.",
            )
        time.sleep(1.0)
    if st.running:
        say("drained: stopping the converter")
        stop(state_dir)
    final = status(state_dir, topic=v2, bootstrap=bootstrap, properties=properties)
    window = advance(state_dir, "finished")
    started = (read_window(state_dir) or window).started
    report = FinalReport(
        v2_topic=v2,
        v1_topic=v1,
        dead_letter_topic=mapping.dead_letter_topic,
        window_start=started,
        window_end=window.since["finished"],
        totals=final.totals,
        dead_letters_by_error=(
            dead_letters_by_error(bootstrap, mapping.dead_letter_topic, properties=properties)
            if mapping.dead_letter_topic
            else {}
        ),
        moved_groups=[g.group_id for g in deps.v2_groups],
        forced=bool(blockers),
        overridden=blockers,
        v1_data=v1_data_left(bootstrap, v1, properties),
    )
    write_state(state_dir / "final-report.json", asdict(report))
    write_text(state_dir / "final-report.txt", report.text() + "\n")
    return report
