"""What a proven fix must keep besides compatibility: the Parsing Canonical Form of every field
it does not touch, and what the readers ``validate`` names (fastavro, the Python avro package)
read.

Java's check compares simple names, accepts a named type defined twice when both definitions are
equal, resolves forward references and falls back to the null namespace; fastavro and the avro
package do none of that, and ``validate`` warns about what else they refuse or read otherwise.
A fix that passes Java's check may still change a field it does not touch (a type that starts
to resolve in another namespace) or make the file unreadable to them: ``proof`` refuses both.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.loader import LoadedSchema, NameUse, scan_names
from schemacli.contracts.avro.schema import (
    ArraySchema,
    Field,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
    named_types,
)
from schemacli.contracts.fixes.edits import EditError, TextEdit
from schemacli.contracts.fixes.plans import CandidateView
from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.pointer import split_pointer
from schemacli.contracts.lint.validate import warnings_about

__all__ = ["Untouched", "may_warn", "refusals", "warned"]


def refusals(value: Any, schema: Schema, candidate: CandidateView) -> tuple[int, int, int]:
    """(named types defined a second time, names not readable by their full name where they
    are used, full names the Python avro package reads twice): Java accepts the first two (an
    identical redefinition; a forward reference or a fallback to the null namespace), fastavro
    and the Python avro package refuse both; the third is the avro package's own reading."""
    nodes = [n for n in named_types(schema) if id(n) not in candidate.foreign]
    twice = len(nodes) - len({n.fullname for n in nodes})
    defined, uses = scan_names(value)
    unreadable = sum(1 for use in uses if not _readable_use(use, defined, candidate))
    as_avro_reads = Counter(_avro_package_names(value))
    return twice, unreadable, sum(n - 1 for n in as_avro_reads.values())


def warned(value: Any, schema: Schema) -> Counter[str]:
    """``validate``'s warnings about ``schema`` (parsed from ``value``), by kind: what Java
    accepts but fastavro or the Python avro package refuse or read otherwise."""
    text = json.dumps(value, ensure_ascii=False)
    document = Document(value=value, source="<fixed>", text=text)
    loaded = LoadedSchema(source="<fixed>", document=document, schema=schema)
    return Counter(f.kind.value for f in warnings_about(loaded))


def may_warn(fields: Sequence[Any]) -> bool:
    """Whether ``validate`` could warn about these plain fields' JSON: a logical type, a name
    that is not ASCII, or a default other than null for an optional type or a number, string
    or boolean for its own type (cheap to tell; most fixes of a wide record are neither)."""
    for f in fields:
        if not isinstance(f, dict) or not str(f.get("name", "")).isascii() or _logical(f):
            return True
        if "default" not in f:
            continue
        kind, default = f.get("type"), f["default"]
        if isinstance(kind, list) and kind[:1] == ["null"] and default is None:
            continue
        if isinstance(kind, str) and kind != "bytes":
            continue
        return True
    return False


def _logical(value: Any) -> bool:
    """Whether ``value`` (JSON) names a logical type anywhere (only containers looked into)."""
    if isinstance(value, dict):
        if "logicalType" in value:
            return True
        inside: Any = value.values()
    elif isinstance(value, list):
        inside = value
    else:
        return False
    return any(_logical(v) for v in inside if isinstance(v, (dict, list)))


def _avro_package_names(value: Any) -> Iterator[str]:
    """The full names the Python avro package (1.12) gives the named types ``value`` defines:
    as Java's, except that a type inside a namespace with ``"namespace": ""`` keeps the
    enclosing namespace there (Java: the null namespace)."""
    stack: list[tuple[Any, str | None]] = [(value, None)]
    while stack:
        node, space = stack.pop()
        if isinstance(node, list):
            stack.extend((item, space) for item in node)
        elif isinstance(node, dict):
            kind = node.get("type")
            name = node.get("name")
            if kind in ("record", "error", "enum", "fixed") and isinstance(name, str):
                own = node.get("namespace")
                if "." in name:
                    space, name = name.rsplit(".", 1)
                elif isinstance(own, str) and own:
                    space = own
                yield f"{space}.{name}" if space else name
                fields = node.get("fields")
                if isinstance(fields, list):
                    stack.extend((f.get("type"), space) for f in fields if isinstance(f, dict))
            else:
                stack.extend((node.get(key), space) for key in ("type", "items", "values"))


def _readable_use(use: NameUse, defined: dict[str, str], candidate: CandidateView) -> bool:
    full = use.candidates[0]
    if full in candidate.foreign_names:
        return True
    at = defined.get(full)
    return at is not None and _order(at) <= _order(use.pointer)


def _order(pointer: str) -> tuple[tuple[int, int | str], ...]:
    """A pointer's place in document order (the walk ``scan_names`` makes)."""
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in split_pointer(pointer))


class Untouched:
    """Every record field of the candidate: its text span, the named types its type names
    directly, and its canonical form; the named types' definition spans and what each one
    names directly (built once, for the whole road)."""

    def __init__(self, candidate: CandidateView) -> None:
        editor = candidate.editor
        self.fields: list[tuple[Field, str, tuple[int, int], list[int]]] = []
        self.definitions: list[tuple[int, tuple[int, int]]] = []  # (id, span)
        self.parents: dict[int, list[int]] = {}  # named type -> the named types naming it
        for named in named_types(candidate.loaded.schema):
            if id(named) in candidate.foreign:
                continue
            try:
                self.definitions.append((id(named), editor.span(named.pointer)))
            except EditError:
                continue
            if isinstance(named, RecordSchema):
                for f in named.fields:
                    try:
                        span = editor.span(f.pointer)
                    except EditError:
                        continue
                    self.fields.append((f, named.fullname, span, [id(n) for n in _direct(f.type)]))
                    for child in _direct(f.type):
                        self.parents.setdefault(id(child), []).append(id(named))
        self.canonical: dict[int, str] = {}

    def kept(self, edits: Sequence[TextEdit], after: Schema) -> bool:
        spans = [(e.start, e.end) for e in edits]

        def touched(start: int, end: int) -> bool:
            return any(s <= end and start <= e for s, e in spans)

        tainted = {named for named, span in self.definitions if touched(*span)}
        stack = list(tainted)
        while stack:  # a named type that names a changed one changes too
            for parent in self.parents.get(stack.pop(), ()):
                if parent not in tainted:
                    tainted.add(parent)
                    stack.append(parent)
        by_pointer: dict[str, Field] = {}
        by_name: dict[tuple[str, str], Field] = {}
        for record in named_types(after):
            if isinstance(record, RecordSchema):
                for f in record.fields:
                    by_pointer[f.pointer] = f
                    by_name[(record.fullname, f.name)] = f
        now: dict[int, str] = {}
        for f, record_name, span, direct in self.fields:
            if touched(*span) or any(n in tainted for n in direct):
                continue
            was = _canon(f.type, self.canonical)
            same = [
                g
                for g in (by_pointer.get(f.pointer), by_name.get((record_name, f.name)))
                if g is not None and g.name == f.name and _canon(g.type, now) == was
            ]
            if not same:
                return False
        return True


def _direct(schema: Schema) -> Iterator[NamedSchema]:
    """The named types ``schema`` names without going through another named type."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, NamedSchema):
            yield node
        elif isinstance(node, ArraySchema):
            stack.append(node.items)
        elif isinstance(node, MapSchema):
            stack.append(node.values)
        elif isinstance(node, UnionSchema):
            stack.extend(node.types)


def _canon(schema: Schema, memo: dict[int, str]) -> str:
    if not isinstance(schema, NamedSchema):
        return canonical_form(schema)
    found = memo.get(id(schema))
    if found is None:
        found = memo[id(schema)] = canonical_form(schema)
    return found
