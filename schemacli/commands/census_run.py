"""The census road ``topics census`` and ``subjects delete --version N`` both take: the
flags turned into the census's mode, the topic's name checked, the census taken with a progress
bar (``converters.census.take``)."""

from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemacli.commands.options import require_extras
from schemacli.commands.registry_options import RegistryFlags, connect
from schemacli.errors import UsageError
from schemacli.output.terminal import Progress
from schemacli.topics import TOPIC_HINT, topic_problem

if TYPE_CHECKING:  # the census's modules load Kafka's settings: only when one is taken
    from converters.census.model import Mode


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


def kafka_settings(
    kafka_properties: Path | None, engine: str
) -> tuple[dict[str, str], dict[str, str], str]:
    """The --kafka-properties file read and judged once (``topics census``, ``topics check``):
    its settings for librdkafka (the Python road), the same in the Java client's names (the JVM
    and Spark roads), and the engine (``auto`` is ``python`` when the file holds settings for
    librdkafka alone: only the Python road has them)."""
    from converters.kafka.settings import (
        ONLY_LIBRDKAFKA,
        librdkafka_properties,
        load,
        spark_options,
    )

    written = load(kafka_properties)
    properties = librdkafka_properties(written)
    java_properties = {k.removeprefix("kafka."): v for k, v in spark_options(written).items()}
    if engine == "auto" and any(k.startswith("kafka." + ONLY_LIBRDKAFKA) for k in written):
        engine = "python"
    return properties, java_properties, engine


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
    from schemacli.commands.store_options import settings_from_flags  # the store's core too

    online = flags.url is not None
    settings = settings_from_flags(store, flags)
    require_extras("topics census", "kafka")
    properties, java_properties, engine = kafka_settings(kafka_properties, engine)
    with connect(flags, settings=settings) if online else nullcontext() as conn:
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
