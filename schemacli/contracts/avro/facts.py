"""The facts of Avro every reader of a schema needs, each written once.

The type names, the value ranges of int and long, the promotions a reader may make, the logical
types Apache Avro Java 1.12 knows and the base types each annotates, a timestamp's unit, what
makes a decimal valid (Java's ``LogicalTypes.Decimal.validate``), and the names Spark gives
Avro's types. The parser, the compatibility engine, the lint rules, the fixes, the Spark type
mapping and the converter's mapping all import them from here; nothing here imports anything.
The tables are plain dicts typed read-only (``Mapping``): the compatibility engine reads the
promotions for every pair of primitives it compares, and a read-only proxy costs twice a dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

PRIMITIVE_TYPES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
NAMED_TYPES = frozenset({"record", "enum", "fixed"})
# How a named type may be written: an ``error`` is a record (a protocol's message error).
NAMED_SPELLINGS = NAMED_TYPES | {"error"}
# Every type name Avro itself gives meaning to (a named type called one of them needs care).
TYPE_NAMES = PRIMITIVE_TYPES | NAMED_SPELLINGS | {"array", "map", "union"}
ORDERS = ("ascending", "descending", "ignore")

# The value ranges of Avro's int and long (Java's int and long).
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
RANGES: Mapping[str, tuple[int, int]] = {"int": (INT_MIN, INT_MAX), "long": (LONG_MIN, LONG_MAX)}

# reader type -> the writer types it reads besides its own (the specification's promotions).
PROMOTIONS: Mapping[str, frozenset[str]] = {
    "long": frozenset({"int"}),
    "float": frozenset({"int", "long"}),
    "double": frozenset({"int", "long", "float"}),
    "bytes": frozenset({"string"}),
    "string": frozenset({"bytes"}),
}

# The logical types Java 1.12 knows, and the base types each may annotate (on any other base,
# or on a fixed of another size for uuid and duration, Java ignores it).
LOGICAL_BASES: Mapping[str, tuple[str, ...]] = {
    "date": ("int",),
    "time-millis": ("int",),
    "time-micros": ("long",),
    "timestamp-millis": ("long",),
    "timestamp-micros": ("long",),
    "timestamp-nanos": ("long",),
    "local-timestamp-millis": ("long",),
    "local-timestamp-micros": ("long",),
    "local-timestamp-nanos": ("long",),
    "uuid": ("string", "fixed"),
    "decimal": ("bytes", "fixed"),
    "big-decimal": ("bytes",),
    "duration": ("fixed",),
}
# The fixed sizes a logical type on a fixed needs.
LOGICAL_FIXED_SIZES: Mapping[str, int] = {"uuid": 16, "duration": 12}

# Timestamp logical types and their unit (global or local time alike).
TIMESTAMP_UNITS: Mapping[str, str] = {
    "timestamp-millis": "millis",
    "timestamp-micros": "micros",
    "timestamp-nanos": "nanos",
    "local-timestamp-millis": "millis",
    "local-timestamp-micros": "micros",
    "local-timestamp-nanos": "nanos",
}


# -- decimals ----------------------------------------------------------------------------------


def max_decimal_precision(size: int) -> int:
    """The most decimal digits a fixed of ``size`` bytes holds: every number of that many
    digits fits its two's complement, ``floor(log10(2 ** (8 * size - 1)))`` (Java's
    ``maxPrecision``, computed there in doubles; here in exact integers). 0 for no bytes."""
    if size <= 0:
        return 0
    bits = 8 * size - 1
    largest = 1 << bits
    # A first guess from log10(2) (at most one off for any size), made exact by comparing
    # powers of ten as integers (no str(): Python refuses ints of over 4,300 digits there).
    digits = bits * 30103 // 100000
    while 10 ** (digits + 1) <= largest:
        digits += 1
    while 10**digits > largest:
        digits -= 1
    return digits


def min_fixed_size(precision: int) -> int:
    """The fewest bytes a fixed needs to hold ``precision`` decimal digits."""
    size = 1
    while max_decimal_precision(size) < precision:
        size += 1
    return size


class DecimalProblem(StrEnum):
    """Why Java ignores a decimal logical type (readers then see plain bytes or fixed)."""

    PRECISION = "precision"  # not a whole number of 1 or more
    SCALE = "scale"  # not a whole number of 0 or more
    SCALE_ABOVE_PRECISION = "scale above precision"
    FIXED_TOO_SMALL = "fixed too small"  # the fixed holds fewer digits than the precision


def decimal_problem(props: Mapping[str, Any], size: int | None = None) -> DecimalProblem | None:
    """What is wrong with a decimal's ``precision`` and ``scale`` (``props`` of its bytes, or of
    its fixed of ``size`` bytes), as Java decides it; None for a valid decimal. A missing scale
    is 0; JSON booleans and fractions are not whole numbers."""
    precision, scale = props.get("precision"), props.get("scale", 0)
    if type(precision) is not int or precision <= 0:
        return DecimalProblem.PRECISION
    if type(scale) is not int or scale < 0:
        return DecimalProblem.SCALE
    if scale > precision:
        return DecimalProblem.SCALE_ABOVE_PRECISION
    if size is not None and precision > max_decimal_precision(size):
        return DecimalProblem.FIXED_TOO_SMALL
    return None


# -- Spark -------------------------------------------------------------------------------------

# The Spark type (its JSON name) Spark's SchemaConverters gives each Avro primitive, enum and
# fixed when no logical type changes it: what from_avro produces and to_avro expects. Names
# only: nothing here loads Spark.
SPARK_TYPES: Mapping[str, str] = {
    "null": "void",
    "boolean": "boolean",
    "int": "integer",
    "long": "long",
    "float": "float",
    "double": "double",
    "bytes": "binary",
    "string": "string",
    "enum": "string",
    "fixed": "binary",
}
_SPARK_SQL = {"integer": "INT", "long": "BIGINT", "void": "VOID"}


def spark_sql_name(spark_type: str) -> str:
    """A simple Spark type's name as Spark SQL writes it (``DataType.sql``): ``integer`` ->
    ``INT``, ``long`` -> ``BIGINT``, ``decimal(10,2)`` -> ``DECIMAL(10,2)``."""
    return _SPARK_SQL.get(spark_type, spark_type.upper())
