"""The converter job: ``spark-submit converters/job.py --mapping mapping.json ...``.

Reads the v2 topic, decodes each value with its writer schema (by the id in the Confluent header,
``spark_avro.decode_confluent``), converts it with the mapping's Spark SQL
(``converters.transform.convert``), encodes it with ``to_avro`` against the v1 schema behind the
v1 schema id (looked up in the registry; the job stops at once if v1 is not registered) and
writes it to the v1 topic with the original key (or, when the mapping has a ``key:`` section,
the key decoded, converted and framed with the v1 key schema's id the same way) and headers plus:

* ``schemacli.converted-from``: ``<v2 subject>/<version> <topic>/<partition>/<offset>
  <timestamp-ms>`` (``converters.provenance``): the loop guard (a message that carries it is never
  converted again; it is counted as skipped), the v2 message's position and its timestamp (the
  broker stamps the time of writing).

Messages whose value or key fails to decode or convert go to the dead-letter topic with the raw
bytes as value, the original key and headers, plus ``schemacli.error``, ``schemacli.error-stage``
(``decode``, ``convert``, ``key-decode``, ``key-convert``) and
``schemacli.source`` / ``schemacli.source-timestamp`` (the same position and timestamp, not the
marker, so that a repaired dead letter can be replayed). One query writes both topics (a
``topic`` column per row), so one checkpoint covers both and a restart resumes both together.

Delivery (``--delivery``): exactly-once by default, each batch written through
``converters.txsink`` by the JVM writer on the executors (one Kafka transaction per v2 partition,
fenced and resumed by the converter's committed offsets; the counts committed with the records;
its jar on Spark's classpath, ``converters.jvmjar``); or
at-least-once, with Spark's own Kafka sink and the counts from Spark's observed metrics. Either
way the counts (in, converted, dead-lettered, skipped, tombstone) land in
``<state-dir>/progress.json`` (``converters.progress``), which ``schemacli migrate status`` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converters.kafka import settings
from converters.progress import KINDS, METRICS, ProgressFile, follow
from converters.provenance import MARKER_HEADER, TOMBSTONE
from converters.state import write_text
from converters.txsink import (
    SinkConfig,
    WriterMissing,
    jvm_writer,
    progress_group,
    take_over,
    write_batch,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

SOURCE_HEADER = "schemacli.source"  # a dead letter's position (a converted one: in the marker)
TIMESTAMP_HEADER = "schemacli.source-timestamp"  # a dead letter's timestamp
ERROR_HEADER = "schemacli.error"
STAGE_HEADER = "schemacli.error-stage"
SOURCE_VALUE = "source_value"  # the v2 message's bytes, carried to the dead letter
SKIP = "already_converted"  # the message carries MARKER_HEADER: skip it (the loop guard)
KEY_OUT = "v1_key"  # the key written to v1: converted when the mapping has `key:`, else copied
KEY_ERROR = "key_error"  # why the key could not be decoded or converted (the record is dead)
KEY_STAGE = "key_error_stage"  # key-decode | key-convert
VALUE_SIDE = "value_side"  # the value's columns, riding along while the key is decoded
# Client settings for moving records in bulk (Kafka's defaults favour latency per record): the
# source polls up to 10,000 records at a time (default 500) with bigger fetches, the sink's
# producer fills 1 MB batches and waits up to 100 ms for them. Measured on 1M taxi rides, warm,
# local[2] (bench/bench_converter.py): 98k -> 131-140k msg/s. A --kafka-properties file
# overrides them.
SOURCE_DEFAULTS = {
    "kafka.isolation.level": "read_committed",  # a v2 record its producer aborted: never converted
    "kafka.max.poll.records": "10000",
    "kafka.max.partition.fetch.bytes": "10485760",
    "kafka.fetch.max.bytes": "52428800",
}
SINK_DEFAULTS = {"kafka.linger.ms": "100", "kafka.batch.size": "1048576"}
DELIVERIES = ("exactly-once", "at-least-once")
# Spark SQL settings of the job unless given with --conf. HotSpot does not JIT-compile a method
# of more than 8,000 bytes of bytecode, and the whole-stage code of a mapping with a handful of
# conversions can be bigger (the taxi example: 6.0 KB; five parse_number fields: 7.5 KB; ten:
# 9.8 KB). Spark's documentation recommends 8000 on HotSpot: such a stage then falls back to code
# per operator, which is compiled. Measured on 500k records, local[2]: 2x faster with a 9 KB
# stage, 1.7x with twenty fields (bench/README.md).
SQL_DEFAULTS = {"spark.sql.codegen.hugeMethodLimit": "8000"}


@dataclass(frozen=True)
class RegistryPlan:
    """What the job needs from the registry, fetched once at start."""

    target_id: int
    target_schema: str
    writer_schemas: dict[int, str]  # v2 schema id -> schema text
    writer_versions: dict[int, str]  # v2 schema id -> "subject/version" (the marker header)
    key: RegistryPlan | None = None  # the same for the key, when the mapping converts keys


def resolve_registry(mapping: Any, client: Any) -> RegistryPlan:
    """Look up the v1 schema id and every v2 writer schema (of the key too, when the mapping has
    a ``key`` section). Raises CheckFailed when v1 is not registered under the target subject
    (the job must not invent an id), RegistryError when the registry cannot answer."""
    from dataclasses import replace

    plan = _resolve_side(mapping, client)
    if mapping.key is not None:
        plan = replace(plan, key=_resolve_side(mapping.key, client))
    return plan


def _resolve_side(mapping: Any, client: Any) -> RegistryPlan:
    from schemacli.errors import CheckFailed, UsageError

    target, source = mapping.target, mapping.source
    what = "key " if mapping.prefix == "/key" else ""
    if not target.subject or not source.subject:
        raise UsageError(
            f"the job needs registry subjects for both sides of the {what or 'value '}"
            "(source.subject, target.subject)",
            location=mapping.location("/target" if not target.subject else "/source"),
            hint="Add `subject:` to the mapping; the ids in the Confluent header come from there.",
        )
    target_text = json.dumps(target.schema_json)
    found = client.lookup(target.subject, target_text)
    if found is None:
        raise CheckFailed(
            f"the v1 {what}schema is not registered under subject {target.subject!r}",
            location=mapping.location("/target/subject"),
            hint=f"Register it first: `schemacli register {target.subject} <v1.avsc>`; the "
            "converter writes that schema's id into every message it produces.",
        )
    if target.version not in (None, "latest") and found.version != target.version:
        raise CheckFailed(
            f"the v1 {what}schema is version {found.version} of {target.subject!r}, "
            f"the mapping says version {target.version}",
            location=mapping.location("/target/version"),
            hint="Fix `target.version`, or point `target.schema` at the registered version.",
        )
    writers: dict[int, str] = {}
    versions: dict[int, str] = {}
    for version in client.list_versions(source.subject):
        sv = client.get_version(source.subject, version)
        writers[sv.id] = sv.schema
        versions[sv.id] = f"{source.subject}/{sv.version}"
    if not writers:
        raise CheckFailed(
            f"subject {source.subject!r} has no versions",
            location=mapping.location("/source/subject"),
            hint=f"Register the v2 {what}schema under it before starting the converter.",
        )
    return RegistryPlan(found.id, found.schema or target_text, writers, versions)


def _header(name: str, value: Any) -> Any:
    from pyspark.sql import functions as F

    return F.struct(F.lit(name).alias("key"), value.cast("binary").alias("value"))


def _with_headers(headers: Any, *extra: Any) -> Any:
    from pyspark.sql import functions as F

    # One concat over the headers or an empty array, not when(isNull, added, concat(..., added)):
    # the stage's code holds each written expression once, and HotSpot compiles no method over
    # 8,000 bytes (SQL_DEFAULTS). With this and the marker built once: taxi stage 7.7 -> 6.0 KB.
    none = F.array().cast("array<struct<key:string,value:binary>>")
    return F.concat(F.coalesce(headers, none), F.array(*extra))


def build_output(raw: DataFrame, mapping: Any, reg: RegistryPlan) -> DataFrame:
    """Kafka source rows -> Kafka sink rows (``topic``, ``key``, ``value``, ``headers``), observed,
    skipped rows left out: what Spark's own (at-least-once) Kafka sink writes.

    ``raw`` has Kafka's source columns (``key``, ``value``, ``topic``, ``partition``, ``offset``,
    ``timestamp``, ``headers``). Pure: works on a batch frame in tests and on the stream in the job.
    """
    from pyspark.sql import functions as F

    out = build_records(raw, mapping, reg).observe(
        METRICS,
        F.count(F.lit(1)).alias("in"),
        *[F.sum(F.when(F.col("kind") == name, 1).otherwise(0)).alias(name) for name in KINDS],
    )
    # Skipped: already converted by a converter (our own output read back, or a chain): not again.
    return out.where(F.col("kind") != "skipped").select("topic", "key", "value", "headers")


def build_records(raw: DataFrame, mapping: Any, reg: RegistryPlan) -> DataFrame:
    """Kafka source rows -> every row's result (``converters.txsink.ROW_COLUMNS``): where it goes
    (``topic``, ``key``, ``value``, ``headers``), its ``kind`` (converted, dead_letter, skipped,
    tombstone) and the v2 position it came from (``source_partition``, ``source_offset``), in the
    source's partitioning and order. The exactly-once writer takes these as they are."""
    from pyspark.sql import functions as F

    from converters.transform import ERROR, STAGE

    if "headers" not in raw.columns:
        raw = raw.withColumn("headers", F.lit(None).cast("array<struct<key:string,value:binary>>"))
    # array_contains over the header keys, not exists(lambda): a higher-order function has no
    # generated code and would take its projection out of whole-stage codegen.
    marked = F.coalesce(F.array_contains(F.col("headers.key"), MARKER_HEADER), F.lit(False))
    # What the sinks need besides the decoded record: the raw bytes (a dead letter's value), the
    # headers, and whether the message already carries the loop marker. decode_confluent passes
    # Kafka's columns through and, asked to, these too.
    source = raw.select(
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "headers",
        F.col("value").alias(SOURCE_VALUE),
        marked.alias(SKIP),
    )
    rows, v1_value = convert_side(source, mapping, reg, passthrough=("headers", SOURCE_VALUE, SKIP))
    if mapping.key is not None and reg.key is not None:
        rows = _convert_keys(rows, mapping.key, reg.key)
    else:  # keys are copied byte for byte
        rows = rows.select(
            "*",
            F.col("key").alias(KEY_OUT),
            F.lit(None).cast("string").alias(KEY_ERROR),
            F.lit(None).cast("string").alias(KEY_STAGE),
        )
    version = F.lit(None).cast("string")
    for sid, text in sorted(reg.writer_versions.items()):
        version = F.when(F.col("schema_id") == sid, F.lit(text)).otherwise(version)
    # One pass, each row routed by its kind (a union of filtered frames would decode twice). A
    # tombstone (null value: a delete on a compacted topic) is forwarded as a tombstone with the
    # same key, so deletes reach v1 consumers too.
    kind = (
        F.when(F.col(SKIP), F.lit("skipped"))
        .when(F.col(KEY_ERROR).isNotNull(), F.lit("dead_letter"))
        .when(F.col(SOURCE_VALUE).isNull(), F.lit("tombstone"))
        .when(F.col(ERROR).isNull(), F.lit("converted"))
        .otherwise(F.lit("dead_letter"))
    )
    staged = rows.select("*", kind.alias("kind"))
    k = F.col("kind")
    headers = F.col("headers")
    source = F.concat_ws(
        "/", F.col("topic"), F.col("partition").cast("string"), F.col("offset").cast("string")
    )
    ts = F.unix_millis(F.col("timestamp")).cast("string")
    # The marker: one header (converters.provenance); a forwarded delete's origin is "tombstone".
    # Built once for converted rows and tombstones alike: every expression written twice is
    # generated twice in the stage's one method (see _with_headers).
    origin = F.when(k == "tombstone", F.lit(TOMBSTONE)).otherwise(F.coalesce(version, F.lit("?")))
    marker = _with_headers(headers, _header(MARKER_HEADER, F.concat_ws(" ", origin, source, ts)))
    out = staged.select(
        F.when(k == "dead_letter", F.lit(mapping.dead_letter_topic))
        .otherwise(F.lit(mapping.target.topic))
        .alias("topic"),
        F.when(k == "dead_letter", F.col("key")).otherwise(F.col(KEY_OUT)).alias("key"),
        F.when(k == "converted", v1_value)
        .when(k == "dead_letter", F.col(SOURCE_VALUE))
        .alias("value"),
        F.when(
            k == "dead_letter",
            _with_headers(
                headers,
                _header(ERROR_HEADER, F.coalesce(F.col(ERROR), F.col(KEY_ERROR))),
                _header(STAGE_HEADER, F.coalesce(F.col(STAGE), F.col(KEY_STAGE))),
                _header(SOURCE_HEADER, source),
                _header(TIMESTAMP_HEADER, ts),
            ),
        )
        .otherwise(marker)
        .alias("headers"),
        k,
        F.col("partition").alias("source_partition"),
        F.col("offset").alias("source_offset"),
    )
    return out


def convert_side(
    rows: DataFrame, mapping: Any, reg: RegistryPlan, *, passthrough: tuple[str, ...]
) -> tuple[DataFrame, Column]:
    """One side of a message (its ``value`` column) through the converter: decoded with its
    writer schema by the id in the Confluent header, converted by ``mapping``'s Spark SQL. The
    value and the key both go this way, each with its own mapping and registry plan.

    Returns ``rows`` (its Kafka columns and ``passthrough`` carried) with ``schema_id``, ``V1``,
    ``ERROR`` and ``STAGE`` (``converters.transform.convert_rows``), and the expression of the
    Confluent-framed v1 bytes of ``V1`` (evaluated where the caller uses it)."""
    from pyspark.sql import functions as F

    from converters.transform import V1, compiled_or_fail, convert_rows
    from spark_avro.decode import RAW_COLUMN, decode_confluent
    from spark_avro.encode import confluent_value

    compiled = compiled_or_fail(mapping)
    decoded = decode_confluent(
        rows,
        writer_schemas=reg.writer_schemas,
        reader_schema=json.dumps(mapping.source.schema_json),
        mode="PERMISSIVE",
        flatten=False,
        passthrough=passthrough,
        stable_union_names=False,  # the mappings name union members positionally
    ).drop(RAW_COLUMN)
    converted = convert_rows(decoded, mapping, compiled=compiled)
    encoded = confluent_value(F.col(V1), json.dumps(json.loads(reg.target_schema)), reg.target_id)
    return converted, encoded


def _convert_keys(rows: DataFrame, key: Any, reg: RegistryPlan) -> DataFrame:
    """``rows`` plus the converted key (``KEY_OUT``: Confluent-framed v1 key bytes), and
    ``KEY_ERROR``/``KEY_STAGE`` (why the key failed, prefixed ``key``; null when it converted). A
    null key stays null. The key goes through :func:`convert_side` as the value did, its bytes in
    the ``value`` column and the value's columns riding along in one struct."""
    from pyspark.sql import functions as F

    from converters.transform import ERROR, STAGE

    others = [c for c in rows.columns if c != "key"]
    framed = rows.select(F.col("key").alias("value"), "key", F.struct(*others).alias(VALUE_SIDE))
    converted, v1_key = convert_side(framed, key, reg, passthrough=(VALUE_SIDE,))
    has_key = F.col("key").isNotNull()
    return converted.select(
        F.col(f"{VALUE_SIDE}.*"),
        "key",
        F.when(has_key, v1_key).alias(KEY_OUT),
        F.when(has_key, F.concat(F.lit("key: "), F.col(ERROR))).alias(KEY_ERROR),
        F.when(has_key & F.col(ERROR).isNotNull(), F.concat(F.lit("key-"), F.col(STAGE))).alias(
            KEY_STAGE
        ),
    )


# ---------------------------------------------------------------------------------------------
# Entry point


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="converters/job.py", description=__doc__.splitlines()[0])
    p.add_argument("--mapping", required=True, help="mapping with inline schemas (JSON or YAML)")
    p.add_argument("--bootstrap", required=True)
    p.add_argument(
        "--registry", required=True, help="registry URL (credentials: SCHEMACLI_REGISTRY_* env)"
    )
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--state-dir", required=True)
    p.add_argument("--starting-offsets", default="earliest")
    p.add_argument("--trigger-seconds", type=float, default=1.0)
    p.add_argument("--max-offsets-per-trigger", type=int, default=None)
    p.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    p.add_argument(
        "--delivery",
        choices=DELIVERIES,
        default="exactly-once",
        help="exactly-once: Kafka transactions (converters.txsink); at-least-once: Spark's sink",
    )
    p.add_argument(
        "--kafka-properties",
        default=None,
        help="file of Kafka client properties (k=v lines), e.g. SASL settings; kept off "
        "the command line",
    )
    return p.parse_args(argv)


def apply_sql_defaults(spark: Any) -> dict[str, str]:
    """Set :data:`SQL_DEFAULTS` not given to spark-submit with --conf; returns what was set."""
    given = spark.sparkContext.getConf()
    applied = {k: v for k, v in SQL_DEFAULTS.items() if not given.contains(k)}
    for key, value in applied.items():
        spark.conf.set(key, value)
    return applied


def main(argv: list[str] | None = None) -> int:
    from converters.mapping.reader import load
    from schemacli.errors import SchemacliError, error_text

    args = _args(sys.argv[1:] if argv is None else argv)
    try:
        mapping = load(args.mapping)
        from schemacli.registry.client import RegistryClient
        from schemacli.registry.settings import RegistryFlags

        # The CLI's road: flags (here --registry; credentials from SCHEMACLI_REGISTRY_*, set by
        # deploy.child_env) -> RegistrySettings -> a client handed inward.
        with RegistryClient(RegistryFlags(url=args.registry).settings()) as client:
            reg = resolve_registry(mapping, client)
        from converters.transform import compiled_or_fail

        compiled_or_fail(mapping)
        if mapping.key is not None:
            compiled_or_fail(mapping.key)
        state = Path(args.state_dir)
        state.mkdir(parents=True, exist_ok=True)
        counted_by = "transactions" if args.delivery == "exactly-once" else "observed-metrics"
        progress = ProgressFile(state / "progress.json", counted_by=counted_by)
        kafka = settings.load(args.kafka_properties)
    except SchemacliError as err:
        print(error_text(err), file=sys.stderr)
        return int(err.exit_code)
    return run(args, mapping, reg, progress, kafka)


def run(
    args: argparse.Namespace,
    mapping: Any,
    reg: RegistryPlan,
    progress: ProgressFile,
    kafka: dict[str, str],
) -> int:
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
    from converters.kafka.settings import spark_options

    for k, v in {**SOURCE_DEFAULTS, **spark_options(kafka)}.items():
        reader = reader.option(k, v)
    from pyspark.errors import AnalysisException, ParseException

    try:
        if args.delivery == "exactly-once":
            records = build_records(reader.load(), mapping, reg)  # the mapping first: exit 1
            try:
                jvm_writer(spark)
            except WriterMissing as exc:
                print(writer_missing(exc), file=sys.stderr, flush=True)
                return 2
            sink = sink_config(args, mapping, kafka)
            failure = start_counts(sink, progress)
            if failure is not None:
                print(failure, file=sys.stderr, flush=True)
                return 3
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
        from schemacli.errors import CheckFailed, error_text

        err = CheckFailed(
            f"Spark refuses the compiled mapping: {exc.getMessage() or exc}",
            hint="Fix the expression; `schemacli migrate validate MAPPING --spark` shows it "
            "without starting the job.",
        )
        print(error_text(err), file=sys.stderr, flush=True)
        return int(err.exit_code)
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


def sink_config(args: argparse.Namespace, mapping: Any, kafka: dict[str, str]) -> SinkConfig:
    """The exactly-once writer's settings: the Spark source's Kafka properties, as they are for
    the JVM writer and in librdkafka's names for the driver's reads
    (``converters.kafka.settings``)."""
    from converters.kafka.settings import librdkafka_properties, spark_options

    return SinkConfig(
        bootstrap=args.bootstrap,
        source_topic=mapping.source.topic,
        group=progress_group(mapping.source.topic, mapping.target.topic),
        client=librdkafka_properties(kafka),
        spark=spark_options(kafka),
    )


def writer_missing(exc: WriterMissing) -> str:
    from schemacli.errors import UsageError, error_text

    return error_text(
        UsageError(
            str(exc),
            hint="Deploy with `schemacli migrate deploy` (it adds the jar), add the jar to your "
            "spark-submit's --jars, or choose --delivery at-least-once.",
        )
    )


def start_counts(sink: SinkConfig, progress: ProgressFile) -> str | None:
    """Fence earlier runs' writers and load what they committed into progress.json
    (``txsink.take_over``); the error text when Kafka cannot say (the job then exits 3 before
    Spark starts a query)."""
    from schemacli.errors import NetworkError, error_text

    try:
        found = take_over(sink)
        progress.committed(-1, {p: counts for p, (_, counts) in found.items()})
    except Exception as exc:  # noqa: BLE001 - librdkafka's KafkaException, a missing topic
        err = NetworkError(
            f"cannot read the converter's committed progress (group {sink.group}) from Kafka "
            f"at {sink.bootstrap}: {exc}",
            hint="Check --bootstrap, that the v2 topic exists, and the Kafka properties file.",
        )
        return error_text(err)
    return None


def transactional_batches(sink: SinkConfig, progress: ProgressFile) -> Any:
    """The ``foreachBatch`` function: each batch's rows through the exactly-once writer on the
    executors (one transaction per v2 partition), the committed counts into progress.json."""

    def write(batch: DataFrame, batch_id: int) -> None:
        stats = write_batch(batch, sink)
        progress.committed(batch_id, {s.partition: s.counts for s in stats})

    return write


def watch(query: Any, progress: ProgressFile) -> int:
    """Wait for the query, recording each finished batch from this (the main) thread, until it
    ends or SIGTERM asks it to stop after the batch in flight. Returns the job's exit code."""
    import signal
    import threading

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
        from schemacli.redact import redact

        # Spark's or Kafka's words may quote a JAAS line or a URL with its credentials
        print(f"converter failed: {redact(failure)}", file=sys.stderr, flush=True)
        return 1
    print("converter stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
