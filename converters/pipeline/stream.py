"""The converter's streaming query: Kafka source -> the records road -> Kafka, one checkpoint.

:func:`start` prepares what the job needs before Spark runs (the mapping, the registry's schema
ids, the compiled SQL, the Kafka properties), :func:`run` builds and starts the query and
:func:`watch` waits for it. Delivery is exactly-once by default, each batch written through
``converters.pipeline.txsink`` by the JVM writer on the executors (one Kafka transaction per v2
partition, fenced and resumed by the converter's committed offsets; the counts committed with the
records; its jar on Spark's classpath, ``converters.pipeline.jvmjar``); or at-least-once, with
Spark's own Kafka sink and the counts from Spark's observed metrics. Either way the counts land
in ``<state-dir>/progress.json`` (``converters.pipeline.progress``).

Errors are raised (``SchemacliError``); the job's entry point (``converters/job.py``) turns them
into words and an exit code. The query's own failure is :func:`watch`'s to report.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converters.kafka import settings
from converters.kafka.settings import (
    FAILOVER_CONSUMER,
    FAILOVER_PRODUCER,
    SPARK_SOURCE_FAILOVER,
    librdkafka_properties,
    spark_options,
    with_failover,
)
from converters.mapping.model import Mapping
from converters.mapping.reader import load
from converters.mapping.recordplan import Road, record_plan
from converters.mapping.sql import compiled_or_fail
from converters.pipeline.fastroad import fast_batches, plan_json
from converters.pipeline.progress import ProgressFile, follow
from converters.pipeline.records import RegistryPlan, build_output, build_records, resolve_registry
from converters.pipeline.txsink import (
    SinkConfig,
    WriterMissing,
    jvm_writer,
    progress_group,
    take_over,
    write_batch,
)
from converters.state import write_text
from schemacli.errors import CheckFailed, NetworkError, UsageError
from schemacli.redact import redact
from schemacli.registry.client import RegistryClient
from schemacli.registry.settings import RegistryFlags

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

# Client settings for moving records in bulk (Kafka's defaults favour latency per record): the
# source polls up to 10,000 records at a time (default 500) with bigger fetches, the sink's
# producer fills 1 MB batches and waits up to 100 ms for them. Measured on 1M taxi rides, warm,
# local[2] (bench/bench_converter.py): 98k -> 131-140k msg/s. And the settings that bound the
# stall after a broker is lost (converters.kafka.settings.FAILOVER_*: about 12 s instead of a
# minute; docs/migration.md). A --kafka-properties file overrides them.
SOURCE_DEFAULTS = {
    "kafka.isolation.level": "read_committed",  # a v2 record its producer aborted: never converted
    "kafka.max.poll.records": "10000",
    "kafka.max.partition.fetch.bytes": "10485760",
    "kafka.fetch.max.bytes": "52428800",
    **{f"kafka.{k}": v for k, v in FAILOVER_CONSUMER.items()},
    **SPARK_SOURCE_FAILOVER,
}
SINK_DEFAULTS = {
    "kafka.linger.ms": "100",
    "kafka.batch.size": "1048576",
    **{f"kafka.{k}": v for k, v in FAILOVER_PRODUCER.items()},
}
DELIVERIES = ("exactly-once", "at-least-once")
ROADS = ("auto", "sql")  # --road: auto takes the fast road when the mapping has one
# Spark SQL settings of the job unless given with --conf. HotSpot does not JIT-compile a method
# of more than 8,000 bytes of bytecode, and the whole-stage code of a mapping with a handful of
# conversions can be bigger (the taxi example: 6.0 KB; five parse_number fields: 7.5 KB; ten:
# 9.8 KB). Spark's documentation recommends 8000 on HotSpot: such a stage then falls back to code
# per operator, which is compiled. Measured on 500k records, local[2]: 2x faster with a 9 KB
# stage, 1.7x with twenty fields (bench/README.md).
SQL_DEFAULTS = {"spark.sql.codegen.hugeMethodLimit": "8000"}


def apply_sql_defaults(spark: SparkSession) -> dict[str, str]:
    """Set :data:`SQL_DEFAULTS` not given to spark-submit with --conf; returns what was set."""
    given = spark.sparkContext.getConf()
    applied = {k: v for k, v in SQL_DEFAULTS.items() if not given.contains(k)}
    for key, value in applied.items():
        spark.conf.set(key, value)
    return applied


def start(args: argparse.Namespace) -> int:
    """Prepare and run the converter for the job's command line (``converters/job.py``); the
    exit code of the query. Raises SchemacliError for the mapping (InputError, CheckFailed),
    the registry (RegistryError), and what :func:`run` refuses before the query starts."""
    mapping = load(args.mapping)
    # The CLI's road: flags (here --registry; credentials from SCHEMACLI_REGISTRY_*, set by
    # deploy.child_env) -> RegistrySettings -> a client handed inward.
    with RegistryClient(RegistryFlags(url=args.registry).resolve()) as client:
        reg = resolve_registry(mapping, client)
    compiled_or_fail(mapping)
    if mapping.key is not None:
        compiled_or_fail(mapping.key)
    state = Path(args.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    counted_by = "transactions" if args.delivery == "exactly-once" else "observed-metrics"
    progress = ProgressFile(state / "progress.json", counted_by=counted_by)
    kafka = settings.load(args.kafka_properties)
    return run(args, mapping, reg, progress, kafka)


def run(
    args: argparse.Namespace,
    mapping: Mapping,
    reg: RegistryPlan,
    progress: ProgressFile,
    kafka: dict[str, str],
) -> int:
    """Start the query and wait for it (:func:`watch`); its exit code. Raises CheckFailed when
    Spark refuses the compiled mapping, UsageError when the JVM writer's jar is not on Spark's
    classpath, NetworkError when Kafka cannot say what earlier runs committed."""
    from pyspark.errors import AnalysisException, ParseException
    from pyspark.sql import SparkSession

    state = progress.path.parent
    write_text(state / "driver.pid", str(os.getpid()))  # `migrate stop` sends SIGTERM here
    spark = SparkSession.builder.appName(
        f"schemacli-migrate {mapping.source.topic}->{mapping.target.topic}"
    ).getOrCreate()
    apply_sql_defaults(spark)

    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("subscribe", mapping.source.topic)
        .option("startingOffsets", args.starting_offsets)
        .option("includeHeaders", "true")
    )
    if args.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(args.max_offsets_per_trigger))
    for k, v in with_failover(SOURCE_DEFAULTS, spark_options(kafka), "kafka.").items():
        reader = reader.option(k, v)
    try:
        if args.delivery == "exactly-once":
            road = choose_road(mapping, getattr(args, "road", "auto"))
            if road.fast and reg.target_rules is not None:  # pipeline.v1rules runs in SQL
                road = Road(why="v1's rule set is applied on the SQL road")
            print(f"converter road: {road.describe()}", file=sys.stderr, flush=True)
            records = build_records(reader.load(), mapping, reg)  # the mapping first: exit 1
            try:
                jvm_writer(spark)
            except WriterMissing as exc:
                raise writer_missing(exc) from exc
            sink = sink_config(args, mapping, kafka)
            start_counts(sink, progress)
            if road.fast:
                batches = fast_batches(sink, progress, plan_json(mapping, reg, road))
                writer = reader.load().writeStream.foreachBatch(batches)
            else:
                writer = records.writeStream.foreachBatch(transactional_batches(sink, progress))
        else:
            out = build_output(reader.load(), mapping, reg)
            writer = out.writeStream.format("kafka").option("kafka.acks", "all")
            writer = writer.option("kafka.bootstrap.servers", args.bootstrap)
            for k, v in {**SINK_DEFAULTS, **spark_options(kafka)}.items():
                writer = writer.option(k, v)
    except (AnalysisException, ParseException) as exc:
        # A `convert: sql` expression Spark refuses (an unknown column, a syntax error): the
        # light check of `migrate validate` without --spark cannot see it.
        raise CheckFailed(
            f"Spark refuses the compiled mapping: {exc.getMessage() or exc}",
            hint="Fix the expression; `schemacli migrate validate MAPPING --spark` shows it "
            "without starting the job.",
        ) from exc
    writer = writer.option("checkpointLocation", args.checkpoint).outputMode("append")
    writer = (
        writer.trigger(availableNow=True)
        if args.available_now
        else writer.trigger(processingTime=f"{args.trigger_seconds} seconds")
    )
    query = writer.start()
    write_text(
        state / "query.json",
        json.dumps(
            {"id": str(query.id), "run_id": str(query.runId), "checkpoint": args.checkpoint}
        ),
    )
    print(f"converter started: query {query.id}", file=sys.stderr, flush=True)
    return watch(query, progress)


def choose_road(mapping: Mapping, wanted: str = "auto") -> Road:
    """The exactly-once writer's road for ``mapping``: the fast road when ``wanted`` is auto and
    every rule has a record-plan operation (``converters.mapping.recordplan``), else SQL."""
    if wanted == "sql":
        return Road(why="--road sql")
    return record_plan(mapping)


def sink_config(args: argparse.Namespace, mapping: Mapping, kafka: dict[str, str]) -> SinkConfig:
    """The exactly-once writer's settings: the Spark source's Kafka properties, as they are for
    the JVM writer and in librdkafka's names for the driver's reads
    (``converters.kafka.settings``)."""
    v2, v1 = mapping.topics()
    return SinkConfig(
        bootstrap=args.bootstrap,
        source_topic=v2,
        group=progress_group(v2, v1),
        client=librdkafka_properties(kafka),
        spark=spark_options(kafka),
    )


def writer_missing(exc: WriterMissing) -> UsageError:
    return UsageError(
        str(exc),
        hint="Deploy with `schemacli migrate deploy` (it adds the jar), add the jar to your "
        "spark-submit's --jars, or choose --delivery at-least-once.",
    )


def start_counts(sink: SinkConfig, progress: ProgressFile) -> None:
    """Fence earlier runs' writers and load what they committed into progress.json
    (``txsink.take_over``). Raises NetworkError when Kafka cannot say (the job then exits 3
    before Spark starts a query)."""
    try:
        found = take_over(sink)
        progress.committed(-1, {p: counts for p, (_, counts) in found.items()})
    except Exception as exc:  # noqa: BLE001 - librdkafka's KafkaException, a missing topic
        raise NetworkError(
            f"cannot read the converter's committed progress (group {sink.group}) from Kafka "
            f"at {sink.bootstrap}: {exc}",
            hint="Check --bootstrap, that the v2 topic exists, and the Kafka properties file.",
        ) from exc


def transactional_batches(
    sink: SinkConfig, progress: ProgressFile
) -> Callable[[DataFrame, int], None]:
    """The ``foreachBatch`` function: each batch's rows through the exactly-once writer on the
    executors (one transaction per v2 partition), the committed counts into progress.json."""

    def write(batch: DataFrame, batch_id: int) -> None:
        stats = write_batch(batch, sink)
        progress.committed(batch_id, {s.partition: s.counts for s in stats})

    return write


def watch(query: StreamingQuery, progress: ProgressFile) -> int:
    """Wait for the query, recording each finished batch from this (the main) thread, until it
    ends or SIGTERM asks it to stop after the batch in flight. Returns the job's exit code."""
    stopping = threading.Event()

    def _stop(signum: int, frame: Any) -> None:  # SIGTERM from `schemacli migrate stop`
        # Only set a flag: a Py4J call from a signal handler would interleave with the main
        # thread's call in progress and break the gateway connection.
        print("SIGTERM: stopping after the current batch", file=sys.stderr, flush=True)
        stopping.set()

    signal.signal(signal.SIGTERM, _stop)
    failure = None
    try:
        while not query.awaitTermination(1):
            follow(query, progress)
            if stopping.is_set():
                query.stop()  # waits for the batch in flight; its offsets are committed
                break
    except Exception as exc:  # the query's own failure: say it in one line, exit non-zero
        failure = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    follow(query, progress)  # the batches that ended with the query: counted before we exit
    if failure is not None:
        # Spark's or Kafka's words may quote a JAAS line or a URL with its credentials
        print(f"converter failed: {redact(failure)}", file=sys.stderr, flush=True)
        return 1
    print("converter stopped", file=sys.stderr, flush=True)
    return 0
