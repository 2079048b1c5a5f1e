"""A seeded generator of Avro schemas and schema pairs for the differential tests.

``pairs(seed, count)`` yields (a, b) JSON schemas: a random or realistic schema and a mutation of
it (promotions, added/removed/renamed fields with and without defaults and aliases, renamed or
re-namespaced named types, enum symbols and defaults, fixed sizes, unions widened and narrowed,
logical types, recursion, ...). The tests check each pair in both directions.
``broken_schemas(seed, count)`` yields schemas with one thing Java may refuse (bad names,
defaults, duplicates, sizes), for the parser's accept/refuse agreement.
Everything is plain JSON (dicts, lists, strings) and deterministic for a seed.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

PRIMITIVES = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
NUMERIC = ["int", "long", "float", "double"]
LOGICAL = [
    ("int", {"logicalType": "date"}),
    ("long", {"logicalType": "timestamp-millis"}),
    ("long", {"logicalType": "timestamp-micros"}),
    ("string", {"logicalType": "uuid"}),
    ("bytes", {"logicalType": "decimal", "precision": 10, "scale": 2}),
    ("bytes", {"logicalType": "decimal", "precision": 2, "scale": 5}),  # invalid: Java ignores
    ("int", {"logicalType": "time-millis"}),
]
FIELD_NAMES = [
    "id",
    "name",
    "amount",
    "total_amount",
    "tip",
    "ts",
    "flag",
    "kind",
    "count",
    "payload",
    "items",
    "meta",
    "next",
    "value",
    "code",
]
SYMBOLS = ["A", "B", "C", "D", "CASH", "CARD", "UNKNOWN", "E"]
NAMESPACES = [None, None, "com.example", "com.example.v2", "org.other"]


def _realistic() -> list[dict[str, Any]]:
    seeds = []
    for path in sorted((ROOT / "schemas").rglob("*.avsc")):
        seeds.append(json.loads(path.read_text()))
    seeds.append(
        {
            "type": "record",
            "name": "Node",
            "namespace": "com.example.list",
            "fields": [
                {"name": "value", "type": "int"},
                {"name": "next", "type": ["null", "Node"], "default": None},
            ],
        }
    )
    seeds.append(
        {
            "type": "record",
            "name": "Order",
            "namespace": "shop",
            "fields": [
                {"name": "id", "type": {"type": "fixed", "name": "Uuid", "size": 16}},
                {
                    "name": "status",
                    "type": {
                        "type": "enum",
                        "name": "Status",
                        "symbols": ["NEW", "PAID", "SHIPPED"],
                        "default": "NEW",
                    },
                },
                {
                    "name": "customer",
                    "type": {
                        "type": "record",
                        "name": "Customer",
                        "aliases": ["shop.Client"],
                        "fields": [
                            {"name": "name", "type": "string", "aliases": ["fullName"]},
                            {
                                "name": "address",
                                "type": [
                                    "null",
                                    {
                                        "type": "record",
                                        "name": "Address",
                                        "namespace": "geo",
                                        "fields": [
                                            {"name": "city", "type": "string"},
                                            {
                                                "name": "zip",
                                                "type": ["null", "string"],
                                                "default": None,
                                            },
                                        ],
                                    },
                                ],
                                "default": None,
                            },
                        ],
                    },
                },
                {
                    "name": "lines",
                    "type": {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "Line",
                            "fields": [
                                {"name": "sku", "type": "string"},
                                {"name": "qty", "type": "int", "default": 1},
                                {
                                    "name": "price",
                                    "type": {
                                        "type": "bytes",
                                        "logicalType": "decimal",
                                        "precision": 9,
                                        "scale": 2,
                                    },
                                },
                            ],
                        },
                    },
                },
                {"name": "tags", "type": {"type": "map", "values": "string"}, "default": {}},
                {
                    "name": "paid_at",
                    "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}],
                    "default": None,
                },
            ],
        }
    )
    return seeds


class Generator:
    """Random schemas and mutations; every choice comes from one seeded Random."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.counter = 0
        self.realistic = _realistic()

    # -- random schemas -------------------------------------------------------------------------

    def fresh(self, prefix: str = "T") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def schema(self) -> Any:
        rng = self.rng
        if rng.random() < 0.35:
            return copy.deepcopy(rng.choice(self.realistic))
        if rng.random() < 0.8:
            return self.record(depth=0, defined=[], namespace=None)
        return self.type(depth=1, defined=[], namespace=None)

    def type(self, depth: int, defined: list[dict[str, Any]], namespace: str | None) -> Any:
        rng = self.rng
        roll = rng.random()
        deep = depth >= 3
        if roll < 0.40 or (deep and roll < 0.8):
            return rng.choice(PRIMITIVES[1:])
        if roll < 0.47:
            base, props = rng.choice(LOGICAL)
            return {"type": base, **props}
        if roll < 0.52 and defined:
            target = rng.choice(defined)
            return target["__full"]
        if roll < 0.62 or deep:
            return self.enum(namespace)
        if roll < 0.67:
            return {"type": "fixed", "name": self.fresh("F"), "size": rng.choice([4, 8, 16])}
        if roll < 0.74:
            return {"type": "array", "items": self.type(depth + 1, defined, namespace)}
        if roll < 0.80:
            return {"type": "map", "values": self.type(depth + 1, defined, namespace)}
        if roll < 0.90:
            return self.union(depth, defined, namespace)
        return self.record(depth + 1, defined, namespace)

    def enum(self, namespace: str | None) -> dict[str, Any]:
        rng = self.rng
        symbols = rng.sample(SYMBOLS, rng.randint(1, 4))
        enum: dict[str, Any] = {"type": "enum", "name": self.fresh("E"), "symbols": symbols}
        if rng.random() < 0.3:
            enum["default"] = rng.choice(symbols)
        return enum

    def union(self, depth: int, defined: list, namespace: str | None) -> list[Any]:
        rng = self.rng
        branches: list[Any] = ["null"] if rng.random() < 0.7 else []
        kinds = {"null"} if branches else set()
        for _ in range(rng.randint(1, 3)):
            branch = self.type(depth + 1, defined, namespace)
            kind = self.kind_of(branch)
            if kind in kinds or kind == "union":
                continue
            kinds.add(kind)
            branches.append(branch)
        if rng.random() < 0.2:
            branches.reverse()
        return branches or ["null", "string"]

    @staticmethod
    def kind_of(schema: Any) -> str:
        if isinstance(schema, list):
            return "union"
        if isinstance(schema, str):
            return schema
        if schema.get("type") in ("record", "enum", "fixed", "error"):
            return schema["name"]
        return schema["type"]

    def record(self, depth: int, defined: list, namespace: str | None) -> dict[str, Any]:
        rng = self.rng
        name = self.fresh("R")
        kind = "error" if rng.random() < 0.05 else "record"
        record: dict[str, Any] = {"type": kind, "name": name, "fields": []}
        space = namespace
        roll = rng.random()
        if roll < 0.3:
            space = rng.choice(NAMESPACES)
            if space is not None:
                record["namespace"] = space
        elif roll < 0.36:
            space = rng.choice(["dotted.ns", "other.ns"])  # a full name carries its namespace
            record["name"] = f"{space}.{name}"
        full = f"{space}.{name}" if space else name
        entry = {"__full": full}
        defined.append(entry)
        names = rng.sample(FIELD_NAMES, rng.randint(0, 6 if depth < 2 else 3))
        for field_name in names:
            if rng.random() < 0.08:
                ftype: Any = ["null", full]  # recursion
            else:
                ftype = self.type(depth + 1, defined, space)
            field: dict[str, Any] = {"name": field_name, "type": ftype}
            if rng.random() < 0.4:
                default = self.default_for(ftype)
                if default is not _NO_DEFAULT:
                    field["default"] = default
            if rng.random() < 0.1:
                field["aliases"] = [rng.choice(FIELD_NAMES) + "_old"]
            record["fields"].append(field)
        return record

    def default_for(self, schema: Any) -> Any:
        """A value Java accepts as default for ``schema`` (or _NO_DEFAULT)."""
        rng = self.rng
        if isinstance(schema, list):
            if not schema:
                return _NO_DEFAULT
            branch = schema[0] if rng.random() < 0.85 else rng.choice(schema)
            return self.default_for(branch)
        kind = schema if isinstance(schema, str) else schema.get("type")
        return {
            "null": None,
            "boolean": True,
            "int": 7,
            "long": 7,
            "float": 1.5,
            "double": 0.0,
            "bytes": "\u0000",
            "string": "x",
        }.get(kind, self._complex_default(schema))

    def _complex_default(self, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return _NO_DEFAULT  # a named reference: leave without default
        kind = schema.get("type")
        if kind == "enum":
            return schema.get("default") or schema["symbols"][0]
        if kind == "fixed":
            return "\u0000" * schema["size"]
        if kind == "array":
            return []
        if kind == "map":
            return {}
        return _NO_DEFAULT

    # -- mutations ------------------------------------------------------------------------------

    def mutate(self, schema: Any, steps: int | None = None) -> Any:
        out = copy.deepcopy(schema)
        for _ in range(steps if steps is not None else self.rng.choice([1, 1, 1, 2, 3])):
            out = self.mutate_once(out)
        return out

    def mutate_once(self, root: Any) -> Any:
        rng = self.rng
        slots = list(_slots(root))
        records = [
            s for s in _nodes(root) if isinstance(s, dict) and s.get("type") in ("record", "error")
        ]
        enums = [s for s in _nodes(root) if isinstance(s, dict) and s.get("type") == "enum"]
        fixeds = [s for s in _nodes(root) if isinstance(s, dict) and s.get("type") == "fixed"]
        unions = [s for s in _nodes(root) if isinstance(s, list)]
        ops = ["retype", "wrap_union", "logical"]
        if records:
            ops += [
                "add_field",
                "add_field",
                "remove_field",
                "rename_field",
                "rename_named",
                "toggle_default",
                "reorder",
                "ambiguous_alias",
                "namespace",
            ]
        if enums:
            ops += ["enum_symbols", "enum_symbols", "enum_default", "rename_named"]
        if fixeds:
            ops += ["fixed_size", "rename_named"]
        if unions:
            ops += ["union_branch", "union_branch", "unwrap_union"]
        op = rng.choice(ops)
        if op == "retype" and slots:
            parent, key = rng.choice(slots)
            current = parent[key]
            if isinstance(current, str) and current in NUMERIC + ["string", "bytes"]:
                related = {
                    "int": "long",
                    "long": "float",
                    "float": "double",
                    "double": "int",
                    "string": "bytes",
                    "bytes": "string",
                }
                parent[key] = related[current] if rng.random() < 0.6 else rng.choice(PRIMITIVES)
            elif not _defines_names(current):
                parent[key] = rng.choice(PRIMITIVES[1:])
        elif op == "wrap_union" and slots:
            parent, key = rng.choice(slots)
            current = parent[key]
            if not isinstance(current, list) and not _defines_names(current):
                parent[key] = ["null", current] if rng.random() < 0.7 else [current, "null"]
        elif op == "logical" and slots:
            parent, key = rng.choice(slots)
            if isinstance(parent[key], str) and parent[key] in ("int", "long", "string", "bytes"):
                props = [p for b, p in LOGICAL if b == parent[key]]
                if props:
                    parent[key] = {"type": parent[key], **rng.choice(props)}
        elif op == "add_field":
            record = rng.choice(records)
            name = rng.choice(FIELD_NAMES + ["added", "extra"])
            if all(f["name"] != name for f in record["fields"]):
                ftype = rng.choice(["string", "int", ["null", "string"], "double"])
                field: dict[str, Any] = {"name": name, "type": ftype}
                if rng.random() < 0.6:
                    field["default"] = None if isinstance(ftype, list) else self.default_for(ftype)
                record["fields"].insert(rng.randint(0, len(record["fields"])), field)
        elif op == "remove_field" and any(r["fields"] for r in records):
            record = rng.choice([r for r in records if r["fields"]])
            victim = rng.randrange(len(record["fields"]))
            if not _defines_names(record["fields"][victim]["type"]):
                del record["fields"][victim]
        elif op == "rename_field" and any(r["fields"] for r in records):
            record = rng.choice([r for r in records if r["fields"]])
            field = rng.choice(record["fields"])
            new = field["name"] + "_v2"
            if all(f["name"] != new for f in record["fields"]):
                if rng.random() < 0.6:
                    field["aliases"] = field.get("aliases", []) + [field["name"]]
                field["name"] = new
        elif op == "ambiguous_alias" and any(len(r["fields"]) > 1 for r in records):
            record = rng.choice([r for r in records if len(r["fields"]) > 1])
            first, second = rng.sample(record["fields"], 2)
            first["aliases"] = first.get("aliases", []) + [second["name"]]
        elif op == "toggle_default" and any(r["fields"] for r in records):
            field = rng.choice(rng.choice([r for r in records if r["fields"]])["fields"])
            if "default" in field:
                del field["default"]
            else:
                default = self.default_for(field["type"])
                if default is not _NO_DEFAULT:
                    field["default"] = default
        elif op == "reorder" and records:
            rng.shuffle(rng.choice(records)["fields"])
        elif op == "rename_named":
            target = rng.choice(records + enums + fixeds)
            old = _full(target, root)
            if "." not in target["name"]:
                target["name"] = target["name"] + "X"
                if rng.random() < 0.5:
                    target["aliases"] = target.get("aliases", []) + [old]
                _rename_refs(root, old, _full(target, root))
        elif op == "namespace":
            target = rng.choice(records)
            if target is root:
                target["namespace"] = rng.choice([n for n in NAMESPACES if n]) + "z"
        elif op == "enum_symbols":
            enum = rng.choice(enums)
            if rng.random() < 0.5 and len(enum["symbols"]) > 1:
                victim = rng.choice(enum["symbols"])
                if enum.get("default") != victim:
                    enum["symbols"].remove(victim)
            else:
                extra = [s for s in SYMBOLS if s not in enum["symbols"]]
                if extra:
                    enum["symbols"].append(rng.choice(extra))
        elif op == "enum_default":
            enum = rng.choice(enums)
            if "default" in enum:
                del enum["default"]
            else:
                enum["default"] = rng.choice(enum["symbols"])
        elif op == "fixed_size":
            rng.choice(fixeds)["size"] += rng.choice([-1, 1, 8])
        elif op == "union_branch":
            union = rng.choice(unions)
            if len(union) > 1 and rng.random() < 0.5:
                victim = rng.randrange(len(union))
                if not _defines_names(union[victim]):
                    del union[victim]
            else:
                kinds = {self.kind_of(b) for b in union}
                extra = [p for p in PRIMITIVES if p not in kinds]
                if extra:
                    union.insert(rng.randint(0, len(union)), rng.choice(extra))
        elif op == "unwrap_union":
            for parent, key in slots:
                current = parent[key]
                if isinstance(current, list) and current and rng.random() < 0.5:
                    keep = rng.choice(current)
                    if not any(_defines_names(b) for b in current if b is not keep):
                        parent[key] = keep
                    break
        return root

    # -- invalid schemas --------------------------------------------------------------------------

    def broken(self) -> Any:
        """A schema with one change Java may refuse (or, surprisingly, accept)."""
        rng = self.rng
        base = self.schema()
        if not isinstance(base, dict) or base.get("type") != "record":
            base = self.record(0, [], None)
        fields = base["fields"]
        op = rng.choice(
            [
                "bad_name",
                "unicode_name",
                "bad_default",
                "union_default_second",
                "dup_field",
                "dup_branch",
                "enum_default_field",
                "fixed_size",
                "undefined",
                "bad_symbol",
                "namespace_part",
                "float_text_default",
                "order",
                "primitive_name",
                "int_overflow",
                "nested_union",
                "redefine",
                "bad_alias",
                "dotted_reference",
            ]
        )
        if op == "bad_name":
            base["name"] = rng.choice(["1abc", "a-b", "a b", "", "a.", ".a"])
        elif op == "unicode_name":
            base["name"] = rng.choice(["Fahrt\u00e9", "\u00c4rger", "x\u0663", "\u65e5\u672c"])
        elif op == "bad_default" and fields:
            field = rng.choice(fields)
            field["default"] = rng.choice(["x", 1, 1.5, None, True, [], {}, 2**40])
        elif op == "union_default_second":
            fields.append({"name": "zz", "type": ["null", "int"], "default": 5})
        elif op == "dup_field" and fields:
            fields.append(copy.deepcopy(rng.choice(fields)))
        elif op == "dup_branch":
            fields.append(
                {
                    "name": "zz",
                    "type": rng.choice(
                        [
                            ["int", "int"],
                            [{"type": "int", "logicalType": "date"}, "int"],
                            [{"type": "array", "items": "int"}, {"type": "array", "items": "long"}],
                        ]
                    ),
                }
            )
        elif op == "enum_default_field":
            fields.append(
                {
                    "name": "zz",
                    "type": {"type": "enum", "name": self.fresh("E"), "symbols": ["A"]},
                    "default": "NOPE",
                }
            )
        elif op == "fixed_size":
            fields.append(
                {
                    "name": "zz",
                    "type": {
                        "type": "fixed",
                        "name": self.fresh("F"),
                        "size": rng.choice([-1, "4", 4.0, 0, None]),
                    },
                }
            )
        elif op == "undefined":
            fields.append({"name": "zz", "type": rng.choice(["Missing", "com.x.Missing"])})
        elif op == "bad_symbol":
            symbols = rng.choice([["A", "A"], ["1A"], [3]])
            fields.append(
                {
                    "name": "zz",
                    "type": {"type": "enum", "name": self.fresh("E"), "symbols": symbols},
                }
            )
        elif op == "namespace_part":
            base["namespace"] = rng.choice(["a.1b", "a..b", "a-b.c", "ok.fine"])
        elif op == "float_text_default":
            fields.append(
                {
                    "name": "zz",
                    "type": rng.choice(["float", "double"]),
                    "default": rng.choice(["NaN", "Infinity", "-Infinity", "1.5", "x"]),
                }
            )
        elif op == "order" and fields:
            rng.choice(fields)["order"] = rng.choice(["ascending", "DESCENDING", "Ignore", "up"])
        elif op == "primitive_name":
            base["name"] = rng.choice(["int", "string", "record"])
            base.pop("namespace", None)
        elif op == "int_overflow":
            fields.append(
                {
                    "name": "zz",
                    "type": rng.choice(["int", "long"]),
                    "default": rng.choice([2**31, -(2**31), 2**63, 2**31 - 1]),
                }
            )
        elif op == "nested_union":
            fields.append({"name": "zz", "type": ["null", ["int", "string"]]})
        elif op == "bad_alias":
            # Java validates an alias's last part only: "1x.Old" and "..Old" are accepted.
            base["aliases"] = [
                rng.choice(["1x.Old", "..Old", "a-b.Old", "Old.", "", ".Old", "a..b.Old", "1Old"])
            ]
        elif op == "dotted_reference":
            enum = {"type": "enum", "name": "Dot", "symbols": ["A"]}
            if rng.random() < 0.5:
                enum["namespace"] = rng.choice(["", "acme"])
            fields.append({"name": "zz1", "type": enum})
            fields.append(
                {
                    "name": "zz2",
                    "type": rng.choice([".Dot", "Dot", "acme.Dot", "..Dot", ".acme.Dot"]),
                }
            )
        elif op == "redefine":
            enum = {"type": "enum", "name": "Twice", "symbols": ["A"]}
            other = dict(enum, symbols=rng.choice([["A"], ["A", "B"]]))
            fields.append({"name": "zz1", "type": enum})
            fields.append({"name": "zz2", "type": other})
        return base


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT: Any = _NoDefault()


def _nodes(schema: Any) -> Iterator[Any]:
    stack = [schema]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in ("record", "error"):
                stack.extend(f["type"] for f in node.get("fields", []))
            elif kind == "array":
                stack.append(node["items"])
            elif kind == "map":
                stack.append(node["values"])


def _slots(schema: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) for every place holding a schema below the root."""
    for node in _nodes(schema):
        if isinstance(node, list):
            for i in range(len(node)):
                yield node, i
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in ("record", "error"):
                for field in node.get("fields", []):
                    yield field, "type"
            elif kind == "array":
                yield node, "items"
            elif kind == "map":
                yield node, "values"


def _defines_names(schema: Any) -> bool:
    return any(
        isinstance(n, dict) and n.get("type") in ("record", "enum", "fixed", "error")
        for n in _nodes(schema)
    )


def _full(target: dict[str, Any], root: Any) -> str:
    """The full name of a named type (namespace inherited from its enclosing records)."""

    def walk(node: Any, space: str | None) -> str | None:
        if isinstance(node, list):
            for b in node:
                found = walk(b, space)
                if found:
                    return found
            return None
        if not isinstance(node, dict):
            return None
        kind = node.get("type")
        if kind in ("record", "enum", "fixed", "error"):
            name = node["name"]
            ns = node.get("namespace") if isinstance(node.get("namespace"), str) else space
            if "." in name:
                ns, name = name.rsplit(".", 1)
            ns = ns or None
            if node is target:
                return f"{ns}.{name}" if ns else name
            if kind in ("record", "error"):
                for f in node.get("fields", []):
                    found = walk(f["type"], ns)
                    if found:
                        return found
            return None
        if kind == "array":
            return walk(node["items"], space)
        if kind == "map":
            return walk(node["values"], space)
        return None

    return walk(root, None) or target["name"]


def _rename_refs(root: Any, old: str, new: str) -> None:
    old_simple, new_simple = old.rsplit(".", 1)[-1], new.rsplit(".", 1)[-1]
    for container, key in list(_slots(root)):
        value = container[key]
        if value == old:
            container[key] = new
        elif value == old_simple:
            container[key] = new_simple


def pairs(seed: int, count: int) -> Iterator[tuple[Any, Any]]:
    """``count`` (schema, mutated schema) pairs, deterministic for ``seed``."""
    gen = Generator(seed)
    for _ in range(count):
        a = gen.schema()
        roll = gen.rng.random()
        if roll < 0.08:
            b = copy.deepcopy(a)  # identical
        elif roll < 0.16:
            b = gen.schema()  # unrelated
        else:
            b = gen.mutate(a)
        yield a, b


def broken_schemas(seed: int, count: int) -> Iterator[Any]:
    gen = Generator(seed)
    for _ in range(count):
        yield gen.broken()


# -- names and aliases, spelled every way Java reads them --------------------------------------
#
# Java's Name(name, space): a dotted name carries its own namespace, "" means none, and an alias
# without a dot takes its type's own namespace. References are looked up by that full name, then
# by the name as written (the fallback to the null namespace). The pairs below spell the same
# and different names in all these ways, on records, enums and fixed, nested and in unions, and
# rename or re-namespace one type with or without an alias naming the old one.

NAME_SPACES = [None, "", "acme", "acme.v2", "org.x"]


def _spell(rng: random.Random, simple: str, space: str | None, node: dict[str, Any]) -> None:
    """Write ``space.simple`` into ``node`` as one of Java's spellings (some change the name)."""
    roll = rng.random()
    node.pop("namespace", None)
    if roll < 0.35:
        node["name"] = simple
        if space is not None:
            node["namespace"] = space
    elif roll < 0.6:
        node["name"] = f"{space}.{simple}" if space else f".{simple}" if space == "" else simple
        if rng.random() < 0.3:
            node["namespace"] = rng.choice(NAME_SPACES[1:])  # ignored: the dotted name wins
    elif roll < 0.75:
        node["name"] = f".{simple}"  # the null namespace, whatever encloses it
    else:
        node["name"] = simple  # inherits the enclosing namespace
        if rng.random() < 0.5:
            node["namespace"] = ""


def _alias(rng: random.Random, simple: str, space: str | None) -> str:
    """One spelling of an alias meaning ``simple`` (the space as the writer may have it)."""
    return rng.choice(
        [
            simple,
            f".{simple}",
            f"{space}.{simple}" if space else simple,
            f"{rng.choice(['acme', 'org.x', 'other'])}.{simple}",
        ]
    )


class NameGenerator:
    """Schemas whose named types are spelled in every way; mutations of their names."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.counter = 0

    def named(self, kind: str, depth: int) -> dict[str, Any]:
        rng = self.rng
        self.counter += 1
        simple = rng.choice(["Pos", "Item", "Kind", "Id", "Node"]) + str(self.counter % 3)
        node: dict[str, Any] = {"type": kind}
        _spell(rng, simple, rng.choice(NAME_SPACES), node)
        if kind == "enum":
            node["symbols"] = ["A", "B"]
        elif kind == "fixed":
            node["size"] = 4
        else:
            node["fields"] = [{"name": "v", "type": "int"}]
            if depth < 2 and rng.random() < 0.6:
                node["fields"].append({"name": "inner", "type": self.slot(depth + 1, [])})
        if rng.random() < 0.25:
            node["aliases"] = [_alias(rng, simple + "Old", rng.choice(NAME_SPACES))]
        return node

    def slot(self, depth: int, defined: list[str]) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2 and defined:
            ref = rng.choice(defined)
            simple = ref.rsplit(".", 1)[-1]
            return rng.choice([ref, simple, f".{simple}"])  # full, short, null namespace
        kind = rng.choice(["record", "enum", "fixed"])
        node = self.named(kind, depth)
        if roll < 0.45:
            return ["null", node]
        return node

    def schema(self) -> dict[str, Any]:
        rng = self.rng
        root: dict[str, Any] = {"type": "record", "fields": []}
        _spell(rng, "Root", rng.choice(NAME_SPACES), root)
        defined: list[str] = []
        for index in range(rng.randint(1, 3)):
            ftype = self.slot(0, defined)
            root["fields"].append({"name": f"f{index}", "type": ftype})
            for node in _nodes(ftype):
                if isinstance(node, dict) and node.get("type") in ("record", "enum", "fixed"):
                    defined.append(_full(node, root))
        return root

    def mutate(self, root: dict[str, Any]) -> dict[str, Any]:
        rng = self.rng
        out = copy.deepcopy(root)
        named = [
            n
            for n in _nodes(out)
            if isinstance(n, dict) and n.get("type") in ("record", "enum", "fixed")
        ]
        target = rng.choice(named)
        old = _full(target, out)
        old_simple = old.rsplit(".", 1)[-1]
        old_space = old.rsplit(".", 1)[0] if "." in old else None
        op = rng.choice(["rename", "namespace", "respell", "alias_only", "root_namespace"])
        if op == "rename":
            _spell(rng, old_simple + "New", old_space, target)
        elif op == "namespace":
            _spell(rng, old_simple, rng.choice(NAME_SPACES), target)
        elif op == "respell":
            _spell(rng, old_simple, old_space, target)  # often the same full name
        elif op == "root_namespace":
            _spell(rng, "Root", rng.choice(NAME_SPACES), out)
        if op != "root_namespace" and rng.random() < 0.7:
            target["aliases"] = target.get("aliases", [])[:1] + [_alias(rng, old_simple, old_space)]
        new = _full(target, out)
        if new != old:  # keep references pointing at the type, in one of their spellings
            new_simple = new.rsplit(".", 1)[-1]
            for container, key in list(_slots(out)):
                value = container[key]
                if isinstance(value, str) and value.lstrip(".") in (old, old_simple):
                    container[key] = rng.choice([new, new_simple, f".{new_simple}"])
        return out


def named_pairs(seed: int, count: int) -> Iterator[tuple[Any, Any]]:
    """``count`` (schema, renamed schema) pairs that spell names and aliases every way."""
    gen = NameGenerator(seed)
    for _ in range(count):
        a = gen.schema()
        yield a, gen.mutate(a)
