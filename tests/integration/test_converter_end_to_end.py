"""The converter end to end: real Kafka, a Confluent-API registry, spark-submit.

v1 and v2 of the taxi ride are registered under separate subjects (v2 is BACKWARD-incompatible:
total_amount is a string) with separate topics; v2 messages - some with non-numeric amounts,
some not Avro at all, one already carrying the converted marker - are produced, the converter is
deployed with ``schemacli migrate deploy``, and the v1 topic is read back with confluent-kafka's
AvroDeserializer and the v1 reader schema.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import fastavro
import pytest

from converters.pipeline.headers import parse_marker

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
MARKER = "schemacli.converted-from"
V1_KEY = json.loads((ROOT / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
V2_KEY = {**V1_KEY, "fields": [{"name": "vendorId", "type": "string"}]}  # v2 keys: string ids


def framed(schema: dict, record: dict, schema_id: int) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


@dataclass
class Setup:
    bootstrap: str
    registry: str
    mapping: Path
    state: Path
    v2_topic: str
    v1_topic: str
    dlq: str
    v1_id: int
    produced: dict[str, dict]  # "topic/partition/offset" -> what was sent and what must happen
    v2_id: int = 0
    key_ids: tuple[int, int] | None = None  # (v1, v2) key schema ids when keys are Avro


def _url(registry) -> str:
    return str(getattr(registry, "url", registry))


def _bootstrap(kafka) -> str:
    return str(getattr(kafka, "bootstrap", kafka))


def prepare(
    bootstrap: str,
    registry_url: str,
    tmp: Path,
    n: int,
    keyed: bool = False,
    *,
    replication_factor: int = 1,
) -> Setup:
    """Topics, subjects, n v2 messages (``produce``; 0 leaves producing to the test) and a planned
    mapping. ``keyed``: keys are Avro too (v2 string ids, v1 int ids: key subjects registered, a
    ``key:`` section planned); every tenth key (i % 10 == 9) is not a number, so its record goes
    to the dead letter."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings

    run = uuid.uuid4().hex[:8]
    v2_topic, v1_topic, dlq = f"rides-v2-{run}", f"rides-{run}", f"rides-v2-{run}.dead-letter"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics(
        [
            NewTopic(t, num_partitions=2, replication_factor=replication_factor)
            for t in (v2_topic, v1_topic, dlq)
        ]
    ).values():
        f.result(30)
    key_ids = None
    with RegistryClient(RegistrySettings.build(url=registry_url, env={})) as client:
        v1_id = client.register(f"{v1_topic}-value", json.dumps(V1)).id
        v2_id = client.register(f"{v2_topic}-value", json.dumps(V2)).id
        if keyed:
            key_ids = (
                client.register(f"{v1_topic}-key", json.dumps(V1_KEY)).id,
                client.register(f"{v2_topic}-key", json.dumps(V2_KEY)).id,
            )
    mapping = tmp / "mapping.yaml"
    key_options = []
    if keyed:  # outside the store's layout, so the key subjects follow the value's (-key)
        (tmp / "v1-key.avsc").write_text(json.dumps(V1_KEY))
        (tmp / "v2-key.avsc").write_text(json.dumps(V2_KEY))
        key_options = ["--key-from", str(tmp / "v2-key.avsc"), "--key-to", str(tmp / "v1-key.avsc")]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemacli",
            "migrate",
            "plan",
            "--from",
            str(ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"),
            "--to",
            str(ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"),
            "--source-subject",
            f"{v2_topic}-value",
            "--target-subject",
            f"{v1_topic}-value",
            "--source-topic",
            v2_topic,
            "--target-topic",
            v1_topic,
            "--out",
            str(mapping),
            *key_options,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    s = Setup(
        bootstrap, registry_url, mapping, tmp / "state", v2_topic, v1_topic, dlq, v1_id, {},
        v2_id=v2_id, key_ids=key_ids,
    )  # fmt: skip
    produce(s, 0, n)
    return s


def produce(s: Setup, start: int, stop: int) -> None:
    """Produce rides ``start`` .. ``stop - 1`` to v2 (acks=all, flushed), each recorded in
    ``s.produced`` under its offset with what the converter must do with it: one in ten is not
    a number (dead letter), one in ten not Avro at all (dead letter), ride 5 already carries
    the converted marker (skipped)."""
    from confluent_kafka import Producer

    if stop <= start:
        return
    parsed = fastavro.parse_schema(V2)
    pending: dict[int, dict] = {}
    failures: list = []
    producer = Producer({"bootstrap.servers": s.bootstrap, "acks": "all", "linger.ms": 5})

    def delivered(err, msg, i=None):
        if err is not None:
            failures.append(err)
            return
        s.produced[f"{msg.topic()}/{msg.partition()}/{msg.offset()}"] = pending.pop(i)

    for i in range(start, stop):
        ride = {
            "vendorId": i,
            "passenger_count": i % 5,
            "trip_distance": i / 4,
            "payment_type": i % 3,
            "total_amount": f"{i}.25",
        }
        headers = [("trace-id", f"t{i}".encode())]
        expect = "converted"
        if i % 10 == 3:
            ride["total_amount"] = "n/a"
            expect = "dead_letter"
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, ride)
        value = b"\x00" + s.v2_id.to_bytes(4, "big") + buf.getvalue()
        if i % 10 == 7:
            value, expect = b"not avro at all", "dead_letter"
        if i == 5:
            headers.append((MARKER, b"elsewhere/1"))
            expect = "skipped"
        key = out_key = f"k{i}".encode()
        if s.key_ids is not None:
            v1_key_id, v2_key_id = s.key_ids
            key = framed(V2_KEY, {"vendorId": str(i) if i % 10 != 9 else f"v{i}"}, v2_key_id)
            if i % 10 == 9 and expect == "converted":
                expect = "dead_letter"
            out_key = framed(V1_KEY, {"vendorId": i}, v1_key_id) if expect == "converted" else key
        # "key": what the converter must write (the v1 key; the original one in a dead letter)
        pending[i] = {"ride": ride, "value": value, "expect": expect, "key": out_key}
        while True:
            try:
                producer.produce(
                    s.v2_topic,
                    key=key,
                    value=value,
                    headers=headers,
                    on_delivery=lambda err, msg, i=i: delivered(err, msg, i),
                )
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.1)
        producer.poll(0)
    assert producer.flush(120) == 0, "rides still undelivered after 120 s"
    assert not failures, failures[:3]
    assert not pending


def deploy(s: Setup, *extra: str, detach: bool = False) -> subprocess.CompletedProcess:
    """``schemacli migrate deploy`` of ``s``'s mapping with the tests' Spark settings (the local
    jars, UI off, loopback, the JVM options of ``tests.stack.spark.submit_jvm_confs``) and
    ``extra`` arguments (later ``--conf`` items win)."""
    from tests.stack.spark import archiving_driver, spark_jars, submit_jvm_confs

    cmd = [
        sys.executable,
        "-m",
        "schemacli",
        "migrate",
        "deploy",
        str(s.mapping),
        "--bootstrap",
        s.bootstrap,
        "--registry",
        s.registry,
        "--state-dir",
        str(s.state),
        "--jars",
        ",".join(str(j) for j in spark_jars()),
        "--conf",
        "spark.sql.shuffle.partitions=2",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
    ]
    if detach:
        cmd += [*submit_jvm_confs(), *extra, "--detach"]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    with archiving_driver() as archive:  # a run that ends on its own may write the archive
        cmd += [*archive.confs, *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
        if done.returncode == 0:
            archive.keep()
        return done


def consume(bootstrap: str, topic: str, expected: int = 0, idle: float | None = None) -> list:
    """Every committed record of ``topic``, read from the beginning to the end of each partition
    (``read_committed``: the end is the last stable offset). Ends on the event that every
    partition is read to its end, not after a quiet spell; ``expected`` and ``idle`` are kept for
    callers and not needed. Bounded by a deadline that only a hang reaches."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    del expected, idle
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
        }
    )
    got: list = []
    deadline = time.monotonic() + 300
    try:
        partitions = c.list_topics(topic, timeout=60).topics[topic].partitions
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        # the end of each partition as it is now: every writer that matters has finished
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=60)[1]
                for p in partitions}  # fmt: skip
        done: set[int] = set()
        while len(done) < len(partitions):
            assert time.monotonic() < deadline, f"{topic} not read to its end in 300 s"
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if (
                    msg.error().code() == KafkaError._PARTITION_EOF
                    and msg.offset() >= ends[msg.partition()]
                ):
                    done.add(msg.partition())
                continue
            got.append(msg)
    finally:
        c.close()
    return got


def wait_group_gone(group: int, bound: float = 120.0) -> None:
    """Until no live process is left in process group ``group`` (a killed driver's JVM and
    Python), bounded by a deadline only a hang reaches."""
    deadline = time.monotonic() + bound
    while True:
        alive = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                alive.append(proc.name)
        if not alive:
            return
        assert time.monotonic() < deadline, f"processes {alive} of group {group} did not end"
        time.sleep(0.05)


def headers_of(msg) -> dict[str, bytes]:
    return {k: v for k, v in (msg.headers() or [])}


def check_outputs(s: Setup) -> dict[str, int]:
    """Every valid v2 message is in the v1 topic, converted as the mapping says; every bad one in
    the dead-letter topic with its raw bytes; none is in both, none is missing. Returns counts,
    duplicates included (at-least-once)."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    want = {k: v for k, v in s.produced.items() if v["expect"] == "converted"}
    want_dead = {k: v for k, v in s.produced.items() if v["expect"] == "dead_letter"}
    deser = AvroDeserializer(SchemaRegistryClient({"url": s.registry}), json.dumps(V1))
    v1_msgs = consume(s.bootstrap, s.v1_topic, len(want))
    dead_msgs = consume(s.bootstrap, s.dlq, len(want_dead))
    seen: dict[str, int] = {}
    for msg in v1_msgs:
        h = headers_of(msg)
        marker = parse_marker(h[MARKER])
        source = marker.dedupe_key
        seen[source] = seen.get(source, 0) + 1
        sent = want[source]  # KeyError: something was converted that should not have been
        assert msg.value()[1:5] == s.v1_id.to_bytes(4, "big")
        record = deser(msg.value(), SerializationContext(s.v1_topic, MessageField.VALUE))
        ride = sent["ride"]
        assert record == {
            **ride,
            "total_amount": pytest.approx(float(ride["total_amount"])),
            "trip_distance": pytest.approx(ride["trip_distance"]),
        }
        assert msg.key() == sent["key"]
        assert h["trace-id"] == f"t{ride['vendorId']}".encode()
        assert marker.origin == f"{s.v2_topic}-value/1"
    dead_seen: dict[str, int] = {}
    for msg in dead_msgs:
        h = headers_of(msg)
        source = h["schemacli.source"].decode()
        dead_seen[source] = dead_seen.get(source, 0) + 1
        sent = want_dead[source]
        assert msg.value() == sent["value"] and msg.key() == sent["key"]
        assert h["schemacli.error"] and h["schemacli.error-stage"] in (
            b"decode",
            b"convert",
            b"key-convert",
        )
    assert set(seen) == set(want), "converted messages missing or extra"
    assert set(dead_seen) == set(want_dead), "dead-lettered messages missing or extra"
    return {
        "in": len(s.produced),
        "converted": len(seen),
        "dead_letter": len(dead_seen),
        "skipped": sum(1 for v in s.produced.values() if v["expect"] == "skipped"),
        "duplicates": sum(seen.values()) - len(seen) + sum(dead_seen.values()) - len(dead_seen),
    }


def test_converter_republishes_valid_v2_messages_as_v1_and_dead_letters_the_rest(
    kafka, registry, tmp_path
):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=120)
    sampled = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemacli",
            "migrate",
            "validate",
            str(s.mapping),
            "--sample",
            "30",
            "-b",
            s.bootstrap,
            "-r",
            s.registry,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert sampled.returncode == 0, sampled.stderr
    dry = json.loads(sampled.stdout)["dry_run"]
    # the 30 framed messages at the start of the topic (not-Avro values are not samples)
    assert dry["origin"].startswith("30 record(s) read from topic")
    assert dry["converted"] + dry["dead_lettered"] == 30 and dry["converted"] >= 1
    result = deploy(s, "--available-now")
    assert result.returncode == 0, result.stderr[-3000:]
    # the foreground run shows the job's progress, one line per batch, cumulative
    assert "converted 95 dead-lettered 24 skipped 1" in result.stderr, result.stderr[-3000:]
    counts = check_outputs(s)
    assert counts["in"] == counts["converted"] + counts["dead_letter"] + counts["skipped"]
    assert (counts["converted"], counts["dead_letter"], counts["skipped"]) == (95, 24, 1)
    assert counts["duplicates"] == 0  # one clean run: nothing written twice
    progress = json.loads((s.state / "progress.json").read_text())["totals"]
    assert progress == {"in": 120, "converted": 95, "dead_letter": 24, "skipped": 1, "tombstone": 0}
    status = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemacli",
            "migrate",
            "status",
            str(s.mapping),
            "--state-dir",
            str(s.state),
            "-b",
            s.bootstrap,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert status.returncode == 0, status.stderr
    parts = json.loads(status.stdout)["partitions"]
    assert sum(p["end_offset"] for p in parts) == 120 and all(p["lag"] == 0 for p in parts)


def test_converter_converts_avro_keys_and_dead_letters_records_whose_key_fails(
    kafka, registry, tmp_path
):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=40, keyed=True)
    assert f"subject: {s.v1_topic}-key" in s.mapping.read_text()
    result = deploy(s, "--available-now")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = check_outputs(s)  # checks every v1 key: v1 key id, {"vendorId": i}
    # i % 10: 3 bad amount, 7 not Avro, 9 bad key -> 12 dead; i == 5 skipped
    assert (counts["converted"], counts["dead_letter"], counts["skipped"]) == (27, 12, 1)
    progress = json.loads((s.state / "progress.json").read_text())["totals"]
    assert progress == {
        "in": 40,
        "converted": 27,
        "dead_letter": 12,
        "skipped": 1,
        "tombstone": 0,
    }


def test_converter_refuses_to_start_when_v1_is_not_registered(kafka, registry, tmp_path):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=1)
    text = s.mapping.read_text().replace(f"subject: {s.v1_topic}-value", "subject: nobody-value")
    s.mapping.write_text(text)
    result = deploy(s, "--available-now")
    assert result.returncode == 1
    assert "not registered under subject 'nobody-value'" in result.stderr


@pytest.mark.parametrize("delivery", ["exactly-once", "at-least-once"])
def test_sigkill_mid_stream_then_restart_loses_nothing_and_duplicates_nothing_when_exactly_once(
    kafka, registry, tmp_path, delivery
):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=2000)
    started = deploy(
        s,
        "--max-offsets-per-trigger",
        "100",
        "--trigger-seconds",
        "0.5",
        "--delivery",
        delivery,
        detach=True,
    )
    assert started.returncode == 0, started.stderr
    pid = int((s.state / "submit.pid").read_text())
    deadline = time.monotonic() + 600
    done = 0
    while time.monotonic() < deadline:
        try:
            done = json.loads((s.state / "progress.json").read_text())["totals"]["in"]
        except (OSError, ValueError, KeyError):
            done = 0
        if done >= 300:
            break
        time.sleep(0.5)
    assert 300 <= done < 2000, f"the job did not get mid-stream (processed {done})"
    os.killpg(pid, signal.SIGKILL)  # no goodbye: whatever batch was in flight is cut
    wait_group_gone(pid)
    restarted = deploy(s, "--available-now", "--delivery", delivery)
    assert restarted.returncode == 0, restarted.stderr[-3000:]
    counts = check_outputs(s)  # asserts nothing lost, nothing extra
    assert counts["in"] == counts["converted"] + counts["dead_letter"] + counts["skipped"]
    print(f"{delivery}: after SIGKILL at {done} and restart: {counts}")
    if delivery == "exactly-once":
        assert counts["duplicates"] == 0
        # the counts were committed with the records: exact through the crash
        totals = json.loads((s.state / "progress.json").read_text())["totals"]
        assert totals == {
            "in": 2000,
            "converted": counts["converted"],
            "dead_letter": counts["dead_letter"],
            "skipped": counts["skipped"],
            "tombstone": 0,
        }
    else:  # Spark's sink: the batch(es) in flight may be written twice, never lost
        assert counts["duplicates"] <= 100 * 2


def test_stop_ends_a_detached_converter_cleanly_after_its_batch(kafka, registry, tmp_path):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=50)
    started = deploy(s, detach=True)
    assert started.returncode == 0, started.stderr
    deadline = time.monotonic() + 600
    totals: dict = {}
    while time.monotonic() < deadline and totals.get("in") != 50:
        time.sleep(0.5)  # progress.json exists from the start (the counts committed so far: 0)
        try:
            totals = json.loads((s.state / "progress.json").read_text())["totals"]
        except (OSError, ValueError, KeyError):
            totals = {}
    assert totals["in"] == 50
    stopped = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemacli",
            "migrate",
            "stop",
            str(s.mapping),
            "--state-dir",
            str(s.state),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert ": stopped (pid" in stopped.stdout
    log = (s.state / "job.log").read_text()
    assert "SIGTERM: stopping after the current batch" in log and "converter stopped" in log
    assert "Traceback" not in log and "converter failed" not in log
    assert not (s.state / "submit.pid").exists()
