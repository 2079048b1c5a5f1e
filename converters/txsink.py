"""The converter's exactly-once Kafka writer: one Kafka transaction per v2 partition per batch.

Spark's own Kafka sink is at-least-once: a batch re-run after a driver crash, or a task retried
after a lost executor, writes its records again. This writer makes every write idempotent by the
v2 message's position, and atomic with a record of that position:

* The rows of a micro-batch reach the executors' Python (``mapInArrow``) one Spark partition per
  v2 topic partition, in offset order (the Kafka source's own partitioning).
* For each v2 partition a task opens a transactional producer whose ``transactional.id`` is
  derived from the converter and the partition (:func:`transactional_id`), never from the batch
  or the attempt: its ``init_transactions`` fences any earlier producer with that id - the task
  of a killed driver, a retried task's zombie on a lost worker - and aborts what it left open.
* Only then it reads the offset the converter's progress group (:func:`progress_group`) has
  committed for that partition. Offsets below it were written by a committed transaction: they
  are passed over (counted as ``already``), so a batch Spark re-runs writes nothing twice.
* The rest go to the v1 topic or the dead-letter topic inside one transaction, which also
  commits the next offset to the progress group (``send_offsets_to_transaction``) with the
  partition's cumulative counts in the offset's metadata (:class:`Counts`). Records and progress
  become visible together, or not at all.

Consumers of the v1 and dead-letter topics must read with ``isolation.level=read_committed``
(confluent-kafka's default; the Java consumer's default is ``read_uncommitted``, which also shows
records of aborted transactions). The argument in full: docs/migration.md.

The counts in the metadata are exact through any crash: ``in = converted + dead_letter +
skipped + tombstone`` per partition, each v2 offset counted once, in the transaction that wrote
its result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

KINDS = ("converted", "dead_letter", "skipped", "tombstone")
WRITTEN = ("converted", "dead_letter", "tombstone")  # skipped rows are counted, never written
# The columns a row brings (converters.job.build_records) and the stats a task returns.
ROW_COLUMNS = ("topic", "key", "value", "headers", "kind", "source_partition", "source_offset")
STATS_SCHEMA = "partition INT, first_offset LONG, next_offset LONG, already LONG, counts STRING"
# Producer settings for moving records in bulk (librdkafka's names), before --kafka-properties.
PRODUCER_DEFAULTS = {
    "linger.ms": "50",
    "batch.size": "1000000",
    "queue.buffering.max.messages": "500000",
    "queue.buffering.max.kbytes": "1048576",
    # Java's default partitioner for keyed records (murmur2), so a key lands in the v1 partition
    # it would have landed in from a Java producer, as with Spark's sink
    "partitioner": "murmur2_random",
    "transaction.timeout.ms": "120000",
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

    def encode(self) -> str:
        return json.dumps({"v": 1, **self.as_dict()}, separators=(",", ":"))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def decode(cls, metadata: str | None) -> Counts:
        """The counts in an offset's metadata; zero for none. Raises ValueError for metadata this
        converter did not write (another tool committed to the group: the counts would lie)."""
        if not metadata:
            return cls()
        try:
            data = json.loads(metadata)
            if data.get("v") != 1:
                raise ValueError
            return cls(**{k: int(data.get(k, 0)) for k in KINDS})
        except (ValueError, TypeError, AttributeError):
            raise ValueError(
                f"offset metadata not written by the converter: {metadata[:80]!r}"
            ) from None


def totals(per_partition: Mapping[int, Counts]) -> dict[str, int]:
    """``{"in": ..., "converted": ..., ...}`` over all partitions."""
    whole = Counts()
    for counts in per_partition.values():
        whole = whole.plus(counts)
    return {"in": whole.total, **whole.as_dict()}


@dataclass(frozen=True)
class SinkConfig:
    """What a task needs to write (pickled to the executors): no Spark, no files."""

    bootstrap: str
    source_topic: str
    group: str
    client: Mapping[str, str] = field(default_factory=dict)  # librdkafka properties (SASL, TLS)
    producer: Mapping[str, str] = field(default_factory=dict)  # overrides of PRODUCER_DEFAULTS
    timeout: float = TIMEOUT

    def base(self) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap, **self.client}


def committed(cfg: SinkConfig, partitions: list[int]) -> dict[int, tuple[int, Counts]]:
    """partition -> (next offset to write, cumulative counts) as committed by the converter's
    transactions; partitions never committed are left out."""
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


class PartitionWriter:
    """Writes one v2 partition's rows of one batch in one transaction (see the module doc)."""

    def __init__(self, cfg: SinkConfig, partition: int) -> None:
        from confluent_kafka import Consumer, Producer, TopicPartition

        self.cfg, self.partition = cfg, partition
        self.producer = Producer(
            {
                **cfg.base(),
                **PRODUCER_DEFAULTS,
                **cfg.producer,
                "transactional.id": transactional_id(cfg.group, partition),
            }
        )
        # Fence whoever wrote this partition before us (and abort what they left open) before
        # reading how far they got: after this, nobody else can commit for this partition.
        self.producer.init_transactions(cfg.timeout)
        self.reader = Consumer(_reader_config(cfg))
        (tp,) = self.reader.committed([TopicPartition(cfg.source_topic, partition)], cfg.timeout)
        self.start = tp.offset if tp.offset >= 0 else 0
        self.before = Counts.decode(tp.metadata) if tp.offset >= 0 else Counts()
        self.batch = Counts()
        self.already = 0
        self.first: int | None = None
        self.next = self.start
        self.open = False

    def add(self, offset: int, kind: str, topic: str, key: Any, value: Any, headers: Any) -> None:
        if offset < self.start:
            self.already += 1  # written by a committed transaction: a re-run batch
            return
        if not self.open:
            self.producer.begin_transaction()
            self.open = True
        if self.first is None:
            self.first = offset
        if kind != "skipped":
            self._produce(topic, key, value, headers)
        self.batch.add(kind)
        self.next = offset + 1

    def _produce(self, topic: str, key: Any, value: Any, headers: Any) -> None:
        while True:
            try:
                self.producer.produce(topic, value=value, key=key, headers=headers)
                return
            except BufferError:  # the local queue is full: let deliveries drain
                self.producer.poll(0.05)

    def commit(self) -> tuple[int, int, int, int, str]:
        """Commit what was added with the next offset and the new counts; the stats row."""
        from confluent_kafka import TopicPartition

        after = self.before.plus(self.batch)
        if self.open:
            position = TopicPartition(
                self.cfg.source_topic, self.partition, self.next, metadata=after.encode()
            )
            self.producer.send_offsets_to_transaction(
                [position], self.reader.consumer_group_metadata(), self.cfg.timeout
            )
            self.producer.commit_transaction(self.cfg.timeout)
            self.open = False
        first = self.first if self.first is not None else self.next
        return (self.partition, first, self.next, self.already, after.encode())

    def close(self, *, abort: bool) -> None:
        try:
            if abort and self.open:
                try:
                    self.producer.abort_transaction(self.cfg.timeout)
                except Exception:  # noqa: BLE001 - fenced or fatal: the next owner aborts it
                    pass
        finally:
            # no flush: after a commit nothing is pending, after an abort nothing may be sent
            # (and a fenced producer raises on any call)
            self.reader.close()


def write_rows(cfg: SinkConfig, rows: Iterator[tuple]) -> Iterator[tuple]:
    """Write ``rows`` (``ROW_COLUMNS`` order, one v2 partition after another, each in offset
    order) and yield one stats row per partition (``STATS_SCHEMA``). Raises on any Kafka error
    after aborting: Spark retries the task (a retry fences this attempt if it lives on)."""
    writer: PartitionWriter | None = None
    try:
        for topic, key, value, headers, kind, partition, offset in rows:
            if writer is None or writer.partition != partition:
                if writer is not None:
                    yield writer.commit()
                    writer.close(abort=False)
                writer = PartitionWriter(cfg, partition)
            writer.add(offset, kind, topic, key, value, headers)
        if writer is not None:
            yield writer.commit()
            writer.close(abort=False)
            writer = None
    except BaseException:
        if writer is not None:
            writer.close(abort=True)
        raise


def write_arrow(cfg: SinkConfig, batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` function: Arrow batches of ``ROW_COLUMNS`` -> Arrow batches of stats."""
    import pyarrow as pa

    def rows() -> Iterator[tuple]:
        for batch in batches:
            cols = [batch.column(name).to_pylist() for name in ROW_COLUMNS]
            headers = cols[3]
            cols[3] = [[(h["key"], h["value"]) for h in hs] if hs else None for hs in headers]
            yield from zip(*cols, strict=True)

    types = (
        ("partition", pa.int32()),
        ("first_offset", pa.int64()),
        ("next_offset", pa.int64()),
        ("already", pa.int64()),
        ("counts", pa.string()),
    )
    stats = list(write_rows(cfg, rows()))
    if stats:
        yield pa.RecordBatch.from_arrays(
            [pa.array([s[i] for s in stats], type=t) for i, (_, t) in enumerate(types)],
            names=[name for name, _ in types],
        )


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
