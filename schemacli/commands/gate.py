"""``schemacli gate``: the CI compatibility gate over the whole local store."""

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from schemacli.commands.check import (
    Against,
    NoCache,
    ReadersOnly,
    Store,
    shown_store,
    store_tree,
    verdict_cache,
)
from schemacli.commands.options import Output
from schemacli.commands.registry_options import (
    NO_FLAGS,
    RegistryFlags,
    RegistryMode,
    connect,
    registry_flags,
)
from schemacli.errors import UsageError
from schemacli.output import OutputFormat, gate_report, render
from schemacli.output.github import step_summary
from schemacli.output.terminal import progress


@registry_flags(RegistryMode)
def gate_command(
    store: Store = None,
    against: Against = None,
    no_cache: NoCache = False,
    output: Output = OutputFormat.text,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress messages on stderr.")
    ] = False,
    register_: Annotated[
        bool,
        typer.Option(
            "--register",
            help="With --registry: register every new version, only if every check passed "
            "(all or nothing).",
        ),
    ] = False,
    readers_only: ReadersOnly = False,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Check every subject's versions at the subject's compatibility level, and against the
    reader schemas its consumers declared in the store (readers/, docs/readers.md).

    Without --against: every version against the versions before it. With --against
    git:REF: only versions new since REF, against the history at REF; an existing version
    that changed or disappeared is a violation (history is immutable). Lists every
    violation. Verdicts are cached by content (see --no-cache). With --output github
    inside GitHub Actions, the summary table also goes to
    $GITHUB_STEP_SUMMARY. Exit codes: 0 pass, 1 incompatible, 2 usage or input error (e.g.
    an invalid .avsc file).
    """
    from schemacli.config import load_settings
    from schemacli.contracts.evolution.gate import gate as check_store
    from schemacli.contracts.evolution.levels import Level, SubjectLevels
    from schemacli.contracts.readers.declared import load_readers
    from schemacli.contracts.store.store import git_tree

    online = flags.url is not None  # offline, no registry setting is read (nor can fail)
    settings = load_settings(flags={"store": store}, registry=flags if online else None)
    readers = load_readers(shown_store(settings.store))
    levels = SubjectLevels(Level.READERS) if readers_only else settings.levels
    head = store_tree(settings.store)
    if store is not None:  # messages name the store as the user wrote it
        head = replace(head, display_root=str(store))
    if flags.url is not None or register_:
        verdict = _against_registry(
            flags, settings, head, against, register_, output, quiet, readers, levels
        )
        raise typer.Exit(int(verdict.exit_code))
    base = git_tree(against, settings.store) if against else None
    if not quiet and output is not OutputFormat.text:  # the text report's title says it
        where = f" against {base.label}" if base else ""
        typer.echo(f"gate: checking {head.source('').rstrip('/')}{where}", err=True)
    verdicts = verdict_cache(settings, no_cache)
    result = check_store(head, levels, base=base, verdicts=verdicts, readers=readers)
    from schemacli.contracts.rules.store import rules_gate

    result = rules_gate(result, head, settings.rules)  # data-quality rules (docs/rules.md)
    vet = _linter(settings, head)
    if vet is not None:
        result = vet(result)
    _emit(gate_report(result), output)
    raise typer.Exit(int(result.verdict.exit_code))


def _linter(settings: Any, head: Any) -> Any:
    """With ``[tool.schemacli.lint] gate = true``: a function adding the lint findings of the
    versions a gate report checked to it; None (nothing loaded) when off."""
    if not settings.lint.gate:
        return None
    from schemacli.contracts.lint.engine import lint_gate

    def vet(report: Any) -> Any:
        return lint_gate(
            report,
            lambda subject, n: Path(head.source(f"subjects/{subject}/v{n}.avsc")),
            settings.lint,
            store=settings.store,
            levels=settings.levels,
            relative_to=settings.config_file.parent if settings.config_file else None,
        )

    return vet


def _emit(report: Any, output: OutputFormat) -> None:
    """The report on stdout; in GitHub Actions with --output github, also the summary table on
    the run's page ($GITHUB_STEP_SUMMARY)."""

    typer.echo(render(report, output, color=sys.stdout.isatty()), nl=False)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if output is OutputFormat.github and summary_file:
        with open(summary_file, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))


def _against_registry(
    flags: Any,
    settings: Any,
    head: Any,
    against: str | None,
    register: bool,
    output,
    quiet,
    readers: Any = (),
    levels: Any = None,
) -> Any:
    """`gate --registry URL [--register]`: the store against the registry's histories, then
    (all or nothing) registration. Returns the verdict; the client is built here, once."""
    from schemacli.registry.gate import registry_gate

    if against is not None:
        raise UsageError(
            "--against and --registry are two different histories; give one.",
            hint="--registry checks against production history; --against git:REF against the "
            "store at a git ref.",
        )
    if flags.url is None and register:
        raise UsageError("--register needs --registry URL.")

    def each(names):
        return progress(names, len(names), "gate") if not quiet else names

    def done(result):
        if not quiet:
            typer.echo(result.describe(), err=True)

    with connect(flags, settings=settings) as conn:
        if not quiet:
            where = head.source("").rstrip("/")
            typer.echo(f"gate: checking {where} against {conn.url}", err=True)
        gate, registered = registry_gate(
            conn.client,
            levels if levels is not None else settings,
            head,
            register=register,
            each=each,
            on_done=done,
            readers=readers,
            vet=_linter(settings, head),
        )
    _emit(gate_report(gate.report), output)
    if register and not gate.passed:
        typer.echo("gate: FAILED — nothing was registered (all or nothing)", err=True)
    elif register and not quiet:
        typer.echo(f"gate: passed — {len(registered)} version(s) registered", err=True)
    return gate.report.verdict
