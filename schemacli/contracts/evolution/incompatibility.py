"""Java's incompatibilities, and how each becomes a finding: the records the compatibility
checker (``compat``) produces as it walks, and their words (a readable place, the values
involved, the catalogue's message and hint) with the JSON pointer Java reports."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from schemacli.contracts.avro.schema import (
    EnumSchema,
    Field,
    FixedSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext.pointer import escape_token
from schemacli.errors import Location
from schemacli.kinds import Kind

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

TYPE_MISMATCH = Kind.TYPE_MISMATCH
NAME_MISMATCH = Kind.NAME_MISMATCH
FIXED_SIZE_MISMATCH = Kind.FIXED_SIZE_MISMATCH
MISSING_ENUM_SYMBOLS = Kind.MISSING_ENUM_SYMBOLS
READER_FIELD_MISSING_DEFAULT_VALUE = Kind.READER_FIELD_MISSING_DEFAULT_VALUE
AMBIGUOUS_FIELD_MATCH = Kind.AMBIGUOUS_FIELD_MATCH

# The location while the checker walks: Java's tokens ("" for the root, "fields", "3", "type").
JavaPath = list[str]
# An incompatibility's detail: the writer's symbols the reader lacks (MISSING_ENUM_SYMBOLS), the
# reader field with no default (READER_FIELD_MISSING_DEFAULT_VALUE), the writer branch no reader
# branch reads (MISSING_UNION_BRANCH), None for the others.
Detail = list[str] | Field | Schema | None


class Incompatibility:
    """Java's Incompatibility: kind, the reader and writer fragments, details and location."""

    __slots__ = ("kind", "reader", "writer", "detail", "location")

    def __init__(
        self, kind: Kind, reader: Schema, writer: Schema, detail: Detail, location: JavaPath
    ) -> None:
        self.kind = kind
        self.reader = reader
        self.writer = writer
        self.detail = detail
        self.location = tuple(location)

    @property
    def pointer(self) -> str:
        # Java's Incompatibility.getLocation: the root token is dropped, "/" always leads.
        return "/" + "/".join(escape_token(t) for t in self.location[1:])


class Ambiguous(Exception):
    """A reader field whose name and aliases match several writer fields: Java throws."""

    def __init__(self, field: Field, matches: list[str], location: JavaPath) -> None:
        super().__init__(field.name)
        self.field = field
        self.matches = matches
        self.location = tuple(location)


def _where(root: Schema, location: tuple[str, ...]) -> str:
    """A readable place for a location: the dotted field path in the reader, when it walks."""
    node: Any = root
    path: list[str] = []
    tokens = list(location[1:])
    i = 0
    try:
        while i < len(tokens):
            token = tokens[i]
            if token == "fields" and isinstance(node, RecordSchema):
                field = node.fields[int(tokens[i + 1])]
                path.append(field.name)
                if i + 2 < len(tokens) and tokens[i + 2] == "type":
                    node = field.type
                    i += 3
                    continue
                break
            if token == "items":
                node = node.items
                path.append("[]")
            elif token == "values":
                node = node.values
                path.append("{}")
            elif token.isdigit() and isinstance(node, UnionSchema):
                # In a union-vs-union check the last token is the *writer's* branch, which the
                # reader's union may not have: the place is the union itself (the field).
                if int(token) >= len(node.types):
                    break
                node = node.types[int(token)]
            i += 1
    except (IndexError, AttributeError, ValueError):
        path = []
    text = ".".join(path).replace(".[]", "[]").replace(".{}", "{}")
    root_name = root.fullname if isinstance(root, NamedSchema) else root.type
    if text:
        return f"Field '{text}'"
    return f"At the top ({root_name})"


def type_name(schema: Schema) -> str:
    """A type as findings name it: ``record com.x.Ride``, ``[null, string]``, ``int``."""
    if isinstance(schema, NamedSchema):
        return f"{schema.type} {schema.fullname}"
    if isinstance(schema, UnionSchema):
        return "[" + ", ".join(type_name(t) for t in schema.types) + "]"
    return schema.type


def finding(inc: Incompatibility, root: Schema) -> Finding:
    """Java's incompatibility as a finding, placed by its JSON pointer in ``root`` (the reader)."""
    kind = inc.kind
    reader, writer = inc.reader, inc.writer
    name = getattr(reader, "fullname", reader.type)
    values: dict[str, object] = {"name": name, "extra": ""}
    # The kind says which Schema subclasses the pair are and what the detail is (Detail): the
    # casts only tell mypy so.
    old: object
    new: object
    if kind == TYPE_MISMATCH:
        old, new = type_name(writer), type_name(reader)
    elif kind == NAME_MISMATCH:
        old, new = cast(NamedSchema, writer).fullname, cast(NamedSchema, reader).fullname
        values["extra"] = reader.type
    elif kind == FIXED_SIZE_MISMATCH:
        old, new = cast(FixedSchema, writer).size, cast(FixedSchema, reader).size
    elif kind == MISSING_ENUM_SYMBOLS:
        missing = cast(list[str], inc.detail)
        old, new = list(missing), list(cast(EnumSchema, reader).symbols)
        values["extra"] = ", ".join(missing)
    elif kind == READER_FIELD_MISSING_DEFAULT_VALUE:
        old, new = None, cast(Field, inc.detail).name
        values["name"] = cast(RecordSchema, writer).fullname
    else:  # MISSING_UNION_BRANCH: detail is the writer's branch (or the writer itself)
        old, new = type_name(cast(Schema, inc.detail)), type_name(reader)
    values.update(where=_where(root, inc.location), reader=new, writer=old)
    return _make_finding(
        kind=kind,
        message=kind.message(**values),
        location=_make_location(pointer=inc.pointer),
        hint=kind.hint_for(**values),
        old=old,
        new=new,
    )


_T = TypeVar("_T", bound="DataclassInstance")


def _fast_constructor(cls: type[_T]) -> Callable[..., _T]:
    """``cls(**values)`` for a frozen dataclass, filling the instance dict in one step.

    The generated ``__init__`` of a frozen dataclass sets each field with ``object.__setattr__``;
    an incompatible pair builds a Finding and a Location per incompatibility, which made findings
    a third of a check. Falls back to ``cls`` itself when the class needs its ``__init__``
    (``__post_init__``, slots, default factories).
    """
    if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
        return cls
    defaults: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if item.default_factory is not dataclasses.MISSING:
            return cls
        if item.default is not dataclasses.MISSING:
            defaults[item.name] = item.default
    new = object.__new__
    set_attr = object.__setattr__

    def make(**values: object) -> _T:
        instance = new(cls)
        set_attr(instance, "__dict__", {**defaults, **values})
        return instance

    return make


_make_finding = _fast_constructor(Finding)
_make_location = _fast_constructor(Location)


def ambiguous_finding(ambiguous: Ambiguous, root: Schema) -> Finding:
    """A reader field that matches several writer fields (where Java throws) as a finding."""
    location = ambiguous.location
    pointer = "/" + "/".join(escape_token(t) for t in location[1:])
    values = {
        "where": _where(root, location),
        "reader": ambiguous.field.name,
        "writer": ambiguous.matches,
        "extra": ", ".join(ambiguous.matches),
        "name": "",
    }
    return Finding(
        kind=AMBIGUOUS_FIELD_MATCH,
        message=AMBIGUOUS_FIELD_MATCH.message(**values),
        location=Location(pointer=pointer),
        hint=AMBIGUOUS_FIELD_MATCH.hint,
        old=ambiguous.matches,
        new=ambiguous.field.name,
    )
