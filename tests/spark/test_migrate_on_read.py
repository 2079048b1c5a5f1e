"""Migrate on read on a local[2] session, no Kafka: a frame of mixed v1 and v2 taxi rides read as
v1 rows by ``spark_avro.migrate.decode_migrated`` must give, for every v2 ride, the very record
the converter's records road (``build_output``) publishes, and its dead letters' reasons as bad
records; v1 rides come out as written."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import fastavro
import pytest

from converters.mapping.reader import load
from converters.onread import load_migration
from converters.pipeline.headers import ERROR_HEADER, SOURCE_HEADER
from converters.pipeline.records import RegistryPlan, build_output
from spark_avro.migrate import decode_migrated
from spark_avro.onread import v1_writer_ids, v2_incompatible

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
MAPPING = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
V1_ID, V2_ID = 7, 21
WRITERS = {V1_ID: json.dumps(V1), V2_ID: json.dumps(V2)}


def framed(schema: dict, record: dict, schema_id: int) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def ride(vendor: int, total) -> dict:
    return {
        "vendorId": vendor,
        "passenger_count": vendor % 4 + 1,
        "trip_distance": vendor * 0.5,
        "payment_type": vendor % 2 + 1,
        "total_amount": total,
    }


# (value, what it is): one partition, offsets in this order
MESSAGES = [
    (framed(V1, ride(1, 10.5), V1_ID), "v1"),
    (framed(V2, ride(2, "12.25"), V2_ID), "v2"),
    (framed(V2, ride(3, "n/a"), V2_ID), "bad v2"),
    (framed(V1, ride(4, 3.0), V1_ID), "v1"),
    (b"\x01not avro", "not framed"),
    (framed(V2, ride(6, "1e3"), V2_ID), "v2"),
    (framed(V2, ride(7, "7.5"), 99), "unknown id"),
    (None, "tombstone"),
    (framed(V2, ride(9, ""), V2_ID), "bad v2"),
]


def kafka_frame(spark):
    ts = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    rows = [(b"k%d" % i, v, "taxi-rides-v2", 0, i, ts, []) for i, (v, _) in enumerate(MESSAGES)]
    return spark.createDataFrame(
        rows,
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
        "headers array<struct<key:string,value:binary>>",
    )


@pytest.fixture(scope="module")
def migration():
    return load_migration(MAPPING)


@pytest.fixture(scope="module")
def migrated(spark, migration):
    df = decode_migrated(
        kafka_frame(spark),
        writer_schemas=WRITERS,
        v1_ids=v1_writer_ids(migration, WRITERS),
        source_schema=migration.source_schema,
        target_schema=migration.target_schema,
        columns=migration.columns,
        error_sql=migration.error_sql,
        incompatible=v2_incompatible(migration, WRITERS),
    )
    return {r.offset: r for r in df.collect()}


@pytest.fixture(scope="module")
def converter(spark, migration):
    """What the converter publishes for the same messages: offset -> (topic, value, headers)."""
    plan = RegistryPlan(V1_ID, json.dumps(V1), {V2_ID: json.dumps(V2)}, {V2_ID: "v2/1"})
    out = build_output(kafka_frame(spark), load(MAPPING), plan).collect()
    by_offset = {}
    for row in out:
        headers = {h["key"]: bytes(h["value"]) for h in row["headers"] or []}
        offset = int(row["key"][1:])
        by_offset[offset] = (row["topic"], row["value"], headers)
    return by_offset


def v1_fields(row) -> dict:
    return {name: row[name] for name in ("vendorId", "passenger_count", "trip_distance",
                                         "payment_type", "total_amount")}  # fmt: skip


def test_the_v1_writer_goes_the_v1_road_and_the_v2_writer_is_converted(migration):
    assert v1_writer_ids(migration, WRITERS) == (V1_ID,)
    assert v2_incompatible(migration, WRITERS) == {}


def test_every_v2_ride_is_the_record_the_converter_publishes(migrated, converter):
    converted = [i for i, (_, what) in enumerate(MESSAGES) if what == "v2"]
    assert converted == [1, 5]
    for offset in converted:
        topic, value, _ = converter[offset]
        assert topic == "taxi-rides"
        assert int.from_bytes(value[1:5], "big") == V1_ID
        published = fastavro.schemaless_reader(io.BytesIO(value[5:]), fastavro.parse_schema(V1))
        row = migrated[offset]
        assert row.decode_error is None and row.schema_id == V2_ID
        assert v1_fields(row) == published
    assert migrated[5].total_amount == 1000.0


def test_v1_rides_come_out_as_written(migrated):
    for offset in (0, 3):
        record = fastavro.schemaless_reader(
            io.BytesIO(MESSAGES[offset][0][5:]), fastavro.parse_schema(V1)
        )
        row = migrated[offset]
        assert row.decode_error is None and row.schema_id == V1_ID
        assert v1_fields(row) == record


def test_a_ride_the_converter_dead_letters_is_a_bad_record_with_the_rules_reason(
    migrated, converter
):
    for offset in (2, 8):
        topic, value, headers = converter[offset]
        assert topic == "taxi-rides-v2.dead-letter"
        row = migrated[offset]
        assert row.decode_error_kind == "convert"
        assert row.decode_error.encode() == headers[ERROR_HEADER]
        assert bytes(row.raw_value) == MESSAGES[offset][0] == bytes(value)
        assert row.vendorId is None and row.total_amount is None
        assert headers[SOURCE_HEADER] == f"taxi-rides-v2/0/{offset}".encode()
    assert migrated[2].decode_error == "total_amount: cannot convert n/a to float"


def test_undecodable_records_keep_the_readers_kinds_and_a_tombstone_is_no_error(migrated):
    assert migrated[4].decode_error_kind == "not_framed"
    assert bytes(migrated[4].raw_value) == b"\x01not avro"
    assert migrated[6].decode_error_kind == "unknown_id"
    assert migrated[6].decode_error == f"unknown schema id 99 (known ids: {V1_ID}, {V2_ID})"
    tomb = migrated[7]
    assert tomb.is_tombstone and tomb.decode_error is None and tomb.vendorId is None


def test_counts_add_up_good_plus_bad_plus_tombstones(migrated):
    kinds = [r.decode_error_kind for r in migrated.values()]
    assert len(migrated) == len(MESSAGES)
    assert kinds.count(None) == 5  # 2 v1 + 2 v2 + the tombstone
    assert kinds.count("convert") == 2
    assert sorted(k for k in kinds if k not in (None, "convert")) == ["not_framed", "unknown_id"]


def test_failfast_fails_at_the_first_record_the_mapping_cannot_convert(spark, migration):
    from pyspark.errors import PySparkException

    df = decode_migrated(
        kafka_frame(spark).where("offset < 4"),
        writer_schemas=WRITERS,
        v1_ids=(V1_ID,),
        source_schema=migration.source_schema,
        target_schema=migration.target_schema,
        columns=migration.columns,
        error_sql=migration.error_sql,
        mode="FAILFAST",
    )
    with pytest.raises(PySparkException, match="offset 2: total_amount: cannot convert n/a"):
        df.collect()


def test_a_topic_of_only_v2_writers_or_only_v1_writers_reads(spark, migration):
    frame = kafka_frame(spark).where("offset in (0, 1)")
    for writers, ids in (({V2_ID: WRITERS[V2_ID]}, ()), ({V1_ID: WRITERS[V1_ID]}, (V1_ID,))):
        rows = decode_migrated(
            frame,
            writer_schemas=writers,
            v1_ids=ids,
            source_schema=migration.source_schema,
            target_schema=migration.target_schema,
            columns=migration.columns,
            error_sql=migration.error_sql,
        ).collect()
        good = [r for r in rows if r.decode_error is None]
        assert [r.offset for r in good] == [1 if not ids else 0]
        bad = [r for r in rows if r.decode_error is not None]
        assert [r.decode_error_kind for r in bad] == ["unknown_id"]
