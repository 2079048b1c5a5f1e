"""Test helpers: Confluent-framed Avro bytes written with fastavro, as Kafka-shaped DataFrames."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fastavro

from spark_avro.wire import frame

ROOT = Path(__file__).resolve().parents[2]
TAXI = ROOT / "schemas" / "subjects" / "taxi-rides-value"
V1_TEXT = (TAXI / "v1.avsc").read_text()
V2_TEXT = (TAXI / "v2.avsc").read_text()
V1_ID, V2_ID = 1, 2  # what a fresh registry gives the two versions
WRITERS = {V1_ID: V1_TEXT, V2_ID: V2_TEXT}
KAFKA_DDL = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"
)
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def avro_body(schema_text: str, record: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(json.loads(schema_text)), record)
    return buffer.getvalue()


def confluent(schema_id: int, schema_text: str, record: dict[str, Any]) -> bytes:
    return frame(schema_id, avro_body(schema_text, record))


def ride(vendor: int, **extra: Any) -> dict[str, Any]:
    """A v1 taxi ride (add tip_amount/store_and_fwd_flag for v2)."""
    return {
        "vendorId": vendor,
        "passenger_count": vendor + 1,
        "trip_distance": 1.5 * vendor,
        "payment_type": 1,
        "total_amount": 10.25 * vendor,
        **extra,
    }


def kafka_frame(spark, values: list[bytes | None], *, topic: str = "taxi-rides"):
    """A DataFrame shaped like Spark's Kafka source: one partition, offsets 0..n-1."""
    rows = [
        (
            f"k{offset}".encode(),
            bytearray(value) if value is not None else None,
            topic,
            0,
            offset,
            EPOCH,
        )
        for offset, value in enumerate(values)
    ]
    return spark.createDataFrame(rows, KAFKA_DDL)
