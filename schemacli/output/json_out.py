"""JSON for machines: the whole report, every finding with its location, one document."""

from __future__ import annotations

import json
from typing import Any

from schemacli.contracts.findings import Finding
from schemacli.errors import Location
from schemacli.output import Report, to_jsonable


def render(report: Report) -> str:
    """The report as one JSON object (stable key order), ending with a newline."""
    payload: dict[str, Any] = {
        "command": report.command,
        "title": report.title,
        "verdict": report.verdict,
        "cases": [
            {
                "name": case.name,
                "verdict": case.verdict,
                **({"source": case.source} if case.source else {}),
                **{key: to_jsonable(value) for key, value in case.columns},
                "findings": [finding_json(f) for f in case.findings],
            }
            for case in report.cases
        ],
    }
    if report.command == "diff":
        payload["changes"] = [
            {
                "kind": c.kind,
                "message": c.message,
                "location": location_json(c.location),
                "old": to_jsonable(c.old),
                "new": to_jsonable(c.new),
            }
            for c in report.changes
        ]
    payload["notes"] = list(report.notes)
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def location_json(loc: Location) -> dict[str, Any]:
    return {"source": loc.source, "pointer": loc.pointer, "line": loc.line, "column": loc.column}


def finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "kind": finding.kind,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "subject": finding.subject,
        "location": location_json(finding.location),
        "old": to_jsonable(finding.old),
        "new": to_jsonable(finding.new),
    }
