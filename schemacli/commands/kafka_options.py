"""The Kafka options every Kafka-reading command takes, declared once: ``--bootstrap`` (checked
when parsed) and ``--kafka-properties`` (read and translated for librdkafka here)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import click
import typer

from schemacli.commands.options import TextParam, require_extras


class BootstrapServers(TextParam):
    """``--bootstrap`` of every Kafka command: ``HOST:PORT[,HOST:PORT...]``, checked when the
    flag is parsed (one rule for all: an empty value or a credential in it is a usage error,
    exit 2, before anything is read or asked)."""

    name = "bootstrap"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from converters.ops.deploy import bootstrap_problem

        text = str(value)
        if "@" in text:
            self.fail(
                "the bootstrap servers must not carry credentials: put SASL settings in a "
                "--kafka-properties file",
                param,
                ctx,
            )
        problem = bootstrap_problem(text)
        if problem is not None:
            self.fail(
                f"{text[:200]!r}: {problem}; give HOST:PORT[,HOST:PORT...] of Kafka brokers, "
                "e.g. -b broker:9092",
                param,
                ctx,
            )
        return text.strip()


def _bootstrap_option() -> Any:
    """--bootstrap/-b, parsed by BootstrapServers: one declaration for the optional and the
    required form."""
    return typer.Option(
        "--bootstrap",
        "-b",
        metavar="HOST:PORT",
        click_type=BootstrapServers(),
        help="Kafka bootstrap servers, HOST:PORT[,HOST:PORT...].",
    )


Bootstrap = Annotated[str | None, _bootstrap_option()]
RequiredBootstrap = Annotated[str, _bootstrap_option()]
KafkaProperties = Annotated[
    Path | None,
    typer.Option(
        "--kafka-properties",
        help="File of Kafka client properties (k=v lines in the Java client's names: SASL, "
        "TLS): the same file for deploy, status, finish and replay (docs/migration.md).",
    ),
]


def kafka_client_config(path: Path | None) -> dict[str, str]:
    """The --kafka-properties file as librdkafka settings (``converters.kafka.settings``): read,
    checked (an InputError naming the line) and translated; ``{}`` for none."""
    from converters.kafka.settings import librdkafka_properties, load

    if path is not None:
        require_extras("--kafka-properties", "kafka")  # librdkafka judges the file
    return librdkafka_properties(load(path))
