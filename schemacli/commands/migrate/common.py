"""What the migrate commands share: their argument types, reading a mapping (its schemas from the
registry when it names only a subject), finding a deployment's state directory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, overload

import click
import typer

from schemacli.commands.options import DAY, seconds
from schemacli.commands.registry_options import Connection
from schemacli.errors import UsageError

if TYPE_CHECKING:
    from converters.mapping.model import Mapping  # the mapping itself stays lazy: --help

MappingArg = Annotated[Path, typer.Argument(help="The mapping file (YAML, `version: 1`).")]
StateMappingArg = Annotated[
    Path | None, typer.Argument(help="The mapping file (finds the state dir).")
]


class BootstrapServers(click.ParamType):
    """``--bootstrap`` of every migrate command: ``HOST:PORT[,HOST:PORT...]``, checked when the
    flag is parsed (one rule for all: an empty value or a credential in it is a usage error,
    exit 2, before anything is read or asked)."""

    name = "bootstrap"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
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
StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="Where the deployment keeps its state "
        "[default: .schemacli/migrate/<v2 topic>--<v1 topic>].",
    ),
]
KafkaProperties = Annotated[
    Path | None,
    typer.Option(
        "--kafka-properties",
        help="File of Kafka client properties (k=v lines in the Java client's names: SASL, "
        "TLS): the same file for deploy, status, finish and replay (docs/migration.md).",
    ),
]
# as converters.ops.dependents.WINDOW_SECONDS (not imported: --help stays fast)
WINDOW_SECONDS = 900.0
Window = Annotated[
    float,
    typer.Option(
        "--window",
        metavar="SECONDS",
        click_type=seconds(1, 365 * DAY),
        help="How far back to look for messages written to v1 directly (not by the converter), "
        "1 s to 365 days.",
    ),
]


EXTRAS = {"kafka": "confluent_kafka", "spark": "pyspark"}  # extra -> the module it brings


def require_extras(what: str, *extras: str) -> None:
    """A UsageError (exit 2) naming the extras ``what`` needs that are not installed, and how to
    install them; checked with the local checks, before anything is read from Kafka."""
    import importlib.util

    missing = [extra for extra in extras if importlib.util.find_spec(EXTRAS[extra]) is None]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise UsageError(
            f"{what} needs the {' and '.join(missing)} extra{plural}, which the base install "
            "leaves out",
            hint=f"Install {'them' if plural else 'it'}: `scripts/bootstrap --all` in a "
            f"checkout, or `pip install 'schemacli[{','.join(missing)}]'`.",
        )


def load_mapping(conn: Connection, mapping_file: Path) -> Mapping:
    """The mapping with every side's schema: from its file, inline, or (a side naming only a
    ``subject``) from the registry (``converters.mapping.schemas.with_registry_schemas``)."""
    from converters.mapping.reader import load
    from converters.mapping.schemas import missing_schemas, with_registry_schemas
    from schemacli.registry.schemas import RegistrySchemas

    mapping = load(mapping_file)
    if not missing_schemas(mapping):
        return mapping
    return with_registry_schemas(mapping, RegistrySchemas(conn.client))


def kafka_client_settings(path: Path | None) -> dict[str, str]:
    """The --kafka-properties file as librdkafka settings (``converters.kafka.settings``): read,
    checked (an InputError naming the line) and translated; ``{}`` for none."""
    from converters.kafka.settings import librdkafka_properties, load

    if path is not None:
        require_extras("--kafka-properties", "kafka")  # librdkafka judges the file
    return librdkafka_properties(load(path))


@overload
def state_of(
    mapping_file: Path, state_dir: Path | None, *, deployed: bool = False
) -> tuple[Path, Mapping]: ...
@overload
def state_of(
    mapping_file: Path | None, state_dir: Path | None, *, deployed: bool = False
) -> tuple[Path, Mapping | None]: ...
def state_of(
    mapping_file: Path | None, state_dir: Path | None, *, deployed: bool = False
) -> tuple[Path, Mapping | None]:
    """The state directory of a deployment (given, or the mapping's default) and the mapping
    (None when only the directory is given), both read locally. ``deployed``: the directory
    must hold a deployment's state (an InputError, exit 2, naming it) — checked here, before
    a command asks Kafka or the registry anything."""
    from converters.mapping.reader import load
    from converters.state import default_state_dir, has_state, no_state

    mapping = load(mapping_file, load_schemas=False) if mapping_file else None
    if state_dir is not None:
        sdir = state_dir
    elif mapping is not None:
        sdir = default_state_dir(mapping)
    else:
        raise UsageError("give the mapping file or --state-dir")
    if deployed and not has_state(sdir):
        raise no_state(sdir)
    return sdir, mapping
