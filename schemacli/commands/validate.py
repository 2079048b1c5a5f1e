"""``schemacli validate``: are these .avsc files valid Avro, as the registry's parser sees it?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from schemacli.commands.options import Output, Strict
from schemacli.errors import ExitCode
from schemacli.output import Case, OutputFormat, Report, render

if TYPE_CHECKING:
    from schemacli.contracts.findings import Finding
    from schemacli.contracts.lint.validate import FileResult, ValidationReport


def validate_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Schema files, or folders searched recursively for *.avsc; - reads one "
            "schema from standard input."
        ),
    ],
    strict: Strict = False,
    show_canonical: Annotated[
        bool,
        typer.Option("--show-canonical", help="Print each schema's Parsing Canonical Form."),
    ] = False,
    search_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--search-path",
            "-I",
            help="More folders where <namespace>.<Name>.avsc files define referenced types.",
        ),
    ] = None,
    output: Output = OutputFormat.text,
) -> None:
    """Validate .avsc files: errors where Apache Avro Java (and so the registry) refuses,
    warnings where the Avro specification or other readers (fastavro, Python avro) would.

    Prints each valid file with its CRC-64-AVRO fingerprint, and every problem as
    file:line:col: error[KIND]: message, with a hint.

    Exit codes: 0 all valid (warnings allowed unless --strict), 2 any file invalid or
    missing.
    """
    from schemacli.contracts.lint.validate import validate_paths

    report = validate_paths(paths, strict=strict, search_paths=search_path or ())
    fmt = OutputFormat(output)
    if fmt is OutputFormat.json:
        text = render_json(report, show_canonical=show_canonical)
    elif fmt is OutputFormat.text:
        text = render_text(report, show_canonical=show_canonical)
    else:
        text = render(as_report(report), fmt)
    typer.echo(text, nl=False)
    raise typer.Exit(int(ExitCode.OK if report.ok else ExitCode.INPUT_ERROR))


def _finding_line(finding: Finding) -> list[str]:
    loc = finding.location
    where = loc.source or "<input>"
    if loc.line is not None:
        where += f":{loc.line}"
        if loc.column is not None:
            where += f":{loc.column}"
    at = f" (at {loc.pointer or '/'})" if loc.pointer is not None else ""
    lines = [f"{where}: {finding.severity.value}[{finding.kind}]: {finding.message}{at}"]
    if finding.hint:
        lines.append(f"  hint: {finding.hint}")
    return lines


def render_text(report: ValidationReport, *, show_canonical: bool = False) -> str:
    """One line per valid file (with its fingerprint), every finding, then a summary."""
    lines: list[str] = []
    for finding in report.path_problems:
        lines.extend(_finding_line(finding))
    for result in report.files:
        if result.fingerprints is not None and result.ok:
            lines.append(f"ok  {result.source}  crc64 {result.fingerprints.crc64_hex}")
            if show_canonical:
                lines.append(f"  canonical: {result.fingerprints.canonical}")
        for finding in result.findings:
            lines.extend(_finding_line(finding))
    invalid = sum(1 for r in report.files if not r.ok)
    files = len(report.files)
    summary = (
        f"validate: {files} file{'s' if files != 1 else ''}, {invalid} invalid, "
        f"{report.error_count} error{'s' if report.error_count != 1 else ''}, "
        f"{report.warning_count} warning{'s' if report.warning_count != 1 else ''}"
    )
    if report.strict:
        summary += " (--strict: warnings count as errors)"
    lines.append(summary)
    return "\n".join(lines) + "\n"


def _finding_json(finding: Finding) -> dict[str, Any]:
    loc = finding.location
    return {
        "kind": finding.kind,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "location": {
            "source": loc.source,
            "pointer": loc.pointer,
            "line": loc.line,
            "column": loc.column,
        },
    }


def _file_json(result: FileResult, show_canonical: bool) -> dict[str, Any]:
    payload: dict[str, Any] = {"source": result.source, "ok": result.ok}
    fp = result.fingerprints
    if fp is not None:
        payload["fingerprint"] = {
            "crc64": fp.crc64_hex,
            "crc64_le": fp.crc64_le_hex,
            "md5": fp.md5,
            "sha256": fp.sha256,
        }
        if show_canonical:
            payload["canonical"] = fp.canonical
    if result.loaded is not None and result.loaded.references:
        payload["references"] = [str(p) for p in result.loaded.referenced_files()]
    payload["findings"] = [_finding_json(f) for f in result.findings]
    return payload


def render_json(report: ValidationReport, *, show_canonical: bool = False) -> str:
    payload = {
        "command": "validate",
        "ok": report.ok,
        "strict": report.strict,
        "errors": report.error_count,
        "warnings": report.warning_count,
        "problems": [_finding_json(f) for f in report.path_problems],
        "files": [_file_json(r, show_canonical) for r in report.files],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def as_report(report: ValidationReport) -> Report:
    """The validation as the shared Report (one case per file) for junit / github output."""

    cases = [
        Case(name=f.location.source or "<input>", verdict="invalid", findings=(f,))
        for f in report.path_problems
    ]
    for result in report.files:
        columns = (("crc64", result.fingerprints.crc64_hex),) if result.fingerprints else ()
        cases.append(
            Case(
                name=result.source,
                verdict="compatible" if result.ok else "invalid",
                findings=result.findings,
                columns=columns,
                source=result.source,
            )
        )
    names = " ".join(c.name for c in cases[:3]) + (" ..." if len(cases) > 3 else "")
    return Report(
        command="validate",
        title=f"validate {names}",
        verdict="compatible" if report.ok else "invalid",
        cases=tuple(cases),
    )
