"""The census's JVM road (Kafka's own Java consumer) gives the same census as the Python road
(librdkafka), on the real broker and registry: the mixed-version topic of test_census_live, a
sample, a time range, and a topic with an empty partition."""

from __future__ import annotations

import json
import uuid

import pytest

from converters.census import jvmscan
from tests.integration.test_census_live import (  # noqa: F401  (produced: the fixture)
    assert_census_is_exact,
    cli,
    produced,
)
from tests.integration.test_spark_reader import _bootstrap, _url

pytestmark = [pytest.mark.integration]

# what differs between two censuses of the same data: when and how fast, and who read it
TIMING = ("scanned_at", "scanned_at_ms", "duration_s", "engine")


@pytest.fixture(scope="module", autouse=True)
def _jvm_road() -> None:
    from tests.stack.kafka import census_jars

    census_jars()  # .cache/jars/census, where a checkout's census looks
    assert jvmscan.available(), "the JVM road cannot run: java, the jar or kafka-clients missing"


def census(topic: str, kafka, engine: str, *args: str) -> dict:
    done = cli("topics", "census", topic, "-b", _bootstrap(kafka), "-o", "json",
               "--engine", engine, *args)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == engine
    return doc


def same(jvm: dict, python: dict) -> None:
    assert {k: v for k, v in jvm.items() if k not in TIMING} == {
        k: v for k, v in python.items() if k not in TIMING
    }


def test_jvm_census_is_the_python_census_exactly(produced, kafka, registry):  # noqa: F811
    args = ("--registry", _url(registry))
    jvm = census(produced.topic, kafka, "jvm", *args)
    python = census(produced.topic, kafka, "python", *args)
    assert_census_is_exact(jvm, produced.delivered)
    same(jvm, python)
    assert jvm["values"]["unknown_ids"]["count"] == 1


def test_jvm_census_in_one_thread_equals_the_threaded_one(produced, kafka):  # noqa: F811
    one = census(produced.topic, kafka, "jvm", "--jobs", "1")
    three = census(produced.topic, kafka, "jvm", "--jobs", "3")
    assert_census_is_exact(one, produced.delivered)
    same(one, three)


@pytest.mark.parametrize(
    "args",
    [
        ("--sample", "2"),
        ("--sample", "1", "--since", "2000-01-01"),
        ("--since", "2999-01-01"),
        ("--since", "2000-01-01", "--until", "2999-01-01"),
    ],
)
def test_jvm_census_reads_the_same_sample_and_range(produced, kafka, args):  # noqa: F811
    jvm = census(produced.topic, kafka, "jvm", *args)
    same(jvm, census(produced.topic, kafka, "python", *args))


def test_jvm_census_of_a_topic_with_an_empty_partition(kafka):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = _bootstrap(kafka)
    topic = f"census-empty-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        future.result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(5):
        producer.produce(topic, value=b"\x00\x00\x00\x00\x07" + bytes([i]), partition=1)
    assert producer.flush(30) == 0
    jvm = census(topic, kafka, "jvm")
    same(jvm, census(topic, kafka, "python"))
    assert [p["scanned"] for p in jvm["partitions"]] == [0, 5]
    assert jvm["complete"] is True
    (v,) = jvm["values"]["versions"]
    assert (v["id"], v["count"], v["known"]) == (7, 5, False)


def test_auto_takes_the_jvm_road_when_it_can_run(produced, kafka):  # noqa: F811
    done = cli("topics", "census", produced.topic, "-b", _bootstrap(kafka), "-o", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "jvm"  # auto: the JVM can run here
    assert_census_is_exact(doc, produced.delivered)


def test_jvm_census_past_its_deadline_is_incomplete_never_a_whole_census(produced, kafka):  # noqa: F811
    from converters.census.model import Mode
    from converters.census.take import take_census

    # a deadline already behind when the read starts: nothing read, and the census says so
    docs = {
        engine: take_census(
            _bootstrap(kafka),
            produced.topic,
            mode=Mode(),
            client=None,
            store=None,
            timeout=0.0,
            engine=engine,
        )  # fmt: skip
        for engine in ("jvm", "python")
    }
    for doc in docs.values():
        assert doc["complete"] is False
        assert doc["totals"]["messages"] == 0
    same(docs["jvm"], docs["python"])


def test_jvm_census_takes_the_kafka_properties_file_in_javas_names(produced, kafka, tmp_path):  # noqa: F811
    props = tmp_path / "kafka.properties"
    # a value with spaces, '=' and a non-ASCII letter reaches the JVM intact; the librdkafka-only
    # line stays out of it (it is librdkafka's alone)
    props.write_text(
        "client.id=census é = test\nlibrdkafka.client.id=rd-census\n", encoding="utf-8"
    )
    jvm = census(produced.topic, kafka, "jvm", "--kafka-properties", str(props))
    assert_census_is_exact(jvm, produced.delivered)


def test_auto_takes_the_python_road_for_a_properties_file_with_librdkafka_only_lines(
    produced,  # noqa: F811
    kafka,
    tmp_path,
):
    # a librdkafka-only line (e.g. its CA file beside Java's truststore) means something the JVM
    # cannot be given: auto reads with librdkafka, which has it; --engine jvm still may
    props = tmp_path / "kafka.properties"
    props.write_text("client.id=census\nlibrdkafka.socket.keepalive.enable=true\n")
    args = ("topics", "census", produced.topic, "-b", _bootstrap(kafka), "-o", "json")
    done = cli(*args, "--kafka-properties", str(props))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "python"
    assert_census_is_exact(doc, produced.delivered)
    assert census(produced.topic, kafka, "jvm", "--kafka-properties", str(props))["engine"] == "jvm"
