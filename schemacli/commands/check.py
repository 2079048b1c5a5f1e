"""``schemacli check``: is this schema a valid next version of its subject?"""

import sys
from pathlib import Path
from typing import Annotated

import typer

from schemacli.atomicwrite import edit, write_all
from schemacli.commands.completion import complete_level, complete_subject
from schemacli.commands.options import Output, check_fix_flags
from schemacli.commands.registry_options import (
    NO_FLAGS,
    RegistryFlags,
    RegistryMode,
    connect,
    registry_flags,
)
from schemacli.contracts.evolution.cachedir import default_cache_dir
from schemacli.contracts.fixes.edits import unified_diff
from schemacli.errors import UsageError
from schemacli.output import OutputFormat, check_report, render
from schemacli.textfile import resolved

Against = Annotated[
    str | None,
    typer.Option(
        "--against",
        metavar="git:REF",
        help="Use the store as it was at a git ref (e.g. git:origin/main) instead of the "
        "working tree.",
    ),
]
Store = Annotated[
    Path | None,
    typer.Option("--store", help="The store directory (default: from config, else ./schemas)."),
]
ReadersOnly = Annotated[
    bool,
    typer.Option(
        "--readers-only",
        help="Judge only against the readers consumers declared in the store (readers/), "
        "not against earlier versions: the level READERS for every subject.",
    ),
]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Neither read nor write the verdict cache (cache-dir in the config, "
        "SCHEMACLI_CACHE_DIR, else the user cache directory).",
    ),
]

Fix = Annotated[
    bool,
    typer.Option(
        "--fix",
        help="Apply the safe suggested fixes to SCHEMA (re-checked until nothing more applies) "
        "and write it in place, atomically; the report is the check of the fixed file.",
    ),
]
Diff = Annotated[
    bool,
    typer.Option(
        "--diff",
        help="Print the fixes --fix would make as a unified diff; write nothing. Exit 1 when "
        "there is something to fix.",
    ),
]
UnsafeFixes = Annotated[
    bool,
    typer.Option(
        "--unsafe-fixes",
        help="With --fix or --diff: apply unsafe fixes too (they change a type, a name or a "
        "size, or revert a change; read them first).",
    ),
]


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
    from schemacli.config import load_settings, parse_level
    from schemacli.contracts.avro.loader import load_schema_file
    from schemacli.contracts.evolution.check import check_candidate
    from schemacli.contracts.evolution.levels import Level
    from schemacli.contracts.jsontext.source import is_stdin
    from schemacli.contracts.readers.declared import load_readers
    from schemacli.contracts.readers.judge import with_readers
    from schemacli.contracts.store.naming import subject_for_file
    from schemacli.contracts.store.store import git_tree, load_history, store_fallback

    fixing = fix or diff
    check_fix_flags(fix=fix, diff=diff, unsafe=unsafe_fixes, output=output)
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
    online = flags.url is not None  # offline, no registry setting is read (nor can fail)
    settings = load_settings(flags={"store": store}, registry=flags if online else None)
    tree = None
    if flags.url is None:
        tree = git_tree(against, settings.store) if against else store_tree(settings.store)

    def subject_of(value) -> str:
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
    readers = load_readers(shown_store(settings.store), subject)
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
    typer.echo(render(check_report(result), output, color=sys.stdout.isatty()), nl=False)
    raise typer.Exit(int(result.verdict.exit_code))


def _fix(candidate, history, subject, level, schema: Path, output, diff: bool, unsafe: bool):
    """check --fix / --diff: apply the fixes, then write the file (or print the diff) and the
    report of the fixed file; always exits."""
    from schemacli.contracts.fixes.fixing import fix_candidate

    fixed = fix_candidate(candidate, history, subject=subject, level=level, unsafe=unsafe)
    result = fixed.report
    if diff:
        typer.echo(unified_diff(candidate.source, fixed.before, fixed.text), nl=False)
        _say_fixed(fixed, written=None)
        code = 1 if fixed.changed else int(result.verdict.exit_code)
        raise typer.Exit(code)
    if fixed.changed:
        write_all(
            [edit(schema, fixed.before, fixed.text, encoding=candidate.document.encoding)],
            hint="check that the file and its folder are writable",
        )
    _say_fixed(fixed, written=candidate.source if fixed.changed else None)
    typer.echo(render(check_report(result), output, color=sys.stdout.isatty()), nl=False)
    raise typer.Exit(int(result.verdict.exit_code))


def _say_fixed(fixed, written: str | None) -> None:
    """On stderr: how many fixes applied (and where written), and what is left."""
    count = len(fixed.applied)
    left = sum(1 for f in fixed.report.findings if f.fixes and f.severity == "error")
    if count:
        where = f"; wrote {written}" if written else ""
        typer.echo(f"fixed {count} problem(s){where}", err=True)
    else:
        typer.echo("nothing to fix", err=True)
    for fix in fixed.applied:
        typer.echo(f"  applied ({fix.applicability.value}): {fix.title}", err=True)
    if left and not fixed.report.compatible:
        typer.echo(
            f"{left} problem(s) left: see their fixes (unsafe ones apply with --unsafe-fixes)",
            err=True,
        )


def _before_own_version(history: tuple, schema: Path, subject: str, store: Path) -> tuple:
    """``history`` without the versions from N on when ``schema`` is the store's own
    ``subjects/<subject>/v<N>.avsc`` (a version is checked as gate checks it: against those
    before it, not found identical to itself); ``history`` unchanged otherwise."""
    from schemacli.contracts.store.naming import store_version
    from schemacli.contracts.store.store import SUBJECTS_DIR

    found = store_version(schema)
    if found is None or found[0] != subject:
        return history
    own = store / SUBJECTS_DIR / subject / f"v{found[1]}.avsc"
    if resolved(schema) != resolved(own):
        return history
    return tuple(h for h in history if (h.version or 0) < found[1])


def verdict_cache(
    settings, no_cache: bool
):  # -> schemacli.contracts.evolution.verdicts.VerdictCache
    """The verdict cache in the configured directory (else the user cache directory), or in
    memory only with --no-cache."""
    from schemacli.contracts.evolution.verdicts import VerdictCache

    if no_cache:
        return VerdictCache()
    return VerdictCache(settings.cache_dir or default_cache_dir())


def shown_store(store: Path) -> Path:
    """``store`` relative to the current directory when it is below it (so files found in it,
    such as the declared readers, are named that way in messages), else as it is."""
    import os

    try:
        shown = os.path.relpath(store)
    except ValueError:  # another drive on Windows
        return store
    return store if shown.startswith("..") else Path(shown)


def store_tree(store: Path):  # -> schemacli.contracts.store.store.FileTree
    """The working-tree store, named relative to the current directory in messages."""
    import os

    from schemacli.contracts.store.store import FileTree

    try:
        shown = os.path.relpath(store)
    except ValueError:  # another drive on Windows
        shown = str(store)
    return FileTree(store, display_root=str(store) if shown.startswith("..") else shown)
