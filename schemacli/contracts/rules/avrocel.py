"""How Confluent's executors present an Avro record to CEL: the one owner of that fact.

Read in confluent-kafka 2.16's ``rules/cel/cel_executor.py`` (``_value_to_cel``) over what its
``AvroDeserializer`` hands over (fastavro's ``schemaless_reader`` with the writer schema): a
record is a map from field names to values; ``["null", T]`` is null or the bare T; other
unions the bare value of the branch; an enum its symbol (string); ``int``/``long`` an int;
``float``/``double`` a double; ``bytes``/``fixed`` bytes; ``date`` an int (days since
1970-01-01); ``timestamp-*`` and ``local-timestamp-*`` a timestamp; ``uuid`` a string;
``array`` a list; ``map`` a map with string keys. ``decimal`` and ``time-millis`` /
``time-micros`` reach CEL as Python objects no CEL operator accepts (the executor's own comment:
"unsupported"): the checker reports a rule that reads one.

``record_type`` gives the checker those types; ``to_cel`` turns a decoded record into the
values our evaluator runs on.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from typing import Any

from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.rules.cel.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    CelType,
    FieldT,
    ListT,
    MapT,
    RecordT,
)

_PRIMITIVE: dict[str, CelType] = {
    "null": NULL,
    "boolean": BOOL,
    "int": INT,
    "long": INT,
    "float": DOUBLE,
    "double": DOUBLE,
    "bytes": BYTES,
    "string": STRING,
}
_UNSUPPORTED = {
    "decimal": "a decimal reaches CEL as a Python Decimal (Java: a BigDecimal), which no CEL "
    "operator accepts: every comparison with it fails",
    "time-millis": "a time-millis reaches CEL as a Python time of day, which no CEL operator "
    "accepts",
    "time-micros": "a time-micros reaches CEL as a Python time of day, which no CEL operator "
    "accepts",
}


def avro_text(schema: Schema) -> str:
    """A short text of an Avro type, for messages: ``long``, ``["null", "string"]``,
    ``record com.acme.Pickup``, ``long (timestamp-millis)``."""
    if isinstance(schema, UnionSchema):
        return "[" + ", ".join(avro_text(t) for t in schema.types) + "]"
    if isinstance(schema, RecordSchema | EnumSchema | FixedSchema):
        return f"{schema.type} {schema.fullname}"
    if isinstance(schema, ArraySchema):
        return f"array<{avro_text(schema.items)}>"
    if isinstance(schema, MapSchema):
        return f"map<{avro_text(schema.values)}>"
    logical = schema.logical_type
    return f"{schema.type} ({logical})" if logical else schema.type


def cel_type(schema: Schema) -> tuple[CelType, bool, str | None]:
    """(CEL type, nullable, why it is unsupported) of a value of ``schema``."""
    if isinstance(schema, UnionSchema):
        branches = [t for t in schema.types if t.type != "null"]
        nullable = len(branches) < len(schema.types)
        if len(branches) == 1:
            inner, _, note = cel_type(branches[0])
            return inner, nullable, note
        if not branches:
            return NULL, True, None
        types = {cel_type(b)[0] for b in branches}
        return (types.pop() if len(types) == 1 else DYN), nullable, None
    logical = schema.logical_type
    if logical in _UNSUPPORTED and schema.type in ("bytes", "fixed", "int", "long"):
        return DYN, False, _UNSUPPORTED[logical]
    if logical == "date" and schema.type == "int":
        return INT, False, None
    if logical and logical.endswith(("timestamp-millis", "timestamp-micros")):
        if schema.type == "long":
            return TIMESTAMP, False, None
    if isinstance(schema, RecordSchema):
        return record_type(schema), False, None
    if isinstance(schema, EnumSchema):
        return STRING, False, None
    if isinstance(schema, FixedSchema):
        return BYTES, False, None
    if isinstance(schema, ArraySchema):
        return ListT(cel_type(schema.items)[0]), False, None
    if isinstance(schema, MapSchema):
        return MapT(STRING, cel_type(schema.values)[0]), False, None
    return _PRIMITIVE.get(schema.type, DYN), False, None


def record_type(schema: RecordSchema) -> RecordT:
    """The CEL view of an Avro record (its fields built when first asked: recursion is fine)."""

    def build() -> Mapping[str, FieldT]:
        out = {}
        for f in schema.fields:
            t, nullable, note = cel_type(f.type)
            out[f.name] = FieldT(f.name, t, nullable, avro_text(f.type), f.pointer, note)
        return out

    return RecordT(schema.fullname, build)


# A date is an int of days since the epoch: the executor's DAYS_SHIFT.
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


def to_cel(value: Any) -> Any:
    """A decoded Avro value (fastavro's Python objects) as the executors hand it to CEL, in our
    evaluator's values: dicts and lists all the way down, a date as days, a UUID as its
    text, a naive datetime (a local-timestamp) read as UTC; a Decimal or a time of day stays
    as it is (no CEL operator takes it)."""
    if isinstance(value, dict):
        return {str(k): to_cel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_cel(v) for v in value]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return to_cel(value[1])  # fastavro's (branch name, value) union notation
    if isinstance(value, bool | int | float | str | bytes) or value is None:
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return value.toordinal() - _EPOCH_ORDINAL
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def from_cel(value: Any) -> Any:
    """A CEL value back into what fastavro writes (a TRANSFORM's result): dicts and lists as
    they are, a timestamp as an aware datetime."""
    if isinstance(value, dict):
        return {k: from_cel(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [from_cel(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value
