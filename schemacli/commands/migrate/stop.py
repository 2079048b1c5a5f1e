"""`schemacli migrate stop`: stop the converter a `deploy` started."""

from __future__ import annotations

from typing import Annotated

import click
import typer

from schemacli.commands.migrate.common import StateDir, StateMappingArg, state_of
from schemacli.commands.options import DAY, JsonOutput, seconds
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json


def stop_command(
    mapping_file: StateMappingArg = None,
    state_dir: StateDir = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            click_type=seconds(0, DAY),
            help="Seconds to wait before SIGKILL, 0 to 86400.",
        ),
    ] = 60.0,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Stop the converter: SIGTERM (the current batch finishes and is committed), wait, report.

    Only the process that `deploy` started is signalled: a pid file naming another process
    (the pid was reused) is reported as stale and nothing is signalled.

    Exit codes: 0 stopped or not running, 1 had to be killed, 2 usage error, no converter
    state in the state dir, or a corrupt or stale pid file.
    """
    from dataclasses import asdict

    from converters.ops.stop import stop
    from schemacli.output.migrate import stop_text

    sdir, _ = state_of(mapping_file, state_dir)
    result = stop(sdir, timeout=timeout)
    if is_json(output):
        emit_json({"state_dir": str(sdir), **asdict(result)})
    else:
        click.echo(stop_text(result, sdir))
    raise typer.Exit(ExitCode.CHECK_FAILED if result.how == "killed" else ExitCode.OK)
