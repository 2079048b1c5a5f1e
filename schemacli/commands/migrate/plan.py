"""`schemacli migrate plan`: derive a mapping from v2 to v1."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer

from schemacli.commands.options import JsonOutput
from schemacli.commands.outfile import Force, check_out, write_out
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.commands.store_options import declared_readers
from schemacli.contracts.avro.loader import load_schema_file, load_schema_text
from schemacli.contracts.readers.judge import ReaderVerdict, judge_latest
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json

if TYPE_CHECKING:
    from converters.mapping.model import Mapping


@registry_flags()
def plan_command(
    source: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="V2",
            help="v2 (what the converter reads): an .avsc file or SUBJECT[:VERSION].",
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to", metavar="V1", help="v1 (what it writes): an .avsc file or SUBJECT[:VERSION]."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write the mapping here (default: stdout); an existing file needs --force.",
        ),
    ] = None,
    force: Force = False,
    source_subject: Annotated[
        str | None,
        typer.Option("--source-subject", help="Registry subject of v2 (when --from is a file)."),
    ] = None,
    target_subject: Annotated[
        str | None,
        typer.Option(
            "--target-subject",
            help="Registry subject of v1 (when --to is a file; inferred from "
            "schemas/subjects/<s>/vN.avsc).",
        ),
    ] = None,
    source_topic: Annotated[
        str | None,
        typer.Option("--source-topic", help="The v2 topic [default: subject without -value]."),
    ] = None,
    target_topic: Annotated[
        str | None,
        typer.Option("--target-topic", help="The v1 topic [default: subject without -value]."),
    ] = None,
    dead_letter_topic: Annotated[
        str | None, typer.Option("--dead-letter-topic", help="[default: <v2 topic>.dead-letter]")
    ] = None,
    key_source: Annotated[
        str | None,
        typer.Option(
            "--key-from",
            metavar="V2_KEY",
            help="Also convert Kafka keys: the v2 key schema, an .avsc file or SUBJECT[:VERSION] "
            "(with --key-to). Without it keys are copied byte for byte.",
        ),
    ] = None,
    key_target: Annotated[
        str | None,
        typer.Option(
            "--key-to",
            metavar="V1_KEY",
            help="The v1 key schema: an .avsc file or SUBJECT[:VERSION].",
        ),
    ] = None,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Derive a mapping from v2 to v1: each v1 field matched by name or alias, a conversion
    where one is safe, v1 defaults for what v2 lacks, `unresolved` markers elsewhere.
    With --key-from/--key-to the Kafka key gets a `key:` section planned the same way.

    Exit codes: 0 planned (unresolved markers are listed on stderr; validate refuses them),
    2 input error (an existing --out without --force too: nothing is written), 3 registry error.
    """
    check_out(out, force=force)  # before any registry call: a refusal costs nothing
    with connect(flags) as conn:
        from converters.mapping.dump import dumps
        from converters.mapping.plan import PlanRequest, plan_request
        from schemacli.output.migrate import (
            plan_header,
            plan_json,
            plan_readers_json,
            plan_readers_lines,
            plan_summary,
        )

        request = PlanRequest(
            source,
            target,
            source_subject=source_subject,
            target_subject=target_subject,
            source_topic=source_topic,
            target_topic=target_topic,
            dead_letter_topic=dead_letter_topic,
            key_source=key_source,
            key_target=key_target,
        )
        planned = plan_request(request, out.parent if out is not None else Path.cwd(), conn.client)
        text = dumps(
            planned.mapping,
            header=plan_header(request),
            inline=planned.inline,
            key_inline=planned.key_inline,
        )
        subject = planned.mapping.target.subject
        readers = _v1_readers(planned.mapping, target, conn.settings.store)
        if is_json(output):  # the summary, and the mapping itself unless it went to --out
            if out is not None:
                write_out(out, text, force=force)
            summary = plan_json(planned.mapping, text if out is None else None, out)
            emit_json({**summary, "v1_subject": subject, "readers": plan_readers_json(readers)})
            raise typer.Exit(ExitCode.OK)
        if out is None:
            click.echo(text, nl=False)
        else:
            write_out(out, text, force=force)
        lines = plan_summary(planned.mapping, out) + plan_readers_lines(readers, subject)
        click.echo("\n".join(lines), err=True)
        raise typer.Exit(ExitCode.OK)


def _v1_readers(mapping: "Mapping", target: str, store: Path) -> Sequence[ReaderVerdict]:
    """The declared readers of the v1 subject (from the store), each judged against the v1
    schema the converter writes: whom the converter keeps alive (docs/readers.md)."""
    subject = mapping.target.subject
    if subject is None or mapping.target.schema_json is None:
        return ()
    readers = declared_readers(store, subject)
    if not readers:
        return ()
    where = mapping.target.schema or f"{subject} (v1)"
    if Path(target).is_file():  # placed in the v1 file itself
        writer = load_schema_file(Path(target))
        where = target
    else:  # from the registry: its JSON as the mapping holds it
        writer = load_schema_text(json.dumps(mapping.target.schema_json, indent=2), where)
    label = f"v1 as the converter writes it ({where})"
    return judge_latest(readers, lambda _: (writer, label))
