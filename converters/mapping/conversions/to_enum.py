"""``to_enum``: a string or an enum's symbol as a v1 enum's symbol; a value that is not one of
v1's symbols fails."""

from __future__ import annotations

import random
from typing import Any

from converters.mapping.conversions.copy import copy_back
from converters.mapping.conversions.spec import (
    Doc,
    Failed,
    Jsonata,
    Proposed,
    ValueSpec,
    jsonata_string,
)
from converters.mapping.model import Conversion
from converters.mapping.schemaview import AvroType
from converters.mapping.sqltext import string_literal


class ToEnum(ValueSpec):
    conversion = Conversion.TO_ENUM
    doc = Doc("string/enum → enum", "`` `f` ``", "the value is not a v1 symbol")
    can_fail = True

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        return target.kind == "enum" and source.kind in ("string", "enum")

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        if source.kind == target.kind == "enum":
            missing = sorted(set(source.symbols) - set(target.symbols))
            if missing:
                return Proposed(f"v2 symbols {missing} are not in v1: those records fail")
            return None
        if source.kind == "string" and target.kind == "enum":
            return Proposed("strings that are not v1 symbols fail")
        return None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        symbols = ", ".join(string_literal(x) for x in target.symbols)
        return value, f"{value} NOT IN ({symbols})"

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        symbols = ", ".join(jsonata_string(s) for s in target.symbols)
        return Jsonata("$v", f"$not($v in [{symbols}])")

    def invert(self, v1: AvroType, v2: AvroType) -> str | None:
        return copy_back(v1, v2) if v2.kind in ("enum", "string") else None

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        if value not in target.symbols:
            raise Failed
        return value

    def sample(self, rng: random.Random, target: AvroType) -> Any:
        return rng.choice(target.symbols) if target.symbols else None
