"""`schemacli migrate status`: where the converter is, per partition, and what it counted."""

from __future__ import annotations

import click
import typer

from schemacli.commands.migrate.common import (
    WINDOW_SECONDS,
    Bootstrap,
    StateDir,
    StateMappingArg,
    Window,
    state_of,
)
from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import emit_json, is_json
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson


def status_command(
    mapping_file: StateMappingArg = None,
    bootstrap: Bootstrap = None,
    state_dir: StateDir = None,
    window: Window = WINDOW_SECONDS,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Per partition: the v2 end offset, the job's committed progress and the lag; converted,
    dead-lettered and skipped counts; the rate; the migration's state. With --bootstrap and
    the MAPPING: who still depends on v1 (its consumer groups, producers writing it directly)
    and the groups that moved to v2.

    Exit codes: 0 reported, 2 no such deployment, 3 Kafka unreachable.
    """
    from dataclasses import replace

    from converters.status import dependents_of, status
    from schemacli.output.migrate import status_text

    sdir, mapping = state_of(mapping_file, state_dir)
    st = status(sdir, topic=mapping.source.topic if mapping else None, bootstrap=bootstrap)
    if bootstrap and mapping is not None:
        deps = dependents_of(
            sdir, bootstrap, mapping.target.topic, mapping.source.topic, window_seconds=window
        )
        st = replace(st, dependents=deps)
    if is_json(output):
        emit_json(st)
    else:
        click.echo(status_text(st, sdir))
    raise typer.Exit(ExitCode.OK)
