"""`schemacli readers add|list|remove|pull`: the reader schemas consumers declare."""

import contextlib
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated

import typer

from schemacli import redact
from schemacli.commands.options import JsonOutput, Output, seconds
from schemacli.commands.registry_options import (
    NO_FLAGS,
    RegistryFlags,
    RegistryMode,
    connect,
    registry_flags,
)
from schemacli.commands.store_options import (
    NoCache,
    Store,
    declared_readers,
    settings_from_flags,
    shown_store,
    store_tree,
    verdict_cache,
)
from schemacli.contracts.avro.loader import LoadedSchema, load_schema_file
from schemacli.contracts.readers.judge import judge_latest
from schemacli.contracts.store.history import load_history
from schemacli.contracts.store.naming import subject_for_file
from schemacli.errors import ExitCode, RegistryError, UsageError
from schemacli.gitfetch import check_url, cloned, is_git_url
from schemacli.output import OutputFormat, TextOrJson, readers_report, render
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo

if TYPE_CHECKING:
    from schemacli.readerstore import Change

readers_app = typer.Typer(
    name="readers",
    help="Declare, list, remove and pull the reader schemas consumers use (docs/readers.md).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

Consumer = Annotated[
    str, typer.Argument(help="The consumer: its folder under readers/ (letters, digits, . _ -).")
]
SubjectOption = Annotated[
    str | None,
    typer.Option("--subject", "-s", help="The subject the reader reads."),
]


def _report_change(change: "Change", store: Path, output: TextOrJson, verb: str) -> None:
    if is_json(output):
        emit_json({"store": str(store), "action": verb, **change.__dict__})
        return
    for path in change.written:
        echo(f"{verb}: {path}")
    for path in change.removed:
        echo(f"removed: {path}")
    for path in change.unchanged:
        echo(f"unchanged: {path}")


@readers_app.command("add")
def add_command(
    consumer: Consumer,
    schema: Annotated[
        Path, typer.Argument(help="The consumer's reader schema (.avsc; - for stdin).")
    ],
    subject: SubjectOption = None,
    group: Annotated[
        list[str] | None,
        typer.Option("--group", "-g", help="A consumer group it runs as (repeat for more)."),
    ] = None,
    owner: Annotated[str | None, typer.Option("--owner", help="Who owns the consumer.")] = None,
    contact: Annotated[
        str | None, typer.Option("--contact", help="How to reach the owner (email, channel).")
    ] = None,
    store: Store = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Declare that CONSUMER reads a subject with SCHEMA: writes readers/CONSUMER/<subject>.avsc
    and its reader.json (groups added; owner and contact replaced when given).

    The subject defaults to the configured naming strategy's, as for `check`. Exit codes:
    0 written, 2 usage or input error (nothing written).
    """
    from schemacli.readerstore import add_reader

    settings = settings_from_flags(store)
    for text, name in ((owner, "--owner"), (contact, "--contact")):
        if text is not None and not text.strip():
            raise UsageError(f"{name} is empty")
    loaded = load_schema_file(schema)
    chosen = subject or subject_for_file(schema, loaded.value, settings.naming_strategy)
    change = add_reader(
        settings.store, consumer, chosen, loaded, groups=group or (), owner=owner, contact=contact
    )
    _report_change(change, settings.store, output, "written")


@readers_app.command("remove")
def remove_command(
    consumer: Consumer,
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject", "-s", help="Remove only this subject's reader (default: the consumer)."
        ),
    ] = None,
    store: Store = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Remove CONSUMER's reader of --subject, or the whole consumer (its folder).

    Exit codes: 0 removed, 2 not declared or usage error (nothing removed).
    """
    from schemacli.readerstore import remove_reader

    settings = settings_from_flags(store)
    change = remove_reader(settings.store, consumer, subject)
    _report_change(change, settings.store, output, "removed")


@readers_app.command("list")
@registry_flags(RegistryMode)
def list_command(
    subject: Annotated[str | None, typer.Argument(help="Only the readers of this subject.")] = None,
    consumer: Annotated[
        list[str] | None, typer.Option("--consumer", "-c", help="Only this consumer (repeat).")
    ] = None,
    store: Store = None,
    no_cache: NoCache = False,
    output: Output = OutputFormat.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """List the declared readers: consumer, owner, groups, and whether each can read its
    subject's latest version (the store's; the registry's with --registry).

    Exit codes: 0 every reader reads the latest version, 1 one cannot, 2 usage or input error,
    3 registry or network error.
    """

    online = flags.url is not None
    settings = settings_from_flags(store, flags)
    readers = declared_readers(settings.store, subject)
    if consumer:
        known = {r.consumer for r in declared_readers(settings.store)}
        unknown = [c for c in consumer if c not in known]
        if unknown:
            raise UsageError(
                f"no consumer {', '.join(map(repr, unknown))} declares readers in the store",
                hint=f"declared: {', '.join(sorted(known))}" if known else "none is declared",
            )
        readers = [r for r in readers if r.consumer in consumer]
    verdicts = verdict_cache(settings, no_cache)
    shown = str(shown_store(settings.store))
    if online:
        from schemacli.registry.history import is_missing_subject
        from schemacli.registry.schemas import RegistrySchemas

        with connect(flags, settings=settings) as conn:
            road = RegistrySchemas(conn.client)

            def latest_of(name: str) -> tuple[LoadedSchema, str] | None:
                try:
                    latest = road.schema(name, "latest")
                except RegistryError as err:
                    if is_missing_subject(err) or err.status == 404:  # no (live) version
                        return None
                    raise
                return latest.loaded, f"{name} v{latest.number} ({conn.url})"

            names = sorted({r.subject for r in readers})  # asked together, each once
            latest = dict(zip(names, road.map(latest_of, names), strict=True))

            def latest_in_registry(name: str) -> tuple[LoadedSchema, str] | None:
                return latest[name]

            found = judge_latest(readers, latest_in_registry, verdicts=verdicts)
            report = readers_report(found, store=shown, against=conn.url)
    else:
        tree = store_tree(settings.store)

        def latest_in_store(name: str) -> tuple[LoadedSchema, str] | None:
            history = load_history(tree, name)
            if not history:
                return None
            return history[-1], f"{name} v{history[-1].version or len(history)}"

        found = judge_latest(readers, latest_in_store, verdicts=verdicts)
        report = readers_report(found, store=shown, against="the store")
    typer.echo(render(report, output, color=sys.stdout.isatty()), nl=False)
    code = {"compatible": ExitCode.OK, "incompatible": ExitCode.CHECK_FAILED}
    raise typer.Exit(int(code.get(report.verdict, ExitCode.INPUT_ERROR)))


@readers_app.command("pull")
def pull_command(
    source: Annotated[
        str,
        typer.Argument(
            help="The consumer's repository: a local folder, or a git URL (https://, ssh://, "
            "git://, file://, user@host:path)."
        ),
    ],
    ref: Annotated[
        str | None, typer.Option("--ref", help="Branch or tag to clone (git URLs).")
    ] = None,
    path: Annotated[
        str | None,
        typer.Option("--path", help="The folder in the repository that holds readers/."),
    ] = None,
    consumer: Annotated[
        list[str] | None,
        typer.Option("--consumer", "-c", help="Pull only this consumer (repeat)."),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="Seconds the clone may take at most (up to 3600).",
            click_type=seconds(0, 3600, low_open=True),
        ),
    ] = 120.0,
    store: Store = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Copy the reader declarations a consumer keeps in its own repository
    (readers/<consumer>/reader.json and <subject>.avsc) into the store.

    Everything is validated before anything is written; a pulled consumer's folder becomes the
    repository's. Exit codes: 0 pulled, 2 usage or input error (nothing written), 3 the
    repository could not be cloned.
    """

    from schemacli.readerstore import pull_readers

    settings = settings_from_flags(store)
    if path is not None:
        inner = PurePosixPath(path)
        if inner.is_absolute() or ".." in inner.parts or not path.strip():
            raise UsageError(
                f"--path {path!r} must be a folder inside the repository",
                hint="a relative path without '..', e.g. --path schemas",
            )
    check_url(source)
    url = is_git_url(source) or ref is not None
    if not url and not Path(source).exists():
        raise UsageError(
            f"{source!r} is neither a folder nor a git URL",
            hint="give a local folder, or a git URL (https://, ssh://, git://, file://)",
        )
    shown = redact.redact(source)
    with (
        cloned(source, ref=ref, timeout=timeout)
        if url
        else contextlib.nullcontext(Path(source)) as root
    ):
        where = root / path if path else root
        changes = pull_readers(
            settings.store, where, shown=shown, only=consumer or (), rename=bool(url),
            repository=root,
        )  # fmt: skip
    if is_json(output):
        emit_json(
            {
                "store": str(settings.store),
                "source": shown,
                "ref": ref,
                "consumers": [c.__dict__ for c in changes],
            }
        )
        return
    for change in changes:
        echo(
            f"{change.consumer}: {len(change.written)} written, {len(change.removed)} removed, "
            f"{len(change.unchanged)} unchanged (groups {', '.join(change.groups)})"
        )
        for p in change.written:
            echo(f"  written: {p}")
        for p in change.removed:
            echo(f"  removed: {p}")
