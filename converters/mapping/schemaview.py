"""The small view of an Avro schema the converter needs: fields by path, types, defaults, aliases.

Schemas are validated by ``schemacli.contracts.avro.schema.parse_schema`` when it is available; this
module only walks already-valid schema JSON, resolving named-type references, so the planner can
ask "what is the type at ``/fields/3``" without depending on the parser's object model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemacli.errors import InputError, Location

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")

# Avro type -> Spark SQL type name (what from_avro produces and to_avro expects).
SPARK_TYPES = {
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "bytes": "BINARY",
    "string": "STRING",
    "enum": "STRING",
    "fixed": "BINARY",
}


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
    """Walk valid Avro schema JSON into an :class:`AvroType` tree (named references resolved,
    forward references too: Java accepts a name used before the type is defined)."""
    walker = _Walker()
    walker.collect(schema_json, "", None)
    return walker.walk(schema_json, "", None)


class _Walker:
    def __init__(self) -> None:
        self.named: dict[str, AvroType] = {}
        self.defining: set[str] = set()  # records whose fields are being walked
        # every named type's definition: (its JSON, pointer, enclosing namespace)
        self.definitions: dict[str, tuple[Any, str, str | None]] = {}

    def _own_namespace(self, js: dict[str, Any], namespace: str | None) -> str | None:
        name = js["name"]
        return js.get("namespace", namespace) if "." not in name else name.rsplit(".", 1)[0]

    def collect(self, js: Any, pointer: str, namespace: str | None) -> None:
        """Note where each named type is defined, so a reference that comes first resolves."""
        if isinstance(js, list):
            for i, branch in enumerate(js):
                self.collect(branch, f"{pointer}/{i}", namespace)
            return
        if not isinstance(js, dict):
            return
        kind = js.get("type")
        if kind in ("record", "error", "enum", "fixed"):
            ns = self._own_namespace(js, namespace)
            self.definitions.setdefault(self._full(js["name"], ns), (js, pointer, namespace))
            for i, f in enumerate(js.get("fields") or ()):
                self.collect(f.get("type"), f"{pointer}/fields/{i}/type", ns)
        elif kind == "array":
            self.collect(js.get("items"), f"{pointer}/items", namespace)
        elif kind == "map":
            self.collect(js.get("values"), f"{pointer}/values", namespace)
        elif isinstance(kind, (dict, list)):
            self.collect(kind, pointer, namespace)

    def _full(self, name: str, namespace: str | None) -> str:
        if "." in name or not namespace:
            return name
        return f"{namespace}.{name}"

    def walk(self, js: Any, pointer: str, namespace: str | None) -> AvroType:
        if isinstance(js, str):
            if js in PRIMITIVES:
                return AvroType(kind=js, json=js)
            full = self._full(js, namespace)
            for name in (full, js):
                if name in self.defining:
                    raise InputError(
                        f"recursive type {name!r}: it refers to itself at {pointer}",
                        location=Location(pointer=pointer),
                        hint="The planner and the converter job do not support recursive "
                        "records (Spark's from_avro refuses them by default); convert such "
                        "topics outside Spark.",
                    )
            found = self.named.get(full) or self.named.get(js)
            if found is None:
                definition = self.definitions.get(full) or self.definitions.get(js)
                if definition is not None:  # defined further down: walk it now
                    found = self.walk(*definition)
            if found is None:
                # parse_schema would have refused this; say so plainly rather than guess.
                raise ValueError(f"unknown named type {js!r} at {pointer or '/'}")
            return found
        if isinstance(js, list):
            branches = tuple(self.walk(b, f"{pointer}/{i}", namespace) for i, b in enumerate(js))
            return AvroType(kind="union", json=js, branches=branches)
        kind = js["type"]
        logical = js.get("logicalType")
        if kind in PRIMITIVES:
            return AvroType(kind=kind, json=js, logical=logical)
        if kind in ("record", "error", "enum", "fixed"):
            ns = self._own_namespace(js, namespace)
            full = self._full(js["name"], ns)
            if full in self.named:  # walked already, where a reference came first
                return self.named[full]
            if kind == "enum":
                t = AvroType(kind="enum", json=js, name=full, symbols=tuple(js["symbols"]))
                self.named[full] = t
                return t
            if kind == "fixed":
                t = AvroType(kind="fixed", json=js, name=full, logical=logical)
                self.named[full] = t
                return t
            fields = []
            self.defining.add(full)
            for i, f in enumerate(js["fields"]):
                fp = f"{pointer}/fields/{i}"
                fields.append(
                    AvroField(
                        name=f["name"],
                        type=self.walk(f["type"], f"{fp}/type", ns),
                        pointer=fp,
                        aliases=tuple(f.get("aliases", ())),
                        has_default="default" in f,
                        default=f.get("default"),
                        doc=f.get("doc"),
                    )
                )
            self.defining.discard(full)
            t = AvroType(kind="record", json=js, name=full, fields=tuple(fields))
            self.named[full] = t
            return t
        if kind == "array":
            return AvroType(
                kind="array", json=js, items=self.walk(js["items"], f"{pointer}/items", namespace)
            )
        if kind == "map":
            return AvroType(
                kind="map", json=js, items=self.walk(js["values"], f"{pointer}/values", namespace)
            )
        if isinstance(kind, (dict, list)) or kind not in PRIMITIVES:
            return self.walk(kind, pointer, namespace)
        raise ValueError(f"unsupported type {kind!r} at {pointer or '/'}")


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
