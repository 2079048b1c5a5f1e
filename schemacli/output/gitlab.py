"""GitLab code quality (``artifacts: reports: codequality:``): a JSON array, one issue a finding.

GitLab reads a subset of the Code Climate issue format: ``description``, ``check_name`` (our
kind), ``fingerprint`` (stable across runs: kind, place and message, not the line, so an
unrelated edit above a finding does not make it "new"), ``severity`` (error -> major, warning ->
minor, a diff's change -> info) and ``location`` (``path`` and ``positions.begin`` line/column;
``lines.begin`` 1 where a finding has no line). ``path`` is the file's path as it stands in the
repository (``\\`` as ``/``), not a percent-encoded URI: GitLab matches it literally against the
merge request's file paths, so ``my schema.avsc`` must stay so to be annotated. A control
character (a newline, an ESC) or a bidi override, which no diff view can match and a page would
render, is written as a visible escape (``\\n``, ``\\x1b``), as on a terminal. GitLab
publishes no JSON schema for it: the tests
validate against one written from GitLab's documentation (tests/fixtures/gitlab-codequality.json).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from schemacli.contracts.findings import Finding, Severity
from schemacli.errors import Location, SchemacliError, error_text, shown
from schemacli.output import Report, fix_label
from schemacli.redact import printable


def _location(location: Location) -> dict[str, Any]:
    path = printable((location.source or ".").replace("\\", "/"))
    if location.line is None:
        return {"path": path, "lines": {"begin": 1}}
    begin = {"line": location.line}
    if location.column is not None:
        begin["column"] = location.column
    return {"path": path, "positions": {"begin": begin}}


def _fingerprint(*parts: str | None) -> str:
    text = "\0".join(p or "" for p in parts)
    # surrogatepass: a file name with an undecodable byte holds a lone surrogate
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _issue(
    description: str, kind: str, severity: str, location: Location, *extra: str | None
) -> dict[str, Any]:
    return {
        "type": "issue",
        "description": description,
        "check_name": kind,
        "fingerprint": _fingerprint(kind, location.source, location.pointer, description, *extra),
        "severity": severity,
        "location": _location(location),
    }


def _finding(finding: Finding) -> dict[str, Any]:
    pointer = finding.location.pointer
    where = f" (at {pointer or '/'})" if pointer is not None else ""
    hint = f"; hint: {finding.hint}" if finding.hint else ""
    severity = "major" if finding.severity is Severity.ERROR else "minor"
    issue = _issue(
        f"{finding.message}{where}{hint}", finding.kind, severity, finding.location, finding.subject
    )
    # The suggestions go into the description, not the fingerprint: a better fix is the same issue.
    issue["description"] += "".join(f"; {fix_label(fix)}" for fix in finding.fixes)
    return issue


def render(report: Report, *, color: bool = False) -> str:
    """The report's findings (and a diff's changes, as info) as a code quality JSON array."""
    issues = [_finding(f) for f in dict.fromkeys(report.findings)]
    issues += [_issue(c.message, c.kind, "info", c.location) for c in report.changes]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """A one-issue report (severity blocker) for a command that could not run at all."""
    text = error_text(err)
    issue = _issue(text, type(err).__name__, "blocker", shown(err).location or Location())
    return json.dumps([issue], indent=2, ensure_ascii=False) + "\n"
