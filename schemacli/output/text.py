"""Text for people: a summary table, then every finding with its place and the way out.

Rich renders the table; markup and highlighting are off, because Avro JSON is full of ``[ ]``
that rich would otherwise read as style tags.
"""

from __future__ import annotations

import io

from schemacli.contracts.findings import Finding, Severity
from schemacli.errors import SchemacliError
from schemacli.output import Report, fix_lines
from schemacli.redact import inert_lines, printable

_MARK = {"compatible": "ok", "incompatible": "FAIL", "invalid": "ERROR"}
_STYLE = {"compatible": "green", "incompatible": "red", "invalid": "red"}
_LINT_WORDS = {"compatible": "ok", "incompatible": "failed"}  # lint judges style, not compatibility


def render(report: Report, *, color: bool = False, width: int = 100) -> str:
    """The report as text; ``color`` for a terminal. Ends with a newline."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        markup=False,
        highlight=False,
        emoji=False,
    )
    console.print(Text(one_line(report.title), style="bold"), soft_wrap=True)

    def line(text: str = "") -> None:
        # An unstyled line goes straight into the buffer: rich would only copy it (one value
        # per line, never wrapped), at ~0.1 ms a line, seconds for a wide diff's findings.
        buffer.write(one_line(text) + "\n")

    if report.changes:
        buffer.write("\n")
        line(f"{len(report.changes)} change(s):")
        for change in report.changes:
            line(f"  {change.location}: {change.kind}: {change.message}")
        line()

    first = report.cases[0].columns if report.cases else ()
    columns = [name.replace("_", " ") for name, _ in first]
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
    first_column = {"diff": "level", "lint": "file", "readers": "reader", "rules test": "rule"}.get(
        report.command, "subject"
    )
    table.add_column(first_column, no_wrap=True)
    for name in columns:
        table.add_column(name)
    table.add_column("verdict", no_wrap=True)
    for case in report.cases:
        verdict = case.verdict
        count = sum(1 for f in case.findings if f.severity is Severity.ERROR)
        shown = _LINT_WORDS.get(verdict, verdict) if report.command == "lint" else verdict
        label = shown if not count else f"{shown} ({count})"
        table.add_row(
            Text(one_line(case.name)),
            *(Text(one_line(cell(value))) for _, value in case.columns),
            Text(label, style=_STYLE.get(verdict, "") if color else ""),
        )
    if report.cases:
        console.print(table)

    # A diff's FULL verdict repeats BACKWARD's and FORWARD's findings: say each once.
    findings = list(dict.fromkeys(report.findings))
    if findings:
        errors = sum(1 for f in findings if f.severity is Severity.ERROR)
        warnings = len(findings) - errors
        line()
        line(f"{_counted(errors, 'problem')}, {_counted(warnings, 'warning')}:")
        for finding in findings:
            for text in finding_lines(finding):
                line(text)
    for note in report.notes:
        line(f"note: {note}")
    console.print(Text(one_line(summary(report)), style="bold"), soft_wrap=True)
    # Every value went in as one line; a name at the start of a row still must not read as a
    # CI log command.
    return inert_lines("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()))


def one_line(text: str) -> str:
    """A line of the text report: control characters (a line feed in a registry's message or
    a file's name, an escape sequence) and bidi overrides shown as visible escapes."""
    return printable(text)


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """Nothing on stdout: a person reads the error on stderr
    (:func:`schemacli.errors.error_text`)."""
    return ""


def cell(value: object) -> str:
    """A summary cell: versions as ``v1, v2`` (``-`` for none), everything else as is."""
    if isinstance(value, tuple):
        if value and all(isinstance(n, str) for n in value):  # names (declared readers)
            return ", ".join(value)
        return ", ".join(f"v{n}" for n in value) if value else "-"
    return str(value)


def finding_lines(finding: Finding) -> list[str]:
    """``<where>: <severity> <KIND>: <message>`` then ``hint:`` and each ``fix (<applicability>):``
    with its edits, indented under it."""
    label = "error" if finding.severity is Severity.ERROR else "warning"
    lines = [f"{finding.location}: {label} {finding.kind}: {finding.message}"]
    if finding.hint:
        lines.append(f"    hint: {finding.hint}")
    for fix in finding.fixes:
        lines += [f"    {line}" for line in fix_lines(fix)]
    return lines


def summary(report: Report) -> str:
    """The last line: the verdict in words, with counts."""
    errors = sum(1 for f in set(report.findings) if f.severity is Severity.ERROR)
    if report.command == "diff":
        ok = [c.name for c in report.cases if c.verdict == "compatible" and c.name != "NONE"]
        allowed = ", ".join(ok) if ok else "NONE only"
        return f"diff: {len(report.changes)} change(s); allowed at: {allowed}"
    if report.command == "check":
        if report.verdict == "compatible":
            return "check: compatible"
        return f"check: {report.verdict}: {_counted(errors, 'problem')}"
    failing = [c for c in report.cases if c.verdict != "compatible"]
    # validate reports files
    noun = {"gate": "subject", "readers": "declared reader", "rules test": "rule"}.get(
        report.command, "file"
    )
    total = _counted(len(report.cases), noun)
    if report.verdict == "compatible":
        return f"{report.command}: passed ({total})"
    word = "invalid input" if report.verdict == "invalid" else "failed"
    return (
        f"{report.command}: {word}: {len(failing)} of {total} failing, "
        f"{_counted(errors, 'problem')}"
    )


def _counted(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
