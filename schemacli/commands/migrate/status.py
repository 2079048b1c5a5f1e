"""`schemacli migrate status`: where the converter is, per partition, and what it counted."""

from __future__ import annotations

from typing import Annotated, Any

import click
import typer

from schemacli.commands.migrate.common import (
    WINDOW_SECONDS,
    Bootstrap,
    KafkaProperties,
    StateDir,
    StateMappingArg,
    Window,
    kafka_client_settings,
    state_of,
)
from schemacli.commands.options import JsonOutput, seconds
from schemacli.commands.options import count as count_of
from schemacli.commands.registry_options import emit_json, is_json
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson


def status_command(
    mapping_file: StateMappingArg = None,
    bootstrap: Bootstrap = None,
    state_dir: StateDir = None,
    window: Window = WINDOW_SECONDS,
    kafka_properties: KafkaProperties = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", "-w", help="Redraw a live view until interrupted (Ctrl-C)."),
    ] = False,
    every: Annotated[
        float,
        typer.Option(
            "--every",
            metavar="SECONDS",
            click_type=seconds(0.2, 3600),
            help="With --watch: seconds between redraws, 0.2 to 3600.",
        ),
    ] = 2.0,
    count: Annotated[
        int | None,
        typer.Option(
            "--count",
            metavar="N",
            click_type=count_of(1, 1_000_000),
            help="With --watch: stop after this many redraws.",
        ),
    ] = None,
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Per partition: the v2 end offset, the job's committed progress and the lag; converted,
    dead-lettered and skipped counts; the rate; the migration's state. With --bootstrap and
    the MAPPING: who still depends on v1 (its consumer groups, producers writing it directly)
    and the groups that moved to v2. --watch redraws it as a live view (rates in and out, lag
    per partition, dead letters, v1's dependents); with -o json, one JSON document per line.

    Exit codes: 0 reported, 2 no such deployment, 3 Kafka unreachable.
    """
    from dataclasses import replace

    from converters.status import dependents_of, status

    # every local check (the mapping, the deployment, the properties file) before Kafka is asked
    sdir, mapping = state_of(mapping_file, state_dir, deployed=True)
    kafka = kafka_client_settings(kafka_properties)

    def look() -> Any:
        topic = mapping.source.topic if mapping else None
        st = status(sdir, topic=topic, bootstrap=bootstrap, properties=kafka)
        if bootstrap and mapping is not None:
            v1, v2 = mapping.target.topic, mapping.source.topic
            deps = dependents_of(sdir, bootstrap, v1, v2, window_seconds=window, properties=kafka)
            st = replace(st, dependents=deps)
        return st

    if watch:
        _watch(look, sdir, every=every, count=count, as_json=is_json(output))
    elif is_json(output):
        emit_json(look())
    else:
        from schemacli.output.migrate import status_text

        click.echo(status_text(look(), sdir))
    raise typer.Exit(ExitCode.OK)


def _watch(look: Any, sdir: Any, *, every: float, count: int | None, as_json: bool) -> None:
    """Redraw until interrupted (or ``count`` times): a rich live view on a terminal, else one
    block (or JSON line) per refresh, for logs and scripts."""
    import itertools
    import sys
    import time

    from schemacli.output.migrate import status_dashboard, status_text

    rounds = range(count) if count is not None else itertools.count()
    try:
        if sys.stdout.isatty() and not as_json:
            from rich.console import Console
            from rich.live import Live

            with Live(console=Console(), auto_refresh=False) as live:
                for n in rounds:
                    live.update(status_dashboard(look(), sdir), refresh=True)
                    if count is None or n + 1 < count:
                        time.sleep(every)
            return
        for n in rounds:
            st = look()
            if as_json:
                emit_json(st, indent=None)
            else:
                click.echo(time.strftime("--- %H:%M:%S ---"))
                click.echo(status_text(st, sdir))
            if count is None or n + 1 < count:
                time.sleep(every)
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)
