"""The small view of an Avro schema the converter needs: fields by path, types, defaults, aliases.

A projection of the one Avro model: ``view`` parses the schema JSON as Java's Schema.Parser does
(``schemacli.contracts.avro.parse``: names, namespaces and forward references resolved there) and
turns the model's nodes into :class:`AvroType` / :class:`AvroField`, so the planner can ask
"what is the type at ``/fields/3``" in the converter's own vocabulary. ``AvroType.json`` is the
type as written (the JSON at the node's pointer), for messages and for fastavro.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemacli.contracts.avro import facts
from schemacli.contracts.avro.parse import parse_schema
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
from schemacli.contracts.jsontext.pointer import value_at
from schemacli.errors import InputError, Location

# Avro type -> Spark SQL type name (what from_avro produces and to_avro expects).
SPARK_TYPES = {avro: facts.spark_sql_name(spark) for avro, spark in facts.SPARK_TYPES.items()}


@dataclass(frozen=True)
class AvroType:
    """One Avro type, references resolved. ``kind`` is a primitive name or record/enum/array/map/
    fixed/union. ``json`` is the type as written (for messages and for fastavro)."""

    kind: str
    json: Any
    name: str | None = None
    symbols: tuple[str, ...] = ()
    fields: tuple[AvroField, ...] = ()
    branches: tuple[AvroType, ...] = ()
    items: AvroType | None = None
    logical: str | None = None

    @property
    def nullable(self) -> bool:
        return self.kind == "null" or (
            self.kind == "union" and any(b.kind == "null" for b in self.branches)
        )

    def non_null(self) -> AvroType:
        """The type without its null branch: ``["null", T]`` -> ``T``; other types unchanged."""
        if self.kind != "union":
            return self
        rest = tuple(b for b in self.branches if b.kind != "null")
        if len(rest) == 1:
            return rest[0]
        return AvroType(kind="union", json=[b.json for b in rest], branches=rest)

    @property
    def element(self) -> AvroType:
        """An array's items or a map's values. Raises ValueError for any other kind."""
        if self.items is None:
            raise ValueError(f"{self.describe()} has no items or values type")
        return self.items

    def describe(self) -> str:
        """Short human form: ``string``, ``["null","string"]``, ``record TaxiRide``, ``enum
        Color``."""
        if self.kind == "union":
            return "[" + ", ".join(b.describe() for b in self.branches) + "]"
        if self.kind in ("record", "enum", "fixed"):
            return f"{self.kind} {self.name}"
        if self.kind == "array":
            return f"array<{self.items.describe() if self.items else '?'}>"
        if self.kind == "map":
            return f"map<{self.items.describe() if self.items else '?'}>"
        return self.kind + (f" ({self.logical})" if self.logical else "")


@dataclass(frozen=True)
class AvroField:
    name: str
    type: AvroType
    pointer: str
    aliases: tuple[str, ...] = ()
    has_default: bool = False
    default: Any = None
    doc: str | None = field(default=None, compare=False)


def view(schema_json: Any) -> AvroType:
    """The view of Avro schema JSON: parsed (a schema Java refuses raises its SchemaParseError,
    an InputError), then projected; named references resolved, forward ones too. A recursive
    record is an InputError naming where it refers to itself."""
    return _Projection(schema_json).type_of(parse_schema(schema_json), "")


class _Projection:
    """The model's nodes as AvroTypes, each named type once (a reference to it is the same
    AvroType); ``at`` is where a node is used, for the error about a recursive record."""

    def __init__(self, schema_json: Any) -> None:
        self.json = schema_json
        self.named: dict[int, AvroType] = {}
        self.defining: set[int] = set()  # records whose fields are being projected

    def type_of(self, node: Schema, at: str) -> AvroType:
        js = value_at(self.json, node.pointer)
        if isinstance(node, NamedSchema):
            done = self.named.get(id(node))
            if done is not None:
                return done
            if id(node) in self.defining:
                raise InputError(
                    f"recursive type {node.fullname!r}: it refers to itself at {at}",
                    location=Location(pointer=at),
                    hint="The planner and the converter job do not support recursive "
                    "records (Spark's from_avro refuses them by default); convert such "
                    "topics outside Spark.",
                )
        if isinstance(node, UnionSchema):
            branches = tuple(
                self.type_of(b, f"{node.pointer}/{i}") for i, b in enumerate(node.types)
            )
            return AvroType(kind="union", json=js, branches=branches)
        if isinstance(node, ArraySchema):
            items = self.type_of(node.items, node.pointer + "/items")
            return AvroType(kind="array", json=js, items=items)
        if isinstance(node, MapSchema):
            values = self.type_of(node.values, node.pointer + "/values")
            return AvroType(kind="map", json=js, items=values)
        if isinstance(node, EnumSchema):
            made = AvroType(kind="enum", json=js, name=node.fullname, symbols=node.symbols)
        elif isinstance(node, FixedSchema):
            made = AvroType(kind="fixed", json=js, name=node.fullname, logical=node.logical_type)
        elif isinstance(node, RecordSchema):
            made = self._record(node, js)
        else:
            return AvroType(kind=node.type, json=js, logical=node.logical_type)
        self.named[id(node)] = made
        return made

    def _record(self, node: RecordSchema, js: Any) -> AvroType:
        self.defining.add(id(node))
        fields = tuple(
            AvroField(
                name=f.name,
                type=self.type_of(f.type, f.pointer + "/type"),
                pointer=f.pointer,
                aliases=f.aliases,
                has_default=f.has_default,
                default=f.default,
                doc=f.doc,
            )
            for f in node.fields
        )
        self.defining.discard(id(node))
        return AvroType(kind="record", json=js, name=node.fullname, fields=fields)


def same_type(a: AvroType, b: AvroType) -> bool:
    """Structural equality good enough to copy a value unchanged (names matter for named types)."""
    if a.kind != b.kind:
        return False
    if a.kind == "union":
        return len(a.branches) == len(b.branches) and all(
            same_type(x, y) for x, y in zip(a.branches, b.branches, strict=True)
        )
    if a.kind == "enum":
        return a.symbols == b.symbols
    if a.kind == "fixed":
        return bool(a.json.get("size") == b.json.get("size"))
    if a.kind in ("array", "map"):
        return a.items is not None and b.items is not None and same_type(a.items, b.items)
    if a.kind == "record":
        return len(a.fields) == len(b.fields) and all(
            x.name == y.name and same_type(x.type, y.type)
            for x, y in zip(a.fields, b.fields, strict=True)
        )
    return a.logical == b.logical
