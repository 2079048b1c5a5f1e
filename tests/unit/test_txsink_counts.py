"""The exactly-once writer's pure parts: counts in offset metadata, names, property translation,
and the progress file fed by committed counts (the Kafka side: tests/integration/test_txsink.py)."""

from __future__ import annotations

import json

import pytest

from converters.kafka.settings import librdkafka_properties, spark_options
from converters.pipeline.progress import ProgressFile
from converters.pipeline.txsink import Counts, progress_group, totals, transactional_id


def test_counts_are_read_from_offset_metadata_as_the_jvm_writer_encodes_them_and_add_up():
    # Counts.java: JSON and a NUL (librdkafka's readers would read on past an unterminated end)
    metadata = '{"v":1,"converted":5,"dead_letter":2,"skipped":1,"tombstone":1}\0'
    c = Counts(converted=5, dead_letter=2, skipped=1, tombstone=1)
    assert Counts.decode(metadata) == c and c.total == 9
    assert Counts.decode(metadata + "garbage past the end") == c
    assert Counts.decode(None) == Counts() and Counts.decode("") == Counts()
    assert totals({0: c, 1: Counts(converted=1)}) == {
        "in": 10,
        "converted": 6,
        "dead_letter": 2,
        "skipped": 1,
        "tombstone": 1,
    }
    assert len(metadata) < 200  # far below the broker's offset.metadata.max.bytes (4096)


@pytest.mark.parametrize("metadata", ["hello", '{"v": 2}', "[1]", '{"v": 1, "converted": "x"}'])
def test_metadata_another_tool_wrote_is_refused_not_read_as_counts(metadata):
    with pytest.raises(ValueError, match="not written by the converter"):
        Counts.decode(metadata)


def test_one_transactional_id_per_converter_and_v2_partition_never_per_batch():
    group = progress_group("rides-v2", "rides")
    assert group == "schemacli-converter.rides-v2.rides"
    assert transactional_id(group, 3) == "schemacli-converter.rides-v2.rides.3"
    assert group.startswith("schemacli-")  # status leaves our own groups out of the dependents


def test_one_properties_file_serves_the_java_source_and_librdkafka():
    props = {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        'required username="conv" password="s\\"cret";',
        "kafka.ssl.truststore.location": "/etc/kafka/trust.jks",
        "kafka.max.poll.records": "5000",
        "kafka.librdkafka.ssl.ca.location": "/etc/ssl/ca.pem",
    }
    assert librdkafka_properties(props) == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "conv",
        "sasl.password": 's"cret',
        "ssl.ca.location": "/etc/ssl/ca.pem",
    }
    assert "kafka.librdkafka.ssl.ca.location" not in spark_options(props)
    assert spark_options(props)["kafka.sasl.jaas.config"].startswith("org.apache")


def test_progress_counted_by_transactions_takes_the_brokers_word_at_start_and_adds_batches(
    tmp_path, capsys
):
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"totals": {"in": 999}, "partitions": {"7": {"converted": 9}}}))
    progress = ProgressFile(path, counted_by="transactions")
    progress.committed(-1, {0: Counts(converted=10)})  # what earlier runs committed
    progress.committed(4, {1: Counts(dead_letter=3)})
    data = json.loads(path.read_text())
    assert data["totals"] == {
        "in": 13,
        "converted": 10,
        "dead_letter": 3,
        "skipped": 0,
        "tombstone": 0,
    }
    assert data["partitions"] == {
        "0": {"converted": 10, "dead_letter": 0, "skipped": 0, "tombstone": 0},
        "1": {"converted": 0, "dead_letter": 3, "skipped": 0, "tombstone": 0},
    }
    assert "batch 4: in 13 converted 10 dead-lettered 3" in capsys.readouterr().err
    # Spark's observed metrics are not folded in: the transactions counted already
    metrics = {"schemacli_converter": {"in": 5, "converted": 5}}
    assert progress.record({"batchId": 5, "observedMetrics": metrics}) is False
    assert json.loads(path.read_text())["totals"]["in"] == 13


def test_a_spark_without_the_writers_jar_is_told_which_jar_to_give_it():
    from converters.pipeline.jvmjar import JAR
    from converters.pipeline.txsink import WriterMissing, jvm_writer

    class Package:  # py4j's view of a JVM without the class: packages all the way down
        def __getattr__(self, name: str) -> Package:
            return self

    class Spark:
        _jvm = Package()

    with pytest.raises(WriterMissing) as missing:
        jvm_writer(Spark())
    assert str(JAR) in str(missing.value) and "--jars" in str(missing.value)


def test_the_writers_options_put_a_properties_files_producer_settings_over_the_defaults():
    from converters.pipeline.txsink import SinkConfig

    cfg = SinkConfig(
        "b:9092",
        "rides-v2",
        "g",
        spark={"kafka.linger.ms": "5", "kafka.security.protocol": "SASL_SSL"},
    )
    options = cfg.jvm_options()
    assert options["kafka.bootstrap.servers"] == "b:9092"
    assert options["kafka.linger.ms"] == "5" and "producer.linger.ms" not in options
    assert options["producer.transaction.timeout.ms"] == "120000"
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert (options["source.topic"], options["group"]) == ("rides-v2", "g")
