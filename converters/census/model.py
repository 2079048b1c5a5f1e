"""The census's counts and the document made of them (docs/census.md, format 1).

Pure: no Kafka, no registry. A partition's records are tallied into :class:`PartitionTally`
(one :class:`Span` per kind of key and of value); :func:`document` joins the partitions, the
names of the ids and the topic's retention into the one JSON document every output reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# the roads a scan of a topic can take (``topics census`` and ``topics check``'s ``--engine``);
# ``auto`` is the JVM where it can run, else Python
ENGINES = ("auto", "jvm", "python", "spark")

FORMAT = 1
NULL = "null"  # no key / no value (a null value is a tombstone)
UNFRAMED = "unframed"  # bytes without the Confluent header
HEADER = 5  # magic byte 0 + 4-byte big-endian schema id

Kind = int | str  # a writer schema id, NULL or UNFRAMED


def classify(head: bytes | None) -> Kind:
    """What a key's or value's first bytes say: its writer schema id (magic byte 0 and at least
    5 bytes), :data:`NULL` (no bytes at all) or :data:`UNFRAMED` (anything else, empty too)."""
    if head is None:
        return NULL
    if len(head) >= HEADER and head[0] == 0:
        return int.from_bytes(head[1:HEADER], "big")
    return UNFRAMED


@dataclass
class Span:
    """Records of one kind in one partition: how many, and the first and the last of them."""

    count: int = 0
    first_offset: int = -1
    last_offset: int = -1
    first_timestamp_ms: int | None = None
    last_timestamp_ms: int | None = None

    def add(
        self,
        count: int,
        first: tuple[int, int | None],
        last: tuple[int, int | None],
    ) -> None:
        """Add a run of ``count`` records from ``first`` to ``last`` ((offset, timestamp)), later
        in the partition than every run added before."""
        if self.count == 0:
            self.first_offset, self.first_timestamp_ms = first
        self.last_offset, self.last_timestamp_ms = last
        self.count += count

    def join(self, other: Span) -> None:
        """Fold in ``other``: records of the same kind in the same partition from anywhere in it
        (pieces of a partition counted apart, in any order); the first and the last by offset
        keep their timestamps."""
        if other.count == 0:
            return
        if self.count == 0 or other.first_offset < self.first_offset:
            self.first_offset, self.first_timestamp_ms = (
                other.first_offset,
                other.first_timestamp_ms,
            )
        if self.count == 0 or other.last_offset > self.last_offset:
            self.last_offset, self.last_timestamp_ms = other.last_offset, other.last_timestamp_ms
        self.count += other.count

    def as_range(self, partition: int) -> dict[str, Any]:
        return {
            "partition": partition,
            "count": self.count,
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "first_timestamp_ms": self.first_timestamp_ms,
            "last_timestamp_ms": self.last_timestamp_ms,
        }


@dataclass
class PartitionTally:
    """One partition's census: its watermarks, the range read, and a span per kind of key and
    of value."""

    partition: int
    low: int
    high: int
    start: int
    end: int
    scanned: int = 0
    complete: bool = True
    keys: dict[Kind, Span] = field(default_factory=dict)
    values: dict[Kind, Span] = field(default_factory=dict)


@dataclass(frozen=True)
class Registered:
    """A subject and (registry) version a schema id is registered as."""

    subject: str
    version: int


@dataclass(frozen=True)
class Mode:
    """What the census reads: all of it, or the first ``sample`` records of each partition of
    the ``[since_ms, until_ms]`` time range."""

    sample: int | None = None
    since_ms: int | None = None
    until_ms: int | None = None

    @property
    def whole(self) -> bool:
        return self.sample is None and self.since_ms is None and self.until_ms is None


@dataclass(frozen=True)
class Retention:
    """The topic's settings that decide when its data goes (None: the broker did not say)."""

    retention_ms: int | None = None
    retention_bytes: int | None = None
    cleanup_policy: str | None = None
    segment_ms: int | None = None

    def ages_out(self, timestamp_ms: int | None) -> int | None:
        """When a record written at ``timestamp_ms`` may be deleted by retention; None when it
        is kept forever (retention.ms -1), when only compaction removes it (cleanup.policy
        ``compact`` alone), or when the time is unknown."""
        if timestamp_ms is None or self.retention_ms is None or self.retention_ms < 0:
            return None
        policies = {p.strip() for p in (self.cleanup_policy or "delete").split(",")}
        if "delete" not in policies:
            return None
        return timestamp_ms + self.retention_ms


def iso_ms(ms: int | None) -> str | None:
    """``ms`` since the epoch as ISO-8601 UTC with milliseconds (``2026-11-26T01:02:03.456Z``)."""
    if ms is None:
        return None
    when = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def preferred_subject(topic: str, side: str) -> str:
    """The subject TopicNameStrategy gives the topic's keys or values."""
    return f"{topic}-{'key' if side == 'keys' else 'value'}"


def document(
    *,
    topic: str,
    bootstrap: str,
    scanned_at_ms: int,
    duration_s: float,
    mode: Mode,
    retention: Retention,
    partitions: Iterable[PartitionTally],
    names: Mapping[int, list[Registered]],
    resolved_by: Mapping[str, str | None],
) -> dict[str, Any]:
    """The census document (docs/census.md): ``names`` maps each id the registry or the store
    knows to the subjects and versions it is registered as; an id it does not hold is unknown."""
    parts = sorted(partitions, key=lambda t: t.partition)
    total = sum(t.scanned for t in parts)
    return {
        "census_format": FORMAT,
        "topic": topic,
        "bootstrap": bootstrap,
        "scanned_at": iso_ms(scanned_at_ms),
        "scanned_at_ms": scanned_at_ms,
        "duration_s": round(duration_s, 3),
        "mode": {
            "whole": mode.whole,
            "sample": mode.sample,
            "since_ms": mode.since_ms,
            "until_ms": mode.until_ms,
        },
        "complete": all(t.complete for t in parts),
        "resolved_by": dict(resolved_by),
        "retention": {
            "retention_ms": retention.retention_ms,
            "retention_bytes": retention.retention_bytes,
            "cleanup_policy": retention.cleanup_policy,
            "segment_ms": retention.segment_ms,
        },
        "partitions": [
            {
                "partition": t.partition,
                "low": t.low,
                "high": t.high,
                "start": t.start,
                "end": t.end,
                "scanned": t.scanned,
            }
            for t in parts
        ],
        "totals": {"messages": total},
        "keys": _side("keys", topic, parts, names, retention),
        "values": _side("values", topic, parts, names, retention),
    }


def _side(
    side: str,
    topic: str,
    parts: list[PartitionTally],
    names: Mapping[int, list[Registered]],
    retention: Retention,
) -> dict[str, Any]:
    by_kind: dict[Kind, list[dict[str, Any]]] = {}
    for tally in parts:
        spans: dict[Kind, Span] = getattr(tally, side)
        for kind, span in spans.items():
            if span.count:
                by_kind.setdefault(kind, []).append(span.as_range(tally.partition))
    ids = sorted(k for k in by_kind if isinstance(k, int))
    versions = [_version(i, by_kind[i], names.get(i), preferred_subject(topic, side), retention)
                for i in ids]  # fmt: skip
    versions.sort(key=lambda v: (not v["known"], v["subject"] or "", v["version"] or 0, v["id"]))
    unknown = [v["id"] for v in versions if not v["known"]]
    return {
        "framed": sum(v["count"] for v in versions),
        "versions": versions,
        "unknown_ids": {
            "count": sum(v["count"] for v in versions if not v["known"]),
            "ids": sorted(unknown),
        },
        "unframed": _ranges(by_kind.get(UNFRAMED, [])),
        "null": _ranges(by_kind.get(NULL, [])),
    }


def _ranges(ranges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"count": sum(r["count"] for r in ranges), "partitions": ranges}


def _version(
    schema_id: int,
    ranges: list[dict[str, Any]],
    registered: list[Registered] | None,
    preferred: str,
    retention: Retention,
) -> dict[str, Any]:
    chosen, also = choose(registered or [], preferred)
    firsts = [r["first_timestamp_ms"] for r in ranges if r["first_timestamp_ms"] is not None]
    lasts = [r["last_timestamp_ms"] for r in ranges if r["last_timestamp_ms"] is not None]
    first = min(firsts, default=None)
    last = max(lasts, default=None)
    return {
        "id": schema_id,
        "known": chosen is not None,
        "subject": chosen.subject if chosen else None,
        "version": chosen.version if chosen else None,
        "also": [{"subject": r.subject, "version": r.version} for r in also],
        "count": sum(r["count"] for r in ranges),
        "first_timestamp_ms": first,
        "last_timestamp_ms": last,
        "oldest_ages_out_at_ms": retention.ages_out(first),
        "all_aged_out_at_ms": retention.ages_out(last),
        "partitions": ranges,
    }


def choose(
    registered: list[Registered], preferred: str
) -> tuple[Registered | None, list[Registered]]:
    """The subject/version to name an id by (the topic's own subject first, else the first by
    name and version) and the others."""
    ordered = sorted(registered, key=lambda r: (r.subject != preferred, r.subject, r.version))
    if not ordered:
        return None, []
    return ordered[0], ordered[1:]
