"""``schemacli lint``: style and evolution rules over .avsc files, with fixes (``--fix``)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from schemacli.atomicwrite import edit, write_all
from schemacli.commands.fix_options import Diff, Fix, UnsafeFixes, fix_mode
from schemacli.commands.options import Output, Strict
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.fixes.edits import unified_diff
from schemacli.errors import ExitCode, UsageError
from schemacli.output import Case, OutputFormat, Report, render
from schemacli.output.json_out import emit_json
from schemacli.output.terminal import echo

if TYPE_CHECKING:
    from schemacli.contracts.lint.engine import LintReport
    from schemacli.contracts.lint.rule import Rule
    from schemacli.contracts.lint.ruleset import LintConfig

Selectors = Annotated[
    list[str] | None,
    typer.Option(
        help="Rule codes, code prefixes or categories (comma-separated or repeated); ALL for "
        "every rule.",
    ),
]


def lint_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Schema files, or folders searched recursively for *.avsc; - reads one "
            "schema from standard input.",
            show_default=False,
        ),
    ] = None,
    select: Selectors = None,
    ignore: Selectors = None,
    fix: Fix = False,
    diff: Diff = False,
    unsafe_fixes: UnsafeFixes = False,
    list_rules: Annotated[
        bool, typer.Option("--list-rules", help="List every rule and exit.")
    ] = False,
    explain: Annotated[
        str | None,
        typer.Option("--explain", metavar="CODE", help="Explain one rule and exit."),
    ] = None,
    strict: Strict = False,
    output: Output = OutputFormat.text,
) -> None:
    """Lint .avsc files: naming, namespaces, docs, optional fields, enum defaults, decimals,
    timestamps and Spark-unfriendly unions (schemacli lint --list-rules).

    Rules come from [tool.schemacli.lint] (select, ignore, per-file-ignores, the naming
    styles) and --select / --ignore; a schema node silences rules under it with
    "schemacli:ignore": ["CODE", ...]. Files in the store are linted as versions of their
    subject, at its level. --fix writes the safe fixes (with --unsafe-fixes, the unsafe ones
    too); --diff shows them.

    Exit codes: 0 no error-severity finding left (warnings allowed unless --strict; with
    --diff: nothing to fix), 1 findings at error severity left (--diff: fixes to apply), 2
    usage error or a file that cannot be read or parsed.
    """
    from schemacli.contracts.lint.ruleset import RULES, find_rule

    if (list_rules or explain is not None) and paths:
        flag = "--list-rules" if list_rules else "--explain"
        raise UsageError(
            f"{flag} describes the rules and lints nothing: it takes no PATH",
            hint=f"run schemacli lint {flag} alone, then schemacli lint PATH...",
        )
    if (list_rules or explain is not None) and output not in (OutputFormat.text, OutputFormat.json):
        raise UsageError(
            f"--list-rules and --explain print text or json, not {output.value}",
            hint="add -o json for a document, or leave -o out",
        )
    if list_rules:
        _describe(RULES, output)
    if explain is not None:
        rule = find_rule(explain)
        if rule is None:
            raise UsageError(
                f"--explain {explain!r}: no such rule",
                hint="schemacli lint --list-rules lists the codes",
            )
        _describe((rule,), output)
    if not paths:
        raise UsageError("lint needs at least one PATH (a file, a folder, or - for stdin)")
    fixing = fix_mode(fix, diff, unsafe_fixes, output)
    stdin = any(str(p) == "-" for p in paths)
    if stdin and len(paths) > 1:
        raise UsageError("- (standard input) cannot be linted together with other paths")
    if stdin and fix and OutputFormat(output) is not OutputFormat.text:
        raise UsageError(
            f"lint - --fix prints the fixed schema on stdout, where a {output.value} document "
            "cannot go too",
            hint="leave -o out (the findings go to stderr as text), or lint a file",
        )

    from schemacli.config import load_settings
    from schemacli.contracts.lint.engine import lint_paths

    settings = load_settings()
    config = _with_flags(settings.lint, select, ignore)
    base = settings.config_file.parent if settings.config_file else Path.cwd()
    report = lint_paths(
        paths,
        config,
        store=settings.store,
        levels=settings.levels,
        fix=fixing,
        unsafe=unsafe_fixes,
        relative_to=base,
    )
    if diff:
        raise typer.Exit(int(_show_diff(report)))
    if fix and stdin and report.files and report.files[0].text is not None:
        typer.echo(report.files[0].text, nl=False)  # the fixed schema; the findings on stderr
        _say_dropped(report)
        typer.echo(render(as_report(report, strict=strict), OutputFormat.text), err=True, nl=False)
        raise typer.Exit(int(_exit_code(report, strict)))
    if fix:
        _write(report)
    typer.echo(
        render(as_report(report, strict=strict), output, color=sys.stdout.isatty()), nl=False
    )
    raise typer.Exit(int(_exit_code(report, strict)))


def _with_flags(
    config: LintConfig, select: list[str] | None, ignore: list[str] | None
) -> LintConfig:
    """The config with --select (replaces the file's) and --ignore (adds to it) applied."""
    from schemacli.contracts.lint.ruleset import UnknownSelector, check_selectors

    def split(values: list[str], flag: str) -> tuple[str, ...]:
        parts = tuple(p.strip() for v in values for p in v.split(",") if p.strip())
        try:
            check_selectors(parts)
        except UnknownSelector as err:
            raise UsageError(f"{flag}: {err}") from None
        return parts

    if select:
        config = replace(config, select=split(select, "--select"))
    if ignore:
        config = replace(config, ignore=config.ignore + split(ignore, "--ignore"))
    return config


def _exit_code(report: LintReport, strict: bool) -> ExitCode:
    if report.invalid:
        return ExitCode.INPUT_ERROR
    if report.errors or (strict and report.findings):
        return ExitCode.CHECK_FAILED
    return ExitCode.OK


def _show_diff(report: LintReport) -> ExitCode:
    changed = 0
    for result in report.files:
        if result.changed:
            assert result.original is not None and result.text is not None
            typer.echo(unified_diff(result.source, result.original, result.text), nl=False)
            changed += len(result.fixed)
    word = "fix" if changed == 1 else "fixes"
    _say_dropped(report)
    typer.echo(f"lint: {changed} {word} would be applied (--diff: nothing written)", err=True)
    if report.invalid:
        return ExitCode.INPUT_ERROR
    return ExitCode.CHECK_FAILED if changed else ExitCode.OK


def _write(report: LintReport) -> None:
    """Write every fixed file at once (atomically; nothing written if any write is refused),
    in the file's own encoding and with its byte-order mark if it had one."""
    writes = []
    for result in report.files:
        if result.changed and result.path is not None and result.text is not None:
            assert result.original is not None  # changed: there was a text before
            writes.append(edit(result.path, result.original, result.text, encoding=result.encoding))
    if writes:
        write_all(writes, hint="nothing was fixed; check the files are writable")
    _say_dropped(report)
    typer.echo(f"lint: {report.fixed} fix(es) applied in {len(writes)} file(s)", err=True)
    for write in writes:
        echo(f"  wrote {write.path}", err=True)


def _say_dropped(report: LintReport) -> None:
    """On stderr: each fix not applied because its result would not parse, and why."""
    for result in report.files:
        for one in result.dropped:
            typer.echo(
                f"lint: {result.source}: not applied: {one.fix.title}: {one.reason}", err=True
            )


def as_report(report: LintReport, *, strict: bool = False) -> Report:
    """The lint as the shared Report: one case per file."""

    def verdict(findings: tuple[Finding, ...], loaded: bool) -> str:
        if not loaded:
            return "invalid"
        failing = any(f.severity is Severity.ERROR for f in findings)
        return "incompatible" if failing else "compatible"

    cases = [
        Case(name=f.location.source or "<input>", verdict="invalid", findings=(f,))
        for f in report.path_problems
    ]
    for result in report.files:
        findings = result.findings
        if strict:
            findings = tuple(replace(f, severity=Severity.ERROR) for f in findings)
        cases.append(
            Case(
                name=result.source,
                verdict=verdict(findings, result.loaded),
                findings=findings,
                columns=(("findings", len(findings)), ("fixed", len(result.fixed))),
                source=result.source,
            )
        )
    worst = "compatible"
    for candidate in ("incompatible", "invalid"):
        if any(c.verdict == candidate for c in cases):
            worst = candidate
    names = " ".join(c.name for c in cases[:3]) + (" ..." if len(cases) > 3 else "")
    return Report(command="lint", title=f"lint {names}", verdict=worst, cases=tuple(cases))


def _describe(rules: tuple[Rule, ...], output: OutputFormat) -> None:
    """--list-rules (every rule) or --explain (one): text, or one JSON document; then exit 0."""
    if output is OutputFormat.json:
        from schemacli.contracts.lint.ruleset import docs_url

        emit_json(
            {
                "rules": [
                    {
                        "code": rule.code,
                        "name": rule.name,
                        "category": rule.category.value,
                        "severity": str(rule.severity),
                        "default": rule.default,
                        "fix": rule.fixable.value,
                        "changes_canonical_form": rule.changes_canonical_form,
                        "summary": rule.summary,
                        "hint": rule.kind.hint,
                        "docs": docs_url(rule),
                    }
                    for rule in rules
                ]
            }
        )
    elif len(rules) == 1:
        typer.echo(_explain(rules[0]), nl=False)
    else:
        typer.echo(_rules_table(rules), nl=False)
    raise typer.Exit(int(ExitCode.OK))


def _rules_table(rules: tuple[Rule, ...]) -> str:
    code = max(len("code"), *(len(r.code) for r in rules)) + 2
    name = max(len("name"), *(len(r.name) for r in rules)) + 2
    category = max(len("category"), *(len(r.category.value) for r in rules)) + 2
    lines = [f"{'code':<{code}}{'name':<{name}}{'category':<{category}}{'severity':<9}default  fix"]
    for rule in rules:
        lines.append(
            f"{rule.code:<{code}}{rule.name:<{name}}{rule.category.value:<{category}}"
            f"{rule.severity:<9}{'on' if rule.default else 'off':<9}{rule.fixable.value}"
        )
    return "\n".join(lines) + "\n"


def _explain(rule: Rule) -> str:
    from schemacli.contracts.lint.ruleset import docs_url

    return (
        f"{rule.code} {rule.name} ({rule.category.value}, {rule.severity}, "
        f"{'on' if rule.default else 'off'} by default)\n\n"
        f"{rule.summary}.\n\n"
        f"fix: {rule.fixable.value}"
        + (" (may change the Parsing Canonical Form)" if rule.changes_canonical_form else "")
        + f"\nhow to fix by hand: {rule.kind.hint}\n"
        f"docs: {docs_url(rule)}\n"
    )
