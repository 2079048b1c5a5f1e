"""The converter's Spark side on a local[2] session: convert(), the Kafka-row pipeline of the
job (build_output) on a batch frame, and validate --spark. No Kafka: frames are built in memory
with exactly the columns the Kafka source gives."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import fastavro
import pytest

from converters.mapping.check import validate
from converters.mapping.model import Endpoint
from converters.mapping.plan import plan
from converters.mapping.reader import loads
from converters.pipeline.dryrun import SparkDryRun
from converters.pipeline.headers import MARKER_HEADER, SOURCE_HEADER, parse_marker
from converters.pipeline.records import RegistryPlan, build_output
from converters.pipeline.transform import ERROR, STAGE, V1, convert

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1_SCHEMA = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
V2_ID, V1_ID = 21, 7


def ride(total: str, vendor: int = 1) -> dict:
    return {
        "vendorId": vendor,
        "passenger_count": 2,
        "trip_distance": 3.5,
        "payment_type": 1,
        "total_amount": total,
    }


def framed(schema: dict, record: dict, schema_id: int) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def unframe(value: bytes, schema: dict) -> tuple[int, dict]:
    return (
        int.from_bytes(value[1:5], "big"),
        fastavro.schemaless_reader(io.BytesIO(value[5:]), fastavro.parse_schema(schema)),
    )


def planned_mapping(v2: dict, v1: dict, endpoints: str):
    """The mapping ``migrate plan`` proposes from ``v2`` to ``v1``, under ``endpoints`` (YAML)."""
    rules = "".join(
        f"  {r.target}: {{from: {r.source}, convert: {r.convert.value}}}\n"
        for r in plan(v2, v1).rules
    )
    return loads(f"version: 1\n{endpoints}fields:\n{rules}").with_schemas(v2, v1)


def taxi_mapping():
    return planned_mapping(
        V2,
        V1_SCHEMA,
        "source: {subject: taxi-rides-v2-value, topic: taxi-rides-v2}\n"
        "target: {subject: taxi-rides-value, topic: taxi-rides}\ndead_letter_topic: dlq\n",
    )


def kafka_frame(spark, values: list[tuple[bytes | None, bytes, list]]):
    ts = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    rows = [
        (key, value, "taxi-rides-v2", 0, i, ts, headers)
        for i, (key, value, headers) in enumerate(values)
    ]
    return spark.createDataFrame(
        rows,
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
        "headers array<struct<key:string,value:binary>>",
    )


def source_position(row) -> str:
    """The v2 message a sink row came from: in the marker (converted) or its own header (dead)."""
    headers = {h["key"]: bytes(h["value"]) for h in row["headers"]}
    if MARKER_HEADER in headers:
        return parse_marker(headers[MARKER_HEADER]).dedupe_key
    return headers[SOURCE_HEADER].decode()


def test_convert_splits_converted_and_dead_lettered_records_and_keeps_the_rest(spark):
    from pyspark.sql.avro.functions import from_avro

    bodies = [
        (i, framed(V2, r, V2_ID)[5:])
        for i, r in enumerate([ride("12.5"), ride("n/a"), ride("0.1", 9)])
    ]
    df = spark.createDataFrame(bodies, "i int, body binary").select(
        "i", from_avro("body", json.dumps(V2)).alias("record")
    )
    good, bad = convert(df, taxi_mapping())
    got = {r["i"]: r[V1].asDict() for r in good.collect()}
    assert got[0] == {
        "vendorId": 1,
        "passenger_count": 2,
        "trip_distance": 3.5,
        "payment_type": 1,
        "total_amount": 12.5,
    }
    assert got[2]["vendorId"] == 9 and got[2]["total_amount"] == pytest.approx(0.1)
    assert [(r["i"], r[ERROR], r[STAGE]) for r in bad.collect()] == [
        (1, "total_amount: cannot convert n/a to float", "convert")
    ]


def test_job_pipeline_writes_v1_with_the_v1_id_and_dead_letters_with_raw_bytes(spark):
    malformed = b"\x01not avro"
    already = framed(V1_SCHEMA, {**ride("1"), "total_amount": 1.0}, V1_ID)
    frame = kafka_frame(
        spark,
        [
            (b"k0", framed(V2, ride("12.5"), V2_ID), [("trace", b"abc")]),
            (b"k1", framed(V2, ride("lots"), V2_ID), []),
            (b"k2", malformed, None),
            (b"k3", already, [(MARKER_HEADER, b"taxi-rides-v2-value/1")]),
            (b"k4", None, []),  # a tombstone: forwarded as one
        ],
    )
    reg = RegistryPlan(
        V1_ID, json.dumps(V1_SCHEMA), {V2_ID: json.dumps(V2)}, {V2_ID: "taxi-rides-v2-value/1"}
    )
    rows = {bytes(r["key"]): r for r in build_output(frame, taxi_mapping(), reg).collect()}
    # k3 carries the marker: skipped, never looped
    assert set(rows) == {b"k0", b"k1", b"k2", b"k4"}
    assert (rows[b"k4"]["topic"], rows[b"k4"]["value"]) == ("taxi-rides", None)
    k0 = rows[b"k0"]
    assert k0["topic"] == "taxi-rides"
    assert unframe(bytes(k0["value"]), V1_SCHEMA) == (V1_ID, {**ride("x"), "total_amount": 12.5})
    headers = {h["key"]: bytes(h["value"]) for h in k0["headers"]}
    assert headers == {
        "trace": b"abc",
        MARKER_HEADER: b"taxi-rides-v2-value/1 taxi-rides-v2/0/0 1767225600000",
    }
    assert parse_marker(headers[MARKER_HEADER]).dedupe_key == "taxi-rides-v2/0/0"
    k1, k2 = rows[b"k1"], rows[b"k2"]
    assert (k1["topic"], k2["topic"]) == ("dlq", "dlq")
    assert bytes(k2["value"]) == malformed
    h1 = {h["key"]: bytes(h["value"]) for h in k1["headers"]}
    h2 = {h["key"]: bytes(h["value"]) for h in k2["headers"]}
    assert h1["schemacli.error"] == b"total_amount: cannot convert lots to float"
    assert h1["schemacli.error-stage"] == b"convert" and h2["schemacli.error-stage"] == b"decode"
    assert b"magic byte" in h2["schemacli.error"] and h2[SOURCE_HEADER] == b"taxi-rides-v2/0/2"
    assert h2["schemacli.source-timestamp"] == b"1767225600000" and MARKER_HEADER not in h2
    tombstone = {h["key"]: bytes(h["value"]) for h in rows[b"k4"]["headers"]}
    assert tombstone == {MARKER_HEADER: b"tombstone taxi-rides-v2/0/4 1767225600000"}


NESTED_V2 = {
    "type": "record",
    "name": "Trip",
    "fields": [
        {
            "name": "pickup",
            "type": {
                "type": "record",
                "name": "Loc",
                "fields": [{"name": "lat", "type": "string"}, {"name": "zone", "type": "string"}],
            },
        },
        {"name": "fare", "type": "double"},
        {"name": "count", "type": "long"},
        {"name": "note", "type": ["null", "bytes"], "default": None},
    ],
}
NESTED_V1 = {
    "type": "record",
    "name": "Trip",
    "fields": [
        {
            "name": "pickup",
            "type": {
                "type": "record",
                "name": "Loc1",
                "fields": [
                    {"name": "lat", "type": "double"},
                    {
                        "name": "zone",
                        "type": {"type": "enum", "name": "Zone", "symbols": ["JFK", "MIDTOWN"]},
                    },
                ],
            },
        },
        {"name": "fare", "type": "float"},
        {"name": "count", "type": "int"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "source", "type": "string", "default": "v2"},
    ],
}


def test_nested_records_enums_narrowing_and_nullable_bytes_encode_with_to_avro(spark):
    mapping = plan(NESTED_V2, NESTED_V1)
    samples = [
        {"pickup": {"lat": "40.6", "zone": "JFK"}, "fare": 12.25, "count": 3, "note": b"ok"},
        {"pickup": {"lat": "north", "zone": "JFK"}, "fare": 1.0, "count": 1, "note": None},
        {"pickup": {"lat": "1", "zone": "HARLEM"}, "fare": 1.0, "count": 1, "note": None},
        {"pickup": {"lat": "1", "zone": "MIDTOWN"}, "fare": 1.0, "count": 2**40, "note": None},
        {"pickup": {"lat": "1", "zone": "MIDTOWN"}, "fare": 1e300, "count": 1, "note": b"\xff"},
    ]
    report = validate(mapping, samples=samples, spark=SparkDryRun(spark))
    assert report.ok, report.findings
    assert report.dry_run.engine == "spark"
    assert (report.dry_run.converted, report.dry_run.dead_lettered) == (1, 4)
    first = report.dry_run.samples[0]
    assert first.output == {
        "pickup": {"lat": 40.6, "zone": "JFK"},
        "fare": 12.25,
        "count": 3,
        "note": "ok",
        "source": "v2",
    }
    errors = [s.errors for s in report.dry_run.samples if s.output is None]
    assert errors[0] == ("pickup.lat: cannot convert north to double",)
    assert errors[1] == ("pickup.zone: cannot convert HARLEM to enum Zone",)


def test_spark_and_the_python_preview_agree_on_generated_taxi_rides(spark):
    report = validate(taxi_mapping(), sample_count=40, seed=11, spark=SparkDryRun(spark))
    assert report.ok and not [f for f in report.findings if f.kind == "PREVIEW_MISMATCH"]
    assert report.dry_run.converted == 20 and report.sql_check == "Spark's parser and analyser"


def test_spark_refuses_custom_sql_over_a_field_v2_does_not_have(spark):
    m = loads(
        "version: 1\nsource: {schema: a}\ntarget: {schema: b}\nfields:\n"
        "  vendorId: {from: vendorId}\n  passenger_count: {from: passenger_count}\n"
        "  trip_distance: {from: trip_distance}\n  payment_type: {from: payment_type}\n"
        "  total_amount: {convert: sql, expr: 'try_cast(total AS FLOAT)'}\n"
    ).with_schemas(V2, V1_SCHEMA)
    report = validate(m, sample_count=2, spark=SparkDryRun(spark))
    assert not report.ok
    (f,) = [f for f in report.findings if f.kind == "SPARK_SQL"]
    assert "total" in f.message


V1_KEY = json.loads((ROOT / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
V2_KEY = {**V1_KEY, "fields": [{"name": "vendorId", "type": "string"}]}  # v2 keys: string ids
V2_KEY_ID, V1_KEY_ID = 22, 8


def keyed_mapping():
    from converters.mapping.plan import plan_key

    return plan_key(
        taxi_mapping(),
        V2_KEY,
        V1_KEY,
        source=Endpoint(subject="taxi-rides-v2-key"),
        target=Endpoint(subject="taxi-rides-key"),
    )


def test_job_pipeline_converts_keys_and_dead_letters_a_record_whose_key_fails(spark):
    key = {"vendorId": "2"}
    frame = kafka_frame(
        spark,
        [
            (framed(V2_KEY, key, V2_KEY_ID), framed(V2, ride("12.5", 2), V2_ID), []),
            (framed(V2_KEY, {"vendorId": "two"}, V2_KEY_ID), framed(V2, ride("3"), V2_ID), []),
            (b"\x00\x00\x00\x00\x63junk", framed(V2, ride("4"), V2_ID), []),
            (None, framed(V2, ride("5"), V2_ID), []),  # no key: stays without one
            (framed(V2_KEY, key, V2_KEY_ID), None, []),  # a delete: its key converted too
        ],
    )
    key_plan = RegistryPlan(
        V1_KEY_ID, json.dumps(V1_KEY), {V2_KEY_ID: json.dumps(V2_KEY)}, {V2_KEY_ID: "k/1"}
    )
    reg = RegistryPlan(
        V1_ID,
        json.dumps(V1_SCHEMA),
        {V2_ID: json.dumps(V2)},
        {V2_ID: "taxi-rides-v2-value/1"},
        key=key_plan,
    )
    rows = sorted(
        build_output(frame, keyed_mapping(), reg).collect(),
        key=source_position,
    )
    converted, bad_id, not_framed, keyless, delete = rows
    assert converted["topic"] == "taxi-rides"
    assert unframe(bytes(converted["key"]), V1_KEY) == (V1_KEY_ID, {"vendorId": 2})
    assert unframe(bytes(converted["value"]), V1_SCHEMA)[1]["total_amount"] == 12.5
    for dead, stage, reason in (
        (bad_id, b"key-convert", b"key: vendorId: cannot convert two to int"),
        (not_framed, b"key-decode", b"key: unknown schema id 99"),
    ):
        headers = {h["key"]: bytes(h["value"]) for h in dead["headers"]}
        assert dead["topic"] == "dlq" and headers["schemacli.error-stage"] == stage
        assert headers["schemacli.error"].startswith(reason), headers["schemacli.error"]
        assert (
            dead["key"] is not None and bytes(dead["value"])[:5] == framed(V2, ride("1"), V2_ID)[:5]
        )
    assert bytes(not_framed["key"]) == b"\x00\x00\x00\x00\x63junk"  # the original key bytes
    assert keyless["topic"] == "taxi-rides" and keyless["key"] is None
    assert (delete["topic"], delete["value"]) == ("taxi-rides", None)
    assert unframe(bytes(delete["key"]), V1_KEY) == (V1_KEY_ID, {"vendorId": 2})


def test_the_job_refuses_sql_spark_cannot_resolve_with_one_clear_error(spark, tmp_path):
    from dataclasses import replace

    from converters.job import _args
    from converters.mapping.model import Conversion
    from converters.pipeline.progress import ProgressFile
    from converters.pipeline.stream import run
    from schemacli.errors import CheckFailed, error_text

    m = taxi_mapping().with_schemas(V2, V1_SCHEMA)
    rules = tuple(
        replace(r, convert=Conversion.SQL, expr="no_such_col + 1", source=None)
        if r.target == "vendorId"
        else r
        for r in m.rules
    )
    args = _args(
        ["--mapping", "m.json", "--bootstrap", "127.0.0.1:1", "--registry", "http://r:1"]
        + ["--checkpoint", str(tmp_path / "cp"), "--state-dir", str(tmp_path)]
    )
    reg = RegistryPlan(
        V1_ID, json.dumps(V1_SCHEMA), {V2_ID: json.dumps(V2)}, {V2_ID: "taxi-rides-v2-value/1"}
    )
    with pytest.raises(CheckFailed) as refused:  # the job's main() says it, and exits 1
        run(args, replace(m, rules=rules), reg, ProgressFile(tmp_path / "progress.json"), {})
    err = error_text(refused.value)
    assert refused.value.exit_code == 1
    assert "Spark refuses the compiled mapping" in err and "no_such_col" in err
    assert "--spark" in err and "Traceback" not in err


def test_the_job_sets_its_sql_defaults_unless_given_with_conf(spark):
    from converters.pipeline.stream import SQL_DEFAULTS, apply_sql_defaults

    (key,) = SQL_DEFAULTS
    try:
        assert apply_sql_defaults(spark) == {key: "8000"}
        assert spark.conf.get(key) == "8000"
    finally:
        spark.conf.unset(key)
    assert spark.conf.get(key) == "65535"  # Spark's own default, back for the other tests


def test_five_number_conversions_compile_to_one_method_hotspot_can_jit(spark, capsys):
    """Each header expression is written once in the job, so the whole stage of a mapping with
    five ``parse_number`` fields stays under HotSpot's 8,000-byte limit for JIT compilation
    (it was 9.2 KB when the marker and the header array were written twice)."""
    import re

    def record(number_type: str) -> dict:
        numbers = [{"name": f"a{i}", "type": number_type} for i in range(5)]
        return {"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}, *numbers]}

    v2, v1 = record("string"), record("float")
    mapping = planned_mapping(
        v2,
        v1,
        "source: {subject: s2, topic: t2}\ntarget: {subject: s1, topic: t1}\n"
        "dead_letter_topic: dlq\n",
    )
    assert [rule.convert.value for rule in mapping.rules].count("parse_number") == 5
    reg = RegistryPlan(1, json.dumps(v1), {2: json.dumps(v2)}, {2: "s2/1"})

    build_output(kafka_frame(spark, []), mapping, reg).explain("codegen")

    sizes = [int(s) for s in re.findall(r"maxMethodCodeSize:(\d+)", capsys.readouterr().out)]
    assert sizes and max(sizes) < 8000, sizes
