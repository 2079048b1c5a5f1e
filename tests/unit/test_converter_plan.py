"""The planner: every v1 field matched to a v2 value, a safe conversion, or an explicit marker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.model import Conversion, Endpoint, Policy
from converters.mapping.plan import plan
from schemacli.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def record(*fields: dict, name: str = "R") -> dict:
    return {"type": "record", "name": name, "fields": list(fields)}


def one(v2_type, v1_type, **v1_extra):
    m = plan(
        record({"name": "f", "type": v2_type}), record({"name": "f", "type": v1_type, **v1_extra})
    )
    return m.rules[0]


def test_taxi_ride_total_amount_string_becomes_a_checked_float_cast_that_fails_the_record():
    v2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
    v1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
    m = plan(v2, v1)
    total = m.rule("total_amount")
    assert (total.convert, total.on_error, total.source) == (
        Conversion.PARSE_NUMBER,
        Policy.FAIL,
        "total_amount",
    )
    assert {r.convert for r in m.rules if r.target != "total_amount"} == {Conversion.COPY}
    assert not m.unresolved


@pytest.mark.parametrize(
    ("v2_type", "v1_type", "expected"),
    [
        ("string", "float", Conversion.PARSE_NUMBER),
        ("string", "double", Conversion.PARSE_NUMBER),
        ("string", "int", Conversion.PARSE_NUMBER),
        ("string", "long", Conversion.PARSE_NUMBER),
        ("long", "int", Conversion.NARROW),
        ("double", "float", Conversion.NARROW),
        ("int", "long", Conversion.COPY),
        ("float", "double", Conversion.COPY),
        ("int", "int", Conversion.COPY),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, "string", Conversion.TO_STRING),
        ("long", "string", Conversion.TO_STRING),
        ("string", {"type": "enum", "name": "E", "symbols": ["A", "B"]}, Conversion.TO_ENUM),
        ("bytes", "string", Conversion.BYTES_TO_STRING),
        ("string", "bytes", Conversion.STRING_TO_BYTES),
        (["null", "string"], "float", Conversion.PARSE_NUMBER),
        ("double", "int", Conversion.UNRESOLVED),
        ("boolean", "int", Conversion.UNRESOLVED),
        (
            {"type": "array", "items": "int"},
            {"type": "array", "items": "long"},
            Conversion.UNRESOLVED,
        ),
        (["null", "int", "string"], "int", Conversion.UNRESOLVED),
    ],
)
def test_each_type_pair_gets_the_catalogue_conversion_or_a_marker(v2_type, v1_type, expected):
    assert one(v2_type, v1_type).convert is expected


def test_narrowing_enum_symbols_is_checked_per_record():
    rule = one(
        {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
        {"type": "enum", "name": "E", "symbols": ["A", "B"]},
    )
    assert rule.convert is Conversion.TO_ENUM and "['C']" in rule.note


def test_nullable_v2_into_required_v1_says_nulls_fail():
    rule = one(["null", "string"], "string")
    assert rule.convert is Conversion.COPY and rule.on_error is Policy.FAIL
    assert "null" in rule.note


def test_v1_field_missing_from_v2_takes_the_v1_default():
    m = plan(
        record({"name": "a", "type": "int"}),
        record({"name": "a", "type": "int"}, {"name": "tip", "type": "float", "default": 0.0}),
    )
    assert m.rule("tip").convert is Conversion.DEFAULT


def test_v1_field_missing_from_v2_without_default_is_an_explicit_unresolved_marker():
    m = plan(
        record({"name": "a", "type": "int"}),
        record({"name": "a", "type": "int"}, {"name": "b", "type": "int"}),
    )
    assert m.rule("b").convert is Conversion.UNRESOLVED and "no default" in m.rule("b").reason


def test_renamed_field_is_matched_through_the_v1_alias():
    m = plan(
        record({"name": "amount", "type": "float"}),
        record({"name": "total", "type": "float", "aliases": ["amount"]}),
    )
    assert m.rule("total").source == "amount" and "alias" in m.rule("total").note


def test_renamed_field_is_matched_through_the_v2_alias():
    m = plan(
        record({"name": "amount", "type": "float", "aliases": ["total"]}),
        record({"name": "total", "type": "float"}),
    )
    assert m.rule("total").source == "amount"


def test_nested_records_are_planned_field_by_field_with_dotted_paths():
    v2 = record(
        {
            "name": "pickup",
            "type": record(
                {"name": "lat", "type": "string"}, {"name": "lon", "type": "double"}, name="P2"
            ),
        }
    )
    v1 = record(
        {
            "name": "pickup",
            "type": record(
                {"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}, name="P1"
            ),
        }
    )
    m = plan(v2, v1)
    assert m.rule("pickup").convert is Conversion.RECORD
    assert m.rule("pickup.lat").convert is Conversion.PARSE_NUMBER
    assert m.rule("pickup.lon").convert is Conversion.COPY


NODE = {
    "type": "record",
    "name": "Node",
    "fields": [
        {"name": "v", "type": "int"},
        {"name": "next", "type": ["null", "Node"], "default": None},
    ],
}


def test_a_recursive_schema_is_refused_naming_the_side_and_the_reference():
    with pytest.raises(InputError) as caught:
        plan(NODE, NODE, source=Endpoint(schema="v2.avsc"))
    err = caught.value
    assert err.message.startswith("v2 schema: recursive type 'Node'")
    assert (err.location.source, err.location.pointer) == ("v2.avsc", "/fields/1/type/1")


def test_a_schema_that_is_not_a_record_is_refused():
    with pytest.raises(InputError) as caught:
        plan(NODE | {"name": "R", "fields": []}, "string", target=Endpoint(subject="t-value"))
    assert caught.value.message == "v1 schema is a string, not a record"
    assert caught.value.location.source == "t-value"


def test_a_type_used_before_its_definition_is_planned_like_any_other():
    # Java accepts a forward reference: field `first` names R2, defined by field `second`.
    r2 = {
        "type": "record",
        "name": "R2",
        "namespace": "o",
        "fields": [{"name": "x", "type": "int"}],
    }
    v1 = {
        "type": "record",
        "name": "R1",
        "fields": [{"name": "first", "type": "o.R2"}, {"name": "second", "type": r2}],
    }
    m = plan(v1, v1)
    assert {r.target: r.convert for r in m.rules} == {
        "first": Conversion.COPY,
        "second": Conversion.COPY,
    }
