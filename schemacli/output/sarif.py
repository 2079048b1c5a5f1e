"""SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer): one result per finding.

One run, tool ``schemacli``; one rule per finding kind that occurs (rule id = our kind); each
result at the file and line:col of the finding, with the JSON pointer as a logical location. A
source that is not a file (a registry's ``subject:version``, ``<stdin>``) has only the logical
location. A diff's changes are ``note`` results. Columns are counted in UTF-16 code units and
the run says so (``columnKind: utf16CodeUnits``, what GitHub code scanning expects): an emoji
before a finding counts two (:class:`Utf16Columns`). A file's ``uri`` is a relative (or, for an
absolute path, path-absolute) URI reference, percent-encoded as RFC 3986 asks (a space, ``,``,
``:``, ``#``, ``?``, ``%``, a newline or any non-ASCII character; ``/`` kept). Validated against the
OASIS schema in tests/cli/test_sarif_gitlab_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from schemacli import __version__
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.fixes.edits import Fix
from schemacli.contracts.jsontext.source import read_text
from schemacli.contracts.lint.ruleset import docs_url, rule_for
from schemacli.errors import Location, SchemacliError, error_text, shown
from schemacli.kinds import Kind
from schemacli.output import Report, fix_label, to_jsonable

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"


def is_file(source: str | None) -> bool:
    """Whether a finding's source names a file (not ``subject:version``, not ``<stdin>``)."""
    if not source or source.startswith("<") or "://" in source:
        return False
    return "/" in source or source.endswith((".avsc", ".json", ".yaml", ".yml"))


def file_uri(path: str) -> str:
    """``path`` as an RFC 3986 URI reference: ``\\`` as ``/``, every character but unreserved
    ones and ``/`` percent-encoded as UTF-8 (the bytes of an undecodable file name as they were
    on disk). A ``:`` is encoded too, so ``a:b.avsc`` is not read as scheme ``a``."""
    text = path.replace("\\", "/")
    try:
        return quote(text, safe="/", errors="surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        return quote(text, safe="/", errors="backslashreplace")


class Utf16Columns:
    """A finding's column as SARIF counts it here, in UTF-16 code units: our columns count
    characters (code points), and a character outside the Basic Multilingual Plane (an emoji, a
    CJK extension) before the column is two code units. Each file's text is read once, by the
    bounded reader; a source that cannot be read (gone since, a git ref, a registry) keeps its
    count, which differs only after such a character."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}

    def __call__(self, source: str, line: int, column: int) -> int:
        if source not in self._lines:
            try:
                self._lines[source] = read_text(Path(source)).split("\n")
            except SchemacliError:
                self._lines[source] = None
        lines = self._lines[source]
        if lines is None or not 0 < line <= len(lines):
            return column
        return column + sum(1 for char in lines[line - 1][: column - 1] if ord(char) > 0xFFFF)


def _locations(location: Location, columns: Utf16Columns) -> list[dict[str, Any]]:
    where: dict[str, Any] = {}
    if location.source is not None and is_file(location.source):
        physical: dict[str, Any] = {"artifactLocation": {"uri": file_uri(location.source)}}
        if location.line is not None:
            region: dict[str, Any] = {"startLine": location.line}
            if location.column is not None:
                region["startColumn"] = columns(location.source, location.line, location.column)
            physical["region"] = region
        where["physicalLocation"] = physical
    logical = []
    if location.source and not is_file(location.source):
        logical.append({"name": location.source, "kind": "resource"})
    if location.pointer is not None:
        logical.append({"fullyQualifiedName": location.pointer or "/", "kind": "element"})
    if logical:
        where["logicalLocations"] = logical
    return [where] if where else []


def _rule(kind: str) -> dict[str, Any]:
    # Each result carries its own message and hint, with the values involved. A lint rule
    # also says what it checks, how to fix it by hand, and where its docs are.
    known = Kind.__members__.get(kind)
    lint = rule_for(known) if known is not None else None
    if lint is not None:
        return {
            "id": kind,
            "name": "".join(part.capitalize() for part in lint.name.split("-")),
            "shortDescription": {"text": lint.summary},
            "help": {"text": lint.kind.hint or lint.summary},
            "helpUri": docs_url(lint),
            "defaultConfiguration": {"level": lint.severity, "enabled": lint.default},
            "properties": {"category": lint.category.value, "fixable": lint.fixable.value},
        }
    return {
        "id": kind,
        "name": "".join(part.capitalize() for part in kind.split("_")),
        "shortDescription": {"text": kind.replace("_", " ").capitalize()},
    }


def _fix(fix: Fix, source: str, columns: Utf16Columns) -> dict[str, Any]:
    """A SARIF ``fix``: its title, and one artifact change replacing each edited region."""
    return {
        "description": {"text": fix.title},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": file_uri(source)},
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": edit.start_pos[0],
                            "startColumn": columns(source, *edit.start_pos),
                            "endLine": edit.end_pos[0],
                            "endColumn": columns(source, *edit.end_pos),
                        },
                        "insertedContent": {"text": edit.text},
                    }
                    for edit in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability.value},
    }


def _fixes(finding: Finding, columns: Utf16Columns) -> dict[str, Any]:
    """A finding's fixes: those with edits in a file as SARIF ``fixes``; display advice (and
    edits of a source that is not a file) in the message, as the only place a viewer shows."""
    own = finding.location.source
    fixes = [
        _fix(f, source, columns)
        for f in finding.fixes
        if f.edits and (source := f.source or own) is not None and is_file(source)
    ]
    return {"fixes": fixes} if fixes else {}


def _result(finding: Finding, rule_index: int, columns: Utf16Columns) -> dict[str, Any]:
    message = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    message += "".join(f"\n{fix_label(fix)}" for fix in finding.fixes)
    properties = {
        key: value
        for key, value in (
            ("subject", finding.subject),
            ("pointer", finding.location.pointer),
            ("hint", finding.hint),
            ("old", to_jsonable(finding.old)),
            ("new", to_jsonable(finding.new)),
        )
        if value is not None
    }
    result: dict[str, Any] = {
        "ruleId": finding.kind,
        "ruleIndex": rule_index,
        "level": "error" if finding.severity is Severity.ERROR else "warning",
        "message": {"text": message},
        "locations": _locations(finding.location, columns),
    }
    result.update(_fixes(finding, columns))
    if finding.reader is not None:  # a declared reader: where in its schema, who it is
        ref = finding.reader
        related = _locations(ref.location, columns)
        for i, where in enumerate(related):
            where["id"] = i
            where["message"] = {"text": f"the reader schema of consumer {ref.consumer}"}
        if related:
            result["relatedLocations"] = related
        properties["consumer"] = ref.consumer
        properties["groups"] = list(ref.groups)
        if ref.owner is not None:
            properties["owner"] = ref.owner
        if ref.contact is not None:
            properties["contact"] = ref.contact
    if properties:
        result["properties"] = properties
    return result


def _document(run: dict[str, Any]) -> str:
    run = {**run, "columnKind": "utf16CodeUnits"}
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:

    return {
        "driver": {
            "name": "schemacli",
            "version": __version__,
            "rules": rules,
        }
    }


def render(report: Report, *, color: bool = False) -> str:
    """The report as one SARIF 2.1.0 log: findings as results, a diff's changes as notes."""
    entries: list[Finding] = list(dict.fromkeys(report.findings))
    kinds = list(dict.fromkeys([f.kind for f in entries] + [c.kind for c in report.changes]))
    index = {kind: i for i, kind in enumerate(kinds)}
    columns = Utf16Columns()
    results = [_result(f, index[f.kind], columns) for f in entries]
    results += [
        {
            "ruleId": change.kind,
            "ruleIndex": index[change.kind],
            "level": "note",
            "kind": "informational",
            "message": {"text": change.message},
            "locations": _locations(change.location, columns),
        }
        for change in report.changes
    ]
    run = {
        "tool": _driver([_rule(kind) for kind in kinds]),
        "results": results,
        "invocations": [{"executionSuccessful": True}],
        "properties": {"command": report.command, "title": report.title, "verdict": report.verdict},
    }
    return _document(run)


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """A SARIF log for a command that could not run: no results, the error as a notification."""
    text = error_text(err)
    err = shown(err)

    notification: dict[str, Any] = {
        "level": "error",
        "message": {"text": text},
        "descriptor": {"id": type(err).__name__},
    }
    locations = _locations(err.location, Utf16Columns()) if err.location is not None else []
    if locations:
        notification["locations"] = locations
    run = {
        "tool": _driver([]),
        "results": [],
        "invocations": [
            {
                "executionSuccessful": False,
                "exitCode": int(err.exit_code),
                "toolExecutionNotifications": [notification],
            }
        ],
    }
    return _document(run)
