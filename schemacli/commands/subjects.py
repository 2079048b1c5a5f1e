"""`schemacli subjects list|show|delete`: what the registry holds."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from schemacli.commands.census_run import check_topic, run_census
from schemacli.commands.kafka_options import Bootstrap, KafkaProperties
from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import (
    NO_FLAGS,
    Connection,
    RegistryFlags,
    connect,
    registry_flags,
)
from schemacli.errors import CheckFailed, RegistryError, UsageError
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo, progress
from schemacli.registry.models import parse_version

if TYPE_CHECKING:  # the client loads requests: only when a command connects
    from schemacli.registry.client import RegistryClient

subjects_app = typer.Typer(
    name="subjects",
    help="List, show and delete subjects in the schema registry.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

Subject = Annotated[str, typer.Argument(help="The subject (context-qualified names pass through).")]


@subjects_app.command("list")
@registry_flags()
def list_command(
    prefix: Annotated[
        str | None, typer.Option("--prefix", help="Only subjects starting with this.")
    ] = None,
    deleted: Annotated[
        bool, typer.Option("--deleted", help="Include soft-deleted subjects.")
    ] = False,
    versions: Annotated[
        bool, typer.Option("--versions", help="Also list each subject's versions.")
    ] = False,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """List the registry's subjects, sorted."""
    with connect(flags) as conn:
        client = conn.client
        names = sorted(client.list_subjects(prefix=prefix, deleted=deleted))
        rows = [
            {
                "subject": s,
                **({"versions": client.list_versions(s, deleted=deleted)} if versions else {}),
            }
            for s in (progress(names, len(names), "subjects") if versions else names)
        ]
        if is_json(output):
            emit_json({"registry": conn.url, "subjects": rows})
            return
        for row in rows:
            extra = f"  versions {', '.join(map(str, row['versions']))}" if versions else ""
            echo(f"{row['subject']}{extra}")
        if not rows:
            echo(f"no subjects in {conn.url}", err=True)


@subjects_app.command("show")
@registry_flags()
def show_command(
    subject: Subject,
    version: Annotated[
        str,
        typer.Option("--version", help="Which version's schema to print: N (1, 2, ...) or latest."),
    ] = "latest",
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Show a subject: its versions and ids, its level, its mode and one version's schema."""
    with connect(flags) as conn:
        from schemacli.registry.history import registry_level
        from schemacli.registry.schemas import RegistrySchemas

        _check_subject(subject, "show")
        wanted = parse_version(version)
        client = conn.client
        road = RegistrySchemas(client)
        numbers = client.list_versions(subject)
        chosen = road.version(subject, wanted)
        versions = road.map(lambda n: road.version(subject, n), numbers)
        ids = {n: v.id for n, v in zip(numbers, versions, strict=True)}
        level = registry_level(client, subject)
        mode = _mode(client)
        if is_json(output):
            emit_json(
                {
                    "registry": conn.url,
                    "subject": subject,
                    "level": level.level.value,
                    "level_source": level.source,
                    "mode": mode,
                    "versions": [{"version": n, "id": i} for n, i in ids.items()],
                    "schema": {
                        "version": chosen.version,
                        "id": chosen.id,
                        "text": chosen.registered_text,
                        "references": [r.to_json() for r in chosen.references],
                    },
                }
            )
            return
        echo(f"subject   {subject}")
        echo(f"level     {level.level.value} ({level.source})")
        echo(f"mode      {mode}")
        echo("versions  " + ", ".join(f"v{n} (id {i})" for n, i in ids.items()))
        for ref in chosen.references:
            echo(f"reference {ref.name} = {ref.subject}:{ref.version}")
        echo(f"schema v{chosen.version}:")
        echo(chosen.stored_text().rstrip("\n"))


# Bidirectional overrides reorder what the terminal shows; treated like control characters.
def _check_subject(subject: str, verb: str) -> None:
    if not subject.strip():  # the client would refuse it too, but could not name the argument
        raise UsageError(
            f"SUBJECT: the subject name {subject!r} is empty.",
            hint=f"Give it as the first argument: schemacli subjects {verb} taxi-rides-value.",
        )


def _mode(client: "RegistryClient") -> str:

    try:
        return client.get_mode()
    except RegistryError as err:
        if err.status == 404:  # Apicurio's ccompat API has no /mode
            return "unknown (the registry has no /mode endpoint)"
        raise


@subjects_app.command("delete")
@registry_flags()
def delete_command(
    subject: Subject,
    version: Annotated[
        str | None,
        typer.Option("--version", help="Delete only this version: N (1, 2, ...) or latest."),
    ] = None,
    permanent: Annotated[
        bool,
        typer.Option(
            "--permanent",
            help="Hard delete: ids and schemas are gone for good (soft-deletes first if needed).",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Really delete.")] = False,
    bootstrap: Bootstrap = None,
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            help="The topic whose data may hold the version (default: by TopicNameStrategy, "
            "orders-value -> orders). Needs --bootstrap.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Delete the version although the topic's data still holds it."
        ),
    ] = False,
    kafka_properties: KafkaProperties = None,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Delete a subject (or one version). Soft by default; nothing happens without --yes.

    With --version N and --bootstrap, a census of the subject's topic (docs/census.md) comes
    first: while records written with that version remain, the delete is refused (exit 1,
    nothing deleted), naming the partitions, the offsets and when they age out; --force
    deletes anyway.
    """
    from schemacli.config import load_settings

    settings = load_settings(registry=flags)
    with connect(flags, settings=settings) as conn:
        _check_subject(subject, "delete")
        if version is not None:
            version = str(parse_version(version))
        what = f"{subject} version {version}" if version else f"subject {subject}"
        if topic is not None and bootstrap is None:
            raise UsageError("--topic names the topic to take a census of: give --bootstrap too")
        if not yes:
            raise UsageError(
                f"Refusing to delete {what} from {conn.url} without --yes.",
                hint="Add --yes to confirm"
                + (" (and --permanent for a hard delete)." if not permanent else "."),
            )
        client = conn.client
        census = None
        if version is not None and bootstrap is not None:
            census = _census_guard(
                conn, settings.store, subject, version, bootstrap, topic, kafka_properties, force
            )
        if version is not None:
            deleted = [_delete_version(client, subject, version, permanent)]
        else:
            deleted = _delete_subject(client, subject, permanent)
        kind = "permanently deleted" if permanent else "soft-deleted"
        if is_json(output):
            emit_json(
                {
                    "registry": conn.url,
                    "subject": subject,
                    "deleted_versions": deleted,
                    "permanent": permanent,
                    **({"census": census} if census is not None else {}),
                }
            )
            return
        echo(f"{subject}: {kind} version(s) {', '.join(map(str, deleted))}")


def _census_guard(
    conn: Connection,
    store: Path,
    subject: str,
    version: str,
    bootstrap: str,
    topic: str | None,
    kafka_properties: Path | None,
    force: bool,
) -> dict[str, Any]:
    """Take the census of the subject's topic; raise CheckFailed (exit 1) while its data holds
    records written with the version (unless ``force``: then say so on stderr). Returns what
    was found, for the JSON answer."""
    from converters.census.guard import holdings, topic_of
    from converters.census.model import Mode
    from schemacli.registry.schemas import RegistrySchemas

    chosen = topic or topic_of(subject)
    if chosen is None:
        raise UsageError(
            f"cannot tell which topic's data subject {subject!r} describes (it ends neither "
            "in -value nor in -key)",
            hint="Name it with --topic, or leave out --bootstrap to delete without a census.",
        )
    check_topic(chosen)
    target = RegistrySchemas(conn.client).version(subject, version)
    doc = run_census(
        chosen,
        bootstrap,
        flags=RegistryFlags(),
        store=store,
        mode=Mode(),
        kafka_properties=kafka_properties,
    )
    found = holdings(doc, target.id)
    lines = [h.text(doc["retention"]) for h in found]
    summary = {
        "topic": chosen,
        "schema_id": target.id,
        "records": sum(h.count for h in found),
        "scanned_at": doc["scanned_at"],
        "holdings": [
            {
                "side": h.side,
                "count": h.count,
                "partitions": list(h.partitions),
                "oldest_ages_out_at_ms": h.oldest_ages_out_at_ms,
                "all_aged_out_at_ms": h.all_aged_out_at_ms,
            }
            for h in found
        ],
        "forced": bool(found) and force,
    }
    if found and not force:
        raise CheckFailed(
            f"{subject} version {target.version} (id {target.id}) is still in the data of topic "
            f"{chosen}:\n  " + "\n  ".join(lines) + "\nNothing was deleted.",
            hint='Consumers replaying that data would fail with "schema not found". Wait '
            "until it ages out, or delete anyway with --force.",
        )
    if found:
        echo(
            f"warning: deleting {subject} version {target.version} (id {target.id}) with --force "
            f"although topic {chosen} still holds it:\n  " + "\n  ".join(lines),
            err=True,
        )
    return summary


def _delete_subject(client: "RegistryClient", subject: str, permanent: bool) -> list[int]:
    from schemacli.registry.errors import RegistryErrorCode

    if not permanent:
        return client.delete_subject(subject)
    try:
        client.delete_subject(subject)  # Confluent requires a soft delete first
    except RegistryError as err:
        if err.error_code != RegistryErrorCode.SUBJECT_SOFT_DELETED:
            raise
    return client.delete_subject(subject, permanent=True)


def _delete_version(client: "RegistryClient", subject: str, version: str, permanent: bool) -> int:
    from schemacli.registry.errors import RegistryErrorCode
    from schemacli.registry.schemas import RegistrySchemas

    if not permanent:
        return client.delete_version(subject, version)
    if version == "latest":
        version = str(RegistrySchemas(client).version(subject, "latest").version)
    try:
        client.delete_version(subject, version)
    except RegistryError as err:
        if err.error_code != RegistryErrorCode.VERSION_SOFT_DELETED:
            raise
    return client.delete_version(subject, version, permanent=True)
