"""``to_string``: an enum's symbol, a boolean or a number as Spark's ``CAST(... AS STRING)``
writes it."""

from __future__ import annotations

import math
from typing import Any

from converters.mapping.conversions.spec import NUMERIC, Doc, Jsonata, Proposed, ValueSpec
from converters.mapping.model import Conversion
from converters.mapping.schemaview import AvroType


class ToString(ValueSpec):
    conversion = Conversion.TO_STRING
    doc = Doc("enum/boolean/number → string", "`` CAST(`f` AS STRING) ``", "never")
    can_fail = False

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        return target.kind == "string" and source.kind in ("enum", "boolean", "string", *NUMERIC)

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        if target.kind == "string" and source.kind in ("enum", "boolean", *NUMERIC):
            return Proposed()
        return None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        return f"CAST({value} AS STRING)", None

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        sk = source.kind
        if sk in ("string", "enum"):
            return Jsonata("$v")
        if sk == "boolean":
            return Jsonata('($v ? "true" : "false")')
        if sk == "int":
            return Jsonata("$string($v)")
        return (
            f"JSONata writes {sk} as text its own way (digits past "
            "the 15th, exponents), not as Spark's CAST(... AS STRING) does"
        )

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        return to_string(value)


def to_string(value: Any) -> str:
    """A value as Spark's ``CAST(... AS STRING)`` writes it (also how a failed value is shown in
    a dead letter's reason)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    return str(value)
