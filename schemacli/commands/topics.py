"""`schemacli topics census`: which writer schema versions a topic's data really holds."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from schemacli.commands.migrate.common import (
    KafkaProperties,
    RequiredBootstrap,
    require_extras,
)
from schemacli.commands.options import DAY, Output, count, seconds
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode, UsageError
from schemacli.output import OutputFormat, render
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import Progress, echo
from schemacli.topics import TOPIC_HINT, topic_problem

if TYPE_CHECKING:
    from converters.census.model import Mode

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
        click_type=click.Choice(["auto", "jvm", "python", "spark"]),
        help="Who reads the records: jvm (Kafka's own Java consumer in threads; needs java 17+ "
        "and the Kafka client jars, docs/census.md#engines), python (librdkafka in processes), "
        "spark (a Spark job, local or on --master; needs pyspark), auto (the JVM when it can "
        "run here, else Python).",
    ),
]
Master = Annotated[
    str | None,
    typer.Option(
        "--master",
        metavar="URL",
        help="With --engine spark: the Spark master, local[N] or spark://HOST:PORT (default "
        "local[--jobs], else every core).",
    ),
]
Store = Annotated[
    Path | None,
    typer.Option("--store", help="The store directory (default: from config, else ./schemas)."),
]


def census_mode(sample: int | None, since: str | None, until: str | None) -> Mode:
    """The census's :class:`Mode` from the flags; a UsageError (exit 2) naming a bad one."""
    from converters.census.model import Mode
    from converters.census.take import parse_when

    now = time.time()
    bounds: dict[str, int | None] = {}
    for flag, value in (("--since", since), ("--until", until)):
        ms = None if value is None else parse_when(value, now=now)
        if value is not None and ms is None:
            raise UsageError(
                f"{flag} {value[:60]!r} is neither an ISO-8601 date/time nor an age",
                hint="Give e.g. 2026-11-01, 2026-11-01T10:00:00Z, 90s, 30m, 12h, 7d or 2w.",
            )
        bounds[flag] = ms
    since_ms, until_ms = bounds["--since"], bounds["--until"]
    if since_ms is not None and until_ms is not None and since_ms > until_ms:
        raise UsageError(
            f"--since ({since}) is after --until ({until}): nothing would be read",
            hint="Swap them, or leave one out.",
        )
    return Mode(sample=sample, since_ms=since_ms, until_ms=until_ms)


def check_topic(topic: str) -> None:
    problem = topic_problem(topic)
    if problem is not None:
        raise UsageError(f"TOPIC {topic[:60]!r} {problem}", hint=TOPIC_HINT)


def run_census(
    topic: str,
    bootstrap: str,
    *,
    flags: RegistryFlags,
    store: Path | None,
    mode: Mode,
    kafka_properties: Path | None,
    jobs: int | None = None,
    timeout: float = 600.0,
    connect_timeout: float = 10.0,
    engine: str = "auto",
    master: str | None = None,
) -> dict[str, Any]:
    """The census document, with a progress bar on a terminal: the one road ``topics census``
    and ``subjects delete`` take."""
    from converters.census.take import take_census
    from converters.kafka.settings import (
        ONLY_LIBRDKAFKA,
        librdkafka_properties,
        load,
        spark_options,
    )
    from schemacli.config import load_settings

    online = flags.url is not None
    settings = load_settings(flags={"store": store}, registry=flags if online else None)
    require_extras("topics census", "kafka")
    written = load(kafka_properties)  # read and judged once: librdkafka's share and Java's
    properties = librdkafka_properties(written)
    # the same file in the Java client's names, for the JVM road
    java_properties = {k.removeprefix("kafka."): v for k, v in spark_options(written).items()}
    if engine == "auto" and any(k.startswith("kafka." + ONLY_LIBRDKAFKA) for k in written):
        engine = "python"  # settings for librdkafka alone: only the Python road has them
    with connect(flags, settings=settings) if online else _offline() as conn:
        with Progress(f"census of {topic}") as progress:
            return take_census(
                bootstrap,
                topic,
                mode=mode,
                client=conn.client if conn is not None else None,
                store=settings.store,
                properties=properties,
                jobs=jobs,
                timeout=timeout,
                connect_timeout=connect_timeout,
                progress=progress,
                engine=engine,
                java_properties=java_properties,
                master=master,
            )


def check_master(master: str | None, engine: str) -> None:
    """--master goes with --engine spark, and names a master Spark takes (exit 2 otherwise)."""
    from converters.census.sparkscan import master_problem

    if master is None:
        return
    if engine != "spark":
        raise UsageError(
            f"--master is for --engine spark, not --engine {engine}",
            hint="Add --engine spark, or leave --master out.",
        )
    problem = master_problem(master)
    if problem is not None:
        raise UsageError(
            f"--master {master[:80]!r} {problem}",
            hint="Give local[N] or spark://HOST:PORT (a standalone master).",
        )


class _offline:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


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
    master: Master = None,
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
    from schemacli.output.census import report, text

    check_topic(topic)
    check_master(master, engine)
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
        master=master,
    )
    if is_json(output):
        emit_json(doc)
    elif OutputFormat(output) is OutputFormat.text:
        echo(text(doc), nl=False)
    else:
        typer.echo(render(report(doc), output, color=sys.stdout.isatty()), nl=False)
    raise typer.Exit(ExitCode.OK)
