"""References to named types defined later in the same schema (Java reads them): a placeholder
stands in while the schema is read, then is replaced by the type it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from schemacli.contracts.avro.schema import (
    ArraySchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.errors import Location, SchemaParseError
from schemacli.kinds import Kind


class Placeholder(Schema):
    """A reference to a named type not defined yet; replaced once the whole schema is read.

    Java validates defaults against it as if it were a record without fields.
    """

    ref: str  # the full name referred to

    def __init__(self, ref: str, pointer: str) -> None:
        self.__dict__.update(type="record", pointer=pointer, ref=ref)

    @property
    def fullname(self) -> str:
        return self.ref


def resolve_placeholders(
    root: Schema,
    placeholders: list[Placeholder],
    lookup: Callable[[str], NamedSchema | None],
) -> None:
    """Replace each placeholder under ``root`` by the named type it refers to (``lookup``);
    refuse one that the whole schema still does not define."""
    if not placeholders:
        return
    for placeholder in placeholders:
        if lookup(placeholder.ref) is None:
            raise SchemaParseError(
                f"Undefined name: {placeholder.ref}",
                location=Location(pointer=placeholder.pointer),
                hint="Define the type (a record, enum or fixed with this name) in this schema or "
                "in a referenced one, or fix the spelling/namespace; names in another "
                "namespace need their full name.",
                kind=Kind.UNDEFINED_NAME,
            )
    _replace(root, lookup)


def _replace(root: Schema, lookup: Callable[[str], NamedSchema | None]) -> None:
    seen: set[int] = set()
    stack = [root]

    def fix(node: Schema) -> Schema:
        if isinstance(node, Placeholder):
            return cast(Schema, lookup(node.ref))
        return node

    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, RecordSchema):
            for fld in node.fields:
                ftype = fld.__dict__.get("type")
                if ftype is None:
                    continue  # a primitive not built yet (see _PrimitiveFieldType)
                if isinstance(ftype, Placeholder):
                    ftype = fix(ftype)
                    object.__setattr__(fld, "type", ftype)
                stack.append(ftype)
        elif isinstance(node, ArraySchema):
            object.__setattr__(node, "items", fix(node.items))
            stack.append(node.items)
        elif isinstance(node, MapSchema):
            object.__setattr__(node, "values", fix(node.values))
            stack.append(node.values)
        elif isinstance(node, UnionSchema):
            object.__setattr__(node, "types", tuple(fix(t) for t in node.types))
            stack.extend(node.types)
