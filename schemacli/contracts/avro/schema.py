"""The Avro schema model: one immutable node class per kind of schema, and the named types known.

The parser (``schemacli.contracts.avro.parse``) builds these nodes the way Apache Avro Java 1.12's
``Schema.Parser`` does; default values are checked by ``schemacli.contracts.avro.defaults``; the
Parsing Canonical Form and fingerprints are printed by ``schemacli.contracts.avro.canonical``.

Every node is an immutable object that keeps the JSON pointer where it was defined. A reference
to a named type resolves to the defining object itself, so recursive schemas are cyclic graphs
(compare nodes by identity, as the compatibility engine does).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from schemacli.frozen import frozen_dataclass

# The props of a node or field that has none (shared: it is read-only).
EMPTY_PROPS: Mapping[str, Any] = MappingProxyType({})

# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


@frozen_dataclass(eq=False, kw_only=True)
class Schema:
    """Any Avro schema node. ``type`` is Avro's type name (``record`` for ``error`` too).

    ``props`` holds every other attribute (``logicalType``, ``precision``, custom ones), as Java
    keeps them. Nodes compare by identity; use :func:`canonical_form` for structural equality.
    """

    type: str
    pointer: str = ""
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY_PROPS)  # see below

    @property
    def logical_type(self) -> str | None:
        value = self.props.get("logicalType")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str:
        """What Java's ``getName()`` says: the simple name of a named type, else the type."""
        return self.type

    @property
    def fullname(self) -> str:
        """What Java's ``getFullName()`` says (union duplicate detection, messages)."""
        return self.type


@frozen_dataclass(eq=False, kw_only=True)
class PrimitiveSchema(Schema):
    """null, boolean, int, long, float, double, bytes or string (logical type in ``props``)."""


@frozen_dataclass(eq=False, kw_only=True)
class NamedSchema(Schema):
    """record, enum or fixed. ``aliases`` as Java's getAliases() spells them (see named_aliases)."""

    simple_name: str
    namespace: str | None = None
    aliases: tuple[str, ...] = ()
    doc: str | None = None

    @property
    def name(self) -> str:
        return self.simple_name

    @property
    def fullname(self) -> str:
        return f"{self.namespace}.{self.simple_name}" if self.namespace else self.simple_name


@frozen_dataclass(eq=False, kw_only=True)
class Field:
    """A record field. ``has_default`` tells a JSON ``null`` default from no default at all."""

    name: str
    type: Schema
    position: int
    pointer: str
    default: Any = None
    has_default: bool = False
    aliases: tuple[str, ...] = ()
    order: str = "ascending"
    doc: str | None = None
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY_PROPS)  # see below


@frozen_dataclass(eq=False, kw_only=True)
class RecordSchema(NamedSchema):
    """A record (or an ``error``, which Avro treats as a record)."""

    fields: tuple[Field, ...] = ()
    is_error: bool = False
    # Built once the fields are known; maps field name -> Field.
    field_map: Mapping[str, Field] = field(default_factory=lambda: EMPTY_PROPS)


@frozen_dataclass(eq=False, kw_only=True)
class EnumSchema(NamedSchema):
    """An enum: its symbols and the default a reader falls back to."""

    symbols: tuple[str, ...] = ()
    default: str | None = None


@frozen_dataclass(eq=False, kw_only=True)
class FixedSchema(NamedSchema):
    """A fixed: its size in bytes."""

    size: int = 0


@frozen_dataclass(eq=False, kw_only=True)
class ArraySchema(Schema):
    """An array: the schema of its items."""

    items: Schema


@frozen_dataclass(eq=False, kw_only=True)
class MapSchema(Schema):
    """A map (string keys): the schema of its values."""

    values: Schema


@frozen_dataclass(eq=False, kw_only=True)
class UnionSchema(Schema):
    """A union: its branches, in order."""

    types: tuple[Schema, ...] = ()


# The parser builds a node by filling its instance dict in one step (object.__new__, then
# object.__setattr__ of __dict__): a frozen dataclass __init__ costs ~8x more, and a
# 2,000-field schema must parse in a few ms. Attributes left out fall back to these
# class-level defaults (and to the dataclass defaults above).
Schema.props = EMPTY_PROPS
Field.props = EMPTY_PROPS
RecordSchema.field_map = EMPTY_PROPS

_new = object.__new__
_set = object.__setattr__


class _PrimitiveFieldType:
    """``Field.type`` of a field whose type is a bare primitive name, built on first access.

    The parser stores just the name (``_ptype``) for such fields: most fields of big schemas
    are primitives, and a node per field that the compatibility check never needs (it compares
    the names) was a fifth of a large parse. The node, once built, is kept in the field (so the
    same node is returned every time) and is exactly what the parser would have built.
    """

    def __get__(
        self, field: Field | None, owner: type[Field] | None = None
    ) -> Schema | _PrimitiveFieldType:
        if field is None:
            return self
        attrs = field.__dict__
        node: Schema | None = attrs.get("type")
        if node is None:
            try:
                name = attrs["_ptype"]
            except KeyError:
                raise AttributeError("type") from None
            node = _new(PrimitiveSchema)
            _set(node, "__dict__", {"type": name, "pointer": attrs["pointer"] + "/type"})
            node = attrs.setdefault("type", node)
        return node


Field.type = _PrimitiveFieldType()  # type: ignore[assignment]


# --------------------------------------------------------------------------------------------
# Names known from other files
# --------------------------------------------------------------------------------------------


@frozen_dataclass
class Names:
    """Named types already known (e.g. defined in other files), by full name.

    Immutable: ``names.including(schema)`` returns a new ``Names`` that also knows every named
    type defined inside ``schema``.
    """

    types: Mapping[str, NamedSchema] = field(default_factory=dict)

    def get(self, fullname: str) -> NamedSchema | None:
        return self.types.get(fullname)

    def __contains__(self, fullname: object) -> bool:
        return fullname in self.types

    def __len__(self) -> int:
        return len(self.types)

    def including(self, schema: Schema) -> Names:
        merged = dict(self.types)
        for named in named_types(schema):
            merged.setdefault(named.fullname, named)
        return Names(merged)


def named_types(schema: Schema) -> Iterator[NamedSchema]:
    """Every named type reachable from ``schema``, each once, in definition order."""
    seen: set[int] = set()
    stack = [schema]
    out: list[NamedSchema] = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, NamedSchema):
            out.append(node)
        stack.extend(reversed(_children(node)))
    return iter(out)


def _children(node: Schema) -> list[Schema]:
    if isinstance(node, RecordSchema):
        return [f.type for f in node.fields]
    if isinstance(node, ArraySchema):
        return [node.items]
    if isinstance(node, MapSchema):
        return [node.values]
    if isinstance(node, UnionSchema):
        return list(node.types)
    return []
