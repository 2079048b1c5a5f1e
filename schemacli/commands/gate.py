"""``schemacli gate``: the CI compatibility gate over the whole local store."""

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from schemacli.atomicwrite import edit, write_all
from schemacli.commands.fix_options import Diff, Fix, UnsafeFixes, fix_mode, say_fixed
from schemacli.commands.options import Output
from schemacli.commands.registry_options import (
    NO_FLAGS,
    RegistryFlags,
    RegistryMode,
    connect,
    registry_flags,
)
from schemacli.commands.store_options import (
    Against,
    Jobs,
    NoCache,
    ReadersOnly,
    Store,
    declared_readers,
    settings_from_flags,
    store_tree,
    verdict_cache,
)
from schemacli.config import Settings
from schemacli.contracts.evolution.check import Verdict
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.fixes.edits import unified_diff
from schemacli.contracts.gate.fix import fix_store
from schemacli.contracts.gate.gate import gate as check_store
from schemacli.contracts.gate.pool import default_jobs
from schemacli.contracts.gate.rows import GateReport
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.contracts.store.tree import SUBJECTS_DIR, FileTree
from schemacli.errors import ExitCode, UsageError
from schemacli.gittree import GitTree, git_tree, index_view
from schemacli.output import OutputFormat, Report, gate_report, render
from schemacli.output.github import step_summary
from schemacli.output.terminal import progress

if TYPE_CHECKING:  # the registry's client and gate load requests: only with --registry
    from schemacli.registry.publish import RegisterResult


@registry_flags(RegistryMode)
def gate_command(
    store: Store = None,
    against: Against = None,
    no_cache: NoCache = False,
    jobs: Jobs = None,
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
    fix: Fix = False,
    diff: Diff = False,
    unsafe_fixes: UnsafeFixes = False,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Check every subject's versions at the subject's compatibility level, and against the
    reader schemas its consumers declared in the store (readers/, docs/readers.md).

    Without --against: every version against the versions before it. With --against
    git:REF: only versions new since REF, against the history at REF; an existing version
    that changed or disappeared is a violation (history is immutable). Lists every
    violation. Verdicts are cached by content (see --no-cache). With --output github
    inside GitHub Actions, the summary table also goes to
    $GITHUB_STEP_SUMMARY.

    --fix applies the safe suggested fixes to every failing version the gate checks (with
    --against git:REF, only the versions new since REF), as check --fix does for one file,
    writes them all at once, and reports the gate of the fixed store; --diff shows the same
    as a diff and writes nothing; --unsafe-fixes adds the unsafe fixes.

    Exit codes: 0 pass, 1 incompatible (with --diff: something to fix), 2 usage or input
    error (e.g. an invalid .avsc file).
    """
    fixing = fix_mode(fix, diff, unsafe_fixes, output)
    if fixing and (flags.url is not None or register_):
        raise UsageError(
            "--fix and --diff fix the store against its own history, not a registry's",
            hint="pull the subjects first (schemacli pull), then gate --fix without --registry",
        )
    settings = settings_from_flags(store, flags, jobs=jobs)
    readers = declared_readers(settings.store)
    levels = SubjectLevels(Level.READERS) if readers_only else settings.levels
    head = _head(settings, store)
    if flags.url is not None or register_:
        verdict = _against_registry(
            flags, settings, head, against, register_, output, quiet, readers, levels
        )
        raise typer.Exit(int(verdict.exit_code))
    base = git_tree(against, settings.store) if against else None
    verdicts = verdict_cache(settings, no_cache)
    if fixing:
        _fix(settings, store, head, base, levels, verdicts, readers, output, diff, unsafe_fixes)
    if not quiet and output is not OutputFormat.text:  # the text report's title says it
        where = f" against {base.label}" if base else ""
        typer.echo(f"gate: checking {head.source('').rstrip('/')}{where}", err=True)
    try:
        result = _gate(settings, head, base, levels, verdicts, readers)
    finally:
        if base is not None:
            base.close()
    _emit(gate_report(result), output)
    raise typer.Exit(int(result.verdict.exit_code))


def _head(settings: Settings, store: Path | None) -> FileTree:
    """The store's working tree; named in messages as the user wrote --store, if given."""
    head = store_tree(settings.store)
    return replace(head, display_root=str(store)) if store is not None else head


def _gate(
    settings: Settings,
    head: FileTree,
    base: GitTree | None,
    levels: SubjectLevels,
    verdicts: VerdictCache,
    readers: Sequence[DeclaredReader],
) -> GateReport:
    """The gate over ``head`` (against ``base``), with the data-quality rules' findings
    (docs/rules.md) and the lint findings when the config asks."""
    from schemacli.contracts.rules.store import rules_gate

    # with --against, the subjects whose files are as they were at the ref are not judged
    # again (docs/store.md): git says which files changed
    changed = base.changed_paths() if base is not None else None
    if base is None and verdicts.disk is not None:  # a run that keys every subject's files
        head.use_index(index_view(head.root))
    result = check_store(
        head,
        levels,
        base=base,
        verdicts=verdicts,
        readers=readers,
        changed=changed,
        jobs=settings.jobs or default_jobs(),
    )
    result = rules_gate(result, head, settings.rules)
    vet = _linter(settings, head)
    return vet(result) if vet is not None else result


def _fix(
    settings: Settings,
    store: Path | None,
    head: FileTree,
    base: GitTree | None,
    levels: SubjectLevels,
    verdicts: VerdictCache,
    readers: Sequence[DeclaredReader],
    output: OutputFormat,
    diff: bool,
    unsafe: bool,
) -> None:
    """gate --fix / --diff: the fixes of every failing version the gate checks; then the diff
    (nothing written), or every fixed file written at once and the gate of the fixed store.
    Always exits."""
    changed = fix_store(head, levels, base=base, verdicts=verdicts, unsafe=unsafe)
    shown = [(version.source, version.fixed) for version in changed]
    if diff:
        for version in changed:
            typer.echo(
                unified_diff(version.source, version.fixed.before, version.fixed.text), nl=False
            )
        say_fixed(shown, written=False)
        verdict = _gate(settings, head, base, levels, verdicts, readers).verdict
        if verdict is Verdict.INVALID:
            raise typer.Exit(int(ExitCode.INPUT_ERROR))
        raise typer.Exit(int(ExitCode.CHECK_FAILED) if changed else int(verdict.exit_code))
    if changed:
        writes = []
        for version in changed:
            path = settings.store / SUBJECTS_DIR / version.subject / f"v{version.version}.avsc"
            # edit(): written only if the file still holds what was read (a FIFO swapped in,
            # an edit made meanwhile, hard links or another owner refused), inside the store
            write = edit(path, version.fixed.before, version.fixed.text, encoding=version.encoding)
            writes.append(replace(write, within=settings.store))
        write_all(writes, hint="check that the store's files and folders are writable")
    say_fixed(shown, written=True)
    fixed_head = _head(settings, store)  # read again: the files changed
    result = _gate(settings, fixed_head, base, levels, verdicts, readers)
    _emit(gate_report(result), output)
    raise typer.Exit(int(result.verdict.exit_code))


def _linter(settings: Settings, head: FileTree) -> Callable[[GateReport], GateReport] | None:
    """With ``[tool.schemacli.lint] gate = true``: a function adding the lint findings of the
    versions a gate report checked to it; None (the lint engine not even loaded) when off."""
    if not settings.lint.gate:
        return None
    from schemacli.contracts.gate.lint import lint_gate

    def vet(report: GateReport) -> GateReport:
        return lint_gate(
            report,
            lambda subject, n: Path(head.source(f"{SUBJECTS_DIR}/{subject}/v{n}.avsc")),
            settings.lint,
            store=settings.store,
            levels=settings.levels,
            relative_to=settings.config_file.parent if settings.config_file else None,
        )

    return vet


def _emit(report: Report, output: OutputFormat) -> None:
    """The report on stdout; in GitHub Actions with --output github, also the summary table on
    the run's page ($GITHUB_STEP_SUMMARY)."""

    typer.echo(render(report, output, color=sys.stdout.isatty()), nl=False)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if output is OutputFormat.github and summary_file:
        with open(summary_file, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))


def _against_registry(
    flags: RegistryFlags,
    settings: Settings,
    head: FileTree,
    against: str | None,
    register: bool,
    output: OutputFormat,
    quiet: bool,
    readers: Sequence[DeclaredReader],
    levels: SubjectLevels,
) -> Verdict:
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

    def each(names: Sequence[str]) -> Iterable[str]:
        return progress(names, len(names), "gate") if not quiet else names

    def done(result: "RegisterResult") -> None:
        if not quiet:
            typer.echo(result.describe(), err=True)

    with connect(flags, settings=settings) as conn:
        if not quiet:
            where = head.source("").rstrip("/")
            typer.echo(f"gate: checking {where} against {conn.url}", err=True)
        gate, registered = registry_gate(
            conn.client,
            levels,
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
