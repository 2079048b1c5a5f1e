"""`schemacli migrate finish`: close the migration window once nobody depends on v1."""

from typing import Annotated

import click
import typer

from schemacli.commands.kafka_options import (
    KafkaProperties,
    RequiredBootstrap,
    kafka_client_config,
)
from schemacli.commands.migrate.common import WINDOW_SECONDS, MappingArg, StateDir, Window, state_of
from schemacli.commands.options import DAY, JsonOutput, require_extras, seconds
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json


def finish_command(
    mapping_file: MappingArg,
    bootstrap: RequiredBootstrap,
    state_dir: StateDir = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Finish although v1 still has consumers or producers."),
    ] = False,
    window: Window = WINDOW_SECONDS,
    interval: Annotated[
        float,
        typer.Option(
            "--interval",
            metavar="SECONDS",
            click_type=seconds(0, 3600),
            help="Seconds between the two looks at v1's consumer groups, 0 to 3600.",
        ),
    ] = 5.0,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            click_type=seconds(1, 7 * DAY),
            help="Seconds to wait for the converter to drain, 1 to 604800 (7 days).",
        ),
    ] = 600.0,
    kafka_properties: KafkaProperties = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Close the migration window: refuse while any consumer group still reads v1 or a producer
    still writes it (each reason listed), else wait until the converter has converted every v2
    message, stop it, and write final-report.json / .txt beside its state.

    Exit codes: 0 finished, 1 v1 still has dependents (nothing changed) or the converter cannot
    drain, 2 usage error or no deployment, 3 Kafka unreachable.
    """
    from converters.ops.finish import finish

    # every local check (the mapping, the deployment, the properties file) before Kafka is asked
    sdir, mapping = state_of(mapping_file, state_dir, deployed=True)
    require_extras("finish", "kafka")
    properties = kafka_client_config(kafka_properties)
    report = finish(
        sdir,
        mapping,
        bootstrap,
        force=force,
        window_seconds=window,
        interval=interval,
        timeout=timeout,
        properties=properties,
        say=lambda line: click.echo(line, err=True),
    )
    if is_json(output):
        emit_json(report)
    else:
        click.echo(report.text())
        click.echo(f"report: {sdir / 'final-report.txt'} (and .json)", err=True)
    raise typer.Exit(ExitCode.OK)
