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
    # a retried InitProducerId (the coordinator busy a moment) waits 10 ms, not librdkafka's 100
    "retry.backoff.ms": "10",
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


# Per Python worker process (Spark reuses them across tasks): one producer per transactional id,
# one offsets reader per group. A producer's init_transactions costs hundreds of ms; reusing it is
# safe because every batch reads the committed offset after the producer's last init, and a
# producer fenced since then fails its first call to the coordinator (the probe in
# PartitionWriter.begin), before any record is written, and is replaced.
_PRODUCERS: dict[tuple[str, str], Any] = {}
_READERS: dict[tuple[str, str], Any] = {}


def close_clients() -> None:
    """Drop this process's cached producers and readers (a test's teardown; a Python worker's
    clients go with the process)."""
    for reader in _READERS.values():
        reader.close()
    _READERS.clear()
    _PRODUCERS.clear()


def _fenced_or_fatal(exc: Exception) -> bool:
    err = exc.args[0] if exc.args else None
    return bool(getattr(err, "fatal", lambda: False)()) or "fenced" in str(exc).lower()


class PartitionWriter:
    """Writes one v2 partition's rows of one batch in one transaction (see the module doc)."""

    def __init__(self, cfg: SinkConfig, partition: int) -> None:
        self.cfg, self.partition = cfg, partition
        self.tid = transactional_id(cfg.group, partition)
        self.reader = self._reader()
        self.producer = self._producer(fresh=False)
        self.batch = Counts()
        self.already = 0
        self.first: int | None = None
        self.begin()

    def _reader(self) -> Any:
        from confluent_kafka import Consumer

        key = (self.cfg.bootstrap, self.cfg.group)
        if key not in _READERS:
            _READERS[key] = Consumer(_reader_config(self.cfg))
        return _READERS[key]

    def _producer(self, *, fresh: bool) -> Any:
        from confluent_kafka import Producer

        key = (self.cfg.bootstrap, self.tid)
        if fresh or key not in _PRODUCERS:
            _PRODUCERS.pop(key, None)
            producer = Producer(
                {
                    **self.cfg.base(),
                    **PRODUCER_DEFAULTS,
                    **self.cfg.producer,
                    "transactional.id": self.tid,
                }
            )
            # Fence whoever wrote this partition before (and abort what they left open) before
            # reading how far they got: after this, nobody older can commit for this partition.
            producer.init_transactions(self.cfg.timeout)
            _PRODUCERS[key] = producer
        return _PRODUCERS[key]

    def _read_committed(self) -> None:
        from confluent_kafka import TopicPartition

        tp = TopicPartition(self.cfg.source_topic, self.partition)
        (tp,) = self.reader.committed([tp], self.cfg.timeout)
        self.start = tp.offset if tp.offset >= 0 else 0
        self.before = Counts.decode(tp.metadata) if tp.offset >= 0 else Counts()
        self.next = self.start

    def _position(self, offset: int, counts: Counts) -> Any:
        from confluent_kafka import TopicPartition

        return TopicPartition(
            self.cfg.source_topic, self.partition, offset, metadata=counts.encode()
        )

    def begin(self) -> None:
        """Read the committed offset, open the transaction and probe the coordinator with it (a
        producer fenced since its init fails here, and is replaced by a fresh one)."""
        from confluent_kafka import KafkaException

        for attempt in (1, 2):
            self._read_committed()
            try:
                self.producer.begin_transaction()
                self.producer.send_offsets_to_transaction(
                    [self._position(self.start, self.before)],
                    self.reader.consumer_group_metadata(),
                    self.cfg.timeout,
                )
                return
            except KafkaException as exc:
                if attempt == 2 or not _fenced_or_fatal(exc):
                    raise
                self.producer = self._producer(fresh=True)  # init fences; read again after it

    def add_batch(self, batch: Any) -> None:
        """Write the rows of ``batch`` (``ROW_COLUMNS``, this partition, in offset order) whose
        offsets the committed transactions have not covered yet."""
        import pyarrow.compute as pc

        offsets = batch.column("source_offset")
        if pc.min(offsets).as_py() < self.start:
            keep = pc.greater_equal(offsets, self.start)
            self.already += batch.num_rows - pc.sum(keep).as_py()
            batch = batch.filter(keep)
            offsets = batch.column("source_offset")
        if batch.num_rows == 0:
            return
        if self.first is None:
            self.first = offsets[0].as_py()
        self.next = offsets[-1].as_py() + 1
        kinds = batch.column("kind")
        skipped = 0
        for item in pc.value_counts(kinds).to_pylist():
            self.batch.add(item["values"], item["counts"])
            skipped += item["counts"] if item["values"] == "skipped" else 0
        if skipped:
            batch = batch.filter(pc.not_equal(kinds, "skipped"))
        produce, poll = self.producer.produce, self.producer.poll
        topics = batch.column("topic").to_pylist()
        keys = batch.column("key").to_pylist()
        values = batch.column("value").to_pylist()
        for topic, key, value, headers in zip(
            topics, keys, values, _headers(batch.column("headers")), strict=True
        ):
            while True:
                try:
                    # positional (topic, value, key, partition, on_delivery, callback, timestamp,
                    # headers): confluent-kafka parses keywords per call, and at a million
                    # records that is 2.3 -> 1.0 us a record (bench/README.md)
                    produce(topic, value, key, -1, None, None, 0, headers)
                    break
                except BufferError:  # the local queue is full: let deliveries drain
                    poll(0.05)

    def commit(self) -> tuple[int, int, int, int, str]:
        """Commit what was added with the next offset and the new counts; the stats row."""
        after = self.before.plus(self.batch)
        self.producer.send_offsets_to_transaction(
            [self._position(self.next, after)],
            self.reader.consumer_group_metadata(),
            self.cfg.timeout,
        )
        self.producer.commit_transaction(self.cfg.timeout)
        first = self.first if self.first is not None else self.next
        return (self.partition, first, self.next, self.already, after.encode())

    def abort(self) -> None:
        """Abort the open transaction; a producer that cannot (fenced, fatal) is dropped."""
        try:
            self.producer.abort_transaction(self.cfg.timeout)
        except Exception:  # noqa: BLE001 - fenced or fatal: the next owner aborts it
            _PRODUCERS.pop((self.cfg.bootstrap, self.tid), None)


def _headers(column: Any) -> list[list[tuple[str, bytes]] | None]:
    """A ``list<struct<key, value>>`` Arrow column as librdkafka's header lists: the (key, value)
    pairs are built once for the whole column, each row takes its slice of them."""
    flat = column.flatten()
    pairs = list(zip(flat.field("key").to_pylist(), flat.field("value").to_pylist(), strict=True))
    bounds = column.offsets.to_pylist()
    base = bounds[0]
    rows = [pairs[lo - base : hi - base] for lo, hi in zip(bounds, bounds[1:], strict=False)]
    if column.null_count:
        valid = column.is_valid().to_pylist()
        rows = [r if ok else None for r, ok in zip(rows, valid, strict=True)]
    return rows


def _by_partition(batches: Iterator[Any]) -> Iterator[tuple[int, Any]]:
    """(partition, batch) with each batch holding one partition's rows (split where it changes)."""
    import pyarrow.compute as pc

    for batch in batches:
        if batch.num_rows == 0:
            continue
        parts = batch.column("source_partition")
        first, last = parts[0].as_py(), parts[-1].as_py()
        if first == last and pc.min(parts).as_py() == pc.max(parts).as_py():
            yield first, batch
            continue
        for p in pc.unique(parts).to_pylist():
            yield p, batch.filter(pc.equal(parts, p))


def write_batches(cfg: SinkConfig, batches: Iterator[Any]) -> Iterator[tuple]:
    """Write Arrow batches of ``ROW_COLUMNS`` (one v2 partition after another, each in offset
    order) and yield one stats row per partition (``STATS_SCHEMA``). Raises on any Kafka error
    after aborting: Spark retries the task (a retry fences this attempt if it lives on)."""
    writer: PartitionWriter | None = None
    try:
        for partition, batch in _by_partition(batches):
            if writer is None or writer.partition != partition:
                if writer is not None:
                    yield writer.commit()
                writer = PartitionWriter(cfg, partition)
            writer.add_batch(batch)
        if writer is not None:
            done, writer = writer, None
            yield done.commit()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise


def write_arrow(cfg: SinkConfig, batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` function: Arrow batches of ``ROW_COLUMNS`` -> Arrow batches of stats."""
    import pyarrow as pa

    types = (
        ("partition", pa.int32()),
        ("first_offset", pa.int64()),
        ("next_offset", pa.int64()),
        ("already", pa.int64()),
        ("counts", pa.string()),
    )
    stats = list(write_batches(cfg, batches))
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
