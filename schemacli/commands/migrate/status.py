"""`schemacli migrate status`: where the converter is, per partition, and what it counted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from schemacli.commands.kafka_options import Bootstrap, KafkaProperties, kafka_client_config
from schemacli.commands.migrate.common import (
    WINDOW_SECONDS,
    StateDir,
    StateMappingArg,
    Window,
    state_of,
)
from schemacli.commands.options import JsonOutput, require_extras, seconds
from schemacli.commands.options import count as count_of
from schemacli.commands.store_options import declared_readers
from schemacli.config import load_settings
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.errors import ExitCode, NetworkError, SchemacliError, error_text
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, error_json, is_json

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from converters.mapping.model import Mapping
    from converters.ops.status import Status


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
    with _errors_as_json_lines() if watch and is_json(output) else nullcontext():
        # every local check (the mapping, the deployment, the properties file) before Kafka
        sdir, mapping = state_of(mapping_file, state_dir, deployed=True)
        if bootstrap:
            require_extras("status with --bootstrap", "kafka")
        kafka = kafka_client_config(kafka_properties)
        _show(mapping, sdir, bootstrap, window, kafka, watch, every, count, output)
    raise typer.Exit(ExitCode.OK)


def _show(
    mapping: Mapping | None,
    sdir: Path,
    bootstrap: str | None,
    window: float,
    kafka: dict[str, str],
    watch: bool,
    every: float,
    count: int | None,
    output: TextOrJson,
) -> None:
    from dataclasses import replace

    from converters.ops.dependents import with_declared_readers
    from converters.ops.status import dependents_of, status

    declared = _declared_readers(mapping) if bootstrap and mapping is not None else []

    def look() -> Status:
        topic = mapping.source.topic if mapping else None
        st = status(sdir, topic=topic, bootstrap=bootstrap, properties=kafka)
        if bootstrap and mapping is not None:
            v2, v1 = mapping.topics()
            deps = dependents_of(sdir, bootstrap, v1, v2, window_seconds=window, properties=kafka)
            deps = with_declared_readers(deps, mapping.target.subject, declared)
            st = replace(st, dependents=deps)
        return st

    if watch:
        _watch(look, sdir, every=every, count=count, as_json=is_json(output))
    elif is_json(output):
        emit_json(look())
    else:
        from schemacli.output.migrate import status_text

        click.echo(status_text(look(), sdir))


def _watch(
    look: Callable[[], Status], sdir: Path, *, every: float, count: int | None, as_json: bool
) -> None:
    """Redraw until interrupted (or ``count`` times): a rich live view on a terminal, else one
    block per refresh, for logs. With ``as_json``, every line on stdout is one compact JSON
    document: a snapshot, or an error (then the watch ends with the error's exit code, except
    Kafka out of reach, which is reported and looked at again next round)."""
    import itertools
    import sys
    import time

    from schemacli.output.migrate import json_line, status_dashboard, status_text

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
        last: Status | dict[str, Any] | None = None
        for n in rounds:
            if as_json:
                last = _look_or_error(look)
                click.echo(json_line(last))
            else:
                st = look()
                click.echo(time.strftime("--- %H:%M:%S ---"))
                click.echo(status_text(st, sdir))
            if count is None or n + 1 < count:
                time.sleep(every)
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)
        return
    if isinstance(last, dict):  # --count ran out on Kafka out of reach: say so in the exit code
        raise typer.Exit(int(last["error"]["exit_code"]))


def _look_or_error(look: Callable[[], Status]) -> Status | dict[str, Any]:
    """A snapshot, or the error document of Kafka out of reach (its words on stderr); any other
    error ends the watch (``_errors_as_json_lines``)."""

    try:
        return look()
    except NetworkError as err:
        return _error_document(err)  # Kafka may come back: keep watching


def _error_document(err: SchemacliError) -> dict[str, Any]:
    import json

    click.echo(error_text(err), err=True)
    # the one error renderer's document, to put on one line
    document: dict[str, Any] = json.loads(error_json(err))
    return document


@contextmanager
def _errors_as_json_lines() -> Iterator[None]:
    """An error (a missing deployment, a corrupt state file) as one compact JSON line on
    stdout, like the snapshots before it, and the error's exit code."""
    from schemacli.output.migrate import json_line

    try:
        yield
    except SchemacliError as err:
        click.echo(json_line(_error_document(err)))
        raise typer.Exit(int(err.exit_code)) from None


def _declared_readers(mapping: Mapping) -> list[DeclaredReader]:
    """The store's declared readers of the v1 subject (docs/readers.md), to label v1's groups."""
    subject = mapping.target.subject
    if subject is None:
        return []
    return declared_readers(load_settings().store, subject)
