"""A rule's hand-written SQL is parsed without Spark: what cannot parse is not deployable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.check import validate
from converters.mapping.reader import loads
from converters.mapping.sqlsyntax import parse_problem

ROOT = Path(__file__).resolve().parents[2]
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())


def total_amount_by_sql(expr: str):
    """The taxi mapping with total_amount written as custom SQL (line 9 of m.yaml)."""
    return loads(
        "version: 1\nsource: {schema: a}\ntarget: {schema: b}\nfields:\n"
        "  vendorId: {from: vendorId}\n  passenger_count: {from: passenger_count}\n"
        "  trip_distance: {from: trip_distance}\n  payment_type: {from: payment_type}\n"
        f"  total_amount: {{convert: sql, expr: '{expr}'}}\n",
        source="m.yaml",
    ).with_schemas(V2, V1)


@pytest.mark.parametrize(
    "expr",
    ["total_amount +", "total_amount = ", "total_amount * * 2", "CASE WHEN total_amount > 1 THEN 1",
     "total_amount ||| 2", "a, b"],
)  # fmt: skip
def test_an_expression_that_does_not_parse_is_a_syntax_error_at_the_rules_line(expr):
    report = validate(total_amount_by_sql(expr))
    assert not report.ok
    (f,) = [f for f in report.findings if f.kind == "SQL_SYNTAX"]
    assert f.location.line == 9 and f.location.column is not None
    assert "Spark SQL cannot parse it" in f.message and "<class" not in f.message


def test_the_problem_names_the_character_where_parsing_stopped():
    assert parse_problem("total_amount +") == (
        "Spark SQL cannot parse it at character 14: Required keyword: 'expression' missing for Add"
    )


@pytest.mark.parametrize(
    "expr",
    [
        "try_cast(total_amount AS FLOAT)",
        "cast(a as decimal(10, 2)) + cast(b AS array<int>)[0]",
        "upper(`first name`) || ' ' || last",
        "CASE WHEN x IS NULL THEN 'n/a' ELSE lower(x) END",
        "transform(items, (v, i) -> v * i)",
        "filter(tags, t -> t != 'x')",
        "aggregate(xs, 0, (acc, x) -> acc + x)",
        "concat('a.b', \"c d\", 12.5e3, 10L, X'0A', DATE '2020-01-01')",
        "amount BETWEEN 0 AND 10 AND NOT flag OR current_date > day",
        "m['key'] + `we``ird`",
        "ts + INTERVAL 1 DAY + INTERVAL '1-2' YEAR TO MONTH - hour",
        "named_struct('lat', pickup.lat, 'lon', pickup.lon)",
        "a <=> b AND c RLIKE '^x' AND d DIV 2 > 0",
        "if(total_amount IS NULL, 0.0, total_amount * 100)",
    ],
)
def test_spark_expressions_parse(expr):
    assert parse_problem(expr) is None
