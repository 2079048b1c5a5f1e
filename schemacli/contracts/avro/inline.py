"""Self-contained schemas: named types from references defined inline, at their first use.

Spark's ``from_avro`` (and every reader that takes one schema text) cannot follow Confluent
schema references; Avro itself allows a named type to be defined at its first use and named
afterwards. ``self_contained`` turns a schema plus the schemas its references point to into one
schema that parses to the same types: each referenced name is replaced, where it is first used
(in Java's parse order: depth-first, fields in order), by its definition with the namespace
written out, so that the enclosing namespace cannot change what it names.

Names resolve as Java resolves them: a name with a dot is a full name; otherwise the enclosing
namespace first, then the null namespace.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from schemacli.contracts.avro.facts import NAMED_SPELLINGS, PRIMITIVE_TYPES
from schemacli.errors import InputError, Location

if TYPE_CHECKING:
    from schemacli.contracts.avro.loader import LoadedSchema


def full_name(name: str, namespace: str | None) -> str:
    """``name`` as a full name in ``namespace`` (a leading dot means the null namespace)."""
    if "." in name:
        return name.lstrip(".")
    return f"{namespace}.{name}" if namespace else name


def _own_namespace(node: Mapping[str, Any], enclosing: str | None) -> str | None:
    name = node.get("name")
    if isinstance(name, str) and "." in name.lstrip("."):
        return name.lstrip(".").rpartition(".")[0] or None
    namespace = node.get("namespace")
    if isinstance(namespace, str):
        return namespace or None
    return enclosing


def definitions(schema: Any) -> dict[str, Any]:
    """Every named type ``schema`` (parsed JSON) defines, by full name, each with its name and
    namespace written out (so it can stand anywhere)."""
    found: dict[str, Any] = {}

    def walk(node: Any, namespace: str | None) -> None:
        if isinstance(node, list):
            for branch in node:
                walk(branch, namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in NAMED_SPELLINGS and isinstance(node.get("name"), str):
                own = _own_namespace(node, namespace)
                full = full_name(node["name"], own)
                found.setdefault(full, _standalone(node, full))
                namespace = own
            if kind in ("record", "error"):
                for fld in node.get("fields") or ():
                    if isinstance(fld, dict):
                        walk(fld.get("type"), namespace)
            elif kind == "array":
                walk(node.get("items"), namespace)
            elif kind == "map":
                walk(node.get("values"), namespace)
            elif isinstance(kind, dict | list):
                walk(kind, namespace)

    walk(schema, None)
    return found


def _standalone(node: Mapping[str, Any], full: str) -> dict[str, Any]:
    namespace, _, simple = full.rpartition(".")
    out = dict(node)
    out["name"] = simple
    out["namespace"] = namespace  # "" = the null namespace, whatever encloses it
    return out


def self_contained(schema: Any, referenced: Iterable[Any], *, source: str = "<schema>") -> Any:
    """``schema`` (parsed JSON) with every name that only ``referenced`` schemas define
    replaced, at its first use, by that definition. Returns a new value; raises InputError
    naming the name and where it is used when a name is defined nowhere.
    """
    available: dict[str, Any] = {}
    for other in referenced:
        for full, node in definitions(other).items():
            available.setdefault(full, node)
    defined: set[str] = set()

    def resolve(name: str, namespace: str | None) -> str | None:
        candidates = [full_name(name, namespace)]
        if "." not in name and namespace:
            candidates.append(name)  # Java's fallback to the null namespace
        for candidate in candidates:
            if candidate in defined or candidate in available:
                return candidate
        return None

    def walk(node: Any, namespace: str | None, pointer: str) -> Any:
        if isinstance(node, str):
            if node in PRIMITIVE_TYPES:
                return node
            full = resolve(node, namespace)
            if full is None:
                raise InputError(
                    f"the type {node!r} is defined neither in the schema nor in its references",
                    location=Location(source=source, pointer=pointer),
                    hint="Add a reference to the subject that defines it (name, subject, "
                    "version), or define the type in the schema.",
                )
            if full in defined:
                return full
            definition = copy.deepcopy(available[full])
            return walk(definition, namespace, pointer)
        if isinstance(node, list):
            return [walk(branch, namespace, f"{pointer}/{i}") for i, branch in enumerate(node)]
        if not isinstance(node, dict):
            return node
        out = dict(node)
        kind = node.get("type")
        if kind in NAMED_SPELLINGS and isinstance(node.get("name"), str):
            namespace = _own_namespace(node, namespace)
            defined.add(full_name(node["name"], namespace))
        if kind in ("record", "error"):
            out["fields"] = [
                {**fld, "type": walk(fld.get("type"), namespace, f"{pointer}/fields/{i}/type")}
                if isinstance(fld, dict)
                else fld
                for i, fld in enumerate(node.get("fields") or ())
            ]
        elif kind == "array":
            out["items"] = walk(node.get("items"), namespace, f"{pointer}/items")
        elif kind == "map":
            out["values"] = walk(node.get("values"), namespace, f"{pointer}/values")
        elif isinstance(kind, str) and kind not in PRIMITIVE_TYPES and kind not in NAMED_SPELLINGS:
            # {"type": "com.acme.Address"}: a named type used through the object form
            resolved = walk(kind, namespace, f"{pointer}/type")
            if isinstance(resolved, dict):
                return resolved  # the definition itself stands in for the reference
            out["type"] = resolved
        elif isinstance(kind, dict | list):
            out["type"] = walk(kind, namespace, f"{pointer}/type")
        return out

    return walk(schema, None, "")


def inlined(loaded: LoadedSchema) -> Any:
    """A loaded schema's value made self-contained: the named types it takes from other files
    (references, ``vN.references.json``, the name index — and theirs) defined inline."""
    referenced, seen, queue = [], set(), list(loaded.references)
    while queue:  # every file it depends on, directly or not, nearest first
        dep = queue.pop(0)
        if id(dep) not in seen:
            seen.add(id(dep))
            referenced.append(dep.value)
            queue.extend(dep.references)
    if not referenced:
        return loaded.value
    return self_contained(loaded.value, referenced, source=loaded.source)
