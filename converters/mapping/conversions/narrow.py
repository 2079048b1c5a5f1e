"""``narrow``: a long into an int, a double into a float; a value out of range fails."""

from __future__ import annotations

import math
from typing import Any

from converters.mapping.conversions.spec import (
    FLOAT_MAX,
    Doc,
    Failed,
    Jsonata,
    Proposed,
    ValueSpec,
    no_jsonata,
)
from converters.mapping.model import Conversion
from converters.mapping.schemaview import AvroType
from schemacli.contracts.avro.facts import INT_MAX, INT_MIN, RANGES

DOUBLE_MAX = 1.7976931348623157e308
_PAIRS = (("long", "int"), ("double", "float"))


class Narrow(ValueSpec):
    conversion = Conversion.NARROW
    doc = Doc(
        "long → int; double → float",
        "`` try_cast(`f` AS INT) ``; `` CAST(`f` AS FLOAT) ``",
        "out of range (±3.4e38 for float; NaN/±Infinity pass)",
    )
    can_fail = True

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        return (source.kind, target.kind) in _PAIRS

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        if self.accepts(source, target):
            return Proposed(f"{source.kind} -> {target.kind}: values out of range fail")
        return None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        if target.kind == "int":
            return f"try_cast({value} AS {spark})", f"try_cast({value} AS {spark}) IS NULL"
        s = value
        return (
            f"CAST({s} AS FLOAT)",
            f"(abs({s}) > {FLOAT_MAX!r} AND NOT isnan({s}) AND abs({s}) != double('Infinity'))",
        )

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        if (source.kind, target.kind) == ("long", "int"):
            return Jsonata("$v", f"$v < {INT_MIN} or $v > {INT_MAX}")
        if (source.kind, target.kind) == ("double", "float"):
            # Infinity and NaN pass (as Spark's CAST); a finite double beyond float fails
            m, d = repr(FLOAT_MAX), repr(DOUBLE_MAX)
            return Jsonata("$v", f"($v > {m} and $v <= {d}) or ($v < -{m} and $v >= -{d})")
        return no_jsonata(source, target)

    def invert(self, v1: AvroType, v2: AvroType) -> str | None:
        return "$v"  # int -> long, float -> double: widening is exact

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        if target.kind == "int":
            if not RANGES["int"][0] <= value <= RANGES["int"][1]:
                raise Failed
            return value
        if not (math.isnan(value) or math.isinf(value)) and abs(value) > FLOAT_MAX:
            raise Failed
        return value
