"""The Avro -> Spark -> Python table in docs/spark.md is what Spark 4.0.1 really does.

Each row of the table is parsed from the doc: the Avro type (JSON), the Spark type (``dtypes``),
the Python type and an example ``written -> collected``. The example is written with fastavro in
the Confluent framing, decoded with ``decode_confluent`` (default options) and collected, in a
session whose time zone is UTC and a Python process whose local time zone is UTC.
"""

from __future__ import annotations

import json
import re
import time as time_module
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from uuid import UUID

import pytest
from pyspark.sql.types import Row

from spark_avro.decode import decode_confluent
from tests.spark.framing import confluent, kafka_frame

DOC = Path(__file__).resolve().parents[2] / "docs" / "spark.md"
HEADING = "## Avro types in Spark, and in Python"
CELL = re.compile(r"`([^`]*)`")
# What the examples in the table may use.
NAMES = {
    "date": date,
    "datetime": datetime,
    "time": time,
    "timezone": type("timezone", (), {"utc": UTC}),
    "Decimal": Decimal,
    "UUID": UUID,
    "Row": Row,
}


def table_rows() -> list[tuple[str, str, str, str, str]]:
    """(avro json, spark type, python type, written, collected) for each row of the table."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        avro, spark_type, python_type, example = [c.strip() for c in line.strip("|").split(" | ")]
        written, _, collected = example.partition(" → ")
        cells = [CELL.match(c) for c in (avro, spark_type, python_type, written, collected)]
        assert all(cells), f"a cell of this row is not in backticks: {line}"
        rows.append(tuple(c.group(1) for c in cells))
    return rows


ROWS = table_rows()


def type_name(value: object) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def test_the_table_covers_every_avro_type_and_logical_type():
    avro = " ".join(row[0] for row in ROWS)
    for name in ("null", "boolean", "int", "long", "float", "double", "bytes", "string"):
        assert f'"{name}"' in avro
    for name in ("record", "enum", "array", "map", "fixed"):
        assert f'"type": "{name}"' in avro
    for logical in (
        "date",
        "time-millis",
        "time-micros",
        "timestamp-millis",
        "timestamp-micros",
        "local-timestamp-millis",
        "local-timestamp-micros",
        "decimal",
        "uuid",
    ):
        assert f'"logicalType": "{logical}"' in avro


@pytest.fixture
def utc_python(monkeypatch):
    """The Python process's local time zone is UTC for the test (collect() uses it)."""
    if not hasattr(time_module, "tzset"):
        pytest.skip("time.tzset is not available on this platform")
    monkeypatch.setenv("TZ", "UTC")
    time_module.tzset()
    yield
    monkeypatch.undo()
    time_module.tzset()


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}:{r[0][:40]}" for i, r in enumerate(ROWS)])
def test_the_documented_type_and_collected_value_are_what_spark_gives(spark, utc_python, row):
    avro, spark_type, python_type, written, collected = row
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    schema = json.dumps(
        {"type": "record", "name": "Example", "fields": [{"name": "v", "type": json.loads(avro)}]}
    )
    datum = eval(written, dict(NAMES))  # noqa: S307 - the doc's own examples
    expected = eval(collected, dict(NAMES))  # noqa: S307
    df = kafka_frame(spark, [confluent(1, schema, {"v": datum})])
    decoded = decode_confluent(df, writer_schemas={1: schema}, reader_schema=schema)
    assert dict(decoded.dtypes)["v"] == spark_type
    (got,) = decoded.select("v", "decode_error").collect()
    assert got.decode_error is None
    assert type_name(got.v) == python_type
    assert got.v == expected


def test_a_timestamp_collects_in_the_python_local_time_zone_not_the_session_one(spark, monkeypatch):
    if not hasattr(time_module, "tzset"):
        pytest.skip("time.tzset is not available on this platform")
    schema = json.dumps(
        {
            "type": "record",
            "name": "When",
            "fields": [
                {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
                {"name": "wall", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            ],
        }
    )
    instant = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    df = kafka_frame(spark, [confluent(1, schema, {"at": instant, "wall": datetime(2026, 1, 15)})])
    decoded = decode_confluent(df, writer_schemas={1: schema}, reader_schema=schema)
    monkeypatch.setenv("TZ", "America/New_York")
    time_module.tzset()
    try:
        row = decoded.collect()[0]
        assert row.at == datetime(2026, 1, 15, 7, 0)  # 12:00 UTC in New York, naive
        assert row.wall == datetime(2026, 1, 15)  # a wall-clock time comes back as written
    finally:
        monkeypatch.undo()
        time_module.tzset()
