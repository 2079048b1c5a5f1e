"""A topic's census for people (text) and for CI (a :class:`Report` every format renders), made
from the census document itself (docs/census.md): what the json format prints is what these
read, so the three never disagree."""

from __future__ import annotations

import datetime as dt
from typing import Any

from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.errors import Location
from schemacli.output import Case, Report

SIDES = ("keys", "values")


def when(ms: int | None) -> str:
    """``ms`` since the epoch as ``2026-11-26 01:02:03 UTC``; ``-`` for none."""
    if ms is None:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def mode_text(doc: dict[str, Any]) -> str:
    mode = doc["mode"]
    if mode["whole"]:
        return "whole topic"
    parts = []
    if mode["sample"] is not None:
        parts.append(f"first {mode['sample']} per partition")
    if mode["since_ms"] is not None:
        parts.append(f"since {when(mode['since_ms'])}")
    if mode["until_ms"] is not None:
        parts.append(f"until {when(mode['until_ms'])}")
    return ", ".join(parts)


def retention_text(doc: dict[str, Any]) -> str:
    r = doc["retention"]
    ms = r["retention_ms"]
    kept = "unknown" if ms is None else ("forever" if ms < 0 else _duration(ms))
    size = r["retention_bytes"]
    by_size = "" if size is None or size < 0 else f", at most {size} bytes per partition"
    return f"cleanup.policy={r['cleanup_policy'] or '?'}, retention {kept}{by_size}"


def _duration(ms: int) -> str:
    seconds = ms // 1000
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s" if ms % 1000 == 0 else f"{ms}ms"


def version_name(v: dict[str, Any]) -> str:
    if not v["known"]:
        return f"id {v['id']} (unknown)"
    also = "".join(f", also {a['subject']} v{a['version']}" for a in v["also"])
    return f"{v['subject']} v{v['version']} (id {v['id']}{also})"


def ranges_text(ranges: list[dict[str, Any]]) -> str:
    """Partitions and offsets, e.g. ``p0 offsets 0-41, p2 offsets 7-7``."""
    return ", ".join(f"p{r['partition']} offsets {r['first_offset']}-{r['last_offset']}"
                     for r in ranges)  # fmt: skip


def text(doc: dict[str, Any]) -> str:
    """The census for a terminal, ending with a newline."""
    total = doc["totals"]["messages"]
    parts = doc["partitions"]
    lines = [
        f"census of {doc['topic']} at {when(doc['scanned_at_ms'])}: {total} record(s) read in "
        f"{len(parts)} partition(s), {mode_text(doc)}"
        + ("" if doc["complete"] else " (INCOMPLETE: --read-timeout passed first)"),
        f"  {retention_text(doc)}",
    ]
    if doc.get("engine"):
        roads = {"jvm": "Kafka's Java consumer", "spark": "a Spark job"}
        road = roads.get(doc["engine"], "librdkafka")
        lines.append(f"  read by the {doc['engine']} engine ({road}) in {doc['duration_s']:g} s")
    source = doc["resolved_by"]["source"]
    lines.append(
        f"  ids named by the {source} ({doc['resolved_by']['where']})"
        if source
        else "  ids named by nobody: give --registry, or `schemacli pull` into the store"
    )
    for side in SIDES:
        s = doc[side]
        lines.append(f"{side}:")
        for v in s["versions"]:
            lines.append(f"  {v['count']:>10}  {version_name(v)}")
            lines.append(
                f"              written {when(v['first_timestamp_ms'])} .. "
                f"{when(v['last_timestamp_ms'])}; ages out from "
                f"{when(v['oldest_ages_out_at_ms'])}, all by {when(v['all_aged_out_at_ms'])}"
                if v["all_aged_out_at_ms"] is not None
                else f"              written {when(v['first_timestamp_ms'])} .. "
                f"{when(v['last_timestamp_ms'])}; kept until deleted ({_why_kept(doc)})"
            )
            lines.append(f"              {ranges_text(v['partitions'])}")
        for name, label in (("unframed", "unframed"), ("null", _null_label(side))):
            if s[name]["count"]:
                where = ranges_text(s[name]["partitions"])
                lines.append(f"  {s[name]['count']:>10}  {label}: {where}")
        if not total:
            lines.append("           0  (no records)")
    return "\n".join(lines) + "\n"


def _null_label(side: str) -> str:
    return "tombstones (null value)" if side == "values" else "null keys"


def _why_kept(doc: dict[str, Any]) -> str:
    r = doc["retention"]
    if r["retention_ms"] is not None and r["retention_ms"] < 0:
        return "retention.ms=-1"
    if r["cleanup_policy"] and "delete" not in r["cleanup_policy"]:
        return f"cleanup.policy={r['cleanup_policy']}"
    return "no timestamp or retention"


def report(doc: dict[str, Any]) -> Report:
    """One case per side, with a warning for unframed records and one per unknown id."""
    topic = doc["topic"]
    cases = []
    for side in SIDES:
        s = doc[side]
        source = f"kafka:{topic}#{side}"
        findings: list[Finding] = []
        if s["unframed"]["count"]:
            findings.append(
                Finding(
                    kind=Kind.CENSUS_UNFRAMED,
                    message=f"{s['unframed']['count']} record {side} of {topic} have no Confluent "
                    f"header: {ranges_text(s['unframed']['partitions'])}.",
                    location=Location(source=source, pointer=f"/{side}/unframed"),
                    hint="Expected when this side is not Avro (string keys, say); otherwise "
                    "find the producer that writes without a schema registry serializer.",
                    severity=Severity.WARNING,
                    new=s["unframed"]["count"],
                )
            )
        for i, v in enumerate(s["versions"]):
            if v["known"]:
                continue
            findings.append(
                Finding(
                    kind=Kind.CENSUS_UNKNOWN_ID,
                    message=f"{v['count']} record {side} of {topic} were written with schema id "
                    f"{v['id']}, which the {doc['resolved_by']['source'] or 'registry'} does "
                    f"not know: {ranges_text(v['partitions'])}.",
                    location=Location(source=source, pointer=f"/{side}/versions/{i}"),
                    hint='A consumer cannot decode them ("schema not found"): the version may '
                    "have been deleted, or the producer used another registry.",
                    severity=Severity.WARNING,
                    new=v["id"],
                )
            )
        cases.append(
            Case(
                name=f"{topic} {side}",
                verdict="compatible",
                findings=tuple(findings),
                columns=(
                    ("framed", s["framed"]),
                    ("versions", len(s["versions"])),
                    ("unframed", s["unframed"]["count"]),
                    ("null", s["null"]["count"]),
                ),
                source=source,
            )
        )
    return Report(
        command="census",
        title=f"census of {topic}: {doc['totals']['messages']} record(s), {mode_text(doc)}",
        verdict="compatible",
        cases=tuple(cases),
    )
