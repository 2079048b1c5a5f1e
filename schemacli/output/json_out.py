"""JSON for machines: the whole report, every finding with its location, one document."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from schemacli import redact
from schemacli.contracts.findings import Finding
from schemacli.contracts.fixes.edits import Fix
from schemacli.errors import Location, RegistryError, SchemacliError, shown
from schemacli.output import OutputFormat, Report, to_jsonable


def render(report: Report, *, color: bool = False) -> str:
    """The report as one JSON object (stable key order), ending with a newline (``color``:
    ignored, as by every machine format)."""
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


def fix_json(fix: Fix) -> dict[str, Any]:
    """A fix: title, applicability, and its edits (1-based line:col, end exclusive); ``source``
    when the edits are in another file than the finding's location."""
    return {
        "title": fix.title,
        "applicability": fix.applicability.value,
        **({"source": fix.source} if fix.source else {}),
        "edits": [
            {
                "start": {"line": e.start_pos[0], "column": e.start_pos[1]},
                "end": {"line": e.end_pos[0], "column": e.end_pos[1]},
                "text": e.text,
            }
            for e in fix.edits
        ],
    }


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as JSON; ``fixes`` (a list of fix objects) only when it has any, ``reader``
    only for a declared reader's verdict."""
    fixes = {"fixes": [fix_json(fix) for fix in finding.fixes]} if finding.fixes else {}
    out = {
        "kind": finding.kind,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "subject": finding.subject,
        "location": location_json(finding.location),
        "old": to_jsonable(finding.old),
        "new": to_jsonable(finding.new),
        **fixes,
    }
    if finding.reader is not None:  # a declared reader's verdict (docs/readers.md)
        ref = finding.reader
        out["reader"] = {
            "consumer": ref.consumer,
            "owner": ref.owner,
            "contact": ref.contact,
            "groups": list(ref.groups),
            "location": location_json(ref.location),
        }
    return out


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """``err`` as a JSON document ending with a newline; ``compact``: on one line."""
    return error_json(err, compact=compact) + "\n"


def error_json(err: SchemacliError, *, compact: bool = False) -> str:
    """``err`` as a JSON document (no newline); ``compact``: on one line, as a stream of
    documents (a ``--watch``) needs. Reads the error through :func:`shown`: secrets and URL
    user info masked before anything is serialised."""
    err = shown(err)
    loc = err.location
    payload = {
        "error": {
            "type": type(err).__name__,
            "message": err.message,
            "hint": err.hint,
            "exit_code": int(err.exit_code),
            "location": None if loc is None else dataclasses.asdict(loc),
        }
    }
    if isinstance(err, RegistryError):
        payload["error"].update(
            status=err.status, error_code=err.error_code, server_message=err.server_message
        )
    return json.dumps(payload, separators=(",", ":")) if compact else json.dumps(payload, indent=2)


def emit_json(data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` (dataclasses and tuples allowed) as JSON to stdout (``indent=None``: one
    line, for a stream of documents)."""
    plain = json.loads(json.dumps(data, default=_default))  # then every string is redacted
    click.echo(json.dumps(redact.scrub(plain), indent=indent, ensure_ascii=False))


def _default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def is_json(output: OutputFormat | str | None) -> bool:
    """JSON for machines; every other format (text, and junit/github meant for check/gate)
    prints the text form."""
    return output is not None and OutputFormat(output) is OutputFormat.json
