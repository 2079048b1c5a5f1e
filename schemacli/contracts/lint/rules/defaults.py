"""Defaults other readers disagree about (``validate``'s warnings too): Java's parser accepts
them, but the specification or another common reader (fastavro 1.13, the ``avro`` package
1.12; tests/unit/test_validate_claims.py) does not, or reads them otherwise.
"""

from __future__ import annotations

from typing import Any

from schemacli.contracts.avro.defaults import is_valid_default
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run, describe, shown
from schemacli.kinds import Kind

UNION_DEFAULT_NOT_FIRST = Rule(
    Kind.UNION_DEFAULT_NOT_FIRST,
    "union-default-not-first",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="a union field's default is of its first branch",
    validate=True,
)
ENUM_DEFAULT_NOT_SYMBOL = Rule(
    Kind.ENUM_DEFAULT_NOT_SYMBOL,
    "enum-default-not-symbol",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="an enum field's default is one of its symbols",
    validate=True,
)
FIXED_DEFAULT_SIZE = Rule(
    Kind.FIXED_DEFAULT_SIZE,
    "fixed-default-size",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="a fixed field's default has the fixed's size",
    validate=True,
)
BYTES_DEFAULT_NOT_LATIN1 = Rule(
    Kind.BYTES_DEFAULT_NOT_LATIN1,
    "bytes-default-not-latin1",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="a bytes or fixed default has one character \\u0000-\\u00ff per byte",
    validate=True,
)


def _field(run: Run, fld: Field) -> None:
    if fld.has_default:
        _check(run, fld.type, fld.default, fld.pointer + "/default")


def _warn(run: Run, kind: Kind, message: str, pointer: str, hint: str, *, new: object) -> None:
    if run.on(kind):
        run.add(kind, run.loaded.location(pointer), message, hint, new=new)


def _check(run: Run, schema: Schema, value: Any, pointer: str) -> None:
    """Defaults Java's parser accepts but readers disagree about."""
    if isinstance(schema, UnionSchema):
        first = schema.types[0] if schema.types else None
        if first is not None and is_valid_default(first, value):
            _check(run, first, value, pointer)
            return
        for index, branch in enumerate(schema.types):
            if is_valid_default(branch, value):
                _warn(
                    run,
                    Kind.UNION_DEFAULT_NOT_FIRST,
                    f"the default {shown(value)} fits branch {index} ({describe(branch)}) of "
                    f"the union, not the first ({describe(first)}); the Avro specification "
                    "requires the first branch. Java 1.12 and fastavro accept it, but the "
                    "Python avro package fails when it has to use this default "
                    "(InvalidDefaultException)",
                    pointer,
                    f"move {describe(branch)} to the front of the union, or use a default of "
                    f"type {describe(first)} (e.g. null for an optional field)",
                    new=value,
                )
                _check(run, branch, value, pointer)
                return
        return
    if isinstance(schema, EnumSchema) and isinstance(value, str):
        if value not in schema.symbols:
            _warn(
                run,
                Kind.ENUM_DEFAULT_NOT_SYMBOL,
                f"the default {value!r} is not a symbol of enum {schema.fullname} "
                f"{list(schema.symbols)}; Java's parser accepts it, but Java (and so Spark) "
                'fails when it reads data without this field ("enum value is not in the enum '
                'symbol set"), while fastavro and the Python avro package return the unknown '
                "symbol",
                pointer,
                f"use one of the symbols: {', '.join(schema.symbols)}",
                new=value,
            )
        return
    if schema.type in ("bytes", "fixed") and isinstance(value, str):
        wide = next((ch for ch in value if ord(ch) > 0xFF), None)
        if wide is not None:
            _warn(
                run,
                Kind.BYTES_DEFAULT_NOT_LATIN1,
                f"the default contains {wide!r} (U+{ord(wide):04X}); a bytes/fixed default is a "
                "string of code points \\u0000-\\u00ff, one per byte. Readers disagree on "
                "anything above: Java turns it into '?', the Python avro package into its UTF-8 "
                "bytes, fastavro returns the text unchanged",
                pointer,
                "write each byte as one character \\u0000-\\u00ff (e.g. \\u00c4 for byte 0xC4)",
                new=value,
            )
            return
    if isinstance(schema, FixedSchema) and isinstance(value, str):
        size = len(value)
        if size != schema.size:
            _warn(
                run,
                Kind.FIXED_DEFAULT_SIZE,
                f"the default has {size} byte(s) but fixed {schema.fullname} has size "
                f"{schema.size}; readers disagree on what it yields (Java cuts or pads it to "
                f"{schema.size} bytes, fastavro and the Python avro package return all {size})",
                pointer,
                f"write exactly {schema.size} characters, each \\u0000-\\u00ff (one byte each)",
                new=value,
            )
        return
    if isinstance(schema, RecordSchema) and isinstance(value, dict):
        for fld in schema.fields:
            if fld.name in value:
                _check(run, fld.type, value[fld.name], join_pointer(pointer, fld.name))
    elif isinstance(schema, ArraySchema) and isinstance(value, list):
        for i, item in enumerate(value):
            _check(run, schema.items, item, join_pointer(pointer, i))
    elif isinstance(schema, MapSchema) and isinstance(value, dict):
        for key, item in value.items():
            _check(run, schema.values, item, join_pointer(pointer, key))


FAMILY = Family(
    (
        UNION_DEFAULT_NOT_FIRST,
        ENUM_DEFAULT_NOT_SYMBOL,
        FIXED_DEFAULT_SIZE,
        BYTES_DEFAULT_NOT_LATIN1,
    ),
    field=_field,
)
