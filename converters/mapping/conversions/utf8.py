"""``bytes_to_string`` and ``string_to_bytes``: UTF-8 decoded (invalid UTF-8 fails) and
encoded."""

from __future__ import annotations

from typing import Any

from converters.mapping.conversions.spec import (
    JSONATA_ENGINE,
    Doc,
    Failed,
    Jsonata,
    Proposed,
    ValueSpec,
)
from converters.mapping.model import Conversion
from converters.mapping.schemaview import AvroType

_NO_BYTES = f"{JSONATA_ENGINE} has no bytes values"


class BytesToString(ValueSpec):
    conversion = Conversion.BYTES_TO_STRING
    doc = Doc(
        "bytes/fixed → string", "`` CAST(`f` AS STRING) ``", "not valid UTF-8 (`is_valid_utf8`)"
    )
    can_fail = True

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        return source.kind in ("bytes", "fixed") and target.kind == "string"

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        return Proposed("invalid UTF-8 fails") if self.accepts(source, target) else None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        return f"CAST({value} AS STRING)", f"NOT is_valid_utf8(CAST({value} AS STRING))"

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        return _NO_BYTES

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise Failed from None


class StringToBytes(ValueSpec):
    conversion = Conversion.STRING_TO_BYTES
    doc = Doc("string → bytes", "`` CAST(`f` AS BINARY) ``", "never")
    can_fail = False

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        return source.kind == "string" and target.kind == "bytes"

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        return Proposed() if self.accepts(source, target) else None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        return f"CAST({value} AS BINARY)", None

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        return _NO_BYTES

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        return value.encode("utf-8")
