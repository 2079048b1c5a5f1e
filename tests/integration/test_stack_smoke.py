"""End to end through the real stack: registry + Kafka (Confluent wire format) + Spark.

The taxi-ride value schema is registered, records are produced with confluent-kafka's
AvroSerializer, consumed back with AvroDeserializer, and read from the same topic by Spark
(5-byte header stripped, body decoded with from_avro). All three must agree exactly.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
VALUE_SCHEMA = ROOT / "schemas" / "subjects" / "taxi-rides-value" / "v1.avsc"

# Floats chosen to be exact in Avro's 32-bit float, so "equal" means bit-for-bit equal.
RIDES = [
    {
        "vendorId": 1,
        "passenger_count": 1,
        "trip_distance": 1.5,
        "payment_type": 1,
        "total_amount": 12.25,
    },
    {
        "vendorId": 2,
        "passenger_count": 3,
        "trip_distance": 0.0,
        "payment_type": 2,
        "total_amount": 7.5,
    },
    {
        "vendorId": 2,
        "passenger_count": 0,
        "trip_distance": 17.125,
        "payment_type": 1,
        "total_amount": -3.0,
    },
    {
        "vendorId": 1,
        "passenger_count": 6,
        "trip_distance": 1024.5,
        "payment_type": 4,
        "total_amount": 250.75,
    },
]


@pytest.fixture
def topic() -> str:
    return f"taxi-rides-smoke-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def registered(registry: str, topic: str) -> tuple[object, int, str]:
    """(SchemaRegistryClient, schema id, schema text) after registering the value schema."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient({"url": registry})
    text = VALUE_SCHEMA.read_text()
    schema_id = client.register_schema(f"{topic}-value", Schema(text, "AVRO"))
    return client, schema_id, text


def produce(bootstrap: str, topic: str, client: object, text: str) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    # auto.register off: the serializer must find the registered version by lookup.
    serializer = AvroSerializer(client, text, conf={"auto.register.schemas": False})
    producer = Producer({"bootstrap.servers": bootstrap})
    for ride in RIDES:
        value = serializer(ride, SerializationContext(topic, MessageField.VALUE))
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0, "records were not acknowledged by the broker"


def consume_raw(bootstrap: str, topic: str, count: int) -> list[bytes]:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": topic,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    values: list[bytes] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                values.append(message.value())
    finally:
        consumer.close()
    return values


def test_registry_lists_the_registered_taxi_ride_subject(registry, registered, topic):
    from confluent_kafka.schema_registry import SchemaRegistryClient

    client = SchemaRegistryClient({"url": registry})
    assert f"{topic}-value" in client.get_subjects()
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema_id == registered[1]
    assert json.loads(latest.schema.schema_str)["name"] == "TaxiRide"


def test_avro_records_round_trip_through_kafka_and_spark_unchanged(kafka, registered, topic, spark):
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.functions import col, expr

    client, schema_id, text = registered
    produce(kafka, topic, client, text)

    # Confluent consumer: every value is framed with magic byte 0 and our schema id.
    raw = consume_raw(kafka, topic, len(RIDES))
    assert len(raw) == len(RIDES)
    assert {(value[0], int.from_bytes(value[1:5], "big")) for value in raw} == {(0, schema_id)}
    deserializer = AvroDeserializer(client)
    context = SerializationContext(topic, MessageField.VALUE)
    assert [deserializer(value, context) for value in raw] == RIDES

    # Spark: strip the 5-byte header, decode the Avro body with the same schema.
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    decoded = frame.select(
        col("offset"),
        expr("cast(conv(hex(substring(value, 2, 4)), 16, 10) as int)").alias("schema_id"),
        from_avro(expr("substring(value, 6, length(value) - 5)"), text, {"mode": "FAILFAST"}).alias(
            "ride"
        ),
    ).orderBy("offset")
    rows = decoded.collect()
    assert {row.schema_id for row in rows} == {schema_id}
    assert [row.ride.asDict() for row in rows] == RIDES


def test_spark_session_round_trips_a_record_through_avro(spark):
    from pyspark.sql.avro.functions import from_avro, to_avro
    from pyspark.sql.functions import struct

    schema = json.dumps(
        {
            "type": "record",
            "name": "Ride",
            "fields": [{"name": "id", "type": "long"}, {"name": "zone", "type": "string"}],
        }
    )
    rows = spark.createDataFrame(
        [(1, "Midtown"), (2, "JFK")], "id long not null, zone string not null"
    )
    encoded = rows.select(to_avro(struct("id", "zone"), schema).alias("value"))
    decoded = encoded.select(from_avro("value", schema).alias("r")).select("r.id", "r.zone")
    assert sorted(tuple(r) for r in decoded.collect()) == [(1, "Midtown"), (2, "JFK")]


def test_spark_session_finds_the_kafka_source_without_network(spark):
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", "127.0.0.1:1")
        .option("subscribe", "nothing")
        .load()
    )
    assert [f.name for f in frame.schema.fields][:2] == ["key", "value"]
