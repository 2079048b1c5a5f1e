"""`schemacli migrate deploy`: run the converter job with spark-submit."""

from enum import StrEnum
from typing import Annotated

import click
import typer

from schemacli.commands.kafka_options import KafkaProperties, RequiredBootstrap
from schemacli.commands.migrate.common import MappingArg, StateDir, load_mapping
from schemacli.commands.options import DAY, JsonOutput, count, require_extras, seconds
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json
from schemacli.redact import redact


class Delivery(StrEnum):
    """How the converter writes: ``converters.pipeline.stream.DELIVERIES``."""

    exactly_once = "exactly-once"
    at_least_once = "at-least-once"


@registry_flags()
def deploy_command(
    mapping_file: MappingArg,
    bootstrap: RequiredBootstrap,
    master: Annotated[
        str,
        typer.Option(
            "--master", help="local[2] | yarn | k8s://https://host:port | spark://host:port"
        ),
    ] = "local[2]",
    checkpoint: Annotated[
        str | None,
        typer.Option(
            "--checkpoint",
            help="Spark checkpoint directory or URI, e.g. hdfs:///checkpoints/x (a restart "
            "resumes from it) [default: <state-dir>/checkpoint].",
        ),
    ] = None,
    state_dir: StateDir = None,
    jars: Annotated[
        str | None,
        typer.Option(
            "--jars",
            help="Comma-separated local jars (spark-avro, spark-sql-kafka and deps) "
            "instead of --packages from Maven.",
        ),
    ] = None,
    conf: Annotated[
        list[str] | None, typer.Option("--conf", help="Extra Spark conf key=value (repeatable).")
    ] = None,
    kafka_properties: KafkaProperties = None,
    starting_offsets: Annotated[
        str,
        typer.Option(
            "--starting-offsets",
            help="earliest | latest | Spark's JSON (first start only; a checkpoint wins).",
        ),
    ] = "earliest",
    max_offsets_per_trigger: Annotated[
        int | None,
        typer.Option(
            "--max-offsets-per-trigger",
            metavar="N",
            click_type=count(1, 10**12),
            help="The most v2 messages one micro-batch reads [default: no limit].",
        ),
    ] = None,
    trigger_seconds: Annotated[
        float,
        typer.Option(
            "--trigger-seconds",
            metavar="SECONDS",
            click_type=seconds(0, DAY),
            help="Micro-batch interval in seconds, 0 (as fast as it can) to 86400.",
        ),
    ] = 1.0,
    available_now: Annotated[
        bool,
        typer.Option(
            "--available-now", help="Convert what is in the topic now, then stop (backfill)."
        ),
    ] = False,
    delivery: Annotated[
        Delivery,
        typer.Option(
            "--delivery",
            help="exactly-once (default): each v2 message once in v1 or the dead-letter topic "
            "through any crash, with Kafka transactions (v1 consumers read with "
            "isolation.level=read_committed); at-least-once: Spark's Kafka sink, a crash may "
            "write a batch twice.",
        ),
    ] = Delivery.exactly_once,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the spark-submit command and exit.")
    ] = False,
    detach: Annotated[
        bool,
        typer.Option("--detach", help="Run in the background (pid file and log in the state dir)."),
    ] = False,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Run the converter job for MAPPING with spark-submit.

    Before starting: the mapping must be deployable, and the v1 schema registered under the
    target subject (its id goes into every converted message). Secrets stay off the command
    line: registry credentials go to the job as SCHEMACLI_REGISTRY_* environment variables,
    Kafka secrets in a --kafka-properties file.

    Exit codes: 0 started (detached) / finished, 1 mapping not deployable or job failed,
    2 usage or input error, 3 registry error.
    """
    with connect(flags) as conn:
        from converters.mapping.reader import load
        from converters.ops import deploy
        from converters.state import default_state_dir
        from schemacli.output.migrate import deploy_json, deploy_lines

        reg = conn.registry
        cfg = deploy.DeployConfig(
            mapping_path=mapping_file,
            bootstrap=bootstrap,
            registry_url=reg.url,
            state_dir=state_dir or default_state_dir(load(mapping_file, load_schemas=False)),
            master=master,
            checkpoint=checkpoint,
            jars=tuple(j for j in (jars or "").split(",") if j),
            conf=tuple(conf or ()),
            kafka_properties=kafka_properties,
            starting_offsets=starting_offsets,
            trigger_seconds=trigger_seconds,
            max_offsets_per_trigger=max_offsets_per_trigger,
            available_now=available_now,
            delivery=delivery.value,
            extra_env=reg.connection_env(),  # the job connects as we do, secrets off argv
        )
        # every local check (settings, properties file, spark-submit) before the registry
        if kafka_properties is not None:
            require_extras("--kafka-properties", "kafka")  # librdkafka judges the file
        cfg.check()
        deploy.find_spark_submit(cfg.spark_submit)
        mapping = load_mapping(conn, mapping_file)
        deploy.check_deployable(mapping)
        deployment = deploy.deploy(cfg, mapping, conn.client, dry_run=dry_run, detach=detach)
        watch = f"schemacli migrate status {mapping_file} -b {bootstrap}"
        if is_json(output):
            emit_json(deploy_json(deployment, cfg, watch))
        else:
            out, err = deploy_lines(deployment, cfg, watch=watch)
            for line in out:
                click.echo(redact(line))  # a --conf secret in the dry run's command
            for line in err:
                click.echo(redact(line), err=True)
        launched = deployment.launched
        failed = launched is not None and launched.returncode not in (None, 0)
        raise typer.Exit(ExitCode.CHECK_FAILED if failed else ExitCode.OK)
