"""The converter's exactly-once Kafka writer: one Kafka transaction per v2 partition per batch.

Spark's own Kafka sink is at-least-once: a batch re-run after a driver crash, or a task retried
after a lost executor, writes its records again. This writer makes every write idempotent by the
v2 message's position, and atomic with a record of that position:

* The rows of a micro-batch (``pipeline.records.build_records``) reach the executors one Spark
  partition per v2 topic partition, in offset order (the Kafka source's own partitioning), and
  are written there by the JVM writer (``pipeline/jvm``: ``dev.schemacli.converters.TxSink``,
  its jar ``pipeline.jvmjar.JAR``), reading Spark's internal rows as Spark's own Kafka sink
  does: no row crosses into Python.
* For each v2 partition a task opens a transactional producer whose ``transactional.id`` is
  derived from the converter and the partition (:func:`transactional_id`), never from the batch
  or the attempt: its ``initTransactions`` fences any earlier producer with that id - the task
  of a killed driver, a retried task's zombie on a lost worker - and aborts what it left open.
* Only then it reads the offset the converter's progress group (:func:`progress_group`) has
  committed for that partition. Offsets below it were written by a committed transaction: they
  are passed over (counted as ``already``), so a batch Spark re-runs writes nothing twice.
* The rest go to the v1 topic or the dead-letter topic inside one transaction, which also
  commits the next offset to the progress group (``sendOffsetsToTransaction``) with the
  partition's cumulative counts in the offset's metadata (:class:`Counts`). Records and progress
  become visible together, or not at all.

Consumers of the v1 and dead-letter topics must read with ``isolation.level=read_committed``
(confluent-kafka's default; the Java consumer's default is ``read_uncommitted``, which also shows
records of aborted transactions). The argument in full: docs/migration.md.

The counts in the metadata are exact through any crash: ``in = converted + dead_letter +
skipped + tombstone`` per partition, each v2 offset counted once, in the transaction that wrote
its result. This module is the driver's side: the writer's settings, the counts' format, and the
committed progress read back with confluent-kafka.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from converters.kafka.settings import FAILOVER_PRODUCER, client_config
from converters.pipeline.jvmjar import JAR, WRITER_CLASS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

KINDS = ("converted", "dead_letter", "skipped", "tombstone")
# The columns of a row to write (pipeline.records.build_records), as the JVM writer reads them
# (dev.schemacli.converters.TxSink.COLUMNS)
ROW_COLUMNS = ("topic", "key", "value", "headers", "kind", "source_partition", "source_offset")
# Producer settings of the writer (the Java client's names), under a --kafka-properties file's:
# the batching of the at-least-once sink (pipeline.stream.SINK_DEFAULTS), transactions, and
# the bounds that keep a lost broker's stall short (kafka.settings.FAILOVER_PRODUCER).
PRODUCER_DEFAULTS = {
    "linger.ms": "100",
    "batch.size": "1048576",
    "transaction.timeout.ms": "120000",
    # a retried request the coordinator is busy with (a new transaction's first partitions right
    # after the last commit) waits 10 ms, not the client's default 100
    "retry.backoff.ms": "10",
    **FAILOVER_PRODUCER,
}
TIMEOUT = 60.0  # seconds for init, offset reads and commits


def progress_group(source_topic: str, target_topic: str) -> str:
    """The consumer group the converter commits its progress to (never joined by anyone)."""
    return f"schemacli-converter.{source_topic}.{target_topic}"


def transactional_id(group: str, partition: int) -> str:
    """Stable per converter and v2 partition: a new task fences every earlier one."""
    return f"{group}.{partition}"


@dataclass
class Counts:
    """Cumulative counts of one v2 partition, kept in its committed offset's metadata."""

    converted: int = 0
    dead_letter: int = 0
    skipped: int = 0
    tombstone: int = 0

    @property
    def total(self) -> int:
        return self.converted + self.dead_letter + self.skipped + self.tombstone

    def add(self, kind: str, n: int = 1) -> None:
        setattr(self, kind, getattr(self, kind) + n)

    def plus(self, other: Counts) -> Counts:
        return Counts(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def decode(cls, metadata: str | None) -> Counts:
        """The counts in an offset's metadata, as the JVM writer encodes them (JSON and a NUL:
        see ``Counts.java``); zero for none. Raises ValueError for metadata this converter did not
        write (another tool committed to the group: the counts would lie)."""
        if not metadata:
            return cls()
        text = metadata.split("\0", 1)[0]
        try:
            return cls.of(json.loads(text))
        except ValueError:
            raise ValueError(
                f"offset metadata not written by the converter: {text[:80]!r}"
            ) from None

    @classmethod
    def of(cls, data: Any) -> Counts:
        """From the encoded object; ValueError unless it is one (``v`` 1, whole numbers)."""
        try:
            if data.get("v") != 1:
                raise ValueError
            return cls(**{k: int(data.get(k, 0)) for k in KINDS})
        except (ValueError, TypeError, AttributeError):
            raise ValueError(f"not the converter's counts: {str(data)[:80]!r}") from None


def totals(per_partition: Mapping[int, Counts]) -> dict[str, int]:
    """``{"in": ..., "converted": ..., ...}`` over all partitions."""
    whole = Counts()
    for counts in per_partition.values():
        whole = whole.plus(counts)
    return {"in": whole.total, **whole.as_dict()}


@dataclass(frozen=True)
class SinkConfig:
    """The writer's settings: what the JVM writer's tasks get (:meth:`jvm_options`), and what the
    driver's own reads of the committed progress use (librdkafka, :meth:`base`)."""

    bootstrap: str
    source_topic: str
    group: str
    client: Mapping[str, str] = field(default_factory=dict)  # librdkafka properties (SASL, TLS)
    spark: Mapping[str, str] = field(default_factory=dict)  # the same, as Spark's kafka.* options
    producer: Mapping[str, str] = field(default_factory=dict)  # overrides of PRODUCER_DEFAULTS
    timeout: float = TIMEOUT

    def base(self) -> dict[str, Any]:
        # the driver's clients log to the job's stderr, as its Spark does
        return client_config(self.bootstrap, self.client, logger=False)

    def jvm_options(self) -> dict[str, str]:
        """The options of ``dev.schemacli.converters.SinkConfig``: ``kafka.<name>`` for both of a
        task's clients, ``producer.<name>`` for its producer alone (applied after). A producer
        default the properties file sets is left to the file."""
        producer = {
            k: v for k, v in PRODUCER_DEFAULTS.items() if f"kafka.{k}" not in self.spark
        } | dict(self.producer)
        return {
            "source.topic": self.source_topic,
            "group": self.group,
            "timeout.ms": str(int(self.timeout * 1000)),
            "kafka.bootstrap.servers": self.bootstrap,
            **self.spark,
            **{f"producer.{k}": v for k, v in producer.items()},
        }


@dataclass(frozen=True)
class Stats:
    """What one task wrote of one v2 partition in a batch."""

    partition: int
    first_offset: int
    next_offset: int
    already: int  # rows below the committed offset: written before, passed over
    counts: Counts  # the partition's cumulative counts, as committed

    @classmethod
    def parse(cls, line: str) -> Stats:
        data = json.loads(line)
        return cls(
            int(data["partition"]),
            int(data["first_offset"]),
            int(data["next_offset"]),
            int(data["already"]),
            Counts.of(data["counts"]),
        )


class WriterMissing(RuntimeError):
    """The JVM writer's jar is not on Spark's classpath."""


def jvm_writer(spark: Any) -> Any:
    """The JVM writer class (``jvmjar.WRITER_CLASS``) in ``spark``'s JVM; raises WriterMissing
    when its jar was not given to Spark."""
    from py4j.java_gateway import JavaClass

    found = spark._jvm
    for part in WRITER_CLASS.split("."):
        found = getattr(found, part)
    if not isinstance(found, JavaClass):
        raise WriterMissing(
            f"the exactly-once writer ({WRITER_CLASS}) is not on Spark's classpath: give Spark "
            f"its jar, --jars {JAR} (schemacli migrate deploy does)"
        )
    return found


def write_batch(batch: DataFrame, cfg: SinkConfig) -> list[Stats]:
    """Write a batch of ``build_records`` rows on the executors (one transaction per v2
    partition); the stats of each partition written. Raises on any Kafka error, after the
    tasks aborted their transactions (Spark retried them first)."""
    lines = jvm_writer(batch.sparkSession).write(batch._jdf, java_options(batch.sparkSession, cfg))
    return [Stats.parse(str(line)) for line in lines]


def java_options(spark: Any, cfg: SinkConfig) -> Any:
    """:meth:`SinkConfig.jvm_options` as a ``java.util.HashMap`` in ``spark``'s JVM."""
    options = spark._jvm.java.util.HashMap()
    for key, value in cfg.jvm_options().items():
        options.put(key, value)
    return options


def take_over(cfg: SinkConfig) -> dict[int, tuple[int, Counts]]:
    """A new run's start (driver side): fence every earlier writer of the converter, then read
    what they committed (:func:`committed`) for every v2 partition.

    Fencing first is what makes the read possible. A driver killed while a task was committing
    leaves that transaction open with its offsets sent to the progress group; a stable offset
    read waits for it, and the broker only ends it at ``transaction.timeout.ms`` (two minutes),
    longer than any read should wait. :func:`fence` ends it now."""
    partitions = source_partitions(cfg)
    fence(cfg, partitions)
    return committed(cfg, partitions)


def fence(cfg: SinkConfig, partitions: list[int]) -> None:
    """Initialise a producer of each partition's :func:`transactional_id` and close it: any
    earlier producer with that id is fenced, a transaction it left open is aborted (one it was
    committing is completed), as a new task's ``initTransactions`` would do."""
    from concurrent.futures import ThreadPoolExecutor

    from confluent_kafka import Producer

    def one(partition: int) -> None:
        producer = Producer(
            {**cfg.base(), "transactional.id": transactional_id(cfg.group, partition)}
        )
        try:
            producer.init_transactions(cfg.timeout)
        finally:
            producer.close()

    if partitions:
        with ThreadPoolExecutor(min(8, len(partitions))) as pool:
            list(pool.map(one, partitions))  # the first failure is raised


def committed(cfg: SinkConfig, partitions: list[int]) -> dict[int, tuple[int, Counts]]:
    """partition -> (next offset to write, cumulative counts) as committed by the converter's
    transactions; partitions never committed are left out. A transaction still open on the
    progress group is waited for (up to ``cfg.timeout``): :func:`fence` first ends a dead one."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer(_reader_config(cfg))
    try:
        found = reader.committed(
            [TopicPartition(cfg.source_topic, p) for p in partitions], timeout=cfg.timeout
        )
    finally:
        reader.close()
    return {tp.partition: (tp.offset, Counts.decode(tp.metadata)) for tp in found if tp.offset >= 0}


def _reader_config(cfg: SinkConfig) -> dict[str, Any]:
    # read_committed makes librdkafka ask for stable offsets (KIP-447): a commit still in flight
    # is waited for, never read half-done
    return {
        **cfg.base(),
        "group.id": cfg.group,
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    }


def source_partitions(cfg: SinkConfig) -> list[int]:
    """The v2 topic's partitions (driver side, at start)."""
    from confluent_kafka import Consumer

    reader = Consumer(_reader_config(cfg))
    try:
        meta = reader.list_topics(cfg.source_topic, timeout=cfg.timeout).topics[cfg.source_topic]
        if meta.error is not None:
            raise RuntimeError(f"topic {cfg.source_topic!r}: {meta.error.str()}")
        return sorted(meta.partitions)
    finally:
        reader.close()
