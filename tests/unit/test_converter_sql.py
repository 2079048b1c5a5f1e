"""The Spark SQL a mapping compiles to, and the problems that make a mapping undeployable."""

from __future__ import annotations

import pytest

from converters.mapping.check import light_sql_check
from converters.mapping.reader import loads
from converters.mapping.schemaview import view
from converters.mapping.sql import compile_mapping, literal

V2 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "amount", "type": "string"},
        {"name": "n", "type": "long"},
        {"name": "opt", "type": ["null", "string"], "default": None},
    ],
}
V1 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "amount", "type": "float", "default": -1.0},
        {"name": "n", "type": "int"},
        {"name": "opt", "type": "string", "default": "none"},
    ],
}


def compiled(fields_yaml: str):
    m = loads(
        "version: 1\nsource: {schema: a}\ntarget: {schema: b}\nfields:\n" + fields_yaml,
        source="m.yaml",
    ).with_schemas(V2, V1)
    return compile_mapping(m)


def test_parse_number_is_a_try_cast_whose_failure_names_the_field_and_value():
    c = compiled(
        "  amount: {from: amount, convert: parse_number}\n  n: {from: n, convert: narrow}\n"
        "  opt: {from: opt}\n"
    )
    assert dict(c.columns)["amount"] == "try_cast(`amount` AS FLOAT) + CAST(0 AS FLOAT)"
    assert (
        "amount: cannot convert " in c.error_sql and "try_cast(`n` AS INT) IS NULL" in c.error_sql
    )
    assert "opt: v2 value is null" in c.error_sql
    assert c.ok


def test_policy_default_replaces_the_value_instead_of_failing_the_record():
    c = compiled(
        "  amount: {from: amount, convert: parse_number, on_error: default}\n"
        "  n: {from: n, convert: narrow, on_error: default, default: 0}\n"
        "  opt: {from: opt, on_error: default}\n"
    )
    cols = dict(c.columns)
    assert cols["amount"].startswith("CASE WHEN") and "CAST(-1.0 AS FLOAT)" in cols["amount"]
    assert "'none'" in cols["opt"]
    assert c.error_sql == "''"


def test_unresolved_marker_makes_the_mapping_undeployable_naming_the_field():
    c = compiled(
        "  amount: {unresolved: think}\n  n: {from: n, convert: narrow}\n  opt: {from: opt}\n"
    )
    assert not c.ok
    (f,) = [f for f in c.findings if f.kind == "UNRESOLVED"]
    assert "amount" in f.message and f.location.pointer == "/fields/amount" and f.location.line == 5


def test_conversion_that_does_not_fit_the_types_is_a_type_mismatch():
    c = compiled(
        "  amount: {from: amount, convert: copy}\n  n: {from: n, convert: narrow}\n  opt: "
        "{from: opt}\n"
    )
    assert [f.kind for f in c.findings] == ["TYPE_MISMATCH"]


def test_v1_field_without_a_rule_is_reported():
    c = compiled(
        "  amount: {from: amount, convert: parse_number}\n  n: {from: n, convert: narrow}\n"
    )
    assert [f.kind for f in c.findings] == ["MISSING_RULE"]


def test_rule_for_a_field_v1_does_not_have_is_reported():
    c = compiled(
        "  amount: {from: amount, convert: parse_number}\n  n: {from: n, convert: narrow}\n"
        "  opt: {from: opt}\n  ghost: {from: n}\n"
    )
    assert [f.kind for f in c.findings] == ["UNKNOWN_TARGET"]


def test_unknown_v2_source_is_reported():
    c = compiled(
        "  amount: {from: amt, convert: parse_number}\n  n: {from: n, convert: narrow}\n  "
        "opt: {from: opt}\n"
    )
    assert [f.kind for f in c.findings] == ["UNKNOWN_SOURCE"]


@pytest.mark.parametrize(
    ("value", "avro", "sql"),
    [
        (0.0, "float", "CAST(0.0 AS FLOAT)"),
        (7, "long", "CAST(7 AS BIGINT)"),
        ("it's", "string", "'it\\'s'"),
        (None, ["null", "string"], "CAST(NULL AS STRING)"),
        ("\u00ff", "bytes", "unhex('ff')"),
        (True, "boolean", "true"),
    ],
)
def test_defaults_become_typed_spark_literals(value, avro, sql):
    assert literal(value, view(avro)) == sql


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("upper(name)", None),
        ("concat(a, ')')", None),
        ("upper(name", "unclosed"),
        ("a); drop table t", "unbalanced"),
        ("'abc", "unclosed"),
        ("a; b", "';'"),
        ("", "empty"),
    ],
)
def test_light_sql_check_catches_unbalanced_and_multi_statement_text(expr, problem):
    found = light_sql_check(expr)
    assert (found is None) if problem is None else (problem in found)
