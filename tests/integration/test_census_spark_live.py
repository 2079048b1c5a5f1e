"""The census's Spark road (``--engine spark``) gives the JVM road's census field for field, on the
real broker and registry: the mixed-version topic of test_census_live read by ``local[N]``, a
sample and time ranges, empty partitions and an empty topic, and the same census on a
standalone cluster (a master and two workers from pyspark's own ``spark-class``, whose master
lists the application and whose workers ran its executors). Bad inputs: a master that does not
answer (exit 3 before Kafka is asked), a setting Spark's Kafka source refuses (exit 2), and a
read past its deadline (incomplete, never presented as whole).

The census runs as the CLI does, in a process of its own (its Spark driver there), with the
connector jars in ``SCHEMACLI_SPARK_JARS`` and the driver's address in a ``spark-defaults.conf``
(``SPARK_CONF_DIR``), as an operator would give them."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator

import pytest

from tests.integration.test_census_jvm_live import census, same
from tests.integration.test_census_live import (  # noqa: F401  (produced: the fixture)
    assert_census_is_exact,
    cli,
    produced,
)
from tests.integration.test_spark_cluster import executor_dirs
from tests.integration.test_spark_reader import _bootstrap, _url
from tests.stack.sparkcluster import wait_for_app

pytestmark = [pytest.mark.integration, pytest.mark.spark]


@pytest.fixture(scope="module", autouse=True)
def _spark_road(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Both roads can run (a failure, never a skip, when not): the JVM's Kafka client jars and
    Spark's connectors, given to the census's processes through the environment."""
    from converters.census import jvmscan
    from tests.stack.kafka import census_jars
    from tests.stack.spark import spark_jars

    census_jars()
    assert jvmscan.available(), "the JVM road cannot run: java, the jar or kafka-clients missing"
    conf = tmp_path_factory.mktemp("spark-conf")
    (conf / "spark-defaults.conf").write_text(
        "spark.driver.host 127.0.0.1\nspark.driver.bindAddress 127.0.0.1\n"
        "spark.executor.memory 512m\n"
    )
    env = {
        "SCHEMACLI_SPARK_JARS": ",".join(str(j) for j in spark_jars()),
        "SPARK_CONF_DIR": str(conf),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
    }
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_spark_census_is_the_jvm_census_exactly(produced, kafka, registry):  # noqa: F811
    args = ("--registry", _url(registry))
    spark = census(produced.topic, kafka, "spark", "--jobs", "2", *args)
    jvm = census(produced.topic, kafka, "jvm", *args)
    assert_census_is_exact(spark, produced.delivered)
    same(spark, jvm)
    assert spark["values"]["unknown_ids"]["count"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("--sample", "2"),
        ("--sample", "1", "--since", "2000-01-01"),
        ("--since", "2999-01-01"),
        ("--since", "2000-01-01", "--until", "2999-01-01"),
    ],
)
def test_spark_census_reads_the_same_sample_and_range(produced, kafka, args):  # noqa: F811
    same(census(produced.topic, kafka, "spark", *args), census(produced.topic, kafka, "jvm", *args))


def test_spark_census_of_an_empty_partition_and_of_an_empty_topic(kafka):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = _bootstrap(kafka)
    half, empty = (f"census-{what}-{uuid.uuid4().hex[:8]}" for what in ("half", "empty"))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(t, 2, 1) for t in (half, empty)]).values():
        future.result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(5):
        producer.produce(half, value=b"\x00\x00\x00\x00\x07" + bytes([i]), partition=1)
    assert producer.flush(30) == 0
    spark = census(half, kafka, "spark")
    same(spark, census(half, kafka, "jvm"))
    assert [p["scanned"] for p in spark["partitions"]] == [0, 5] and spark["complete"] is True
    nothing = census(empty, kafka, "spark")
    same(nothing, census(empty, kafka, "jvm"))
    assert nothing["totals"]["messages"] == 0 and nothing["complete"] is True


def test_spark_census_on_the_standalone_cluster_is_the_jvm_census(
    produced,  # noqa: F811
    kafka,
    registry,
    spark_cluster,
):
    args = ("--registry", _url(registry))
    master = spark_cluster.master_url
    on_cluster = census(produced.topic, kafka, "spark", "--master", master, "--jobs", "2", *args)
    assert_census_is_exact(on_cluster, produced.delivered)
    same(on_cluster, census(produced.topic, kafka, "jvm", *args))
    # it ran on the cluster: the master lists the application finished, a worker ran executors
    app = wait_for_app(spark_cluster, f"schemacli-census {produced.topic}", completed=True)
    assert app["state"] == "FINISHED"
    assert executor_dirs(spark_cluster, app["id"]), f"no executor of {app['id']} on a worker"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_master_that_does_not_answer_is_exit_3_naming_it(produced, kafka, fmt):  # noqa: F811
    done = cli("topics", "census", produced.topic, "-b", _bootstrap(kafka), "--engine", "spark",
               "--master", "spark://127.0.0.1:1", "--connect-timeout", "2", "-o", fmt)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "the Spark master at spark://127.0.0.1:1 does not answer" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    if fmt == "json":
        assert json.loads(done.stdout)["error"]


def test_a_setting_sparks_kafka_source_refuses_is_an_input_error(produced, kafka, tmp_path):  # noqa: F811
    props = tmp_path / "kafka.properties"
    props.write_text("auto.offset.reset=latest\n")  # the source seeks by itself
    done = cli("topics", "census", produced.topic, "-b", _bootstrap(kafka), "--engine", "spark",
               "--kafka-properties", str(props))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Spark's Kafka source refuses" in done.stderr and "auto.offset.reset" in done.stderr
    assert "Traceback" not in done.stderr


def test_spark_census_past_its_deadline_is_incomplete_never_a_whole_census(produced, kafka):  # noqa: F811
    from converters.census.model import Mode
    from converters.census.take import take_census

    # a deadline already behind when the read starts: nothing counted, and the census says so
    docs = {
        engine: take_census(
            _bootstrap(kafka),
            produced.topic,
            mode=Mode(),
            client=None,
            store=None,
            timeout=0.0,
            engine=engine,
            jobs=2,
        )  # fmt: skip
        for engine in ("spark", "jvm")
    }
    for doc in docs.values():
        assert doc["complete"] is False
        assert doc["totals"]["messages"] == 0
    same(docs["spark"], docs["jvm"])
