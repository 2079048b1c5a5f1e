"""GitHub Actions workflow commands: one annotation per finding, shown on the file's line.

``::error file=F,line=L,col=C,title=T::message``. The message escapes ``%``, CR and LF; property
values escape those and also ``:`` and ``,`` (the runner's rules, as in actions/toolkit's
``command.ts``). Any other control character (an ESC in a file or schema name) is written as a
visible escape (``\\x1b``), as on a terminal: the runner's log would interpret it. Warnings are
``::warning``; a diff's changes are ``::notice``.
"""

from __future__ import annotations

from schemacli.contracts.findings import Finding, Severity
from schemacli.errors import Location, SchemacliError, shown
from schemacli.output import Report, fix_lines
from schemacli.output.text import cell as value_cell
from schemacli.output.text import summary
from schemacli.redact import printable, scrub


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded, other control characters
    as visible escapes."""
    text = printable(text, keep="\r\n\t")
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(level: str, message: str, location: Location, title: str) -> str:
    props = []
    if location.source:
        props.append(f"file={escape_property(location.source)}")
        if location.line is not None:
            props.append(f"line={location.line}")
            if location.column is not None:
                props.append(f"col={location.column}")
    props.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


def annotation(finding: Finding) -> str:
    level = "error" if finding.severity is Severity.ERROR else "warning"
    message = finding.message
    if finding.location.pointer:
        message += f" (at {finding.location.pointer})"
    if finding.hint:
        message += f"\nhint: {finding.hint}"
    for fix in finding.fixes:  # the suggestion itself: what to write where
        message += "".join(f"\n{line}" for line in fix_lines(fix))
    title = f"{finding.subject}: {finding.kind}" if finding.subject else finding.kind
    return workflow_command(level, message, finding.location, title)


def step_summary(report: Report) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: the summary table and every problem, once."""

    report = scrub(report)

    def cell(text: object) -> str:
        return printable(str(text).replace("|", "\\|").replace("\n", " "))

    first_columns = report.cases[0].columns if report.cases else ()
    columns = [name.replace("_", " ") for name, _ in first_columns]
    first = "level" if report.command == "diff" else "subject"
    lines = [f"### schemacli {report.command}: {report.verdict}", ""]
    lines.append("| " + " | ".join([first, *columns, "verdict"]) + " |")
    lines.append("|" + " --- |" * (len(columns) + 2))
    for case in report.cases:
        values = [value_cell(v) for _, v in case.columns]
        lines.append("| " + " | ".join(cell(x) for x in [case.name, *values, case.verdict]) + " |")
    problems = list(dict.fromkeys(report.findings))
    if problems:
        lines += ["", f"{len(problems)} finding(s):", ""]
        for f in problems:
            lines.append(f"- `{cell(f.location)}` **{f.kind}**: {cell(f.message)}")
    lines.append("")
    lines.append(summary(report))
    # Written to a file, not a terminal: a lone surrogate (a file name's undecodable byte) as an
    # escape, so the UTF-8 file can hold it.
    return ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace").decode("utf-8")


def render(report: Report, *, color: bool = False) -> str:
    """One workflow command per finding (and per diff change), then a plain summary line.
    ``report`` is already redacted (``schemacli.output.render``)."""
    lines = [
        workflow_command("notice", change.message, change.location, change.kind)
        for change in report.changes
    ]
    lines += [annotation(f) for f in report.findings]
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def render_error(err: SchemacliError, *, command: str, compact: bool = False) -> str:
    """A GitHub Actions ``::error`` annotation, on the file and line when the error has them."""
    err = shown(err)
    location = err.location or Location()
    message = err.message
    if location.pointer:
        message += f" (at {location.pointer})"
    if err.hint:
        message += f"\nhint: {err.hint}"
    return workflow_command("error", message, location, f"schemacli: {type(err).__name__}") + "\n"
