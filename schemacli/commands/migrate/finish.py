"""`schemacli migrate finish`: close the migration window once nobody depends on v1."""

from typing import Annotated

import click
import typer

from schemacli.commands.migrate.common import (
    WINDOW_SECONDS,
    KafkaProperties,
    MappingArg,
    StateDir,
    Window,
    kafka_client_settings,
    state_of,
)
from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import emit_json, is_json
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson


def finish_command(
    mapping_file: MappingArg,
    bootstrap: Annotated[
        str,
        typer.Option("--bootstrap", "-b", metavar="HOST:PORT", help="Kafka bootstrap servers."),
    ],
    state_dir: StateDir = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Finish although v1 still has consumers or producers."),
    ] = False,
    window: Window = WINDOW_SECONDS,
    interval: Annotated[
        float,
        typer.Option(
            "--interval", min=0, help="Seconds between the two looks at v1's consumer groups."
        ),
    ] = 5.0,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds to wait for the converter to drain.")
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
    from converters.finish import finish

    sdir, mapping = state_of(mapping_file, state_dir)
    report = finish(
        sdir,
        mapping,
        bootstrap,
        force=force,
        window_seconds=window,
        interval=interval,
        timeout=timeout,
        properties=kafka_client_settings(kafka_properties),
        say=lambda line: click.echo(line, err=True),
    )
    if is_json(output):
        emit_json(report)
    else:
        click.echo(report.text())
        click.echo(f"report: {sdir / 'final-report.txt'} (and .json)", err=True)
    raise typer.Exit(ExitCode.OK)
