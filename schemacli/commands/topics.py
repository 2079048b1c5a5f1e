"""`schemacli topics census`: which writer schema versions a topic's data really holds."""

from __future__ import annotations

import sys
from typing import Annotated

import click
import typer

from schemacli.commands.census_run import census_mode, check_topic, run_census
from schemacli.commands.kafka_options import KafkaProperties, RequiredBootstrap
from schemacli.commands.options import DAY, Output, count, seconds
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, registry_flags
from schemacli.commands.store_options import Store
from schemacli.errors import ExitCode
from schemacli.output import OutputFormat, render
from schemacli.output.census import report, text
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo

topics_app = typer.Typer(
    name="topics",
    help="Look at what Kafka topics hold: the census of their writer schema versions.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

Topic = Annotated[str, typer.Argument(help="The Kafka topic to read.")]
CensusRegistry = Annotated[
    str | None,
    typer.Option(
        "--registry",
        "-r",
        metavar="URL",
        help="Name each schema id by this registry (subject and version) instead of the "
        "store's snapshot (registry.json, written by `schemacli pull`).",
    ),
]
Sample = Annotated[
    int | None,
    typer.Option(
        "--sample",
        metavar="N",
        click_type=count(1, 10**12),
        help="Read only the first N records of each partition (of the --since/--until range).",
    ),
]
Since = Annotated[
    str | None,
    typer.Option(
        "--since",
        metavar="WHEN",
        help="Only records at or after WHEN: ISO-8601 (2026-11-01, 2026-11-01T10:00:00Z; UTC "
        "when no zone) or an age: 90s, 30m, 12h, 7d, 2w.",
    ),
]
Until = Annotated[
    str | None,
    typer.Option("--until", metavar="WHEN", help="Only records at or before WHEN (as --since)."),
]
Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        click_type=count(1, 256),
        help="Processes reading partitions in parallel (default: the CPUs; 1: this process).",
    ),
]
ReadTimeout = Annotated[
    float,
    typer.Option(
        "--read-timeout",
        metavar="SECONDS",
        click_type=seconds(1, 7 * DAY),
        help="Stop reading after this many seconds (the census says it is incomplete).",
    ),
]
ConnectTimeout = Annotated[
    float,
    typer.Option(
        "--connect-timeout",
        metavar="SECONDS",
        click_type=seconds(1, 600),
        help="How long to wait for the broker to answer before giving up (exit 3).",
    ),
]
Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        click_type=click.Choice(["auto", "jvm", "python"]),
        help="Who reads the records: jvm (Kafka's own Java consumer in threads; needs java 17+ "
        "and the Kafka client jars, docs/census.md#engines), python (librdkafka in processes), "
        "auto (the JVM when it can run here, else Python).",
    ),
]


@topics_app.command("census")
@registry_flags(CensusRegistry)
def census_command(
    topic: Topic,
    bootstrap: RequiredBootstrap,
    sample: Sample = None,
    since: Since = None,
    until: Until = None,
    jobs: Jobs = None,
    read_timeout: ReadTimeout = 600.0,
    connect_timeout: ConnectTimeout = 10.0,
    kafka_properties: KafkaProperties = None,
    engine: Engine = "auto",
    store: Store = None,
    output: Output = OutputFormat.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Count the writer schema versions in TOPIC's retained data, keys and values apart: per
    schema id its subject and version, records, first and last offset and time per partition,
    and when its data ages out; unframed records, unknown ids and tombstones. Only each
    record's 5-byte header is read (docs/census.md).

    Exit codes: 0 the census was taken, 2 usage or input error (an unknown topic), 3 Kafka or
    the registry unreachable.
    """
    check_topic(topic)
    mode = census_mode(sample, since, until)
    doc = run_census(
        topic,
        bootstrap,
        flags=flags,
        store=store,
        mode=mode,
        kafka_properties=kafka_properties,
        jobs=jobs,
        timeout=read_timeout,
        connect_timeout=connect_timeout,
        engine=engine,
    )
    if is_json(output):
        emit_json(doc)
    elif OutputFormat(output) is OutputFormat.text:
        echo(text(doc), nl=False)
    else:
        typer.echo(render(report(doc), output, color=sys.stdout.isatty()), nl=False)
    raise typer.Exit(ExitCode.OK)
