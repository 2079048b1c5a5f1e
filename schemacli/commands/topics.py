"""`schemacli topics census`: which writer schema versions a topic's data really holds."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from converters.census.model import ENGINES
from schemacli.commands.census_run import (
    census_mode,
    check_master,
    check_topic,
    kafka_settings,
    run_census,
)
from schemacli.commands.kafka_options import KafkaProperties, RequiredBootstrap
from schemacli.commands.options import DAY, Output, count, require_extras, seconds
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.commands.store_options import Store
from schemacli.config import load_settings
from schemacli.contracts.rules.model import read_contract
from schemacli.errors import ExitCode, UsageError
from schemacli.output import OutputFormat, Report, render
from schemacli.output.census import report, text
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import Progress, echo

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
        click_type=click.Choice(ENGINES),
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
        "--spark-master",  # topics check's first name for it
        metavar="URL",
        help="With --engine spark: the Spark master, local[N] or spark://HOST:PORT (default "
        "local[--jobs], else every core).",
    ),
]


def _emit(
    doc: dict[str, Any],
    output: OutputFormat,
    text: Callable[[dict[str, Any]], str],
    report: Callable[[dict[str, Any]], Report],
) -> None:
    """A topic's document on stdout: as it is (json), ``text`` for people, else its ``report``
    in the chosen format (the census's and the check's alike)."""
    if is_json(output):
        emit_json(doc)
    elif OutputFormat(output) is OutputFormat.text:
        echo(text(doc), nl=False)
    else:
        typer.echo(render(report(doc), output, color=sys.stdout.isatty()), nl=False)


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
    _emit(doc, output, text, report)
    raise typer.Exit(ExitCode.OK)


CheckRegistry = Annotated[
    str | None,
    typer.Option(
        "--registry",
        "-r",
        metavar="URL",
        help="The registry holding the subject's versions (the writers) and its rule set "
        "(required).",
    ),
]
Subject = Annotated[
    str | None,
    typer.Option("--subject", metavar="SUBJECT", help="The value subject [default: TOPIC-value]."),
]
RulesVersion = Annotated[
    int | None,
    typer.Option(
        "--version",
        metavar="N",
        click_type=count(1, 2**31 - 1),
        help="Check the rule set of this version of the subject [default: the latest].",
    ),
]
ContractFile = Annotated[
    Path | None,
    typer.Option(
        "--contract",
        metavar="FILE",
        help="Check the rule set of this contract file (as `schemacli pull` writes "
        "v<N>.contract.json) instead of a registered version's.",
    ),
]
RuleMode = Annotated[
    str,
    typer.Option(
        "--rule-mode",
        click_type=click.Choice(["write", "read"], case_sensitive=False),
        help="Run the rules as a producer's serializer (write: WRITE and WRITEREAD rules) or a "
        "consumer's deserializer (read: READ and WRITEREAD, in reverse order).",
    ),
]
Examples = Annotated[
    int,
    typer.Option(
        "--examples",
        metavar="N",
        click_type=count(0, 1000),
        help="Offsets kept per rule and writer version of the records that fail and err.",
    ),
]
CheckEngine = Annotated[
    str,
    typer.Option(
        "--engine",
        click_type=click.Choice(ENGINES),
        help="Who decodes and runs the rules: jvm (Kafka's Java consumer, Avro's GenericRecord "
        "and Google's CEL-Java, as Confluent's Java serializer; needs java 17+ and its jars, "
        "docs/quality.md#engines), python (librdkafka, fastavro and schemacli's evaluator, as "
        "confluent-kafka-python), spark (Spark's Kafka source, from_avro and the CEL "
        "CONDITIONs compiled to Spark SQL, on --master), auto (the JVM when it can run "
        "here, else python).",
    ),
]


@topics_app.command("check")
@registry_flags(CheckRegistry)
def check_command(
    topic: Topic,
    bootstrap: RequiredBootstrap,
    subject: Subject = None,
    version: RulesVersion = None,
    contract: ContractFile = None,
    rule_mode: RuleMode = "write",
    sample: Sample = None,
    since: Since = None,
    until: Until = None,
    jobs: Jobs = None,
    read_timeout: ReadTimeout = 600.0,
    connect_timeout: ConnectTimeout = 10.0,
    kafka_properties: KafkaProperties = None,
    engine: CheckEngine = "auto",
    master: Master = None,
    examples: Examples = 3,
    output: Output = OutputFormat.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Run the subject's domain rules (CEL and CEL_FIELD) over TOPIC's values: each value is
    decoded with its writer schema and every rule evaluated, as Confluent's serializers run
    them; per writer version and rule, how many records pass, fail and err, with example
    offsets (docs/quality.md).

    Exit codes: 0 every record passed every rule, 1 a rule failed or erred (or a record could
    not be decoded), 2 usage or input error (an unknown topic, no rules), 3 Kafka or the
    registry unreachable.
    """
    from converters.quality.check import RuleSource, take_check
    from schemacli.output import quality

    check_topic(topic)
    mode = census_mode(sample, since, until)
    check_master(master, engine)
    if flags.url is None:
        raise UsageError(
            "topics check needs --registry: the writer schemas and the rule set live there",
            hint="Give --registry URL (or set SCHEMACLI_REGISTRY_URL).",
        )
    if contract is not None and version is not None:
        raise UsageError(
            "--contract and --version both name the rule set to check",
            hint="Give one of them.",
        )
    rules = None
    if contract is not None:
        read = read_contract(contract)
        value = read.document.value
        rules = RuleSource(
            dict(value.get("ruleSet") or {}),
            dict(value.get("metadata") or {}),
            {"subject": None, "version": None, "file": str(contract)},
        )
        if not rules.rule_set.get("domainRules"):
            raise UsageError(
                f"{contract}: the contract file has no domain rules to check",
                hint='Give a file with {"ruleSet": {"domainRules": [...]}}.',
            )
    settings = load_settings(registry=flags)
    require_extras("topics check", "kafka", *(["spark"] if engine == "spark" else []))
    properties, java_properties, engine = kafka_settings(kafka_properties, engine)
    with connect(flags, settings=settings) as conn, Progress(f"check of {topic}") as progress:
        doc = take_check(
            bootstrap,
            topic,
            subject=subject or f"{topic}-value",
            client=conn.client,
            rules=rules,
            version=version,
            mode=mode,
            rule_mode=rule_mode.upper(),
            properties=properties,
            java_properties=java_properties,
            jobs=jobs,
            timeout=read_timeout,
            connect_timeout=connect_timeout,
            progress=progress,
            engine=engine,
            examples=examples,
            spark_master=master,
        )
    _emit(doc, output, quality.text, quality.report)
    raise typer.Exit(ExitCode.OK if doc["verdict"] == "pass" else ExitCode.CHECK_FAILED)
