"""decode_confluent on in-memory Kafka-shaped DataFrames: mixed versions, bad records, modes.

Records are written with fastavro in the Confluent framing (magic byte 0, 4-byte id, body) and
decoded in a local[2] session; no Kafka involved.
"""

from __future__ import annotations

import json

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import Row
from pyspark.testing import assertDataFrameEqual

from spark_avro.decode import decode_confluent, defaults_plan, split_bad_records
from tests.spark.framing import (
    EPOCH,
    V1_ID,
    V1_TEXT,
    V2_ID,
    V2_TEXT,
    WRITERS,
    confluent,
    kafka_frame,
    ride,
)

V2_FIELDS = [
    "vendorId",
    "passenger_count",
    "trip_distance",
    "payment_type",
    "total_amount",
    "tip_amount",
    "store_and_fwd_flag",
]


def v2_row(vendor: int, tip: float, flag: str | None, *, offset: int, schema_id: int) -> Row:
    r = ride(vendor)
    return Row(
        vendorId=r["vendorId"],
        passenger_count=r["passenger_count"],
        trip_distance=r["trip_distance"],
        payment_type=r["payment_type"],
        total_amount=r["total_amount"],
        tip_amount=tip,
        store_and_fwd_flag=flag,
        key=f"k{offset}".encode(),
        topic="taxi-rides",
        partition=0,
        offset=offset,
        timestamp=EPOCH.replace(tzinfo=None),
        schema_id=schema_id,
        is_tombstone=False,
        decode_error=None,
        decode_error_kind=None,
        raw_value=None,
    )


@pytest.fixture(scope="module")
def mixed(spark):
    values = [
        confluent(V1_ID, V1_TEXT, ride(1)),
        confluent(V2_ID, V2_TEXT, ride(2, tip_amount=1.5, store_and_fwd_flag="N")),
        confluent(V1_ID, V1_TEXT, ride(3)),
        confluent(V2_ID, V2_TEXT, ride(4, tip_amount=0.5, store_and_fwd_flag=None)),
    ]
    return kafka_frame(spark, values)


def test_v1_and_v2_records_land_in_v2_columns_with_v2_defaults(mixed):
    decoded = decode_confluent(mixed, writer_schemas=WRITERS, reader_schema=V2_TEXT)
    expected = [
        v2_row(1, 0.0, None, offset=0, schema_id=V1_ID),
        v2_row(2, 1.5, "N", offset=1, schema_id=V2_ID),
        v2_row(3, 0.0, None, offset=2, schema_id=V1_ID),
        v2_row(4, 0.5, None, offset=3, schema_id=V2_ID),
    ]
    assert decoded.columns == list(expected[0].asDict())
    assertDataFrameEqual(decoded, expected, checkRowOrder=False)


def test_v1_reader_reads_v2_records_without_the_new_fields(mixed):
    decoded = decode_confluent(mixed, writer_schemas=WRITERS, reader_schema=V1_TEXT)
    rows = decoded.select("vendorId", "total_amount", "schema_id", "decode_error").collect()
    assert sorted(tuple(r) for r in rows) == [
        (1, 10.25, V1_ID, None),
        (2, 20.5, V2_ID, None),
        (3, 30.75, V1_ID, None),
        (4, 41.0, V2_ID, None),
    ]
    assert "tip_amount" not in decoded.columns


def test_flatten_false_returns_the_record_as_one_struct(mixed):
    decoded = decode_confluent(mixed, writer_schemas=WRITERS, reader_schema=V2_TEXT, flatten=False)
    assert decoded.columns[0] == "record"
    assert decoded.schema["record"].dataType.fieldNames() == V2_FIELDS
    first = decoded.where("offset = 0").first()
    assert first.record.tip_amount == 0.0 and first.record.vendorId == 1


def test_the_data_path_runs_no_python_udf(mixed, capsys):
    decode_confluent(mixed, writer_schemas=WRITERS, reader_schema=V2_TEXT).explain("formatted")
    plan = capsys.readouterr().out
    assert "from_avro" in plan
    assert "EvalPython" not in plan and "PythonUDF" not in plan


GOOD = confluent(V1_ID, V1_TEXT, ride(1))
BAD_RECORDS = {
    "wrong magic byte": (b"\x01" + GOOD[1:], "wrong magic byte 0x01 (expected 0x00)", V1_ID),
    "unknown schema id": (
        confluent(99, V1_TEXT, ride(1)),
        "unknown schema id 99 (known ids: 1, 2)",
        99,
    ),
    "truncated body": (GOOD[:-2], "undecodable Avro body for schema id 1", V1_ID),
    "shorter than the header": (
        b"\x00\x00\x01",
        "too short for the Confluent header: 3 bytes",
        None,
    ),
    "header without body": (GOOD[:5], "undecodable Avro body for schema id 1", V1_ID),
}
BAD_KINDS = {
    "wrong magic byte": "not_framed",
    "unknown schema id": "unknown_id",
    "truncated body": "corrupt",
    "shorter than the header": "not_framed",
    "header without body": "corrupt",
}


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_permissive_keeps_a_bad_record_with_its_reason_and_raw_bytes(spark, kind):
    raw, reason, _ = BAD_RECORDS[kind]
    df = kafka_frame(spark, [GOOD, raw])
    decoded = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT)
    good, bad = decoded.orderBy("offset").collect()
    assert good.decode_error is None and good.raw_value is None and good.vendorId == 1
    assert good.decode_error_kind is None
    assert reason in bad.decode_error
    assert bad.decode_error_kind == BAD_KINDS[kind]
    assert bytes(bad.raw_value) == raw
    assert [bad[name] for name in V2_FIELDS] == [None] * len(V2_FIELDS)
    assert bad.offset == 1


@pytest.mark.parametrize("schema_id", [-1, -(2**31), 2**31 - 1, 99])
def test_an_unknown_schema_id_is_read_as_a_signed_32_bit_int(spark, schema_id):
    df = kafka_frame(spark, [confluent(schema_id, V1_TEXT, ride(1))])
    row = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT).first()
    assert row.schema_id == schema_id and row.decode_error_kind == "unknown_id"
    assert row.decode_error.startswith(f"unknown schema id {schema_id} (known ids")


def test_a_corrupt_record_of_a_writer_equal_to_the_reader_has_a_null_record(spark):
    written = confluent(V2_ID, V2_TEXT, ride(2, tip_amount=1.5, store_and_fwd_flag="N"))
    df = kafka_frame(spark, [written[:-3], GOOD])
    decoded = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT, flatten=False)
    bad, good = decoded.orderBy("offset").collect()
    assert bad.record is None and bad.decode_error_kind == "corrupt"
    assert good.record.vendorId == 1 and good.decode_error is None


def test_wrong_magic_byte_leaves_schema_id_null(spark):
    df = kafka_frame(spark, [BAD_RECORDS["wrong magic byte"][0]])
    row = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT).first()
    assert row.schema_id is None


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_failfast_fails_naming_the_offset_and_the_reason(spark, kind):
    raw, reason, _ = BAD_RECORDS[kind]
    df = kafka_frame(spark, [GOOD, GOOD, raw])
    decoded = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT, mode="FAILFAST")
    with pytest.raises(PySparkException) as caught:
        decoded.collect()
    message = str(caught.value)
    assert "topic taxi-rides partition 0 offset 2" in message
    assert reason in message


def test_failfast_returns_good_records_without_error_columns(mixed):
    decoded = decode_confluent(
        mixed, writer_schemas=WRITERS, reader_schema=V2_TEXT, mode="FAILFAST"
    )
    assert "decode_error" not in decoded.columns and "raw_value" not in decoded.columns
    assert "decode_error_kind" not in decoded.columns and "is_tombstone" in decoded.columns
    assert sorted(r.vendorId for r in decoded.collect()) == [1, 2, 3, 4]


def test_a_tombstone_is_not_a_bad_record(spark):
    df = kafka_frame(spark, [None])
    permissive = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT).first()
    assert permissive.decode_error is None and permissive.schema_id is None
    assert permissive.decode_error_kind is None and permissive.is_tombstone is True
    assert permissive.vendorId is None
    failfast = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT, mode="FAILFAST")
    assert failfast.count() == 1 and failfast.first().schema_id is None
    assert failfast.first().is_tombstone is True


def test_a_record_of_all_null_fields_is_not_mistaken_for_a_bad_one(spark):
    nullable = json.dumps(
        {
            "type": "record",
            "name": "Sparse",
            "fields": [{"name": "note", "type": ["null", "string"], "default": None}],
        }
    )
    df = kafka_frame(spark, [confluent(5, nullable, {"note": None})])
    row = decode_confluent(df, writer_schemas={5: nullable}, reader_schema=nullable).first()
    assert row.decode_error is None and row.note is None and row.schema_id == 5


def test_split_bad_records_routes_bad_rows_to_the_dead_letter_frame(spark):
    raw = BAD_RECORDS["unknown schema id"][0]
    df = kafka_frame(spark, [GOOD, raw, GOOD])
    good, bad = split_bad_records(
        decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT)
    )
    assert sorted(r.offset for r in good.collect()) == [0, 2]
    assert "decode_error" not in good.columns and "decode_error_kind" not in good.columns
    (dead,) = bad.collect()
    assert dead.offset == 1 and bytes(dead.raw_value) == raw
    assert dead.decode_error_kind == "unknown_id"
    assert bad.columns == [
        "key",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "schema_id",
        "decode_error",
        "decode_error_kind",
        "raw_value",
    ]


def test_a_reader_field_named_like_a_kafka_column_needs_flatten_false(spark):
    clashing = json.dumps(
        {"type": "record", "name": "Clash", "fields": [{"name": "offset", "type": "long"}]}
    )
    df = kafka_frame(spark, [confluent(3, clashing, {"offset": 7})])
    with pytest.raises(ValueError, match="flatten=False"):
        decode_confluent(df, writer_schemas={3: clashing}, reader_schema=clashing)
    row = decode_confluent(
        df, writer_schemas={3: clashing}, reader_schema=clashing, flatten=False
    ).first()
    assert row.record.offset == 7 and row.offset == 0


def test_an_unknown_mode_is_refused(mixed):
    with pytest.raises(ValueError, match="PERMISSIVE, FAILFAST"):
        decode_confluent(mixed, writer_schemas=WRITERS, reader_schema=V2_TEXT, mode="DROPMALFORMED")


WRITER_WITHOUT_NEW_FIELDS = json.dumps(
    {"type": "record", "name": "Evolving", "fields": [{"name": "id", "type": "int"}]}
)
READER_WITH_DEFAULTS = json.dumps(
    {
        "type": "record",
        "name": "Evolving",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "flag", "type": "boolean", "default": True},
            {"name": "count", "type": "long", "default": 5},
            {"name": "ratio", "type": "double", "default": 1.5},
            {"name": "ratio32", "type": "float", "default": 0.25},
            {"name": "label", "type": "string", "default": "none"},
            {"name": "blob", "type": "bytes", "default": "\u00ff\u0001"},
            {"name": "maybe", "type": ["null", "int"], "default": None},
            {"name": "first", "type": ["string", "null"], "default": "z"},
        ],
    }
)


def test_defaults_filled_by_the_reader_equal_avro_resolution(spark):
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    # The reader adds the defaults itself (no Avro resolution) for this pair: check it does.
    assert defaults_plan(json.loads(WRITER_WITHOUT_NEW_FIELDS), json.loads(READER_WITH_DEFAULTS))
    df = kafka_frame(spark, [confluent(8, WRITER_WITHOUT_NEW_FIELDS, {"id": n}) for n in range(3)])
    ours = decode_confluent(
        df, writer_schemas={8: WRITER_WITHOUT_NEW_FIELDS}, reader_schema=READER_WITH_DEFAULTS
    )
    options = {"avroSchema": READER_WITH_DEFAULTS}
    avro = df.select(
        from_avro(F.expr("substring(value, 6)"), WRITER_WITHOUT_NEW_FIELDS, options).alias("r"),
        "offset",
    ).select("r.*", "offset")
    fields = [f["name"] for f in json.loads(READER_WITH_DEFAULTS)["fields"]]
    assertDataFrameEqual(ours.select(*fields, "offset"), avro, checkRowOrder=False)
    row = ours.where("offset = 0").first()
    assert (row.flag, row["count"], row.label, bytes(row.blob), row.first) == (
        True,
        5,
        "none",
        b"\xff\x01",
        "z",
    )


def test_a_logical_type_default_is_left_to_avro_resolution(spark):
    reader = json.loads(READER_WITH_DEFAULTS)
    day = {"name": "day", "type": {"type": "int", "logicalType": "date"}, "default": 3}
    reader["fields"].append(day)
    assert defaults_plan(json.loads(WRITER_WITHOUT_NEW_FIELDS), reader) is None
    df = kafka_frame(spark, [confluent(8, WRITER_WITHOUT_NEW_FIELDS, {"id": 1})])
    row = decode_confluent(
        df, writer_schemas={8: WRITER_WITHOUT_NEW_FIELDS}, reader_schema=json.dumps(reader)
    ).first()
    assert (row.id, str(row.day), row.label, row.decode_error) == (1, "1970-01-04", "none", None)


def test_a_promoted_field_type_is_resolved_by_avro(spark):
    writer = json.dumps({"type": "record", "name": "P", "fields": [{"name": "n", "type": "int"}]})
    reader = json.dumps(
        {
            "type": "record",
            "name": "P",
            "fields": [
                {"name": "n", "type": "long"},
                {"name": "s", "type": "string", "default": "x"},
            ],
        }
    )
    df = kafka_frame(spark, [confluent(4, writer, {"n": 2**31 - 1})])
    row = decode_confluent(df, writer_schemas={4: writer}, reader_schema=reader).first()
    assert (row.n, row.s, row.decode_error) == (2**31 - 1, "x", None)
    assert (
        dict(decode_confluent(df, writer_schemas={4: writer}, reader_schema=reader).dtypes)["n"]
        == "bigint"
    )


def test_a_writer_the_reader_cannot_read_yields_undecodable_records(spark):
    writer = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "amount", "type": "string"}]}
    )
    reader = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "amount", "type": "float"}]}
    )
    df = kafka_frame(spark, [confluent(6, writer, {"amount": "12.50"})])
    row = decode_confluent(df, writer_schemas={6: writer}, reader_schema=reader).first()
    assert row.amount is None and row.schema_id == 6
    assert row.decode_error.startswith("undecodable Avro body for schema id 6")
    assert "not readable as the reader schema" in row.decode_error
    assert row.decode_error_kind == "corrupt"  # compatibility not checked: incompatible=None


def test_passthrough_columns_such_as_headers_ride_along_untouched(mixed):
    from pyspark.sql import functions as F

    headers = F.array(F.struct(F.lit("trace").alias("key"), F.lit(b"t-1").alias("value")))
    df = mixed.withColumn("headers", headers)
    decoded = decode_confluent(
        df, writer_schemas=WRITERS, reader_schema=V2_TEXT, passthrough=("headers",)
    )
    assert "headers" in decoded.columns
    assert {bytes(r.headers[0].value) for r in decoded.collect()} == {b"t-1"}
    plain = decode_confluent(df, writer_schemas=WRITERS, reader_schema=V2_TEXT)
    assert "headers" not in plain.columns  # only what is asked for, besides Kafka's columns


def test_a_passthrough_column_the_frame_lacks_or_the_reader_uses_is_refused(mixed):
    with pytest.raises(ValueError, match="not in the frame"):
        decode_confluent(mixed, writer_schemas=WRITERS, reader_schema=V2_TEXT, passthrough=("h",))
    with pytest.raises(ValueError, match="clash"):
        decode_confluent(
            mixed.withColumn("raw_value", mixed.value),
            writer_schemas=WRITERS,
            reader_schema=V2_TEXT,
            passthrough=("raw_value",),
        )
