"""``schemacli check``: is this schema a valid next version of its subject?"""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from schemacli.atomicwrite import edit, write_all
from schemacli.commands.completion import complete_level, complete_subject
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
    NoCache,
    ReadersOnly,
    Store,
    declared_readers,
    settings_from_flags,
    store_tree,
    verdict_cache,
)
from schemacli.config import parse_level
from schemacli.contracts.avro.loader import LoadedSchema, load_schema_file
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.fixes.edits import unified_diff
from schemacli.contracts.fixes.fixing import fix_candidate
from schemacli.contracts.jsontext.source import is_stdin
from schemacli.contracts.readers.judge import with_readers
from schemacli.contracts.store.history import load_history
from schemacli.contracts.store.naming import store_version, subject_for_file
from schemacli.contracts.store.references import store_fallback
from schemacli.contracts.store.tree import SUBJECTS_DIR
from schemacli.errors import UsageError
from schemacli.gittree import git_tree
from schemacli.output import OutputFormat, check_report, render
from schemacli.textfile import resolved


@registry_flags(RegistryMode)
def check_command(
    schema: Annotated[Path, typer.Argument(help="The .avsc file to check (- for stdin).")],
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject",
            "-s",
            help="The subject it would be registered under (default: from the file name "
            "or record name, by the configured naming strategy).",
            autocompletion=complete_subject,
        ),
    ] = None,
    level: Annotated[
        str | None,
        typer.Option(
            "--level",
            "-l",
            help="NONE, BACKWARD, FORWARD, FULL, *_TRANSITIVE or READERS (default: the subject's "
            "configured level, else default-level, else BACKWARD).",
            autocompletion=complete_level,
        ),
    ] = None,
    against: Against = None,
    store: Store = None,
    no_cache: NoCache = False,
    output: Output = OutputFormat.text,
    fix: Fix = False,
    diff: Diff = False,
    unsafe_fixes: UnsafeFixes = False,
    readers_only: ReadersOnly = False,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Check SCHEMA against its subject's history in the local store, and against every
    reader schema the subject's consumers declared there (readers/, docs/readers.md).

    With --registry URL: against the subject's history in that registry, at the level the
    registry applies; the registry (verbose) and the local engine both answer, and a
    disagreement is reported loudly and fails the check. The registry options (credentials,
    TLS, --timeout, --retries) apply only with --registry.

    Every incompatibility carries suggested fixes, each proven to remove it at the level
    (safe, unsafe, or advice only). --fix applies the safe ones (with --unsafe-fixes, the
    unsafe ones too) and writes SCHEMA; --diff shows the same as a diff and writes nothing.

    Exit codes: 0 compatible (or identical to an existing version), 1 incompatible (or, with
    --diff, something to fix), 2 usage or input error, 3 registry or network error.
    """
    fixing = fix_mode(fix, diff, unsafe_fixes, output)
    if fixing and flags.url is not None:
        raise UsageError(
            "--fix and --diff check against the store's history, not a registry's",
            hint="pull the subject first (schemacli pull), then check --fix without --registry",
        )
    if fix and not diff and is_stdin(schema):
        raise UsageError(
            "--fix writes the schema file in place, and standard input is not a file",
            hint="give the file's path, or use --diff to see the fixes",
        )
    settings = settings_from_flags(store, flags)
    tree = None
    if flags.url is None:
        tree = git_tree(against, settings.store) if against else store_tree(settings.store)

    def subject_of(value: Any) -> str:
        return subject or subject_for_file(schema, value, settings.naming_strategy)

    candidate = load_schema_file(  # names no file defines: from the store, as its versions
        schema,
        fallback=store_fallback(tree, subject_of) if tree is not None else None,
    )
    subject = subject_of(candidate.value)
    if readers_only:
        if level is not None and parse_level(level) is not Level.READERS:
            raise UsageError(
                "--readers-only and --level are two levels; give one.",
                hint="--readers-only is --level READERS",
            )
        level = Level.READERS.value
    # The declared readers always come from the store's working tree, also with --registry.
    readers = declared_readers(settings.store, subject)
    if flags.url is not None:
        from schemacli.registry.compare import check_with_registry

        if against:
            raise UsageError("--against and --registry are two histories; give one.")
        chosen_level = parse_level(level) if level is not None else None
        with connect(flags, settings=settings) as conn:
            result, both = check_with_registry(conn.client, candidate, subject, level=chosen_level)
        result = with_readers(result, candidate, readers)
        typer.echo(both, err=True)
        typer.echo(render(check_report(result), output, color=sys.stdout.isatty()), nl=False)
        raise typer.Exit(int(result.verdict.exit_code))
    chosen = parse_level(level) if level is not None else settings.level_for(subject)
    assert tree is not None  # without --registry the store's tree was opened above
    history = load_history(tree, subject)
    if not against:  # the store's own vN: checked against the versions before it
        history = _before_own_version(history, schema, subject, settings.store)
    if fixing:
        _fix(candidate, history, subject, chosen, schema, output, diff, unsafe_fixes)
    verdicts = verdict_cache(settings, no_cache)
    result = check_candidate(candidate, history, subject=subject, level=chosen, verdicts=verdicts)
    result = with_readers(result, candidate, readers, verdicts=verdicts)
    from schemacli.contracts.rules.store import rules_check

    result = rules_check(result, candidate, history, tree, settings.rules)  # docs/rules.md
    typer.echo(render(check_report(result), output, color=sys.stdout.isatty()), nl=False)
    raise typer.Exit(int(result.verdict.exit_code))


def _fix(
    candidate: LoadedSchema,
    history: tuple[LoadedSchema, ...],
    subject: str,
    level: Level,
    schema: Path,
    output: OutputFormat,
    diff: bool,
    unsafe: bool,
) -> None:
    """check --fix / --diff: apply the fixes, then write the file (or print the diff) and the
    report of the fixed file; always exits."""
    fixed = fix_candidate(candidate, history, subject=subject, level=level, unsafe=unsafe)
    result = fixed.report
    if diff:
        typer.echo(unified_diff(candidate.source, fixed.before, fixed.text), nl=False)
        say_fixed([(candidate.source, fixed)], written=False)
        raise typer.Exit(1 if fixed.changed else int(result.verdict.exit_code))
    if fixed.changed:
        write_all(
            [edit(schema, fixed.before, fixed.text, encoding=candidate.document.encoding)],
            hint="check that the file and its folder are writable",
        )
    say_fixed([(candidate.source, fixed)], written=True)
    typer.echo(render(check_report(result), output, color=sys.stdout.isatty()), nl=False)
    raise typer.Exit(int(result.verdict.exit_code))


def _before_own_version(
    history: tuple[LoadedSchema, ...], schema: Path, subject: str, store: Path
) -> tuple[LoadedSchema, ...]:
    """``history`` without the versions from N on when ``schema`` is the store's own
    ``subjects/<subject>/v<N>.avsc`` (a version is checked as gate checks it: against those
    before it, not found identical to itself); ``history`` unchanged otherwise."""
    found = store_version(schema)
    if found is None or found[0] != subject:
        return history
    own = store / SUBJECTS_DIR / subject / f"v{found[1]}.avsc"
    if resolved(schema) != resolved(own):
        return history
    return tuple(h for h in history if (h.version or 0) < found[1])
