"""validate: static checks, the Python preview of each conversion, the fastavro dry run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.check import validate
from converters.mapping.conversions.parse_number import parse_number
from converters.mapping.conversions.spec import Failed
from converters.mapping.conversions.to_string import to_string
from converters.mapping.plan import plan
from converters.mapping.reader import load, loads
from schemacli.contracts.findings import Severity

ROOT = Path(__file__).resolve().parents[2]
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())


def ride(total: str) -> dict:
    return {
        "vendorId": 1,
        "passenger_count": 2,
        "trip_distance": 3.5,
        "payment_type": 1,
        "total_amount": total,
    }


def test_taxi_mapping_converts_numeric_amounts_and_dead_letters_the_rest():
    report = validate(
        plan(V2, V1), samples=[ride("12.5"), ride(" 7 "), ride("twelve")], origin="given"
    )
    assert report.ok
    dry = report.dry_run
    assert (dry.total, dry.converted, dry.dead_lettered) == (3, 2, 1)
    outputs = [s.output for s in dry.samples if s.output]
    assert outputs[0]["total_amount"] == 12.5 and outputs[1]["total_amount"] == 7.0
    (bad,) = [s for s in dry.samples if s.output is None]
    assert bad.errors == ("total_amount: cannot convert twelve to float",)


def test_generated_samples_show_both_outcomes_and_are_reproducible():
    a = validate(plan(V2, V1), sample_count=10, seed=3).dry_run
    b = validate(plan(V2, V1), sample_count=10, seed=3).dry_run
    assert a == b and a.converted == 5 and a.dead_lettered == 5


def test_report_lists_what_each_v1_field_becomes():
    report = validate(plan(V2, V1), sample_count=2)
    total = next(f for f in report.fields if f.target == "total_amount")
    assert (total.type, total.conversion, total.on_error) == ("float", "parse_number", "fail")
    assert total.sql == "try_cast(`total_amount` AS FLOAT) + CAST(0 AS FLOAT)"


def test_unresolved_markers_make_validate_fail_and_skip_the_dry_run():
    v1 = {**V1, "fields": [*V1["fields"], {"name": "zone", "type": "string"}]}
    report = validate(plan(V2, v1))
    assert not report.ok and report.dry_run is None
    assert [f.kind for f in report.findings] == ["UNRESOLVED"]
    assert "zone" in report.findings[0].message


def total_amount_by_sql(expr: str):
    """The taxi mapping with total_amount written as custom SQL (line 9 of m.yaml)."""
    return loads(
        "version: 1\nsource: {schema: a}\ntarget: {schema: b}\nfields:\n"
        "  vendorId: {from: vendorId}\n  passenger_count: {from: passenger_count}\n"
        "  trip_distance: {from: trip_distance}\n  payment_type: {from: payment_type}\n"
        f"  total_amount: {{convert: sql, expr: '{expr}'}}\n",
        source="m.yaml",
    ).with_schemas(V2, V1)


def test_custom_sql_with_broken_syntax_is_reported_without_spark():
    m = total_amount_by_sql("try_cast(total_amount AS FLOAT")
    report = validate(m)
    (f,) = report.findings
    assert f.kind == "SQL_SYNTAX" and f.location.line == 9 and "unclosed" in f.message


def test_custom_sql_reading_a_name_the_v2_record_lacks_is_a_warning_without_spark():
    m = total_amount_by_sql("try_cast(totl_amount AS FLOAT) + VendorID")
    report = validate(m)
    (f,) = report.findings
    assert f.kind == "SQL_UNKNOWN_NAME" and f.severity is Severity.WARNING
    assert f.message == (
        "expr of 'total_amount' reads 'totl_amount', which is not a field of the v2 record"
    )
    assert f.location.line == 9 and "total_amount" in f.hint and "--spark" in f.hint
    assert report.ok  # a heuristic: Spark's analyser (--spark) is the judge


def test_custom_sql_dry_run_says_it_needs_spark():
    m = total_amount_by_sql("try_cast(total_amount AS FLOAT) * 100")
    report = validate(m)
    assert report.ok and "--spark" in report.dry_run.skipped_reason


def test_a_schema_fastavro_refuses_but_java_accepts_skips_the_dry_run_and_says_why():
    # decimal with scale > precision: Java ignores the logical type, fastavro refuses the schema
    amount = {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 5}
    v2 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": amount}]}
    report = validate(plan(v2, v2))
    assert report.ok
    assert report.dry_run.total == 0
    assert report.dry_run.skipped_reason.startswith("fastavro refuses a schema of the mapping")


def test_example_mapping_is_deployable():
    assert validate(load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")).ok


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("12.5", "float", 12.5),
        (" 3 ", "int", 3),
        ("-0", "long", 0),
        ("1e3", "double", 1000.0),
        ("-0", "double", 0.0),
        ("-0.0d", "float", 0.0),
        ("1e39", "double", 1e39),
    ],
)
def test_preview_parses_numbers_as_spark_try_cast_does(text, kind, value):
    got = parse_number(text, kind)
    assert got == value and str(got) == str(value)  # -0 is 0, not -0.0


@pytest.mark.parametrize(
    ("text", "kind"),
    [("1.5", "int"), ("2147483648", "int"), ("abc", "float"), ("1_000", "double"), ("", "long"),
     # no finite number: Spark reads NaN/±Infinity, parse_number fails them
     ("NaN", "double"), ("Infinity", "float"), ("-inf", "double"), ("1e39", "float"),
     ("1e400", "double")],
)  # fmt: skip
def test_preview_refuses_what_try_cast_turns_into_null(text, kind):
    with pytest.raises(Failed):
        parse_number(text, kind)


def test_preview_formats_strings_like_spark_cast():
    assert [to_string(True), to_string(1.5), to_string(float("nan"))] == ["true", "1.5", "NaN"]
