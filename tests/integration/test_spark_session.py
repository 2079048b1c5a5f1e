"""The shared SparkSession carries the Avro and Kafka connectors (no network needed)."""

import json

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.spark]


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


def test_spark_session_finds_the_kafka_source(spark):
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", "127.0.0.1:1")
        .option("subscribe", "nothing")
        .load()
    )
    assert [f.name for f in frame.schema.fields][:2] == ["key", "value"]
