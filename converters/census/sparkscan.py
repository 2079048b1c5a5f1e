"""The census's Spark road: the header-only read as a Spark job, for topics one process cannot
read in time (``topics census --engine spark``, on ``local[N]`` or a cluster's ``--master``).

Python keeps what needs the broker's metadata, as for the JVM road (``scan.layout``: the
watermarks, ``offsets_for_times``, ``--sample``; ``scan.retention``); Spark reads only the planned
ranges: its Kafka source as a batch, ``assign``, ``startingOffsets`` and ``endingOffsets`` per
partition as JSON, the columns ``partition, offset, timestamp, key, value``. In the executors
each key and value becomes its *kind* by Spark SQL on its first 5 bytes (:func:`kind_sql`, the
rule of ``model.classify``), and the records are grouped by (partition, key kind, value kind):
how many, the first and the last offset and their timestamps (:func:`groups`). Only those groups
reach the driver, a few per partition, never a key or a value; :func:`fold` turns them into the
same :class:`PartitionTally` spans the Python and JVM roads make, so the document is the same.

The session is made in this process (the driver; client mode on a cluster) with the Kafka
connector (``converters.spark.connector_conf``), and stopped after the read. A standalone
master is asked for a TCP answer first and for an executor after (:data:`EXECUTOR_WAIT`): a
master that is not there is a NetworkError (exit 3), not a job waiting for ever. A read cut by
the deadline cancels the job: nothing of it is counted and the census says it is incomplete.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from converters.census.jvmscan import CONSUMER_DEFAULTS
from converters.census.model import HEADER, NULL, UNFRAMED, Kind, PartitionTally, Span
from converters.kafka import waits
from converters.kafka.settings import SPARK_SOURCE_FAILOVER, with_failover
from converters.spark import KAFKA_PACKAGE, MASTER, connector_conf
from schemacli.errors import InputError, NetworkError

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession

LOCAL = "local[*]"
EXECUTOR_WAIT = 120.0  # seconds a cluster may take to give the census its first executor
# Consumer settings Spark's Kafka source sets itself and refuses from its options
SOURCE_OWNS = {
    "auto.offset.reset",
    "enable.auto.commit",
    "key.deserializer",
    "value.deserializer",
    "interceptor.classes",
}
# Of the census's consumer settings (large fetches and polls; jvmscan.CONSUMER_DEFAULTS), those the
# source takes; the isolation level is the census's (every record, aborted ones too)
SOURCE_DEFAULTS = {
    **{k: v for k, v in CONSUMER_DEFAULTS.items() if k not in SOURCE_OWNS},
    "isolation.level": "read_uncommitted",
}


class SparkUnavailable(InputError):
    """``--engine spark`` and Spark cannot run here (no pyspark, or its JVM does not start)."""


def available() -> bool:
    """Whether pyspark is installed (found without importing it)."""
    return importlib.util.find_spec("pyspark") is not None


def require() -> None:
    """SparkUnavailable (exit 2) when pyspark is not installed."""
    if not available():
        raise SparkUnavailable(
            "the census's Spark engine needs pyspark, which is not installed",
            hint="pip install 'schemacli[spark]' (pyspark 4.0), or take --engine jvm or python.",
        )


def master_problem(master: str) -> str | None:
    """What is wrong with a ``--master`` value, None when Spark may take it: a master
    spark-submit takes (``converters.spark.MASTER``), a standalone one as
    ``spark://HOST:PORT[,HOST:PORT...]``."""
    if not MASTER.match(master):
        return "is not a Spark master"
    if master.startswith("spark://"):
        for place in master.removeprefix("spark://").split(","):
            host, _, port = place.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                return f"names {place!r}, not HOST:PORT"
    return None


def kind_sql(column: str) -> str:
    """The Spark SQL giving a key's or value's kind in the executors (``model.classify``'s
    rule): NULL for none, the 4 id bytes of a Confluent header (first byte 0, at least
    ``HEADER`` bytes), the empty binary for any other bytes (empty ones too)."""
    return (
        f"CASE WHEN {column} IS NULL THEN NULL "
        f"WHEN octet_length({column}) >= {HEADER} AND substr({column}, 1, 1) = X'00' "
        f"THEN substr({column}, 2, {HEADER - 1}) ELSE X'' END"
    )


# A record's timestamp in ms, null when it has none (Kafka's -1), as the other roads say it
TIMESTAMP_SQL = "CASE WHEN unix_millis(timestamp) >= 0 THEN unix_millis(timestamp) END"


def groups(records: DataFrame) -> DataFrame:
    """The Kafka source's rows (``partition, offset, timestamp, key, value``) grouped by
    partition and the kinds of key and value: ``count``, ``first_offset`` / ``first_ts`` and
    ``last_offset`` / ``last_ts``. Pure DataFrame -> DataFrame; keys and values stay in the
    executors."""
    from pyspark.sql import functions as F

    kinds = records.select(
        "partition",
        "offset",
        F.expr(TIMESTAMP_SQL).alias("ts"),
        F.expr(kind_sql("key")).alias("key_kind"),
        F.expr(kind_sql("value")).alias("value_kind"),
    )
    return kinds.groupBy("partition", "key_kind", "value_kind").agg(
        F.count(F.lit(1)).alias("count"),
        F.min("offset").alias("first_offset"),
        F.min_by("ts", "offset").alias("first_ts"),
        F.max("offset").alias("last_offset"),
        F.max_by("ts", "offset").alias("last_ts"),
    )


def kind_of(head: bytes | bytearray | None) -> Kind:
    """A group's kind as :func:`kind_sql` gave it: NULL, UNFRAMED or the schema id."""
    if head is None:
        return NULL
    if len(head) == 0:
        return UNFRAMED
    return int.from_bytes(bytes(head), "big")


def fold(tallies: list[PartitionTally], rows: Iterable[Any]) -> list[PartitionTally]:
    """The groups of :func:`groups` (rows with its columns) into ``tallies``: each partition's
    scanned count and its spans per kind of key and of value."""
    by_partition = {t.partition: t for t in tallies}
    for row in rows:
        tally = by_partition[row["partition"]]
        tally.scanned += row["count"]
        for spans, head in ((tally.keys, row["key_kind"]), (tally.values, row["value_kind"])):
            piece = Span(row["count"], row["first_offset"], row["last_offset"],
                         row["first_ts"], row["last_ts"])  # fmt: skip
            spans.setdefault(kind_of(head), Span()).join(piece)
    return [by_partition[p] for p in sorted(by_partition)]


def source_options(
    bootstrap: str, topic: str, tallies: list[PartitionTally], properties: Mapping[str, str]
) -> dict[str, str]:
    """The Kafka source's options for the planned ranges of the partitions that have any: the
    census's consumer settings, the user's (Java names) over them, the ranges as JSON."""
    reading = [t for t in tallies if t.end > t.start]
    return {
        **{f"kafka.{k}": v for k, v in with_failover(SOURCE_DEFAULTS, properties).items()},
        "kafka.bootstrap.servers": bootstrap,
        "assign": json.dumps({topic: [t.partition for t in reading]}),
        "startingOffsets": json.dumps({topic: {str(t.partition): t.start for t in reading}}),
        "endingOffsets": json.dumps({topic: {str(t.partition): t.end for t in reading}}),
        # a range retention shortened while the census read is counted as far as it goes
        "failOnDataLoss": "false",
        **SPARK_SOURCE_FAILOVER,  # a lost broker's partitions listed again, not given up
    }


def read_partitions(
    bootstrap: str,
    topic: str,
    tallies: list[PartitionTally],
    *,
    properties: Mapping[str, str] | None,
    master: str | None,
    cores: int | None,
    deadline: float,
    step: Callable[[int], None],
) -> list[PartitionTally]:
    """Read every partition of ``tallies`` over its range as a Spark job on ``master`` (default
    ``local[cores]``, or every core; on a cluster ``cores`` caps the application's), ``step(n)``
    as the scan's tasks finish; the tallies filled in. A job the ``deadline`` (time.time())
    cuts is cancelled and every partition it read marked incomplete, none counted. Raises
    SparkUnavailable (no pyspark, Spark does not start), InputError (Spark's Kafka source
    refuses the Kafka settings), NetworkError (the master gives no executor, the job fails;
    :func:`probe` asks whether it answers at all, before the census asks Kafka)."""
    require()
    master = master_of(master, cores)
    spark, ours = _session(master, topic, cores)
    try:
        if ours and not master.startswith("local"):
            _await_executors(spark, master, min(deadline, time.time() + EXECUTOR_WAIT))
        reading = [t for t in tallies if t.end > t.start]
        if not reading:
            return tallies
        options = source_options(bootstrap, topic, tallies, properties or {})
        parallel = spark.sparkContext.defaultParallelism
        if parallel > len(reading):  # big partitions split over the cores
            options["minPartitions"] = str(parallel)
        frame = groups(_load(spark, options).select(
            "partition", "offset", "timestamp", "key", "value"))  # fmt: skip
        total = sum(t.end - t.start for t in reading)
        rows = _collect(spark, frame, deadline, total, step) if time.time() <= deadline else None
        if rows is None:  # cut by the deadline: nothing of the job is counted
            for t in reading:
                t.complete = False
            return tallies
        return fold(tallies, rows)
    finally:
        if ours:
            spark.stop()


def master_of(master: str | None, cores: int | None) -> str:
    """The master a census runs on: the one given, else ``local[cores]``, else every core."""
    return master or (f"local[{cores}]" if cores else LOCAL)


def probe(master: str, timeout: float) -> None:
    """A standalone master answers on one of its HOST:PORTs within ``timeout`` seconds, or
    NetworkError (exit 3); other masters are not asked."""
    if not master.startswith("spark://"):
        return
    why: OSError | None = None
    for place in master.removeprefix("spark://").split(","):
        host, _, port = place.rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
            return
        except OSError as exc:
            why = exc
    raise NetworkError(
        f"the Spark master at {master} does not answer: {why}",
        hint="Check --master and that the master runs (sbin/start-master.sh), or leave "
        "--master out to read with a local Spark.",
    )


def _session(master: str, topic: str, cores: int | None) -> tuple[SparkSession, bool]:
    """The session to read in, and whether it is ours (made here, stopped after the read). A
    session already running in this process is used only with the same master."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    running = SparkContext._active_spark_context
    if running is not None:
        if running.master != master:
            raise InputError(
                f"a Spark session with master {running.master} runs in this process already; "
                f"the census cannot start one on {master}",
                hint="Take the census with that master, or from a process of its own.",
            )
        return SparkSession(running), False
    builder = (
        SparkSession.builder.master(master)
        .appName(f"schemacli-census {topic}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")  # the groups are few
        .config(*connector_conf(KAFKA_PACKAGE))
    )
    if cores and not master.startswith("local"):
        builder = builder.config("spark.cores.max", str(cores))
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - pyspark's words for a JVM that does not start
        raise SparkUnavailable(
            f"Spark did not start for the census: {str(exc).strip().splitlines()[0]}",
            hint="Check java (17 or later) and the Spark settings (spark-defaults.conf, "
            "SPARK_CONF_DIR), or take --engine jvm or python.",
        ) from exc
    spark.sparkContext.setLogLevel("ERROR")  # the census draws its own progress
    return spark, True


def _await_executors(spark: SparkSession, master: str, until: float) -> None:
    """Until a cluster gives the application an executor; NetworkError when the master gives
    none by ``until`` (no worker alive, none with the cores or memory asked) or stops it."""
    sc = spark.sparkContext
    tracker = sc._jsc.sc().statusTracker()  # the JVM's: Python's does not list executors
    while len(tracker.getExecutorInfos()) <= 1:  # the driver is one of them
        if sc._jsc is None or sc._jsc.sc().isStopped():
            raise NetworkError(
                f"the Spark master at {master} stopped the census's application",
                hint="See the master's log; check that its workers are alive.",
            )
        if time.time() > until:
            raise NetworkError(
                f"the Spark master at {master} gave the census no executor in {EXECUTOR_WAIT:g} s",
                hint="Check that the master has alive workers with free cores and memory "
                "(its web UI), or lower --jobs.",
            )
        time.sleep(waits.SLICE)


def _load(spark: SparkSession, options: Mapping[str, str]) -> DataFrame:
    """The Kafka source over ``options``; InputError when it refuses one (a setting it owns)."""
    from pyspark.errors import IllegalArgumentException

    reader = spark.read.format("kafka")
    for key, value in options.items():
        reader = reader.option(key, value)
    try:
        return reader.load()
    except IllegalArgumentException as exc:
        # a plain Java exception has no Spark error class: getMessage() is empty, str() has its
        # words (over several lines, as the source writes them)
        said = " ".join((exc.getMessage() or str(exc)).split("JVM stacktrace:")[0].split())
        raise InputError(
            f"Spark's Kafka source refuses the census's Kafka settings: {said}",
            hint="Check the --kafka-properties file (Java client names; the source sets "
            "offsets, deserializers and commits itself).",
        ) from exc


def _collect(
    spark: SparkSession,
    frame: DataFrame,
    deadline: float,
    total: int,
    step: Callable[[int], None],
) -> list[Any] | None:
    """``frame``'s rows, collected by a job of its own group in a thread while this one
    reports progress (the scan stage's finished tasks as a share of ``total``) and watches the
    deadline; None when the deadline cancelled the job. Ctrl-C cancels it too."""
    sc = spark.sparkContext
    group = f"schemacli-census-{uuid.uuid4().hex[:8]}"
    answer: dict[str, Any] = {}

    def work() -> None:
        sc.setJobGroup(group, "schemacli topics census", interruptOnCancel=True)
        try:
            answer["rows"] = [row.asDict() for row in frame.collect()]
        except Exception as exc:  # noqa: BLE001 - handed to the caller's thread
            answer["error"] = exc

    worker = threading.Thread(target=work, name="census-spark-job", daemon=True)
    worker.start()
    told = 0
    try:
        while worker.is_alive():
            worker.join(waits.SLICE)
            now = int(total * _scanned_share(sc, group))
            if now > told:
                step(now - told)
                told = now
            if worker.is_alive() and time.time() > deadline:
                sc.cancelJobGroup(group)
                worker.join()
                return None
    except KeyboardInterrupt:
        sc.cancelJobGroup(group)
        raise
    if "error" in answer:
        exc = answer["error"]
        words = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NetworkError(
            f"the census's Spark job failed: {words}",
            hint="Check --bootstrap and that the brokers are up (and the --kafka-properties "
            "file, if any); the executors' logs say more.",
        ) from exc
    if total > told:
        step(total - told)
    rows: list[Any] = answer["rows"]
    return rows


def _scanned_share(sc: SparkContext, group: str) -> float:
    """The share of the scan stage's tasks (the group's first stage) that have finished."""
    tracker = sc.statusTracker()
    stages = []
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        if info is not None:
            stages.extend(info.stageIds)
    first = tracker.getStageInfo(min(stages)) if stages else None
    if first is None or not first.numTasks:
        return 0.0
    return min(first.numCompletedTasks / first.numTasks, 1.0)
