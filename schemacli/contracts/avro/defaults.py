"""Default values: whether a field's (or any) default fits its schema, by Java's rules; and a
default to offer for a type that has none (:func:`default_for`, the value lint's and the
suggested fixes add).

Apache Avro Java 1.12's ``Schema.Parser`` validates every field default while it parses (its
``isValidDefault``); the parser (``schemacli.contracts.avro.parse``) calls :func:`check_default` for
each field that has one, and :func:`check_enum_default` for an enum's default. Confirmed against
the jar (``tests/oracle``) and documented in ``docs/compatibility.md``:

* a default is valid for a union when it fits *any* branch (not only the first);
* a field default for an enum only needs to be a string (it need not be a symbol);
* ``"NaN"``/``"Infinity"``/numeric strings are accepted as defaults of float/double fields,
  which Java turns into numbers first.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Set
from typing import Any

from schemacli.contracts.avro.facts import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.errors import Location, SchemaParseError
from schemacli.kinds import Kind

# SchemaParseError.kind of a refused default (the finding kind `validate` shows).
INVALID_DEFAULT = Kind.INVALID_DEFAULT

_NO_RECORDS: frozenset[int] = frozenset()


def check_default(
    field_name: str, ftype: Schema, default: Any, pointer: str, building: Set[int]
) -> Any:
    """The default of field ``field_name`` as the parsed schema keeps it, or raise.

    ``default`` is the JSON value at ``pointer``; ``building`` holds the ids of the records whose
    fields are still being parsed (Java refuses a default that reaches into one). A textual
    default of a float/double field comes back as the number Java reads from it. Raises
    :class:`SchemaParseError` (kind ``INVALID_DEFAULT``) with the pointer and a hint.
    """
    t = ftype.type
    # The common cases first (Java's rules, as in _valid_value).
    if t == "union":
        first = ftype.types[0].type if ftype.types else None  # type: ignore[attr-defined]
        if default is None and first == "null":
            return default
    elif t == "string" or t == "bytes":
        if default.__class__ is str:
            return default
    elif t == "int":
        if default.__class__ is int and INT_MIN <= default <= INT_MAX:
            return default
    elif t == "long":
        if default.__class__ is int and LONG_MIN <= default <= LONG_MAX:
            return default
    elif t == "boolean":
        if default.__class__ is bool:
            return default
    elif t == "null":
        if default is None:
            return default
    elif t == "float" or t == "double":
        if isinstance(default, str):
            # Java turns a textual default of a float/double field into a number first.
            number = _java_double(default)
            if number is None:
                raise _invalid(
                    f"Invalid default for field {field_name!r}: {json.dumps(default)} is not a "
                    "number",
                    pointer,
                    'Write the default as a JSON number, or "NaN", "Infinity", "-Infinity".',
                )
            return number
    try:
        problem = None if _valid_value(ftype, default, building) else ""
    except _FieldsNotSet as unfinished:
        problem = f" (record {unfinished.args[0]} is still being defined)"
    if problem is not None:
        raise _invalid(
            f"Invalid default for field {field_name!r}: {_short(default)} is not "
            f"{_with_article(_describe(ftype))}{problem}",
            pointer,
            "Make the default a JSON value of the field's type (for a union: of one of "
            "its branches, best the first), or remove it.",
        )
    return default


def check_enum_default(default: Any, symbols: list[str], pointer: str) -> str | None:
    """An enum's default as the parsed schema keeps it: ``None`` unless it is a string.

    Java ignores a non-textual enum default, and refuses a textual one that is not among the
    enum's (already validated) ``symbols``: raises :class:`SchemaParseError` (kind
    ``INVALID_DEFAULT``) at ``pointer``.
    """
    if not isinstance(default, str):
        return None
    if default not in symbols:
        raise _invalid(
            f"The enum default {default!r} is not one of the symbols {symbols}",
            pointer,
            "Make the enum default one of the symbols, or remove it.",
        )
    return default


def is_valid_default(schema: Schema, value: Any) -> bool:
    """Whether ``value`` is a valid default for ``schema`` by Java's rules (any union branch)."""
    return _valid_value(schema, value)


def _invalid(message: str, pointer: str, hint: str) -> SchemaParseError:
    return SchemaParseError(
        message, location=Location(pointer=pointer), hint=hint, kind=INVALID_DEFAULT
    )


def _java_double(text: str) -> float | None:
    """Java's Double.valueOf, for the strings people write as float/double defaults."""
    s = text.strip()
    if s and s[-1] in "fFdD" and not s.lower().endswith("infinity"):
        s = s[:-1]
    if s in ("NaN", "+NaN", "-NaN"):
        return math.nan
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", s):
        return None
    return float(s)


class _FieldsNotSet(Exception):
    """A default reached into a record whose fields are still being parsed."""


def _valid_value(schema: Schema, value: Any, building: Set[int] = _NO_RECORDS) -> bool:
    t = schema.type
    if t in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if t == "int":
        return type(value) is int and INT_MIN <= value <= INT_MAX
    if t == "long":
        return type(value) is int and LONG_MIN <= value <= LONG_MAX
    if t in ("float", "double"):
        return type(value) in (int, float)
    if t == "boolean":
        return type(value) is bool
    if t == "null":
        return value is None
    if t == "array":
        return isinstance(value, list) and all(
            _valid_value(schema.items, v, building)  # type: ignore[attr-defined]
            for v in value
        )
    if t == "map":
        return isinstance(value, dict) and all(
            _valid_value(schema.values, v, building)  # type: ignore[attr-defined]
            for v in value.values()
        )
    if t == "union":
        for branch in schema.types:  # type: ignore[attr-defined]
            if _valid_value(branch, value, building):
                return True
        return False
    if t == "record":
        if not isinstance(value, dict):
            return False
        if not isinstance(schema, RecordSchema):
            # The parser's stand-in for a reference defined later (parse._Placeholder): Java
            # checks against an unresolved stand-in, a record without fields.
            return True
        if id(schema) in building:
            # Java throws "Schema fields not set yet" here, ending the whole validation.
            raise _FieldsNotSet(schema.fullname)
        for fld in schema.fields:
            if fld.name in value:
                if not _valid_value(fld.type, value[fld.name], building):
                    return False
            elif not fld.has_default:
                return False
        return True
    return False


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _with_article(text: str) -> str:
    return ("an " if text[:1] in ("a", "e", "i", "o", "u") else "a ") + text


def _describe(schema: Schema) -> str:
    if isinstance(schema, UnionSchema):
        return "value of any branch of [" + ", ".join(_describe(t) for t in schema.types) + "]"
    if isinstance(schema, NamedSchema):
        return f"{schema.type} {schema.fullname}"
    if isinstance(schema, ArraySchema):
        return f"array of {_describe(schema.items)}"
    if isinstance(schema, MapSchema):
        return f"map of {_describe(schema.values)}"
    return schema.type


# --------------------------------------------------------------------------------------------
# A default to offer: the JSON that says "nothing" in a type
# --------------------------------------------------------------------------------------------

PRIMITIVE_ZEROS: dict[str, Any] = {
    "null": None,
    "boolean": False,
    "int": 0,
    "long": 0,
    "float": 0.0,
    "double": 0.0,
    "bytes": "",
    "string": "",
}


class NoDefault(Exception):
    """The type has no finite default value (a record that always contains itself, or an
    enum without symbols)."""


def default_for(schema: Schema, _building: frozenset[int] = frozenset()) -> Any:
    """A valid Avro default for ``schema``. Raises NoDefault when there is none."""
    if isinstance(schema, UnionSchema):
        if not schema.types:
            raise NoDefault("an empty union")
        return default_for(schema.types[0], _building)
    if isinstance(schema, RecordSchema):
        if id(schema) in _building:
            raise NoDefault(schema.fullname)
        inner = _building | {id(schema)}
        return {
            f.name: f.default if f.has_default else default_for(f.type, inner)
            for f in schema.fields
        }
    if isinstance(schema, EnumSchema):
        if not schema.symbols:
            raise NoDefault(schema.fullname)
        return schema.default if schema.default is not None else schema.symbols[0]
    if isinstance(schema, FixedSchema):
        return "\u0000" * schema.size
    if isinstance(schema, ArraySchema):
        return []
    if isinstance(schema, MapSchema):
        return {}
    return PRIMITIVE_ZEROS[schema.type]
