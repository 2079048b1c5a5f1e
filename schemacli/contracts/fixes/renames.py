"""What a rename must carry with it: the defaults that spell the renamed field's name.

A default value of a record type is a JSON object keyed by the record's field names (and so is
a default of a record inside an array, a map, a union or another record's default). Renaming a
field of that record without renaming the key leaves a default that no longer fits its type:
the schema does not parse. :func:`default_key_edits` gives the edits that rename the key
wherever a default stands for the record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from schemacli.contracts.avro.schema import (
    ArraySchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
    named_types,
)
from schemacli.contracts.fixes.edits import JsonEditor, TextEdit
from schemacli.contracts.jsontext.pointer import join_pointer

__all__ = ["default_key_edits"]


def default_key_edits(
    editor: JsonEditor, schema: Schema, record: RecordSchema, old: str, new: str
) -> list[TextEdit]:
    """Edits renaming the member ``old`` to ``new`` in every default value of ``schema`` that
    stands for ``record`` (its field ``old`` is being renamed ``new``)."""
    found: dict[str, None] = {}  # pointers, in order, each once
    for owner in named_types(schema):
        if not isinstance(owner, RecordSchema):
            continue
        for f in owner.fields:
            if f.has_default and editor.document.pointer_exists(f.pointer + "/default"):
                for pointer, value in _objects_of(
                    f.type, f.default, f.pointer + "/default", record
                ):
                    if old in value:
                        found.setdefault(pointer)
    return [editor.rename_key(pointer, old, new) for pointer in found]


def _objects_of(
    schema: Schema, value: Any, pointer: str, record: RecordSchema
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, object) of the JSON objects inside the default ``value`` (of type ``schema``,
    at ``pointer``) that are values of ``record``."""
    if isinstance(schema, UnionSchema):
        for branch in schema.types:  # the branch the value is of: the shapes that fit it
            yield from _objects_of(branch, value, pointer, record)
        return
    if isinstance(schema, RecordSchema) and isinstance(value, dict):
        if schema is record:
            yield pointer, value
        for f in schema.fields:
            if f.name in value:
                yield from _objects_of(f.type, value[f.name], join_pointer(pointer, f.name), record)
    elif isinstance(schema, ArraySchema) and isinstance(value, list):
        for i, item in enumerate(value):
            yield from _objects_of(schema.items, item, join_pointer(pointer, str(i)), record)
    elif isinstance(schema, MapSchema) and isinstance(value, dict):
        for key, item in value.items():
            yield from _objects_of(schema.values, item, join_pointer(pointer, key), record)
