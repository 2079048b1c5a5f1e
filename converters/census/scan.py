"""Reading a topic for its census: the ranges to read, the topic's retention, and the read,
partitions in parallel processes, looking only at each key's and value's first 5 bytes.

The end of each partition is its high watermark when the census starts (later records are not
waited for); the read is bounded by a deadline; every wait on the broker goes through
``converters.kafka.waits`` (Ctrl-C is heard). Records of aborted transactions are counted too
(``read_uncommitted``): a consumer that reads uncommitted records, as Java's does by default,
meets their schema ids.

Speed: one consumer per worker process reads its partitions one at a time, in batches of
:data:`BATCH`, with large fetches (:data:`CONSUMER_DEFAULTS`). Within a partition, consecutive
records of the same kind make a *run*; the loop only compares each record's first 5 bytes with
the run's and touches offsets and timestamps when a run ends (bench/bench_census.py).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import and_, is_not, itemgetter, lt, ne, or_
from typing import Any

from converters.census import jvmscan, sparkscan
from converters.census.model import (
    HEADER,
    NULL,
    UNFRAMED,
    Kind,
    Mode,
    PartitionTally,
    Retention,
    Span,
    classify,
)
from converters.kafka import waits
from converters.kafka.settings import client_config
from schemacli.errors import InputError, NetworkError
from schemacli.gcpolicy import collect_rarely

BATCH = 100_000  # records per consume() call
PARALLEL_MIN = 200_000  # fewer records to read than this: one process (spawning costs ~0.3 s)
# Seconds a partition may be without a leader while the census takes the watermarks, once the
# cluster has answered: a lost broker's partitions get new leaders when the controller fences it
# (broker.session.timeout.ms, 9 s by default), which is longer than --connect-timeout's default
LEADER_WAIT = 30.0
CONSUMER_DEFAULTS = {
    "enable.auto.commit": False,
    "enable.partition.eof": True,  # a partition's end is heard even when a marker ends it
    "isolation.level": "read_uncommitted",
    "auto.offset.reset": "earliest",
    # large fetches: with librdkafka's defaults a header-only read waits on the network
    # (3M small records: 216k/s with the defaults, 620k/s with these; bench/README.md)
    "fetch.max.bytes": 64 * 1024 * 1024,
    "max.partition.fetch.bytes": 16 * 1024 * 1024,
    "queued.min.messages": 500_000,
    "queued.max.messages.kbytes": 256 * 1024,
}


def consumer_config(bootstrap: str, properties: Mapping[str, str] | None) -> dict[str, Any]:
    """A census consumer's settings (a group id of its own that never commits)."""
    role = {"group.id": f"schemacli-census-{uuid.uuid4().hex[:8]}", **CONSUMER_DEFAULTS}
    return client_config(bootstrap, properties, role)


def unreachable(bootstrap: str, exc: BaseException) -> NetworkError:
    return NetworkError(
        f"cannot read from Kafka at {bootstrap}: {exc}",
        hint="Check --bootstrap and that the broker is up (and the --kafka-properties file, "
        "if any).",
    )


@contextmanager
def opened(bootstrap: str, properties: Mapping[str, str] | None) -> Iterator[Any]:
    """A census consumer (:func:`consumer_config`) for the ``with`` block, closed after it; a
    consumer Kafka refuses is a NetworkError (:func:`unreachable`). The census's and topics
    check's one way to open the consumer that lays the topic out."""
    from confluent_kafka import Consumer, KafkaException

    try:
        consumer = Consumer(consumer_config(bootstrap, properties))
    except KafkaException as exc:
        raise unreachable(bootstrap, exc) from exc
    try:
        yield consumer
    finally:
        consumer.close()


def readers_for(jobs: int | None, tallies: list[PartitionTally]) -> int:
    """How many readers share the partitions: ``jobs`` (default: the CPUs), no more than the
    partitions with records to read (0 when none has)."""
    return min(jobs or os.cpu_count() or 1, sum(1 for t in tallies if t.end > t.start))


def counting(total: int, progress: Callable[[int, int], None] | None) -> Callable[[int], None]:
    """The ``step(n)`` a road calls as it reads n more records: ``progress(done, total)``."""
    counted = 0

    def step(n: int) -> None:
        nonlocal counted
        counted += n
        if progress is not None:
            progress(counted, total)

    return step


def layout(
    consumer: Any, topic: str, mode: Mode, bootstrap: str, timeout: float
) -> list[PartitionTally]:
    """Every partition of ``topic`` with its watermarks and the range ``mode`` reads. Raises
    InputError when the topic is not there, NetworkError when Kafka does not answer: no broker
    within ``timeout`` seconds, or a partition without a leader for :data:`LEADER_WAIT`."""
    from confluent_kafka import KafkaException, TopicPartition

    try:
        meta = waits.list_topics(consumer, topic, timeout)
        found = meta.topics.get(topic)
        if found is None or found.error is not None:
            raise InputError(
                f"topic {topic!r} not found on {bootstrap}",
                hint="Check the topic's name and --bootstrap (`kafka-topics --list`).",
            )
        # the cluster answers: a partition whose leader was just lost is waited for
        until = time.monotonic() + max(timeout, LEADER_WAIT)

        def left() -> float:
            return max(waits.SLICE, until - time.monotonic())

        tallies = []
        for p in sorted(found.partitions):
            low, high = waits.watermarks(consumer, TopicPartition(topic, p), left())
            tallies.append(PartitionTally(p, low, high, low, high))
        starts = _offsets_at(consumer, topic, tallies, mode.since_ms, left())
        ends = _offsets_at(
            consumer, topic, tallies, None if mode.until_ms is None else mode.until_ms + 1, left()
        )
    except KafkaException as exc:
        raise unreachable(bootstrap, exc) from exc
    for t in tallies:
        if starts is not None:
            t.start = min(max(starts.get(t.partition, t.high), t.low), t.high)
        if ends is not None:
            t.end = min(max(ends.get(t.partition, t.high), t.start), t.high)
        if mode.sample is not None:
            t.end = min(t.end, t.start + mode.sample)
        t.end = max(t.end, t.start)
    return tallies


def _offsets_at(
    consumer: Any, topic: str, tallies: list[PartitionTally], when_ms: int | None, timeout: float
) -> dict[int, int] | None:
    """partition -> the first offset whose timestamp is at or after ``when_ms`` (the high
    watermark where there is none); None for no time."""
    from confluent_kafka import TopicPartition

    if when_ms is None:
        return None
    asked = [TopicPartition(topic, t.partition, when_ms) for t in tallies]
    answer = waits.sliced(lambda s: consumer.offsets_for_times(asked, timeout=s), timeout)
    high = {t.partition: t.high for t in tallies}
    return {tp.partition: tp.offset if tp.offset >= 0 else high[tp.partition] for tp in answer}


def retention(
    bootstrap: str, topic: str, properties: Mapping[str, str] | None, timeout: float
) -> Retention:
    """The topic's retention.ms, retention.bytes, cleanup.policy and segment.ms, as the broker
    reports them (``describe_configs``)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient(client_config(bootstrap, properties))
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    try:
        future = admin.describe_configs([resource], request_timeout=timeout)[resource]
        entries = _wait(future, timeout)
    except KafkaException as exc:
        raise unreachable(bootstrap, exc) from exc

    def number(name: str) -> int | None:
        entry = entries.get(name)
        try:
            return None if entry is None or entry.value is None else int(entry.value)
        except ValueError:
            return None

    policy = entries.get("cleanup.policy")
    return Retention(
        retention_ms=number("retention.ms"),
        retention_bytes=number("retention.bytes"),
        cleanup_policy=None if policy is None else policy.value,
        segment_ms=number("segment.ms"),
    )


def _wait(future: Any, timeout: float) -> Any:
    """A future's result, waited for in slices (Ctrl-C is heard)."""
    import concurrent.futures

    deadline = time.monotonic() + timeout
    while True:
        try:
            return future.result(timeout=waits.SLICE)
        except concurrent.futures.TimeoutError:
            if time.monotonic() > deadline:
                raise NetworkError(
                    f"Kafka did not describe the topic within {timeout:g} s",
                    hint="Check that the broker is up.",
                ) from None


@dataclass
class Run:
    """The run of one side that the next records may continue: its kind, its first record, how
    many records it has, and the last record seen (its end, if the next one differs)."""

    kind: Kind | None = None
    first: Any = None
    count: int = 0
    last: Any = None


_HEAD = itemgetter(slice(0, HEADER))


def run_starts(datas: list[Any]) -> list[tuple[int, Kind]]:
    """(index, kind) where each run of ``datas`` (one side of one partition's records) starts:
    the first record, then every record whose kind differs from the one before it.

    Found with loops that run in C (``map``, ``compress``, ``any``): which records may be
    framed (first byte 0: ``< b"\\x01"``; none: one unframed run, the usual string keys), the
    first 5 bytes of each, the indexes where they differ from the previous record's next to
    a record that may be framed. Only those candidates are classified in Python, and
    neighbours of one kind merged. A side holding None (no key, a tombstone) takes one pass in
    Python (all None: one run, found in C)."""
    n = len(datas)
    try:
        maybe = list(map(lt, datas, repeat(b"\x01")))
        heads: list[Any] | None = None
    except TypeError:  # a None (no key, a tombstone)
        if datas.count(None) == n:
            return [(0, NULL)]
        heads = [None if d is None else (d[:HEADER] if d[:1] == b"\x00" else b"") for d in datas]
    if heads is None:
        if not any(maybe):
            return [(0, UNFRAMED)]
        heads = list(map(_HEAD, datas))
        differ = map(ne, islice(heads, 1, None), heads)
        if all(maybe):  # every record may be framed: every difference is a candidate
            changes = compress(range(1, n), differ)
        else:
            near = map(or_, islice(maybe, 1, None), maybe)
            changes = compress(range(1, n), map(and_, differ, near))
    else:
        changes = compress(range(1, n), map(ne, islice(heads, 1, None), heads))
    starts: list[tuple[int, Kind]] = [(0, classify(heads[0]))]
    for i in changes:
        kind = classify(heads[i])
        if kind != starts[-1][1]:
            starts.append((i, kind))
    return starts


class PartitionReader:
    """Tallies one partition's records, batch by batch (see the module doc: runs)."""

    def __init__(self, tally: PartitionTally) -> None:
        self.tally = tally
        self.runs = {"keys": Run(), "values": Run()}

    def feed(self, batch: list[Any]) -> bool:
        """Tally this partition's next records; True once its end is reached (the end offset,
        or the end of the partition)."""
        from confluent_kafka import KafkaError, KafkaException

        kind = type(batch[0]) if batch else None
        errors = list(map(kind.error, batch)) if kind is not None else []
        done = False
        # rare: an end of partition, a broker away (``is not``: KafkaError's == with None is
        # broken in confluent-kafka 2.x, it leaves an exception set)
        if any(map(is_not, errors, repeat(None))):
            kept = []
            for m, err in zip(batch, errors, strict=True):
                if err is None:
                    kept.append(m)
                elif err.code() == KafkaError._PARTITION_EOF:
                    done = True
                    break
                elif not _passing(err):
                    raise KafkaException(err)
            batch = kept
        batch, past_end = _cut(batch, self.tally.end)
        if batch:
            assert kind is not None
            self._side(self.tally.values, self.runs["values"], list(map(kind.value, batch)), batch)
            self._side(self.tally.keys, self.runs["keys"], list(map(kind.key, batch)), batch)
            self.tally.scanned += len(batch)
        return done or past_end or (bool(batch) and batch[-1].offset() >= self.tally.end - 1)

    @staticmethod
    def _side(spans: dict[Kind, Span], run: Run, datas: list[Any], batch: list[Any]) -> None:
        starts = run_starts(datas)
        ends = [s for s, _ in starts[1:]] + [len(batch)]
        for (start, kind), end in zip(starts, ends, strict=True):
            if kind == run.kind:
                run.count += end - start
                continue
            if run.first is not None:
                _add(spans, run.kind, run.first, batch[start - 1] if start else run.last,
                     run.count)  # fmt: skip
            run.kind, run.first, run.count = kind, batch[start], end - start
        run.last = batch[-1]

    def close(self, complete: bool) -> PartitionTally:
        """The partition's tally, its open runs added."""
        for side, run in self.runs.items():
            if run.first is not None:
                _add(getattr(self.tally, side), run.kind, run.first, run.last, run.count)
        self.runs = {"keys": Run(), "values": Run()}
        self.tally.complete = complete
        return self.tally


def _passing(err: Any) -> bool:
    """An error librdkafka recovers from by itself (the deadline bounds the wait)."""
    from confluent_kafka import KafkaError

    passing = (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT)
    return not err.fatal() and (err.code() in passing or bool(err.retriable()))


def _cut(batch: list[Any], end: int) -> tuple[list[Any], bool]:
    """``batch`` without the records at or past ``end`` (written after the census started), and
    whether any were there."""
    j = len(batch) - 1
    while j >= 0 and batch[j].error() is not None:
        j -= 1
    if j < 0 or batch[j].offset() < end:
        return batch, False
    while j >= 0 and (batch[j].error() is not None or batch[j].offset() >= end):
        j -= 1
    return batch[: j + 1], True


def _stamp(m: Any) -> int | None:
    kind, ts = m.timestamp()
    return ts if kind != 0 and ts >= 0 else None  # 0: TIMESTAMP_NOT_AVAILABLE


def _add(spans: dict[Kind, Span], kind: Kind | None, first: Any, last: Any, count: int) -> None:
    assert kind is not None
    span = spans.get(kind)
    if span is None:
        span = spans[kind] = Span()
    span.add(count, (first.offset(), _stamp(first)), (last.offset(), _stamp(last)))


def read_partitions(
    consumer: Any,
    topic: str,
    tallies: list[PartitionTally],
    deadline: float,
    progress: Callable[[int], None] | None = None,
) -> list[PartitionTally]:
    """Read every partition of ``tallies`` over its range with ``consumer`` (the caller's to
    close), all assigned at once (one fetch serves several: a partition at a time was 40%
    slower); ``progress(n)`` after each batch of n records. A partition not read to its end by
    ``deadline`` (time.time()) is marked incomplete."""
    from confluent_kafka import TopicPartition

    readers = {t.partition: PartitionReader(t) for t in tallies if t.end > t.start}
    done = {t.partition: t for t in tallies if t.end <= t.start}
    if readers:
        consumer.assign([TopicPartition(topic, p, r.tally.start) for p, r in readers.items()])
    while readers and time.time() <= deadline:
        batch = waits.consume(consumer, BATCH)
        if not batch:
            continue
        read = 0
        for p, chunk in _chunks(batch):
            reader = readers.get(p)
            if reader is None:  # read to its end already (a fetch was in flight)
                continue
            before = reader.tally.scanned
            finished = reader.feed(chunk)
            read += reader.tally.scanned - before
            if finished:
                done[p] = readers.pop(p).close(complete=True)
                consumer.incremental_unassign([TopicPartition(topic, p)])
        if progress is not None:
            progress(read)
    for p, reader in readers.items():
        done[p] = reader.close(complete=False)
    consumer.unassign()
    return [done[p] for p in sorted(done)]


def _chunks(batch: list[Any]) -> list[tuple[int, list[Any]]]:
    """``batch`` cut where its partition changes (librdkafka hands over each fetched
    partition's records together, so the pieces are long; one partition: one piece, found by
    a count in C)."""
    partitions = list(map(type(batch[0]).partition, batch))
    first = partitions[0]
    if partitions.count(first) == len(batch):
        return [(first, batch)]
    cuts = [0, *compress(range(1, len(batch)), map(ne, partitions[1:], partitions)), len(batch)]
    return [(partitions[a], batch[a:b]) for a, b in zip(cuts, cuts[1:])]  # noqa: B905


@dataclass(frozen=True)
class Scan:
    partitions: list[PartitionTally]
    retention: Retention
    scanned_at_ms: int
    duration_s: float
    engine: str = "python"


def engine_of(engine: str) -> str:
    """The road a census takes: ``jvm`` (Kafka's Java consumer, ``census.jvmscan``),
    ``python`` (librdkafka) or ``spark`` (a Spark job, ``census.sparkscan``: only when asked);
    ``auto`` takes the JVM when it can run here, else Python. ``jvm`` or ``spark`` when it
    cannot run: JvmUnavailable / SparkUnavailable (exit 2) naming what is missing."""
    if engine == "python":
        return "python"
    if engine == "jvm":
        jvmscan.runtime()
        return "jvm"
    if engine == "spark":
        sparkscan.require()
        return "spark"
    return "jvm" if jvmscan.available() else "python"


def scan(
    bootstrap: str,
    topic: str,
    *,
    mode: Mode,
    properties: Mapping[str, str] | None = None,
    jobs: int | None = None,
    timeout: float = 600.0,
    connect_timeout: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "python",
    java_properties: Mapping[str, str] | None = None,
    master: str | None = None,
) -> Scan:
    """Read ``topic``'s records (``mode``: all, a sample, a time range), in ``jobs`` processes
    (default: the CPUs; 1: in this process), or with ``engine`` ``jvm`` in ``jobs`` threads of
    one JVM (``java_properties``: the --kafka-properties file in the Java client's names), or
    with ``engine`` ``spark`` as a Spark job on ``master`` (default ``local[jobs]``; on a
    cluster ``jobs`` caps its cores). ``progress(done, total)`` is called as records are read.
    Raises InputError (no such topic; JvmUnavailable, SparkUnavailable), NetworkError (Kafka
    or the Spark master does not answer)."""
    from confluent_kafka import KafkaException

    # auto with librdkafka settings but none in Java's names (a caller that holds only those):
    # the Python road, which has them
    road = engine_of("python" if engine == "auto" and properties and java_properties is None
                     else engine)  # fmt: skip
    if road == "spark":  # a master that is not there is said before Kafka is asked
        master = sparkscan.master_of(master, jobs)
        sparkscan.probe(master, connect_timeout)
    started = time.time()
    scanned_at_ms = int(started * 1000)
    with opened(bootstrap, properties) as consumer:
        tallies = layout(consumer, topic, mode, bootstrap, connect_timeout)
        settings = retention(bootstrap, topic, properties, connect_timeout)
        total = sum(t.end - t.start for t in tallies)
        workers = readers_for(jobs, tallies)
        deadline = started + timeout
        step = counting(total, progress)
        if road == "jvm":
            tallies = jvmscan.read_partitions(
                bootstrap,
                topic,
                tallies,
                properties=java_properties,
                threads=max(workers, 1),
                deadline=deadline,
                step=step,
            )
        elif road == "spark":
            tallies = sparkscan.read_partitions(
                bootstrap,
                topic,
                tallies,
                properties=java_properties,
                master=master,
                cores=jobs,
                deadline=deadline,
                step=step,
            )
        elif workers <= 1 or total < PARALLEL_MIN:
            try:
                tallies = read_partitions(consumer, topic, tallies, deadline, step)
            except KafkaException as exc:
                raise unreachable(bootstrap, exc) from exc
        else:
            tallies = _in_processes(bootstrap, properties, topic, tallies, workers, deadline, step)
    return Scan(tallies, settings, scanned_at_ms, time.time() - started, road)


def share(tallies: list[PartitionTally], workers: int) -> list[list[PartitionTally]]:
    """The partitions dealt to ``workers``, the biggest first to the least loaded."""
    loads: list[tuple[int, int]] = [(0, i) for i in range(workers)]
    dealt: list[list[PartitionTally]] = [[] for _ in range(workers)]
    for t in sorted(tallies, key=lambda t: t.end - t.start, reverse=True):
        load, i = min(loads)
        loads[i] = (load + t.end - t.start, i)
        dealt[i].append(t)
    return [d for d in dealt if d]


def _in_processes(
    bootstrap: str,
    properties: Mapping[str, str] | None,
    topic: str,
    tallies: list[PartitionTally],
    workers: int,
    deadline: float,
    step: Callable[[int], None],
) -> list[PartitionTally]:
    """Each share of the partitions read by a worker process of its own (spawned: librdkafka's
    threads do not survive a fork); their counts come back on a queue."""
    ctx = multiprocessing.get_context("spawn")
    results: Any = ctx.Queue()
    procs = [
        ctx.Process(
            target=_worker,
            args=(bootstrap, dict(properties or {}), topic, part, deadline, results),
            daemon=True,
        )
        for part in share(tallies, workers)
    ]
    for p in procs:
        p.start()
    done: list[PartitionTally] = []
    left = len(procs)
    try:
        while left:
            try:
                what, payload = results.get(timeout=waits.SLICE)
            except queue.Empty:
                if time.time() > deadline + 30 or not any(p.is_alive() for p in procs):
                    raise NetworkError(
                        "a census worker stopped without an answer",
                        hint="Run again with --jobs 1 to read in one process.",
                    ) from None
                continue
            if what == "progress":
                step(payload)
            elif what == "done":
                done.extend(payload)
                left -= 1
            else:
                raise unreachable(bootstrap, RuntimeError(payload))
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)
        results.close()
    return done


def _worker(
    bootstrap: str,
    properties: dict[str, str],
    topic: str,
    tallies: list[PartitionTally],
    deadline: float,
    results: Any,
) -> None:
    """A worker process: read its partitions, say how far it got as it goes, and hand back the
    tallies (or the error's words)."""
    from confluent_kafka import Consumer

    collect_rarely()  # our own process: each batch allocates 100,000s of short-lived objects
    try:
        consumer = Consumer(consumer_config(bootstrap, properties))
        try:
            pending = 0

            def progress(n: int) -> None:
                nonlocal pending
                pending += n
                if pending >= 50_000:
                    results.put(("progress", pending))
                    pending = 0

            read = read_partitions(consumer, topic, tallies, deadline, progress)
            if pending:
                results.put(("progress", pending))
        finally:
            consumer.close()
        results.put(("done", read))
    except KeyboardInterrupt:
        return
    except Exception as exc:  # words for the parent, which raises them as its error
        results.put(("error", f"{type(exc).__name__}: {exc}"))
