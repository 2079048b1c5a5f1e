"""The fast road (Avro to Avro in the JVM writer, ``converters.mapping.recordplan`` +
``dev.schemacli.converters.RecordPlan``) against the SQL road (from_avro, the mapping's Spark
SQL, to_avro) on the records the mapping tests generate and on edge values: the same v1 bytes,
the same dead-letter decisions and reasons."""

from __future__ import annotations

import decimal
import json
import random
import struct

import pytest

from converters.mapping.check import generate_samples
from converters.mapping.recordplan import record_plan
from converters.mapping.sql import compile_mapping
from converters.pipeline.fastroad import convert_one, plan_json, reads_in_place
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
    unframe,
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
    fast, datum_reader = (
        fast_road(spark, plan_json(mapping, reg, road, in_place=in_place), values)
        for in_place in (True, False)
    )
    # the fast road reads a record in place, or with Avro's datum reader: the same bytes
    for i, (a, b) in enumerate(zip(fast, datum_reader, strict=True)):
        assert a == b, (i, values[i].hex())
    plan = plan_json(mapping, reg, road)
    assert any(reads_in_place(spark, plan, v) for v in values)
    return sql, fast


def fast_road(spark, plan: str, values: list[bytes]):
    """Each value through the fast road's transform: (kind, v1 bytes or reason, stage)."""
    out = []
    for v in values:
        value, why = convert_one(spark, plan, v)
        out.append(
            ("converted", value, None) if value is not None else ("dead_letter", why[1], why[0])
        )
    return out


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


NULLABLE_V2 = {
    "type": "record",
    "name": "Opt",
    "fields": [
        {"name": "a", "type": ["null", "int"]},
        {"name": "b", "type": ["null", "string"]},
        {"name": "c", "type": ["string", "null"]},
        {"name": "d", "type": ["null", "double"]},
        {"name": "e", "type": "int"},
        {"name": "amount", "type": ["null", "string"]},
        {"name": "ratio", "type": ["string", "null"]},
        {"name": "raw", "type": ["null", "bytes"]},
        {"name": "nd", "type": ["double", "null"]},
        {"name": "l", "type": ["null", "long"]},
    ],
}
NULLABLE_V1 = {
    "type": "record",
    "name": "Opt",
    "fields": [
        {"name": "a", "type": ["null", "long"]},
        {"name": "b", "type": "string"},
        {"name": "c", "type": ["null", "string"]},
        {"name": "d", "type": "double"},
        {"name": "e", "type": ["int", "null"]},
        {"name": "amount", "type": ["null", "double"]},
        {"name": "ratio", "type": "float"},
        {"name": "raw", "type": ["bytes", "null"]},
        {"name": "nd", "type": ["null", "double"]},
        {"name": "l", "type": "float"},
        {"name": "tag", "type": ["null", "string"], "default": None},
        {"name": "tag2", "type": ["string", "null"], "default": "v2"},
    ],
}
INT_EDGES = [-(2**31), 2**31 - 1, 0, -1]
LONG_EDGES = [-(2**63), 2**63 - 1, 0, 2**53 + 1]
TEXT_EDGES = ["", "ü€𝄞", "a'b\\c", "\x00"]
DOUBLE_EDGES = [float("nan"), float("inf"), -0.0, 5e-324, 1.7976931348623157e308]


def nullable_mapping():
    text = (
        f"version: 1\n{ENDPOINTS}fields:\n"
        "  a: {from: a, convert: copy}\n  b: {from: b, convert: copy}\n"
        "  c: {from: c, convert: copy}\n"
        "  d: {from: d, convert: copy, on_error: default, default: -1.5}\n"
        "  e: {from: e, convert: copy}\n"
        "  amount: {from: amount, convert: parse_number}\n"
        "  ratio: {from: ratio, convert: parse_number}\n"
        "  raw: {from: raw, convert: copy}\n  nd: {from: nd, convert: copy}\n"
        "  l: {from: l, convert: copy}\n"
        "  tag: {convert: default}\n  tag2: {convert: default}\n"
    )
    from converters.mapping.reader import loads

    return loads(text).with_schemas(NULLABLE_V2, NULLABLE_V1)


def nullable_samples(mapping) -> list[dict]:
    samples = generate_samples(mapping, compile_mapping(mapping), 200, seed=11)
    base = {f["name"]: None for f in NULLABLE_V2["fields"]} | {"e": 0, "ratio": "1.5"}
    samples.append(base)  # every nullable field null
    samples.append({**base, "b": "x", "d": 0.5, "ratio": None})
    samples.append({**base, "b": "x", "d": None, "ratio": "2", "l": 1})  # d's default
    for i in range(5):
        samples.append(
            {
                **base,
                "a": INT_EDGES[i % 4],
                "e": INT_EDGES[-1 - i % 4],
                "b": TEXT_EDGES[i % 4],
                "c": TEXT_EDGES[-1 - i % 4],
                "d": DOUBLE_EDGES[i],
                "nd": DOUBLE_EDGES[-1 - i],
                "raw": [b"", b"\x00\xff", None, b"x" * 300][i % 4],
                "l": LONG_EDGES[i % 4],
                "amount": EDGES[i],
                "ratio": EDGES[-1 - i],
            }
        )
    return samples


def test_the_fast_road_equals_the_sql_road_on_nullable_fields_nulls_and_edge_values(spark):
    """["null", T] and [T, "null"] on either side: a null stays null in a nullable v1 field,
    dead-letters a non-null one with the SQL road's reason, or becomes the rule's default."""
    mapping = nullable_mapping()
    road = record_plan(mapping)
    assert road.fast, road.why
    samples = nullable_samples(mapping)
    values = [framed(NULLABLE_V2, s, V2_ID) for s in samples]
    sql, fast = both_roads(spark, mapping, NULLABLE_V2, NULLABLE_V1, values)
    assert fast == sql
    reasons = [r for k, r, _ in sql if k == "dead_letter"]
    assert any("b: v2 value is null, v1 field is not nullable" in r for r in reasons)
    assert any("; " in r for r in reasons)  # several fields' reasons joined
    assert [k for k, _, _ in sql].count("converted") >= 5
    defaulted = sql[len(samples) - 6]
    assert defaulted[0] == "converted"
    assert unframe(defaulted[1], NULLABLE_V1)[1]["d"] == -1.5


LOGICAL_V2 = {
    "type": "record",
    "name": "Log",
    "fields": [
        {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tu", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ltm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "ltu", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {
            "name": "dec",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {
            "name": "decf",
            "type": {
                "type": "fixed",
                "name": "D",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            },
        },
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "H", "size": 4}},
        {"name": "odt", "type": ["null", {"type": "int", "logicalType": "date"}]},
        {
            "name": "ocolor",
            "type": ["null", {"type": "enum", "name": "Tint", "symbols": ["B", "A"]}],
        },
        {"name": "ohash", "type": ["null", {"type": "fixed", "name": "H2", "size": 4}]},
    ],
}
LOGICAL_V1 = {
    "type": "record",
    "name": "Log",
    "namespace": "v1",
    "fields": [
        *LOGICAL_V2["fields"][:9],
        {
            "name": "decf",
            "type": {
                "type": "fixed",
                "name": "D1",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            },
        },
        {
            "name": "color",
            "type": {"type": "enum", "name": "Colour", "symbols": ["GREEN", "BLUE", "RED"]},
        },
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "odt", "type": [{"type": "int", "logicalType": "date"}, "null"]},
        {
            "name": "ocolor",
            "type": ["null", {"type": "enum", "name": "Tint1", "symbols": ["A", "B", "C"]}],
        },
        {"name": "ohash", "type": ["null", {"type": "fixed", "name": "Hash2", "size": 4}]},
    ],
}


def logical_mapping():
    rules = "".join(
        f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n" for f in LOGICAL_V1["fields"]
    )
    from converters.mapping.reader import loads

    return loads(f"version: 1\n{ENDPOINTS}fields:\n{rules}").with_schemas(LOGICAL_V2, LOGICAL_V1)


def test_the_fast_road_equals_the_sql_road_on_logical_types_enums_and_fixed(spark):
    """Logical types copied as they are, enums into a v1 enum with every symbol (another name and
    order), fixed of the same size, nullable ones too: the SQL road's bytes."""
    mapping = logical_mapping()
    road = record_plan(mapping)
    assert road.fast, road.why
    samples = generate_samples(mapping, compile_mapping(mapping), 200, seed=5)
    rng = random.Random(5)
    for j, sample in enumerate(samples):  # fastavro's random bytes overflow most decimals
        if j % 4:
            dec, decf = rng.randint(-(10**9) + 1, 10**9 - 1), rng.randint(-(10**18), 10**18)
            sample["dec"] = dec.to_bytes(rng.randint(5, 9), "big", signed=True)
            sample["decf"] = decf.to_bytes(8, "big", signed=True)
    base = samples[1]
    for i in range(4):
        samples.append(
            {
                **base,
                "dt": INT_EDGES[i],
                "tm": [0, 86_399_999, 1, 43_200_000][i],
                "tu": [0, 86_399_999_999, 1, 43_200_000_000][i],
                "tsm": [0, -1, 1_700_000_000_123, -62_135_596_800_000][i],
                "tsu": LONG_EDGES[i],
                "ltm": [0, -1, 253_402_300_799_999, -62_135_596_800_000][i],
                "ltu": LONG_EDGES[-1 - i],
                "id": ["", "6f1c1a4e-2b7d-4a54-9f2e-5d1b8a2c3e4f", "ü€𝄞", "x"][i],
                "dec": [b"", b"\x00", b"\x3b\x9a\xc9\xff", b"\xc4\x65\x36\x01"][i],
                "decf": [
                    bytes(8),
                    b"\xff" * 8,
                    b"\x0d\xe0\xb6\xb3\xa7\x63\xff\xff",
                    b"\x80" + bytes(7),
                ][i],
                "color": ["RED", "GREEN"][i % 2],
                "hash": [bytes(4), b"\xff" * 4, b"abcd", b"\x00\x01\x02\x03"][i],
                "odt": [None, INT_EDGES[i], None, 0][i],
                "ocolor": [None, "A", "B", None][i],
                "ohash": [None, b"\xff" * 4, b"wxyz", None][i],
            }
        )
    # decimals at their precision's limit (9 and 18 digits), one digit over, not the shortest
    # form (Spark writes the shortest), sign-extended, empty
    nines, over = 10**9 - 1, 10**9
    for dec in (nines, -nines, over, -over, 0, 1, -1):
        samples.append({**base, "dec": dec.to_bytes(8, "big", signed=True)})
        samples.append({**base, "dec": dec.to_bytes(5, "big", signed=True)})
    for decf in (10**18 - 1, -(10**18) + 1, 10**18, -(10**18), 0):
        samples.append({**base, "decf": decf.to_bytes(8, "big", signed=True)})
    samples.append({**base, "dec": b"\x00\x00\x01"})
    values = [framed(LOGICAL_V2, s, V2_ID) for s in samples]
    sql, fast = both_roads(spark, mapping, LOGICAL_V2, LOGICAL_V1, values)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, samples[i])
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") > 100 and kinds.count("dead_letter") > 20


LOC = {
    "type": "record",
    "name": "Loc",
    "fields": [
        {"name": "lat", "type": "double"},
        {"name": "zone", "type": ["null", "string"]},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
    ],
}
META = {
    "type": "record",
    "name": "Meta",
    "fields": [
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["A", "B"]}},
        {"name": "h", "type": {"type": "fixed", "name": "H", "size": 2}},
        {"name": "raw", "type": "bytes"},
        {"name": "inner", "type": ["null", {"type": "array", "items": "Loc"}]},
    ],
}
NESTED_COPY_V2 = {
    "type": "record",
    "name": "Trip",
    "fields": [
        {"name": "pickup", "type": LOC},
        {"name": "dropoff", "type": ["null", "Loc"]},
        {"name": "stops", "type": {"type": "array", "items": "Loc"}},
        {"name": "tags", "type": {"type": "array", "items": ["null", "string"]}},
        {"name": "ids", "type": ["null", {"type": "array", "items": "long"}]},
        {"name": "meta", "type": META},
        {"name": "n", "type": "int"},
    ],
}
NESTED_COPY_V1 = {
    "type": "record",
    "name": "Trip",
    "fields": [
        {"name": "pickup", "type": LOC},
        {"name": "dropoff", "type": ["Loc", "null"]},
        {"name": "drop2", "type": "Loc"},
        {"name": "stops", "type": {"type": "array", "items": "Loc"}},
        {"name": "tags", "type": {"type": "array", "items": ["null", "string"]}},
        {"name": "ids", "type": ["null", {"type": "array", "items": "long"}]},
        {"name": "meta", "type": META},
        {"name": "n", "type": "long"},
    ],
}


def nested_copy_mapping():
    rules = "".join(
        f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n"
        for f in NESTED_COPY_V1["fields"]
        if f["name"] != "drop2"
    )
    rules += "  drop2: {from: dropoff, convert: copy}\n"
    from converters.mapping.reader import loads

    return loads(f"version: 1\n{ENDPOINTS}fields:\n{rules}").with_schemas(
        NESTED_COPY_V2, NESTED_COPY_V1
    )


def test_the_fast_road_equals_the_sql_road_on_nested_records_and_arrays_copied_as_they_are(spark):
    """Records and arrays of the same shape and names copied whole, nullable ones too, with nested
    nulls, empty arrays, enums, fixed and logical types inside; a null record into a non-null
    v1 record is the SQL road's dead letter."""
    mapping = nested_copy_mapping()
    road = record_plan(mapping)
    assert road.fast, road.why
    samples = generate_samples(mapping, compile_mapping(mapping), 150, seed=13)
    loc = {"lat": float("nan"), "zone": None, "at": LONG_EDGES[0], "day": None}
    for i in range(4):
        samples.append(
            {
                **samples[i],
                "pickup": {**loc, "zone": TEXT_EDGES[i], "at": LONG_EDGES[i]},
                "dropoff": [loc, None, {**loc, "day": INT_EDGES[i]}, loc][i],
                "stops": [[], [loc] * 3, [], [loc]][i],
                "tags": [[], [None, ""], ["ü€𝄞", None], [None]][i],
                "ids": [None, [], LONG_EDGES, None][i],
                "n": INT_EDGES[i],
            }
        )
    values = [framed(NESTED_COPY_V2, s, V2_ID) for s in samples]
    sql, fast = both_roads(spark, mapping, NESTED_COPY_V2, NESTED_COPY_V1, values)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, samples[i])
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") > 30 and kinds.count("dead_letter") > 30
    assert "drop2: v2 value is null, v1 field is not nullable" in {r for _, r, _ in sql}


INT_TEXTS = [
    "12",
    " 12 ",
    "\t7\n",
    "+5",
    "-0",
    "007",
    "-",
    "+",
    "",
    " ",
    "1.0",
    "1.",
    "1e3",
    "0x10",
    "1_000",
    "1,000",
    "٣",
    "\u2003" + "8",
    "\u00a0" + "8",
    "\x7f" + "9",
    "\x00" + "9",
    "\u0085" + "9",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999",
    "--1",
    "+-1",
    "1 2",
]
PARSE_INT_V2 = {
    "type": "record",
    "name": "P",
    "fields": [
        {"name": "a", "type": "string"},
        {"name": "b", "type": ["null", "string"]},
        {"name": "c", "type": "string"},
        {"name": "d", "type": ["null", "string"]},
    ],
}
PARSE_INT_V1 = {
    "type": "record",
    "name": "P",
    "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": "long"},
        {"name": "c", "type": "long"},
        {"name": "d", "type": ["null", "int"]},
    ],
}


def test_the_fast_road_equals_the_sql_road_on_parsing_into_int_and_long_and_on_error_default(
    spark,
):
    from converters.mapping.reader import loads

    mapping = loads(
        f"version: 1\n{ENDPOINTS}fields:\n"
        "  a: {from: a, convert: parse_number}\n  b: {from: b, convert: parse_number}\n"
        "  c: {from: c, convert: parse_number, on_error: default, default: -7}\n"
        "  d: {from: d, convert: parse_number, on_error: default, default: null}\n"
    ).with_schemas(PARSE_INT_V2, PARSE_INT_V1)
    road = record_plan(mapping)
    assert road.fast, road.why
    samples = generate_samples(mapping, compile_mapping(mapping), 100, seed=17)
    for i, text in enumerate(INT_TEXTS):
        other = INT_TEXTS[-1 - i]
        samples.append({"a": text, "b": other, "c": text, "d": other})
        samples.append({"a": "1", "b": text, "c": other, "d": None if i % 2 else text})
    values = [framed(PARSE_INT_V2, s, V2_ID) for s in samples]
    sql, fast = both_roads(spark, mapping, PARSE_INT_V2, PARSE_INT_V1, values)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, samples[i])
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") > 30 and kinds.count("dead_letter") > 30


DEC9 = {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}
DEC20 = {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 0}
FIXED_DEC = {
    "type": "fixed",
    "name": "FD",
    "size": 9,
    "logicalType": "decimal",
    "precision": 18,
    "scale": 3,
}
ITEM = {
    "type": "record",
    "name": "Item",
    "fields": [{"name": "q", "type": "int"}, {"name": "p", "type": ["null", DEC9]}],
}
RAW_V2 = {
    "type": "record",
    "name": "Raw",
    "fields": [
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "b", "type": "boolean"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "u", "type": ["null", "long"]},
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "dec", "type": DEC9},
        {"name": "big", "type": DEC20},
        {"name": "fd", "type": FIXED_DEC},
        {"name": "items", "type": {"type": "array", "items": ITEM}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
    ],
}
RAW_V1 = {
    "type": "record",
    "name": "Raw",
    "fields": [
        *RAW_V2["fields"][:6],
        {"name": "e", "type": {"type": "enum", "name": "E1", "symbols": ["B", "C", "A"]}},
        *RAW_V2["fields"][7:13],
        {"name": "wide", "type": "long"},
    ],
}


def zz(n: int) -> bytes:
    """Avro's zig-zag varint of ``n``, in its fewest bytes."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes([*out, n])


def overlong(n: int) -> bytes:
    """``n`` in one byte more than it needs (Avro's reader takes it; its writer never writes it)."""
    b = zz(n)
    return b[:-1] + bytes([b[-1] | 0x80, 0])


def signed(n: int, size: int | None = None) -> bytes:
    size = size or (n.bit_length() + 8) // 8
    return n.to_bytes(size, "big", signed=True)


def chunk(b: bytes) -> bytes:
    return zz(len(b)) + b


def item(q: bytes, price: bytes | None) -> bytes:
    return q + (zz(0) if price is None else zz(1) + chunk(price))


RAW = {  # each v2 field's bytes as Avro's writer writes them
    "i": zz(-7),
    "l": zz(2**40),
    "b": b"\x01",
    "f": struct.pack("<f", 1.5),
    "d": struct.pack("<d", -2.25),
    "s": chunk("ü€𝄞".encode()),
    "e": zz(1),
    "u": zz(1) + zz(-3),
    "a": zz(2) + zz(5) + zz(6) + zz(0),
    "dec": chunk(signed(12345)),
    "big": chunk(signed(10**19 + 7)),
    "fd": signed(-42, 9),
    "items": zz(2) + item(zz(1), signed(99)) + item(zz(2), None) + zz(0),
    "m": zz(1) + chunk(b"k") + zz(1) + zz(0),
}
# (field, bytes): values Avro's reader reads but its writer writes otherwise, values Spark's
# DECIMAL(p, s) changes or cannot read, and values no reader reads
RAW_EDGES = [
    ("i", overlong(-7)),
    ("i", b"\xff\xff\xff\xff\x7f"),  # an int's 5th byte with more than 4 bits
    ("l", overlong(2**40)),
    ("l", b"\xff" * 9 + b"\x7f"),  # a long's 10th byte with more than 1 bit
    ("l", b"\x80" * 10 + b"\x00"),  # 11 bytes
    ("b", b"\x02"),
    ("f", struct.pack("<I", 0x7FC00001)),  # NaN payloads, a signalling NaN
    ("f", struct.pack("<I", 0x7F800001)),
    ("d", struct.pack("<Q", 0xFFF8000000000001)),
    ("s", overlong(1) + b"x"),
    ("s", zz(-1)),
    ("e", zz(2)),
    ("e", overlong(1)),
    ("u", zz(2) + zz(1)),
    ("u", zz(0) + b""),
    ("a", zz(1) + zz(5) + zz(1) + zz(6) + zz(0)),  # two blocks
    ("a", zz(-2) + zz(2) + zz(5) + zz(6) + zz(0)),  # a block with its size
    ("a", zz(0)),
    ("dec", chunk(signed(2**64 + 5))),  # Spark keeps the low 64 bits under 19 digits
    ("dec", chunk(signed(2**70 - 1))),
    ("dec", chunk(signed(-(2**64) + 7))),
    ("dec", chunk(signed(5, 8))),  # not the shortest form
    ("dec", chunk(signed(10**9))),  # one digit over
    ("dec", chunk(signed(-(10**9) + 1))),
    ("dec", chunk(b"")),
    ("big", chunk(signed(10**20 - 1))),
    ("big", chunk(signed(10**20))),
    ("big", chunk(signed(2**64 + 5, 12))),
    ("fd", signed(2**64 + 5, 9)),  # a fixed(9) of precision 18: the low 64 bits too
    ("fd", signed(-(10**18), 9)),
    ("fd", signed(10**18 - 1, 9)),
    ("items", zz(1) + item(zz(3), signed(7, 6)) + zz(0)),
    ("items", zz(1) + item(zz(3), signed(2**64 + 5)) + zz(0)),
    ("items", zz(1) + item(zz(3), signed(10**9)) + zz(0)),
    ("items", zz(1) + item(zz(3), b"") + zz(0)),
    ("items", zz(2) + item(zz(3), None) + item(overlong(4), signed(1)) + zz(0)),
    ("m", zz(1) + chunk(b"k") + zz(1) + zz(1) + chunk(b"k") + zz(2) + zz(0)),  # two blocks
    ("m", zz(2) + chunk(b"k") + zz(1) + chunk(b"k") + zz(2) + zz(0)),  # a key twice
]


def raw_body(**fields: bytes) -> bytes:
    return b"".join(fields.get(f["name"], RAW[f["name"]]) for f in RAW_V2["fields"])


def test_the_fast_road_reads_in_place_only_what_avros_writer_writes_and_gives_spark_decimals(
    spark,
):
    """Bytes written by hand: what Avro's reader reads but its writer never writes (a varint in
    more bytes than it needs, arrays and maps in several blocks, a boolean byte 2), NaN
    payloads, decimals Spark's DECIMAL(p, s) keeps the low 64 bits of (up to 18 digits) or
    cannot read, nested and fixed ones too, indexes out of range, truncated bodies and bytes
    after the record: the SQL road's bytes and dead letters, read in place or not."""
    from converters.mapping.reader import loads

    rules = "".join(
        f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n" for f in RAW_V1["fields"][:-1]
    )
    mapping = loads(
        f"version: 1\n{ENDPOINTS}fields:\n{rules}  wide: {{from: i, convert: copy}}\n"
    ).with_schemas(RAW_V2, RAW_V1)
    road = record_plan(mapping)
    assert road.fast, road.why
    base = raw_body()
    bodies = [base, base + b"\x00\x01trailing", base[:-3], base[:10]]
    bodies += [raw_body(**{name: value}) for name, value in RAW_EDGES]
    values = [b"\x00" + V2_ID.to_bytes(4, "big") + body for body in bodies]
    sql, fast = both_roads(spark, mapping, RAW_V2, RAW_V1, values)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, bodies[i].hex())
    kinds = [k for k, _, _ in sql]
    assert kinds[0] == "converted" and kinds.count("dead_letter") >= 8
    reg = RegistryPlan(V1_ID, json.dumps(RAW_V1), {V2_ID: json.dumps(RAW_V2)}, {V2_ID: "s2/1"})
    read = [reads_in_place(spark, plan_json(mapping, reg, road), v) for v in values]
    # what Avro's writer writes is read in place (bytes after the record are not read); what it
    # never writes, a truncated body or a decimal Spark cannot read, by the datum reader
    assert read[:4] == [True, True, False, False], read
    assert read.count(True) >= 10 and read.count(False) >= 15, read
    # Spark's DECIMAL(9, 2) of 2^64 + 5: the low 64 bits, 5
    dec = RAW_EDGES.index(("dec", chunk(signed(2**64 + 5)))) + 4
    assert unframe(sql[dec][1], RAW_V1)[1]["dec"] == decimal.Decimal("0.05")


NESTED_DEC_V2 = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "lines", "type": {"type": "array", "items": ITEM}},
        {"name": "totals", "type": ["null", {"type": "array", "items": DEC9}]},
        {
            "name": "fx",
            "type": {
                "type": "record",
                "name": "Fx",
                "fields": [{"name": "rate", "type": FIXED_DEC}, {"name": "big", "type": DEC20}],
            },
        },
    ],
}


def test_the_fast_road_equals_the_sql_road_on_decimals_inside_records_and_arrays(spark):
    """Decimals inside copied records and arrays (bytes and fixed, nullable) take Spark's
    DECIMAL(p, s) round trip on the fast road too: the shortest form, the low 64 bits under 19
    digits, an undecodable record where one has too many digits."""
    from converters.mapping.reader import loads

    rules = "".join(
        f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n" for f in NESTED_DEC_V2["fields"]
    )
    mapping = loads(f"version: 1\n{ENDPOINTS}fields:\n{rules}").with_schemas(
        NESTED_DEC_V2, NESTED_DEC_V2
    )
    road = record_plan(mapping)
    assert road.fast, road.why
    samples = generate_samples(mapping, compile_mapping(mapping), 60, seed=23)
    rng = random.Random(23)
    for sample in samples[::2]:  # fastavro's random bytes overflow most decimals
        for line in sample["lines"]:
            line["p"] = None if rng.random() < 0.3 else signed(rng.randint(-(10**9) + 1, 10**9 - 1))
        sample["totals"] = [signed(rng.randint(-999, 999), rng.randint(2, 9)) for _ in range(3)]
        sample["fx"] = {"rate": signed(rng.randint(-(10**18) + 1, 10**18 - 1), 9), "big": signed(7)}
    edges = [signed(2**64 + 5), signed(5, 9), signed(10**9), signed(-(10**9) + 1), b""]
    for value in edges:
        samples.append(
            {
                "lines": [{"q": 1, "p": value}, {"q": 2, "p": None}],
                "totals": [value, signed(1)],
                "fx": {"rate": signed(2**64 + 5, 9), "big": signed(10**20 - 1)},
            }
        )
    samples.append({"lines": [], "totals": None, "fx": {"rate": bytes(9), "big": signed(10**20)}})
    values = [framed(NESTED_DEC_V2, s, V2_ID) for s in samples]
    sql, fast = both_roads(spark, mapping, NESTED_DEC_V2, NESTED_DEC_V2, values)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, samples[i])
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") >= 30 and kinds.count("dead_letter") >= 3


def test_the_fast_roads_marker_is_the_sql_roads_for_every_offset_and_timestamp(spark):
    """The marker (origin, position, timestamp in ms) the JVM writes in bytes, against the SQL
    road's concat_ws, for offsets up to a long's limit and timestamps before 1970 and year 1."""
    import datetime as dt

    from converters.pipeline.headers import MARKER_HEADER
    from converters.pipeline.txsink import jvm_writer

    utc = dt.UTC
    stamps = [
        dt.datetime(1970, 1, 1, tzinfo=utc),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc),  # -1 ms, floored
        dt.datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=utc),
        dt.datetime(2026, 1, 1, 0, 0, 0, 999, tzinfo=utc),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=utc),
    ]
    offsets = [0, 7, 2**31, 2**63 - 1, 10**18]
    value = framed(
        WIDE_V2,
        generate_samples(wide_mapping(), compile_mapping(wide_mapping()), 1, seed=1)[0],
        V2_ID,
    )
    rows = [
        (b"k", value, "t2", partition, offset, ts, [])
        for partition in (0, 7)
        for offset, ts in zip(offsets, stamps, strict=True)
    ]
    frame = spark.createDataFrame(
        rows,
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
        "headers array<struct<key:string,value:binary>>",
    )
    reg = RegistryPlan(V1_ID, json.dumps(WIDE_V1), {V2_ID: json.dumps(WIDE_V2)}, {V2_ID: "s2/1"})
    out = build_records(frame, wide_mapping(), reg).collect()
    # the timestamps as Spark holds them (microseconds), which the fast road reads
    micros = {
        (r["partition"], r["offset"]): r["micros"]
        for r in frame.selectExpr(
            "partition", "offset", "unix_micros(timestamp) AS micros"
        ).collect()
    }
    writer = jvm_writer(spark)
    for row in out:
        sql = {h["key"]: bytes(h["value"]) for h in row["headers"]}[MARKER_HEADER]
        at = (row["source_partition"], row["source_offset"])
        fast = bytes(writer.marker("s2/1", "t2", at[0], at[1], micros[at]))
        assert fast == sql, (fast, sql)
    assert len(out) == len(rows)


def in_one_task(spark, mapping, v2: dict, v1: dict, writers: dict[int, dict], rows: list):
    """``rows`` (value, loop-guard marked) through the SQL road and the fast road each as one
    task, in order (a map's entry order depends on the records before it): (kind, v1 bytes or
    reason, stage) per row, each road."""
    from converters.pipeline.headers import MARKER_HEADER
    from converters.pipeline.txsink import jvm_writer

    versions = {sid: f"s2/{n}" for n, sid in enumerate(sorted(writers), 1)}
    reg = RegistryPlan(
        V1_ID, json.dumps(v1), {sid: json.dumps(s) for sid, s in writers.items()}, versions
    )
    frame = kafka_frame(
        spark,
        [
            (b"k", value, [(MARKER_HEADER, b"elsewhere/1")] if marked else [])
            for value, marked in rows
        ],
    ).coalesce(1)
    sql = []
    for r in sorted(build_records(frame, mapping, reg).collect(), key=lambda r: r["source_offset"]):
        headers = {h["key"]: bytes(h["value"]) for h in r["headers"] or []}
        if r["kind"] == "converted":
            sql.append(("converted", bytes(r["value"]), None))
        elif r["kind"] == "dead_letter":
            reason = headers["schemacli.error"].decode()
            sql.append(("dead_letter", reason, headers["schemacli.error-stage"].decode()))
        else:
            sql.append((r["kind"], None, None))
    road = record_plan(mapping)
    assert road.fast, road.why
    why = spark._jvm.java.util.ArrayList()
    values = jvm_writer(spark).convertAll(
        plan_json(mapping, reg, road),
        [bytearray(v) if v is not None else None for v, _ in rows],
        [marked for _, marked in rows],
        why,
    )
    fast = []
    for value, reason in zip(values, why, strict=True):
        reason = str(reason)
        if value is not None:
            fast.append(("converted", bytes(value), None))
        elif reason in ("skipped", "tombstone"):
            fast.append((reason, None, None))
        else:
            stage, text = reason.split("\t", 1)
            fast.append(("dead_letter", text, stage))
    return sql, fast


TAGS = {"type": "map", "values": "string"}
MAP_V2 = {
    "type": "record",
    "name": "Doc",
    "fields": [
        {"name": "id", "type": "int", "default": 0},
        {"name": "tags", "type": TAGS},
        {"name": "attrs", "type": ["null", {"type": "map", "values": ["null", DEC9]}]},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "Inner",
                "fields": [{"name": "m", "type": {"type": "map", "values": "int"}}],
            },
        },
        {"name": "lists", "type": {"type": "array", "items": {"type": "map", "values": "long"}}},
    ],
}
MAP_V2_OLDER = {**MAP_V2, "fields": MAP_V2["fields"][1:]}  # without `id`: read with its default
# keys whose order the SQL road's hash maps decide: the same String hash ("Aa", "BB"), and
# "k0", "k30", whose order flips once the first map's table has grown past them
COLLIDING = ["k0", "k30", "BB", "Aa", "c", "b", "a"]


def doc(keys: list[str], i: int = 0) -> dict:
    return {
        "id": i,
        "tags": {k: f"{k}-{i}" for k in keys},
        "attrs": None
        if i % 3 == 1
        else {k: (None if n % 2 else signed(n)) for n, k in enumerate(keys)},
        "inner": {"m": {k: n for n, k in enumerate(reversed(keys))}},
        "lists": [{k: n} for n, k in enumerate(keys[:3])] + [{}],
    }


def test_the_fast_road_gives_a_maps_entries_the_sql_roads_order_record_after_record(spark):
    """Maps copied on the fast road come out in the order the SQL road writes them, which is
    the order of Java hash maps, one of them reused from record to record: so a record's bytes
    depend on the maps of the records before it, also those the loop guard skips and those of
    another writer schema's (its own history) and of a record that failed half-read."""
    from converters.mapping.reader import loads

    rules = "".join(
        f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n" for f in MAP_V2["fields"]
    )
    mapping = loads(f"version: 1\n{ENDPOINTS}fields:\n{rules}").with_schemas(MAP_V2, MAP_V2)
    big = [f"x{n}" for n in range(70)]
    older = 22
    rows = []
    for i, keys in enumerate(
        [COLLIDING[:2], big, COLLIDING[:2], COLLIDING, COLLIDING[::-1], [], ["only"], COLLIDING]
    ):
        rows.append((framed(MAP_V2, doc(keys, i), V2_ID), False))
    rows.append((framed(MAP_V2, doc([f"z{n}" for n in range(270)], 9), V2_ID), True))
    rows.append((framed(MAP_V2, doc(COLLIDING[:2], 10), V2_ID), False))  # after a skipped one
    rows.append((framed(MAP_V2_OLDER, {**doc(COLLIDING, 11)}, older), False))
    rows.append((framed(MAP_V2_OLDER, {**doc(big, 12)}, older), False))
    rows.append((framed(MAP_V2_OLDER, {**doc(COLLIDING[:2], 13)}, older), False))
    half = framed(MAP_V2, doc([f"w{n}" for n in range(300)], 14), V2_ID)
    rows.append((half[: len(half) // 3], False))  # undecodable, its first entries read
    rows.append((framed(MAP_V2, doc(COLLIDING[:2], 15), V2_ID), False))
    rows.append((None, False))
    bad = doc(COLLIDING, 16)
    bad["attrs"] = {"p": signed(10**9)}  # a decimal Spark cannot read
    rows.append((framed(MAP_V2, bad, V2_ID), False))
    samples = generate_samples(mapping, compile_mapping(mapping), 40, seed=29)
    rng = random.Random(29)
    for sample in samples:
        if sample["attrs"] is not None:  # fastavro's random bytes overflow most decimals
            sample["attrs"] = {k: signed(rng.randint(-999, 999)) for k in sample["attrs"]}
        rows.append((framed(MAP_V2, sample, V2_ID), False))
    writers = {V2_ID: MAP_V2, older: MAP_V2_OLDER}
    sql, fast = in_one_task(spark, mapping, MAP_V2, MAP_V2, writers, rows)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, rows[i][0].hex() if rows[i][0] else None)

    # the SQL road's order of one map's keys flips after the big map: the fast road's with it
    def order(value: bytes) -> list[str]:
        return list(unframe(value, MAP_V2)[1]["tags"])

    assert order(sql[0][1]) == ["k0", "k30"] and order(sql[2][1]) == ["k30", "k0"]
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") >= 40 and {"dead_letter", "skipped", "tombstone"} <= set(kinds)


def test_the_fast_road_gives_map_keys_as_spark_reads_them_invalid_utf8_ones_too(spark):
    """Spark turns a map's keys into Java strings (invalid UTF-8 becomes U+FFFD, and keys that
    become equal are one), its values stay bytes: the fast road's map is the SQL road's."""
    from converters.mapping.reader import loads

    v2 = {"type": "record", "name": "M", "fields": [{"name": "m", "type": TAGS}]}
    mapping = loads(
        f"version: 1\n{ENDPOINTS}fields:\n  m: {{from: m, convert: copy}}\n"
    ).with_schemas(v2, v2)

    def body(entries: list[tuple[bytes, bytes]]) -> bytes:
        out = zz(len(entries)) if entries else b""
        for key, value in entries:
            out += chunk(key) + chunk(value)
        return b"\x00" + V2_ID.to_bytes(4, "big") + out + zz(0)

    rows = [
        (body([(b"\xff", b"a"), (b"\xfe", b"b"), (b"ok", b"\xff\xfe")]), False),
        (body([(b"k", b"1"), (b"k", b"2")]), False),  # a key twice: the last value
        (body([("ü€𝄞".encode(), b"x"), (b"\xed\xa0\x80", b"surrogate")]), False),
        (body([]), False),
        (body([(b"Aa", b"1"), (b"BB", b"2")]), False),
        (body([(b"BB", b"1"), (b"Aa", b"2")]), False),
    ]
    sql, fast = in_one_task(spark, mapping, v2, v2, {V2_ID: v2}, rows)
    assert fast == sql
    assert all(k == "converted" for k, _, _ in sql)


MIXED_V2 = {
    "type": "record",
    "name": "Mixed",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "tags", "type": TAGS},
        NESTED_DEC_V2["fields"][1],  # totals: an array of decimals
        NESTED_DEC_V2["fields"][2],  # fx: a record of decimals
        {
            "name": "pt",
            "type": {
                "type": "record",
                "name": "Pt",
                "fields": [{"name": "x", "type": "int"}, {"name": "s", "type": "string"}],
            },
        },
    ],
}
MIXED_V1 = {**MIXED_V2, "fields": [{"name": "id", "type": "long"}, *MIXED_V2["fields"][1:]]}


def test_the_fast_road_equals_the_sql_road_on_maps_beside_decimals_plain_records_and_widening(
    spark,
):
    """Beside a copied map (every record read by the datum reader, its decoded record reused),
    copied decimals in an array and a record take Spark's round trip on a copy, a plain record is
    copied as it is and an int widens to a long: record after record in one task, the same bytes
    and dead letters as the SQL road."""
    from converters.mapping.reader import loads

    rules = "".join(
        f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n" for f in MIXED_V2["fields"]
    )
    mapping = loads(f"version: 1\n{ENDPOINTS}fields:\n{rules}").with_schemas(MIXED_V2, MIXED_V1)
    rng = random.Random(31)

    def mixed(i: int, keys: list[str], rate: bytes) -> dict:
        return {
            "id": i,
            "tags": {k: f"{k}-{i}" for k in keys},
            "totals": None if i % 4 == 3 else [signed(rng.randint(-99, 99)) for _ in range(i % 3)],
            "fx": {"rate": rate, "big": signed(rng.randint(-(10**19), 10**19))},
            "pt": {"x": -i, "s": "ü" * (i % 5)},
        }

    rows = []
    for i, keys in enumerate([COLLIDING[:2], [f"x{n}" for n in range(70)], COLLIDING[:2], []]):
        rows.append((framed(MIXED_V2, mixed(i, keys, signed(2**64 + i, 9)), V2_ID), False))
    bad = mixed(4, COLLIDING, signed(5, 9))
    bad["totals"] = [signed(1), signed(10**9)]  # a decimal Spark cannot read
    rows.append((framed(MIXED_V2, bad, V2_ID), False))
    for i in range(5, 25):  # after the dead letter: the reused record's decimals are read anew
        keys = rng.sample(COLLIDING, rng.randint(0, len(COLLIDING)))
        rate = signed(rng.randint(-(10**18) + 1, 10**18 - 1), 9)
        rows.append((framed(MIXED_V2, mixed(i, keys, rate), V2_ID), i % 7 == 0))
    sql, fast = in_one_task(spark, mapping, MIXED_V2, MIXED_V1, {V2_ID: MIXED_V2}, rows)
    for i, (a, b) in enumerate(zip(sql, fast, strict=True)):
        assert a == b, (i, rows[i][0].hex())
    kinds = [k for k, _, _ in sql]
    assert kinds.count("converted") >= 20 and {"dead_letter", "skipped"} <= set(kinds)
