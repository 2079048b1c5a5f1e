"""The facts of Avro (schemacli.contracts.avro.facts): the decimal arithmetic is exact and agrees
with Java's formula, and what makes a decimal valid is Java's rule."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import pytest

from schemacli.contracts.avro.facts import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    PRIMITIVE_TYPES,
    RANGES,
    SPARK_TYPES,
    DecimalProblem,
    decimal_problem,
    max_decimal_precision,
    min_fixed_size,
    spark_sql_name,
)


def java_max_precision(size: int) -> int:
    """LogicalTypes.Decimal.maxPrecision: Math.round(Math.floor(Math.log10(2) * (8 * size - 1)))."""
    return round(math.floor(math.log10(2) * (8 * size - 1)))


@pytest.mark.parametrize("size", range(1, 129))
def test_the_precision_a_fixed_holds_is_javas_for_every_size_java_computes_exactly(size):
    assert max_decimal_precision(size) == java_max_precision(size)


def test_the_precision_a_fixed_holds_is_exact_where_doubles_would_round():
    getcontext().prec = 200
    for size in (1, 2, 8, 16, 100, 1000, 4096):
        exact = int(
            (Decimal(2) ** (8 * size - 1)).log10().to_integral_value(rounding="ROUND_FLOOR")
        )
        assert max_decimal_precision(size) == exact
    assert max_decimal_precision(0) == 0


@pytest.mark.parametrize("precision", [1, 2, 3, 4, 5, 9, 10, 18, 19, 38, 39, 76, 77])
def test_the_smallest_fixed_for_a_precision_holds_it_and_one_byte_less_does_not(precision):
    size = min_fixed_size(precision)
    assert max_decimal_precision(size) >= precision
    assert size == 1 or max_decimal_precision(size - 1) < precision


@pytest.mark.parametrize(
    ("props", "size", "problem"),
    [
        ({"precision": 10, "scale": 2}, None, None),
        ({"precision": 4}, 2, None),
        ({"precision": 10}, 2, DecimalProblem.FIXED_TOO_SMALL),  # issue 37's fixed(2)
        ({}, None, DecimalProblem.PRECISION),
        ({"precision": 0}, None, DecimalProblem.PRECISION),
        ({"precision": True}, None, DecimalProblem.PRECISION),
        ({"precision": 10.0}, None, DecimalProblem.PRECISION),
        ({"precision": 10, "scale": -1}, None, DecimalProblem.SCALE),
        ({"precision": 10, "scale": "2"}, None, DecimalProblem.SCALE),
        ({"precision": 2, "scale": 3}, None, DecimalProblem.SCALE_ABOVE_PRECISION),
    ],
)
def test_a_decimal_is_valid_as_java_decides(props, size, problem):
    assert decimal_problem(props, size) is problem


def test_the_ranges_are_javas_int_and_long():
    assert (INT_MIN, INT_MAX) == (-2147483648, 2147483647) == RANGES["int"]
    assert (LONG_MIN, LONG_MAX) == (-9223372036854775808, 9223372036854775807) == RANGES["long"]


def test_every_primitive_has_a_spark_type_and_a_sql_name():
    assert PRIMITIVE_TYPES <= SPARK_TYPES.keys()
    assert [spark_sql_name(SPARK_TYPES[t]) for t in ("int", "long", "null", "bytes", "enum")] == [
        "INT",
        "BIGINT",
        "VOID",
        "BINARY",
        "STRING",
    ]
