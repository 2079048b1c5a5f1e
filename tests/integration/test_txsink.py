"""The exactly-once writer (the JVM writer behind pipeline.txsink) against a real broker: a
re-run batch writes nothing twice, a zombie is fenced, counts ride in the committed offsets."""

from __future__ import annotations

import time
import uuid

import pytest

from converters.pipeline.txsink import (
    ROW_COLUMNS,
    Counts,
    SinkConfig,
    committed,
    java_options,
    jvm_writer,
    take_over,
    transactional_id,
    write_batch,
)

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROW_SCHEMA = (
    "topic STRING, key BINARY, value BINARY, headers ARRAY<STRUCT<key: STRING, value: BINARY>>, "
    "kind STRING, source_partition INT, source_offset LONG"
)


def write_rows(spark, cfg: SinkConfig, rows: list[tuple]) -> list[tuple]:
    """The rows as a batch reaches the writer (grouped by v2 partition, in offset order); the
    stats (partition, first, next, already) by partition."""
    frame = spark.createDataFrame(
        [(*r[:3], [{"key": k, "value": v} for k, v in r[3]], *r[4:]) for r in rows], ROW_SCHEMA
    )
    assert tuple(frame.columns) == ROW_COLUMNS
    batch = frame.repartition(2, "source_partition").sortWithinPartitions(
        "source_partition", "source_offset"
    )
    stats = sorted(write_batch(batch, cfg), key=lambda s: s.partition)
    return [(s.partition, s.first_offset, s.next_offset, s.already) for s in stats]


@pytest.fixture(autouse=True)
def _own_clients(spark):
    yield
    jvm_writer(spark).closeIdleClients()  # no client of this JVM outlives the broker


def _topics(bootstrap: str) -> tuple[str, str, str]:
    from confluent_kafka.admin import AdminClient, NewTopic

    run = uuid.uuid4().hex[:8]
    names = (f"tx-v2-{run}", f"tx-v1-{run}", f"tx-v2-{run}.dead-letter")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, 2, 1) for t in names]).values():
        f.result(30)
    return names


def _rows(v1: str, dlq: str, partition: int, offsets: range) -> list[tuple]:
    rows = []
    for o in offsets:
        kind = "dead_letter" if o % 10 == 3 else "skipped" if o % 10 == 5 else "converted"
        topic = dlq if kind == "dead_letter" else v1
        headers = [("src", f"{partition}/{o}".encode())]
        rows.append((topic, f"k{o}".encode(), f"v{o}".encode(), headers, kind, partition, o))
    return rows


def _read(bootstrap: str, topic: str, isolation: str = "read_committed") -> list[str]:
    """Every record's src header, read to the end with ``isolation``."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    try:
        parts = [TopicPartition(topic, p, 0) for p in range(2)]
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), 10)[1] for p in range(2)}
        c.assign(parts)
        got, deadline = [], time.monotonic() + 30
        positions = dict.fromkeys(range(2), 0)
        while time.monotonic() < deadline and any(positions[p] < ends[p] for p in range(2)):
            msg = c.poll(0.5)
            if msg is None:
                # read_committed stops at the last stable offset: control records fill the rest
                done = c.position([TopicPartition(topic, p) for p in range(2)])
                positions = {tp.partition: max(tp.offset, 0) for tp in done}
                continue
            if msg.error() is None:
                got.append(dict(msg.headers())["src"].decode())
                positions[msg.partition()] = msg.offset() + 1
        return got
    finally:
        c.close()


def test_a_batch_run_twice_is_written_once_and_its_counts_ride_in_the_committed_offset(
    kafka, spark
):
    v2, v1, dlq = _topics(kafka)
    cfg = SinkConfig(kafka, v2, f"schemacli-converter.{v2}.{v1}")
    rows = _rows(v1, dlq, 0, range(100)) + _rows(v1, dlq, 1, range(40))
    first = write_rows(spark, cfg, rows)
    assert first == [(0, 0, 100, 0), (1, 0, 40, 0)]
    again = write_rows(spark, cfg, rows)  # Spark re-runs the batch after a driver crash
    assert [(s[0], s[2], s[3]) for s in again] == [(0, 100, 100), (1, 40, 40)]
    # the next batch overlaps the last one (a restart from an older checkpoint): only the new
    overlap = write_rows(spark, cfg, _rows(v1, dlq, 0, range(50, 120)))
    assert [(s[1], s[2], s[3]) for s in overlap] == [(100, 120, 50)]
    converted = _read(kafka, v1)
    dead = _read(kafka, dlq)
    assert len(converted) == len(set(converted)) and len(dead) == len(set(dead))
    want = [r for r in _rows(v1, dlq, 0, range(120)) + _rows(v1, dlq, 1, range(40))]
    assert sorted(converted) == sorted(r[3][0][1].decode() for r in want if r[4] == "converted")
    assert sorted(dead) == sorted(r[3][0][1].decode() for r in want if r[4] == "dead_letter")
    got = committed(cfg, [0, 1])
    assert got[0][0] == 120 and got[1][0] == 40
    assert got[0][1] == Counts(converted=96, dead_letter=12, skipped=12)
    assert got[0][1].total == 120 and got[1][1].total == 40


def test_a_zombie_task_is_fenced_and_its_records_never_reach_read_committed_consumers(kafka, spark):
    from py4j.protocol import Py4JJavaError

    v2, v1, dlq = _topics(kafka)
    cfg = SinkConfig(kafka, v2, f"schemacli-converter.{v2}.{v1}")
    # the task of an executor on a lost worker, still running: its producer is its own
    zombie = jvm_writer(spark).open(java_options(spark, cfg), 0)
    for topic, key, value, headers, kind, _, offset in _rows(v1, dlq, 0, range(30)):
        zombie.add(
            topic, key, value, [k for k, _ in headers], [v for _, v in headers], kind, offset
        )
    zombie.flush()  # its records are in the log, its transaction open
    retried = write_rows(spark, cfg, _rows(v1, dlq, 0, range(30)))  # Spark's retry
    assert retried[0][1:4] == (0, 30, 0)
    with pytest.raises(Py4JJavaError) as fenced:
        zombie.commit()
    assert "ProducerFencedException" in str(fenced.value.java_exception.getClass().getName())
    zombie.abort()
    converted = _read(kafka, v1)
    assert sorted(converted) == sorted(
        r[3][0][1].decode() for r in _rows(v1, dlq, 0, range(30)) if r[4] == "converted"
    )
    # what the docs warn about: a read_uncommitted reader also sees the zombie's aborted records
    assert len(_read(kafka, v1, "read_uncommitted")) > len(converted)
    assert committed(cfg, [0])[0][1].total == 30


def test_a_new_run_takes_over_from_a_driver_killed_mid_commit_without_waiting_for_the_broker(
    kafka, spark
):
    from dataclasses import replace

    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

    v2, v1, dlq = _topics(kafka)
    cfg = SinkConfig(kafka, v2, f"schemacli-converter.{v2}.{v1}")
    write_rows(spark, cfg, _rows(v1, dlq, 0, range(20)) + _rows(v1, dlq, 1, range(10)))
    # the writer of partition 1, killed after it sent its offsets to the transaction and before
    # it ended it: the transaction stays open until the broker's two-minute timeout
    dead = Producer(
        {"bootstrap.servers": kafka, "transactional.id": transactional_id(cfg.group, 1)}
    )
    dead.init_transactions(30)
    dead.begin_transaction()
    dead.produce(v1, b"never", headers=[("src", b"1/10")])
    group = Consumer({"bootstrap.servers": kafka, "group.id": cfg.group})
    dead.send_offsets_to_transaction(
        [TopicPartition(v2, 1, 11)], group.consumer_group_metadata(), 30
    )
    group.close()
    dead.flush(30)
    # a stable read of the progress group waits on it...
    with pytest.raises(KafkaException, match="Timed out"):
        committed(replace(cfg, timeout=3.0), [0, 1])
    # ...so a new run first fences it: the open transaction is aborted and the read answers
    # well inside a timeout far shorter than the broker's
    found = take_over(replace(cfg, timeout=60.0))  # half the broker's 120 s
    assert {p: (offset, counts.total) for p, (offset, counts) in found.items()} == {
        0: (20, 20),
        1: (10, 10),
    }
    assert "1/10" not in _read(kafka, v1)  # the dead writer's record never became visible
    with pytest.raises(KafkaException):
        dead.commit_transaction(10)  # and the dead writer, were it to wake, is fenced
