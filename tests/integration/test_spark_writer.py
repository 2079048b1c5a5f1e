"""``spark_avro.write_topic``: a DataFrame written as Confluent-framed Avro, read back by
confluent-kafka's AvroDeserializer (real Kafka, a Confluent-API registry, local Spark)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.integration.test_spark_reader import _bootstrap, _url, create_topic

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
V1 = (ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
RIDES = [
    {"vendorId": 1, "passenger_count": 2, "trip_distance": 1.5, "payment_type": 1,
     "total_amount": 12.25},
    {"vendorId": 2, "passenger_count": 1, "trip_distance": 0.25, "payment_type": 2,
     "total_amount": 5.5},
]  # fmt: skip
DDL = "vendorId int, passenger_count int, trip_distance float, payment_type int, total_amount float"


def consume(bootstrap: str, topic: str, registry_url: str, count: int) -> list[tuple]:
    """(key, schema id, value) of ``count`` records, values decoded by AvroDeserializer."""
    from confluent_kafka import Consumer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserializer = AvroDeserializer(SchemaRegistryClient({"url": registry_url}))
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex,
         "auto.offset.reset": "earliest"}
    )  # fmt: skip
    consumer.subscribe([topic])
    out = []
    try:
        for _ in range(120):
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            value = deserializer(msg.value(), SerializationContext(topic, MessageField.VALUE))
            out.append((msg.key(), int.from_bytes(msg.value()[1:5], "big"), value))
            if len(out) == count:
                break
    finally:
        consumer.close()
    return out


def register_v1(registry, subject: str) -> int:
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient({"url": _url(registry)})
    return client.register_schema(subject, Schema(V1, "AVRO"))


def test_a_batch_written_with_the_subjects_latest_schema_reads_back_equal(spark, kafka, registry):
    from spark_avro import write_topic

    topic = f"rides-out-{uuid.uuid4().hex[:8]}"
    create_topic(_bootstrap(kafka), topic)
    schema_id = register_v1(registry, f"{topic}-value")
    df = spark.createDataFrame(
        [(str(r["vendorId"]), *r.values()) for r in RIDES], f"ride_key string, {DDL}"
    )
    write_topic(
        df, _bootstrap(kafka), topic, subject=f"{topic}-value", registry_url=_url(registry),
        key="ride_key",
    )  # fmt: skip
    got = consume(_bootstrap(kafka), topic, _url(registry), len(RIDES))
    assert sorted(got, key=lambda g: g[0]) == [
        (str(r["vendorId"]).encode(), schema_id, r) for r in RIDES
    ]


def test_a_schema_not_yet_registered_is_registered_only_when_asked(spark, kafka, registry):
    from schemacli.errors import RegistryError
    from spark_avro import write_topic

    topic = f"rides-new-{uuid.uuid4().hex[:8]}"
    create_topic(_bootstrap(kafka), topic)
    df = spark.createDataFrame([tuple(r.values()) for r in RIDES], DDL)
    args = dict(subject=f"{topic}-value", registry_url=_url(registry), schema=V1)
    with pytest.raises(RegistryError, match="not registered"):
        write_topic(df, _bootstrap(kafka), topic, **args)
    write_topic(df, _bootstrap(kafka), topic, register=True, **args)
    got = consume(_bootstrap(kafka), topic, _url(registry), len(RIDES))
    assert sorted((g[2] for g in got), key=lambda r: r["vendorId"]) == RIDES


def test_a_streaming_frame_is_written_by_a_query(spark, kafka, registry, tmp_path):
    from spark_avro import write_topic

    topic = f"rides-stream-{uuid.uuid4().hex[:8]}"
    create_topic(_bootstrap(kafka), topic)
    register_v1(registry, f"{topic}-value")
    source = tmp_path / "in"
    spark.createDataFrame([tuple(r.values()) for r in RIDES], DDL).write.json(str(source))
    stream = spark.readStream.schema(DDL).json(str(source))
    query = write_topic(
        stream, _bootstrap(kafka), topic, subject=f"{topic}-value", registry_url=_url(registry),
        checkpoint=str(tmp_path / "cp"),
    )  # fmt: skip
    query.processAllAvailable()
    query.stop()
    got = consume(_bootstrap(kafka), topic, _url(registry), len(RIDES))
    assert sorted((g[2] for g in got), key=lambda r: r["vendorId"]) == RIDES


def test_a_streaming_write_without_a_checkpoint_is_refused_before_anything_runs(spark, tmp_path):
    from schemacli.errors import UsageError
    from spark_avro import write_topic

    spark.createDataFrame([tuple(RIDES[0].values())], DDL).write.json(str(tmp_path / "in"))
    stream = spark.readStream.schema(DDL).json(str(tmp_path / "in"))
    with pytest.raises(UsageError, match="checkpoint"):
        write_topic(stream, "127.0.0.1:1", "t", subject="t-value", registry_url="http://x:1")
