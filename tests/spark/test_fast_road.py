"""The fast road (Avro to Avro in the JVM writer, ``converters.mapping.recordplan`` +
``dev.schemacli.converters.RecordPlan``) against the SQL road (from_avro, the mapping's Spark
SQL, to_avro) on the records the mapping tests generate and on edge values: the same v1 bytes,
the same dead-letter decisions and reasons."""

from __future__ import annotations

import json

import pytest

from converters.mapping.check import generate_samples
from converters.mapping.recordplan import record_plan
from converters.mapping.sql import compile_mapping
from converters.pipeline.fastroad import convert_one, plan_json
from converters.pipeline.records import RegistryPlan, build_records
from tests.spark.test_converter_transform import (
    NESTED_V1,
    NESTED_V2,
    V1_ID,
    V1_SCHEMA,
    V2,
    V2_ID,
    framed,
    kafka_frame,
    planned_mapping,
    ride,
    taxi_mapping,
)

pytestmark = pytest.mark.spark

ENDPOINTS = (
    "source: {subject: s2, topic: t2}\ntarget: {subject: s1, topic: t1}\ndead_letter_topic: dlq\n"
)
WIDE_V2 = {
    "type": "record",
    "name": "Wide",
    "fields": [
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "s", "type": "string"},
        {"name": "b", "type": "boolean"},
        {"name": "raw", "type": "bytes"},
        {"name": "amount", "type": "string"},
        {"name": "ratio", "type": "string"},
    ],
}
WIDE_V1 = {
    "type": "record",
    "name": "Wide",
    "fields": [
        {"name": "i", "type": "long"},
        {"name": "l", "type": "double"},
        {"name": "f", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "b", "type": "boolean"},
        {"name": "raw", "type": "bytes"},
        {"name": "amount", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "origin", "type": "string", "default": "v2"},
    ],
}
EDGES = [
    "12.5",
    " 12.5 ",
    "1e3",
    "-0",
    "Infinity",
    "-inf",
    "NaN",
    "nan",
    "+INF",
    "1e39",
    "1e400",
    "-0.0",
    "-1e-50",
    "1d",
    "0x1p3",
    "",
    "1,5",
    "n/a",
    "٣",
]


def wide_mapping():
    text = (
        f"version: 1\n{ENDPOINTS}fields:\n"
        "  i: {from: i, convert: copy}\n  l: {from: l, convert: copy}\n"
        "  f: {from: f, convert: copy}\n  s: {from: s, convert: copy}\n"
        "  b: {from: b, convert: copy}\n  raw: {from: raw, convert: copy}\n"
        "  amount: {from: amount, convert: parse_number}\n"
        "  ratio: {from: ratio, convert: parse_number}\n"
        "  origin: {convert: default}\n"
    )
    from converters.mapping.reader import loads

    return loads(text).with_schemas(WIDE_V2, WIDE_V1)


def both_roads(spark, mapping, v2: dict, v1: dict, values: list[bytes]):
    """Each value through the SQL road (build_records) and the fast road (convert_one): the
    pairs (kind, v1 bytes or reason, stage) of each road."""
    reg = RegistryPlan(V1_ID, json.dumps(v1), {V2_ID: json.dumps(v2)}, {V2_ID: "s2/1"})
    frame = kafka_frame(spark, [(str(i).encode(), v, []) for i, v in enumerate(values)])
    rows = sorted(build_records(frame, mapping, reg).collect(), key=lambda r: r["source_offset"])
    sql = []
    for r in rows:
        headers = {h["key"]: bytes(h["value"]) for h in r["headers"]}
        if r["kind"] == "converted":
            sql.append(("converted", bytes(r["value"]), None))
        else:
            reason = headers["schemacli.error"].decode()
            sql.append((r["kind"], reason, headers["schemacli.error-stage"].decode()))
    road = record_plan(mapping)
    assert road.fast, road.why
    plan = plan_json(mapping, reg, road)
    fast = []
    for v in values:
        out, why = convert_one(spark, plan, v)
        fast.append(
            ("converted", out, None) if out is not None else ("dead_letter", why[1], why[0])
        )
    return sql, fast


def test_the_fast_road_gives_the_sql_roads_bytes_and_dead_letters_on_generated_taxi_rides(spark):
    mapping = taxi_mapping()
    samples = generate_samples(mapping, compile_mapping(mapping), 200, seed=7)
    samples += [ride(text, vendor=i) for i, text in enumerate(EDGES)]
    values = [framed(V2, s, V2_ID) for s in samples]
    values += [b"\x01not avro", b"\x00\x00", b"\x00\x00\x00\x00\x63abc", values[0][:6]]
    sql, fast = both_roads(spark, mapping, V2, V1_SCHEMA, values)
    assert fast == sql
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") > 100 and kinds.count("dead_letter") > 50


def test_the_fast_road_equals_the_sql_road_on_promotions_copies_parses_and_defaults(spark):
    mapping = wide_mapping()
    samples = generate_samples(mapping, compile_mapping(mapping), 200, seed=3)
    for i, text in enumerate(EDGES):
        samples.append({**samples[0], "amount": text, "ratio": EDGES[-1 - i], "i": -i})
    values = [framed(WIDE_V2, s, V2_ID) for s in samples]
    sql, fast = both_roads(spark, mapping, WIDE_V2, WIDE_V1, values)
    assert fast == sql
    assert {k for k, _, _ in sql} == {"converted", "dead_letter"}


def test_the_fast_road_reads_every_writer_version_as_the_sql_road_does(spark):
    """Mixed versions: v2 records written with an older writer (a field the reader lacks, one
    the reader fills with its default) and the current one, by the id in each frame."""
    older = {
        "type": "record",
        "name": "TaxiRide",
        "namespace": "com.datatalksclub.taxi",
        "fields": [*V2["fields"][:4], {"name": "tip", "type": "string"}, V2["fields"][4]],
    }
    mapping = taxi_mapping()
    reg = RegistryPlan(
        V1_ID,
        json.dumps(V1_SCHEMA),
        {V2_ID: json.dumps(V2), 22: json.dumps(older)},
        {V2_ID: "s2/2", 22: "s2/1"},
    )
    values = []
    for i, text in enumerate(["1.5", "x", "2e2", "NaN"]):
        values.append(framed(V2, ride(text, vendor=i), V2_ID))
        values.append(framed(older, {**ride(text, vendor=i), "tip": "t"}, 22))
    values.append(framed(older, {**ride("1"), "tip": "t"}, 23))  # an id nobody registered
    frame = kafka_frame(spark, [(b"k", v, []) for v in values])
    rows = sorted(build_records(frame, mapping, reg).collect(), key=lambda r: r["source_offset"])
    plan = plan_json(mapping, reg, record_plan(mapping))
    for row, value in zip(rows, values, strict=True):
        out, why = convert_one(spark, plan, value)
        headers = {h["key"]: bytes(h["value"]) for h in row["headers"]}
        if row["kind"] == "converted":
            assert out == bytes(row["value"]) and not why
        else:
            assert out is None
            assert why == (
                headers["schemacli.error-stage"].decode(),
                headers["schemacli.error"].decode(),
            )
    # "1.5" and "2e2" by both writers; "x" and "NaN" (no finite number) dead-letter
    assert [r["kind"] for r in rows].count("converted") == 4


def test_only_mappings_whose_every_rule_the_jvm_interprets_take_the_fast_road():
    assert record_plan(taxi_mapping()).fast
    assert record_plan(wide_mapping()).name == "fast"
    nested = record_plan(planned_mapping(NESTED_V2, NESTED_V1, ENDPOINTS))
    assert nested.name == "sql" and nested.why
    assert "SQL road" in nested.describe()
