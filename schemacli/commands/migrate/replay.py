"""`schemacli migrate replay`: convert dead letters again and write each to v1 once."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import click
import typer

from schemacli.commands.kafka_options import Bootstrap, KafkaProperties
from schemacli.commands.migrate.common import StateDir, StateMappingArg, load_mapping, state_of
from schemacli.commands.options import JsonOutput, count, require_extras
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode, InputError, UsageError
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json

LIMIT = 100_000  # as converters.ops.replay.LIMIT (not imported: --help stays fast)


@registry_flags()
def replay_command(
    mapping_file: StateMappingArg = None,
    bootstrap: Bootstrap = None,
    state_dir: StateDir = None,
    fixed: Annotated[
        Path | None,
        typer.Option(
            "--mapping",
            metavar="FIXED.yaml",
            help="Convert with this (corrected) mapping instead of the deployed one; it must "
            "write the same v1 topic.",
        ),
    ] = None,
    from_dead_letters: Annotated[
        bool,
        typer.Option(
            "--from-dead-letters",
            help="Replay the mapping's dead-letter topic (the default, and for now the only "
            "source).",
        ),
    ] = True,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            metavar="N",
            click_type=count(1, 10_000_000),
            help="Refuse when the dead-letter topic holds more (they are "
            "converted on this machine), 1 to 10000000.",
        ),
    ] = LIMIT,
    kafka_properties: KafkaProperties = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Convert and report what would be written; write nothing."),
    ] = False,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Convert the dead letters of a deployment again — with the deployed mapping, or a
    corrected one (--mapping FIXED.yaml) — and write each to v1 once: a source position already
    in v1 (its marker) is not written again, and the rest go in one Kafka transaction, so a
    second replay writes nothing and a failed one writes nothing. Records that still fail are
    reported by error, never dead-lettered again. MAPPING, or --state-dir (its mapping.json),
    names the deployment.

    Exit codes: 0 every dead letter converted, 1 some still fail (or the mapping is not
    deployable), 2 usage or input error (no deployment, a mapping with an error, more than
    --limit dead letters), 3 Kafka or registry unreachable.
    """
    if not from_dead_letters:
        raise UsageError(
            "replay reads the dead-letter topic: --from-dead-letters is the only source"
        )
    if bootstrap is None:
        raise UsageError("replay needs Kafka: give --bootstrap/-b HOST:PORT")
    with connect(flags) as conn:
        from converters.kafka import settings
        from converters.mapping.reader import load
        from converters.ops.deploy import check_deployable
        from converters.ops.replay import record, replay, same_target
        from converters.pipeline.records import resolve_registry
        from converters.spark import local_spark
        from schemacli.output.migrate import replay_text

        # every local check first (the deployment, its mapping, the fixed one, the properties
        # file); then the registry (a side naming only a subject), then Kafka
        deployed_file = mapping_file or _deployed_mapping(state_dir)
        sdir, plain = state_of(deployed_file, state_dir, deployed=True)
        if not plain.dead_letter_topic:
            raise UsageError(
                "the mapping has no dead_letter_topic: there is nothing to replay",
                location=plain.location("/"),
            )
        if fixed is not None:
            load(fixed, load_schemas=False)
        require_extras("replay", "kafka", "spark")  # it reads Kafka, converts in a local Spark
        properties = settings.load(kafka_properties)
        deployed = load_mapping(conn, deployed_file)
        mapping = same_target(load_mapping(conn, fixed), deployed) if fixed else deployed
        check_deployable(mapping)
        reg = resolve_registry(mapping, conn.client)
        report = replay(
            bootstrap=bootstrap,
            dead_letter_topic=plain.dead_letter_topic,
            mapping=mapping,
            mapping_name=str(fixed or deployed_file),
            reg=reg,
            spark=lambda: local_spark("schemacli-migrate-replay"),
            properties=properties,
            limit=limit,
            dry_run=dry_run,
            say=lambda line: click.echo(line, err=True),
        )
    if not dry_run:
        record(sdir, report)
    if is_json(output):
        emit_json({**asdict(report), "by_error": report.by_error, "ok": report.ok})
    else:
        click.echo(replay_text(report))
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.CHECK_FAILED)


def _deployed_mapping(state_dir: Path | None) -> Path:
    """The resolved mapping ``deploy`` left in the state directory (schemas inline)."""
    from converters.state import has_state, no_state

    if state_dir is None:
        raise UsageError("give the mapping file or --state-dir")
    if not has_state(state_dir):
        raise no_state(state_dir)
    path = state_dir / "mapping.json"
    if not path.is_file():
        raise InputError(
            f"{str(path)!r} does not exist: the deployment's mapping is not there",
            hint="Give the MAPPING file it was deployed with.",
        )
    return path
