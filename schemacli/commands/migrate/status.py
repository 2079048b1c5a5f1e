"""`schemacli migrate status`: where the converter is, per partition, and what it counted."""

from __future__ import annotations

import click
import typer

from schemacli.commands.migrate.common import Bootstrap, StateDir, StateMappingArg, state_of
from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import emit_json, is_json
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson


def status_command(
    mapping_file: StateMappingArg = None,
    bootstrap: Bootstrap = None,
    state_dir: StateDir = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Per partition: the v2 end offset, the job's committed progress and the lag; converted,
    dead-lettered and skipped counts; the rate.

    Exit codes: 0 reported, 2 no such deployment, 3 Kafka unreachable.
    """
    from converters.status import status
    from schemacli.output.migrate import status_text

    sdir, mapping = state_of(mapping_file, state_dir)
    st = status(sdir, topic=mapping.source.topic if mapping else None, bootstrap=bootstrap)
    if is_json(output):
        emit_json(st)
    else:
        click.echo(status_text(st, sdir))
    raise typer.Exit(ExitCode.OK)
