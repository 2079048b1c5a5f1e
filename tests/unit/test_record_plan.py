"""Which road a mapping takes (converters.mapping.recordplan): the fast road's plan only when
every rule has an operation the JVM writer interprets with the SQL road's semantics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.check import validate
from converters.mapping.reader import load, loads
from converters.mapping.recordplan import record_plan
from converters.pipeline.fastroad import plan_json
from converters.pipeline.records import RegistryPlan
from schemacli.output.migrate import validate_json, validate_text

ROOT = Path(__file__).resolve().parents[2]
ENDPOINTS = (
    "source: {subject: s2, topic: t2}\ntarget: {subject: s1, topic: t1}\ndead_letter_topic: dlq\n"
)
V2 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "i", "type": "int"},
        {"name": "s", "type": "string"},
        {"name": "l", "type": "long"},
        {"name": "opt", "type": ["null", "string"], "default": None},
    ],
}


def mapping(v1_fields: list, rules: str):
    v1 = {"type": "record", "name": "R", "fields": v1_fields}
    return loads(f"version: 1\n{ENDPOINTS}fields:\n{rules}").with_schemas(V2, v1)


def test_the_taxi_example_takes_the_fast_road_with_one_operation_per_v1_field():
    road = record_plan(load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"))
    assert road.fast and road.name == "fast"
    assert [op["op"] for op in road.fields] == ["copy"] * 4 + ["parse"]
    assert road.fields[4]["reason_head"] == "total_amount: cannot convert "
    assert road.fields[4]["reason_tail"] == " to float"


def test_promotions_and_defaults_are_fast_road_operations():
    road = record_plan(
        mapping(
            [
                {"name": "i", "type": "double"},
                {"name": "l", "type": "float"},
                {"name": "tag", "type": "string", "default": "v2"},
            ],
            "  i: {from: i, convert: copy}\n  l: {from: l, convert: copy}\n"
            "  tag: {convert: default}\n",
        )
    )
    assert road.fields == (
        {"op": "promote", "source": "i", "to": "double"},
        {"op": "promote", "source": "l", "to": "float"},
        {"op": "literal", "value": "v2"},
    )


@pytest.mark.parametrize(
    ("v1_field", "rule", "why"),
    [
        (
            {"name": "s", "type": "double"},
            "{from: s, convert: parse_number, on_error: default, default: 0.0}",
            "on_error: default",
        ),
        ({"name": "l", "type": "int"}, "{from: l, convert: narrow}", "narrow"),
        ({"name": "i", "type": "string"}, "{from: i, convert: to_string}", "to_string"),
        (
            {"name": "x", "type": ["null", "string", "int"]},
            "{convert: sql, expr: 's'}",
            "unions of several types",
        ),
        (
            {"name": "s", "type": "double"},
            "{from: opt, convert: parse_number, on_error: default, default: 0.0}",
            "on_error: default",
        ),
        (
            {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            "{from: i, convert: copy}",
            "logical",
        ),
        ({"name": "x", "type": "int"}, "{convert: sql, expr: 'i + 1'}", "sql"),
    ],
)
def test_a_rule_only_sql_has_sends_the_mapping_down_the_sql_road(v1_field, rule, why):
    road = record_plan(mapping([v1_field], f"  {v1_field['name']}: {rule}\n"))
    assert not road.fast and road.name == "sql"
    assert why in road.why and road.describe().startswith("SQL road: ")


def test_a_mapping_with_errors_takes_the_sql_road():
    broken = mapping([{"name": "i", "type": "int"}], "  i: {from: nope, convert: copy}\n")
    assert "errors" in record_plan(broken).why


def test_plan_json_refuses_a_sql_road_mapping_and_carries_the_registry_for_a_fast_one():
    reg = RegistryPlan(7, json.dumps({"type": "record", "name": "R", "fields": []}), {21: "{}"}, {})
    narrowed = mapping([{"name": "l", "type": "int"}], "  l: {from: l, convert: narrow}\n")
    with pytest.raises(ValueError, match="SQL road"):
        plan_json(narrowed, reg, record_plan(narrowed))
    taxi = load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
    reg = RegistryPlan(7, json.dumps(taxi.target.schema_json), {21: "{}"}, {21: "s/1"})
    plan = json.loads(plan_json(taxi, reg, record_plan(taxi)))
    assert plan["target_id"] == 7 and plan["writers"] == {"21": {"schema": "{}", "version": "s/1"}}
    assert (plan["target_topic"], plan["dead_letter_topic"]) == (
        "taxi-rides",
        "taxi-rides-v2.dead-letter",
    )


def test_validate_says_which_road_the_exactly_once_job_takes():
    report = validate(load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"), sample_count=4)
    assert "road (exactly-once): fast road" in validate_text(report)
    assert validate_json(report)["road"].startswith("fast road")


def test_the_job_takes_road_auto_or_sql_and_refuses_any_other(capsys):
    from converters.job import _args
    from converters.pipeline.stream import choose_road

    base = ["--mapping", "m.yaml", "--bootstrap", "b:9092", "--registry", "http://r"]
    base += ["--checkpoint", "cp", "--state-dir", "st"]
    assert _args(base).road == "auto"
    assert _args([*base, "--road", "sql"]).road == "sql"
    with pytest.raises(SystemExit) as exc:
        _args([*base, "--road", "turbo"])
    assert exc.value.code == 2 and "invalid choice: 'turbo'" in capsys.readouterr().err
    taxi = load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
    assert choose_road(taxi).fast and not choose_road(taxi, "sql").fast
    assert choose_road(taxi, "sql").why == "--road sql"


def test_a_nullable_field_on_either_side_is_a_fast_road_operation_with_the_sql_roads_null_rule():
    road = record_plan(
        mapping(
            [
                {"name": "opt", "type": ["string", "null"]},
                {"name": "s", "type": ["null", "string"]},
                {"name": "o1", "type": "string"},
                {"name": "o2", "type": "string"},
                {"name": "o3", "type": "double"},
                {"name": "tag", "type": ["null", "string"], "default": None},
            ],
            "  opt: {from: opt, convert: copy}\n  s: {from: s, convert: copy}\n"
            "  o1: {from: opt, convert: copy}\n"
            "  o2: {from: opt, convert: copy, on_error: default, default: none}\n"
            "  o3: {from: opt, convert: parse_number}\n"
            "  tag: {convert: default}\n",
        )
    )
    assert road.fast, road.why
    assert road.fields == (
        {"op": "copy", "source": "opt", "if_null": "null"},
        {"op": "copy", "source": "s"},
        {
            "op": "copy",
            "source": "opt",
            "if_null": "fail",
            "null_reason": "o1: v2 value is null, v1 field is not nullable",
        },
        {"op": "copy", "source": "opt", "if_null": "default", "null_value": "none"},
        {
            "op": "parse",
            "source": "opt",
            "to": "double",
            "reason_head": "o3: cannot convert ",
            "reason_tail": " to double",
            "if_null": "fail",
            "null_reason": "o3: v2 value is null, v1 field is not nullable",
        },
        {"op": "literal", "value": None},
    )


def typed(v2_type, v1_type):
    """A one-field mapping copying v2's ``x`` of ``v2_type`` into v1's ``x`` of ``v1_type``."""
    v2 = {"type": "record", "name": "R", "fields": [{"name": "x", "type": v2_type}]}
    v1 = {"type": "record", "name": "R", "fields": [{"name": "x", "type": v1_type}]}
    return loads(f"version: 1\n{ENDPOINTS}fields:\n  x: {{from: x, convert: copy}}\n").with_schemas(
        v2, v1
    )


def logical(base, name, **more):
    return {"type": base, "logicalType": name, **more}


@pytest.mark.parametrize(
    ("v2_type", "v1_type", "op"),
    [
        (logical("int", "date"), logical("int", "date"), {"op": "copy", "source": "x"}),
        (
            logical("long", "timestamp-millis"),
            ["null", logical("long", "timestamp-millis")],
            {"op": "copy", "source": "x"},
        ),
        (logical("string", "uuid"), logical("string", "uuid"), {"op": "copy", "source": "x"}),
        (
            logical("bytes", "decimal", precision=38, scale=2),
            logical("bytes", "decimal", precision=38, scale=2),
            {"op": "decimal", "source": "x", "precision": 38},
        ),
        (
            {"type": "enum", "name": "E", "symbols": ["A"]},
            {"type": "enum", "name": "F", "symbols": ["B", "A"]},
            {"op": "enum", "source": "x"},
        ),
        (
            {"type": "fixed", "name": "H", "size": 4},
            {"type": "fixed", "name": "G", "size": 4},
            {"op": "fixed", "source": "x"},
        ),
    ],
)
def test_logical_types_enums_and_fixed_copied_as_they_are_take_the_fast_road(v2_type, v1_type, op):
    road = record_plan(typed(v2_type, v1_type))
    assert road.fast, road.why
    assert road.fields == (op,)


@pytest.mark.parametrize(
    ("v2_type", "v1_type", "why"),
    [
        (logical("int", "date"), "int", "copy of int (date) into int"),
        (logical("long", "timestamp-millis"), logical("long", "timestamp-micros"), "copy of"),
        (
            logical("bytes", "decimal", precision=9, scale=2),
            logical("bytes", "decimal", precision=10, scale=2),
            "copy of",
        ),
        (
            logical("bytes", "decimal", precision=40, scale=2),
            logical("bytes", "decimal", precision=40, scale=2),
            "precision 40",
        ),
        ({"type": "fixed", "name": "H", "size": 4}, {"type": "fixed", "name": "G", "size": 5}, ""),
        (["null", "int", "string"], ["null", "int", "string"], "unions of several types"),
        (
            {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            "a logical type on a fixed",
        ),
    ],
)
def test_a_copy_whose_bytes_spark_would_change_takes_the_sql_road(v2_type, v1_type, why):
    road = record_plan(typed(v2_type, v1_type))
    assert not road.fast
    assert why in road.why


LOC = {"type": "record", "name": "Loc", "fields": [{"name": "lat", "type": ["null", "double"]}]}
DEC = logical("bytes", "decimal", precision=4, scale=1)
FIXED_DEC = {"type": "fixed", "name": "F", "size": 9, "logicalType": "decimal", "precision": 18}
DEC_LOC = {**LOC, "fields": [*LOC["fields"], {"name": "d", "type": ["null", DEC]}]}


@pytest.mark.parametrize(
    ("v2_type", "v1_type"),
    [
        (LOC, LOC),
        (["null", LOC], [LOC, "null"]),
        ({"type": "array", "items": LOC}, {"type": "array", "items": LOC}),
        (
            {"type": "array", "items": ["null", "long"]},
            {"type": "array", "items": ["null", "long"]},
        ),
        (DEC_LOC, DEC_LOC),
        ({"type": "map", "values": "long"}, {"type": "map", "values": "long"}),
        ({"type": "map", "values": DEC_LOC}, {"type": "map", "values": DEC_LOC}),
        ({"type": "array", "items": DEC}, {"type": "array", "items": DEC}),
        (
            {"type": "array", "items": ["null", FIXED_DEC]},
            {"type": "array", "items": ["null", FIXED_DEC]},
        ),
    ],
)
def test_records_and_arrays_of_the_same_shape_and_names_are_copied_on_the_fast_road(
    v2_type, v1_type
):
    road = record_plan(typed(v2_type, v1_type))
    assert road.fast, road.why
    assert road.fields[0]["op"] == "copy"


def renamed(record: dict, **changes) -> dict:
    return {**record, **changes}


@pytest.mark.parametrize(
    ("v2_type", "v1_type", "why"),
    [
        (LOC, renamed(LOC, name="Place"), "named Place in v1"),
        (
            renamed(LOC, fields=[{"name": "d", "type": logical("bytes", "decimal", precision=4)}]),
            renamed(LOC, fields=[{"name": "d", "type": logical("bytes", "decimal", precision=5)}]),
            "nested bytes (decimal) that is not v1's bytes (decimal)",
        ),
        (
            {"type": "array", "items": logical("bytes", "decimal", precision=40)},
            {"type": "array", "items": logical("bytes", "decimal", precision=40)},
            "a decimal of precision 40",
        ),
        (
            {"type": "map", "values": ["null", "int", "string"]},
            {"type": "map", "values": ["null", "int", "string"]},
            "unions of several types",
        ),
        (
            renamed(LOC, fields=[{"name": "u", "type": ["null", "int", "string"]}]),
            renamed(LOC, fields=[{"name": "u", "type": ["null", "int", "string"]}]),
            "unions of several types",
        ),
    ],
)
def test_a_nested_copy_spark_would_change_or_cannot_resolve_takes_the_sql_road(
    v2_type, v1_type, why
):
    road = record_plan(typed(v2_type, v1_type))
    assert not road.fast
    assert why in road.why


def test_parsing_into_int_or_long_is_a_fast_road_operation_with_its_on_error_policy():
    road = record_plan(
        mapping(
            [
                {"name": "s", "type": "int"},
                {"name": "opt", "type": "long", "default": 0},
            ],
            "  s: {from: s, convert: parse_number}\n"
            "  opt: {from: opt, convert: parse_number, on_error: default}\n",
        )
    )
    assert road.fast, road.why
    assert road.fields == (
        {
            "op": "parse_int",
            "source": "s",
            "to": "int",
            "reason_head": "s: cannot convert ",
            "reason_tail": " to int",
        },
        {
            "op": "parse_int",
            "source": "opt",
            "to": "long",
            "reason_head": "opt: cannot convert ",
            "reason_tail": " to long",
            "on_fail": "default",
            "fail_value": 0,
            "if_null": "default",
            "null_value": 0,
        },
    )
