"""Renderers: one per format (text, json, junit, github, sarif, gitlab) over the same findings.

``check``, ``diff`` and ``gate`` results are turned into one ``Report`` (cases with findings,
plus a diff's changes). Each format's module renders a report (``render``) and an error that
stopped a command (``render_error``); ``schemacli.output.formats`` is the one table of them.

This module is imported when the CLI starts (for ``OutputFormat``): keep it free of heavy imports.
"""

from __future__ import annotations

import json
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any

from schemacli.frozen import frozen_dataclass
from schemacli.redact import nothing_to_mask, scrub, secrets

if TYPE_CHECKING:
    from collections.abc import Sequence

    from schemacli.contracts.evolution.check import CheckReport
    from schemacli.contracts.evolution.diff import Change, SchemaDiff
    from schemacli.contracts.findings import Finding
    from schemacli.contracts.fixes.edits import Fix, TextEdit
    from schemacli.contracts.gate.rows import GateReport
    from schemacli.contracts.readers.judge import ReaderVerdict


class OutputFormat(StrEnum):
    # StrEnum, not (str, Enum): typer converts the value the --output callback returns with
    # str(), and str() of a (str, Enum) member is "OutputFormat.json", which typer maps to None.
    text = "text"
    json = "json"
    junit = "junit"
    github = "github"
    sarif = "sarif"
    gitlab = "gitlab"


class TextOrJson(StrEnum):
    """The formats of commands whose result is not a list of findings (no junit / github)."""

    text = "text"
    json = "json"


@frozen_dataclass
class Case:
    """One row of the summary, one JUnit test case: a subject, a file or a level."""

    name: str
    verdict: str  # "compatible" | "incompatible" | "invalid"
    findings: tuple[Finding, ...] = ()
    # Extra summary columns, in order: JSON-able values (text shows a tuple of ints as "v1, v2").
    columns: tuple[tuple[str, Any], ...] = ()
    source: str | None = None  # the file the case is about, when there is one


@frozen_dataclass
class Report:
    """What a command found, independent of format."""

    command: str  # "check" | "diff" | "gate"
    title: str
    verdict: str  # overall verdict, the worst of the cases
    cases: tuple[Case, ...]
    changes: tuple[Change, ...] = ()  # diff only: what changed
    notes: tuple[str, ...] = ()  # one-line remarks ("identical to v2: not a new version")

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for case in self.cases for f in case.findings)


def render(report: Report, fmt: OutputFormat | str, *, color: bool = False) -> str:
    """The report in ``fmt`` (``color`` applies to text); every renderer ends with a newline.

    Every string of the report is redacted first (``schemacli.redact.scrub``: URL user info and
    the secrets the process was given), before any format serialises or escapes it. A format
    that writes every string whole (``WHOLE_STRINGS``: JSON) is first written as it is, and
    kept when its text holds nothing redaction could mask (no secret remembered, no '@', no
    '='): then no string of the report had any, and walking it changes nothing (a wide diff's
    report holds 400,000 values). Otherwise the report is scrubbed and written again."""
    from schemacli.output.formats import FORMATS  # every format: imported when one renders

    module = FORMATS[OutputFormat(fmt)]
    if getattr(module, "WHOLE_STRINGS", False) and not secrets():
        text = module.render(report, color=color)
        if nothing_to_mask(text):
            return text
    return module.render(scrub(report), color=color)


# -- building reports from the core's results ------------------------------------------------


def check_report(result: CheckReport) -> Report:
    notes: list[str] = []
    if result.identical_to is not None:
        notes.append(
            f"identical to {result.subject} v{result.identical_to}: the registry would not "
            "register it as a new version"
        )
    elif not result.history:
        notes.append(f"{result.subject} has no versions yet: the first version always passes")
    elif not result.checked_against:
        notes.append(f"level {result.level.value}: nothing to compare with")
    case = Case(
        name=result.subject,
        verdict=result.verdict.value,
        findings=result.findings,
        columns=(
            ("level", result.level.value),
            ("versions", len(result.history)),
            ("checked_against", result.checked_against),
            *((("readers", result.readers),) if result.readers else ()),
        ),
        source=result.candidate,
    )
    return Report(
        command="check",
        title=f"check {result.candidate} as the next version of {result.subject}",
        verdict=case.verdict,
        cases=(case,),
        notes=tuple(notes),
    )


def gate_report(result: GateReport) -> Report:
    cases = tuple(
        Case(
            name=row.subject,
            verdict=row.verdict.value,
            findings=row.findings,
            columns=(
                ("level", row.level.value),
                ("versions", row.versions),
                ("checked", row.checked),
            ),
            source=row.findings[0].location.source if row.findings else None,
        )
        for row in result.subjects
    )
    against = f" against {result.against}" if result.against else ""
    skipped = result.not_judged
    return Report(
        command="gate",
        title=f"gate {result.store}{against}",
        verdict=result.verdict.value,
        cases=cases,
        notes=(
            f"{skipped} subject(s) unchanged since {result.against} not judged again "
            "(--against judges what a change brings)",
        )
        if skipped
        else (),
    )


def readers_report(verdicts: Sequence[ReaderVerdict], *, store: str, against: str) -> Report:
    """``readers list``: one case per declared reader, judged against its subject's latest
    version (from ``against``: the store or a registry)."""
    from schemacli.contracts.readers.judge import shown_path

    cases = []
    for v in verdicts:
        reader = v.declared
        invalid = any(f.kind in _INPUT_KINDS for f in v.findings)
        verdict = "invalid" if invalid else "compatible" if v.compatible else "incompatible"
        cases.append(
            Case(
                name=reader.consumer,
                verdict=verdict,
                findings=v.findings,
                columns=(
                    ("subject", reader.subject),
                    ("owner", reader.owner or "-"),
                    ("groups", ", ".join(reader.groups)),
                    ("reads", v.against or "(no version yet)"),
                ),
                source=shown_path(reader),
            )
        )
    order = ("invalid", "incompatible")
    worst = next((w for w in order if any(c.verdict == w for c in cases)), "compatible")
    return Report(
        command="readers",
        title=f"declared readers in {store}, against the latest versions in {against}",
        verdict=worst,
        cases=tuple(cases),
        notes=() if cases else ("no declared readers",),
    )


_INPUT_KINDS = frozenset({"INVALID_SCHEMA", "STORE_LAYOUT"})

_DIRECTION = {
    "NONE": "no check",
    "BACKWARD": "new reads old",
    "FORWARD": "old reads new",
    "FULL": "both ways",
}


def diff_report(result: SchemaDiff) -> Report:
    cases = tuple(
        Case(
            name=v.level.value,
            verdict="compatible" if v.compatible else "incompatible",
            findings=v.findings,
            columns=(("means", _DIRECTION.get(v.level.value, "")),),
        )
        for v in result.verdicts
    )
    return Report(
        command="diff",
        title=f"diff {result.old} -> {result.new}",
        # A diff describes; it does not fail. The verdict row set says what each level allows.
        verdict="compatible" if all(c.verdict == "compatible" for c in cases) else "incompatible",
        cases=cases,
        changes=result.changes,
        notes=(("no changes",) if not result.changes else ())
        + ("each *_TRANSITIVE level gives the same verdict as its base level for one pair",),
    )


def fix_label(fix: Fix) -> str:
    """``fix (safe): Add "default": null to field 'tip'``: a fix in one line, in every format."""
    where = f" in {fix.source}" if fix.source else ""
    return f"fix ({fix.applicability.value}){where}: {fix.title}"


def edit_label(edit: TextEdit) -> str:
    """``8:15-8:33 -> "double"``: where an edit goes (1-based, end exclusive) and what it puts
    there (JSON-quoted, so white space and line breaks show)."""
    (line, col), (end_line, end_col) = edit.start_pos, edit.end_pos
    what = "delete" if not edit.text else f"-> {json.dumps(edit.text, ensure_ascii=False)}"
    return f"{line}:{col}-{end_line}:{end_col} {what}"


def fix_lines(fix: Fix) -> list[str]:
    """A fix's label, then one indented line per edit."""
    return [fix_label(fix), *(f"  {edit_label(edit)}" for edit in fix.edits)]


def to_jsonable(value: Any) -> Any:
    """Findings' ``old``/``new`` values as JSON (they already are, except enums and tuples)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        if all(type(v) is int or type(v) is str for v in value):  # a gate row's versions
            return list(value)
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
