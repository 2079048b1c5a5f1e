"""A topic's rule check for people (text) and for CI (a :class:`Report` every format renders),
made from the check document itself (docs/quality.md): what the json format prints is what these
read, so the formats never disagree."""

from __future__ import annotations

from typing import Any

from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.errors import Location
from schemacli.output import Case, Report
from schemacli.output.census import mode_text


def _rule_label(name: str | None, index: int) -> str:
    return name if name else f"rule #{index + 1}"


def _at(offsets: list[dict[str, int]]) -> str:
    return ", ".join(f"{o['partition']}:{o['offset']}" for o in offsets)


def _from(doc: dict[str, Any]) -> str:
    where = doc["rules_from"]
    if where.get("file"):
        return f"the contract file {where['file']}"
    return f"{where['subject']} v{where['version']}"


def text(doc: dict[str, Any]) -> str:
    """The check as a person reads it: per writer version, a line per rule."""
    t = doc["totals"]
    lines = [
        f"check of {doc['topic']} against the rules of {_from(doc)} ({doc['rule_mode']}): "
        f"{t['messages']} record(s) read, {mode_text(doc)}; read by the {doc['engine']} engine "
        f"in {doc['duration_s']:.2f} s",
    ]
    if not doc["complete"]:
        lines.append("INCOMPLETE: --read-timeout passed before every partition was read")
    for v in doc["versions"]:
        lines.append(f"{v['subject']} v{v['version']} (id {v['id']}): {v['records']} record(s)")
        if v["undecodable"]:
            at = v["undecodable_at"]
            lines.append(
                f"  {v['undecodable']} could not be decoded (first at {at['partition']}:"
                f"{at['offset']}: {v['decode_error']})"
            )
        for i, r in enumerate(v["rules"]):
            line = (
                f"  {_rule_label(r['name'], i)}: {r['pass']} pass, {r['fail']} fail, "
                f"{r['error']} error"
            )
            if r["skipped"]:
                line += f", {r['skipped']} not run"
            if r["failed_at"]:
                line += f"; failing at {_at(r['failed_at'])}"
            if r["errored_at"]:
                line += f"; erring at {_at(r['errored_at'])} ({r['first_error']})"
            lines.append(line)
    for o in doc["other_ids"]:
        lines.append(f"schema id {o['id']}: {o['count']} record(s), not a version of the subject")
    if t["null"] or t["unframed"]:
        lines.append(f"not checked: {t['null']} tombstone(s), {t['unframed']} unframed")
    lines.append("all records pass" if doc["verdict"] == "pass" else "rules FAILED")
    return "\n".join(lines) + "\n"


def report(doc: dict[str, Any]) -> Report:
    """One case per writer version, with a finding per rule that fails or errs on its records."""
    topic = doc["topic"]
    cases = []
    for vi, v in enumerate(doc["versions"]):
        source = f"kafka:{topic}#{v['subject']}:v{v['version']}"
        findings: list[Finding] = []
        if v["undecodable"]:
            at = v["undecodable_at"]
            findings.append(
                Finding(
                    kind=Kind.CHECK_UNDECODABLE,
                    message=f"{v['undecodable']} record(s) of {topic} say writer {v['subject']} "
                    f"v{v['version']} (id {v['id']}) but do not decode with it (first at "
                    f"{at['partition']}:{at['offset']}: {v['decode_error']}).",
                    location=Location(source=source, pointer=f"/versions/{vi}/undecodable"),
                    hint="A consumer fails on them: find the producer that frames other bytes "
                    "with this id.",
                    new=v["undecodable"],
                )
            )
        for i, r in enumerate(v["rules"]):
            label = _rule_label(r["name"], i)
            expr = doc["rules"][i]["expr"]
            if r["fail"]:
                findings.append(
                    Finding(
                        kind=Kind.CHECK_RULE_FAILED,
                        message=f"{r['fail']} of {v['records']} record(s) written with "
                        f"v{v['version']} fail rule {label!r} ({expr}): at {_at(r['failed_at'])}.",
                        location=Location(source=source, pointer=f"/versions/{vi}/rules/{i}"),
                        hint="A producer running this rule set would refuse them (or send them "
                        "to its DLQ): fix the data or the rule before registering it.",
                        new=r["fail"],
                    )
                )
            if r["error"]:
                findings.append(
                    Finding(
                        kind=Kind.CHECK_RULE_ERROR,
                        message=f"rule {label!r} fails to evaluate on {r['error']} record(s) "
                        f"written with v{v['version']}: {r['first_error']} (at "
                        f"{_at(r['errored_at'])}).",
                        location=Location(source=source, pointer=f"/versions/{vi}/rules/{i}"),
                        hint="An evaluation error is a failure for the serializers: guard the "
                        "expression (has(), a `guard;` prefix) or fix its types.",
                        new=r["error"],
                    )
                )
        bad = any(f.severity is Severity.ERROR for f in findings)
        cases.append(
            Case(
                name=f"{topic} {v['subject']} v{v['version']}",
                verdict="incompatible" if bad else "compatible",
                findings=tuple(findings),
                columns=(
                    ("records", v["records"]),
                    ("failing rules", sum(1 for r in v["rules"] if r["fail"] or r["error"])),
                ),
                source=source,
            )
        )
    others = [
        Finding(
            kind=Kind.CHECK_OTHER_ID,
            message=f"{o['count']} record(s) of {topic} carry schema id {o['id']}, which is not "
            f"a version of {doc['subject']}: not checked.",
            location=Location(source=f"kafka:{topic}", pointer=f"/other_ids/{i}"),
            hint="Another subject writes to this topic (RecordNameStrategy?), or a version was "
            "deleted; check it with --subject.",
            severity=Severity.WARNING,
            new=o["id"],
        )
        for i, o in enumerate(doc["other_ids"])
    ]
    if others:
        cases.append(Case(name=f"{topic} other ids", verdict="compatible", findings=tuple(others)))
    verdict = "compatible" if doc["verdict"] == "pass" else "incompatible"
    return Report(
        command="check",
        title=f"check of {topic}: {doc['totals']['messages']} record(s), {mode_text(doc)}",
        verdict=verdict,
        cases=tuple(cases),
    )
