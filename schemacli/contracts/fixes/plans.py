"""Plans: what a suggested fix changes in the candidate's JSON, before it becomes text.

A :class:`Plan` is a title, an applicability and a few operations on the candidate's parsed JSON
(:data:`Op`: set a member, replace a value, append an element, remove one). The planners
(``planners``) make them; ``suggest`` turns them into text edits (``edits.JsonEditor``) and has
``proof`` prove them.

Also here, what every planner shares:

* :func:`locate`: the reader's and the writer's nodes at a finding's location (:class:`Site`);
* :func:`to_json`: a parsed type written back as JSON for one spot of the candidate
  (:class:`Placement`): a named type the candidate defines before that spot is referred to by
  name, one it defines after it can be neither referred to (a forward reference) nor defined
  again (a second definition): both are refused by fastavro and the Python avro package, so
  such a plan is not made (:class:`Unplaceable`);
* :func:`edited`: a JSON value with a plan's operations applied (what the edited text parses to);
* :class:`CandidateView`: what the planners, the proof and its guards read of the candidate
  (``suggest.Candidate``, which builds them: they name it by this protocol, not by import).
"""

from __future__ import annotations

import copy
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.fixes.edits import Applicability
from schemacli.contracts.jsontext.pointer import split_pointer
from schemacli.contracts.jsontext.pointer import value_at as json_value_at

if TYPE_CHECKING:
    from schemacli.contracts.avro.loader import LoadedSchema
    from schemacli.contracts.fixes.edits import JsonEditor
    from schemacli.contracts.jsontext.document import Document

__all__ = [
    "CandidateView",
    "Op",
    "Placement",
    "Plan",
    "Site",
    "Unplaceable",
    "edited",
    "field_json",
    "locate",
    "to_json",
    "held_at",
]

# One edit of the candidate's JSON, before it becomes text:
#   ("set", object pointer, key, value)       add or replace a member
#   ("replace", pointer, value)               replace the value at pointer
#   ("append", array pointer, value)          add an element at the end
#   ("remove", object pointer, key)           remove a member
#   ("remove_element", array pointer, index)  remove an element
Op = tuple[Any, ...]


@dataclass(frozen=True)
class Plan:
    title: str
    applicability: Applicability
    ops: tuple[Op, ...]


# --------------------------------------------------------------------------------------------
# JSON pointers into the candidate's value
# --------------------------------------------------------------------------------------------


_NOTHING = object()


def held_at(value: Any, pointer: str) -> Any:
    """The JSON value at ``pointer`` (KeyError if it names none: the plan is not made)."""
    found = json_value_at(value, pointer, _NOTHING)
    if found is _NOTHING:
        raise KeyError(pointer)
    return found


def edited(value: Any, ops: Sequence[Op]) -> Any:
    """``value`` with ``ops`` applied, as the edited text parses (``value`` is not changed:
    what an operation goes through is copied). Raises KeyError / IndexError / ValueError /
    TypeError for an operation that does not apply."""
    root: Any = [value]  # a holder, so the root itself can be replaced

    def parent(pointer: str) -> tuple[Any, str | int]:
        steps = split_pointer(pointer)
        node: Any = root
        key: int | str = 0
        for token in steps:
            child = node[key]
            child = copy.copy(child) if isinstance(child, (dict, list)) else child
            node[key] = child
            node, key = child, int(token) if isinstance(child, list) else token
        return node, key

    for op in ops:
        name = op[0]
        if name == "replace":
            holder, key = parent(op[1])
            holder[key] = op[2]
        elif name == "set" or name == "remove":
            holder, key = parent(op[1])
            target = holder[key] = dict(holder[key])
            if name == "set":
                target[op[2]] = op[3]
            else:
                del target[op[2]]
        elif name == "append" or name == "remove_element":
            holder, key = parent(op[1])
            array = holder[key] = list(holder[key])
            if name == "append":
                array.append(op[2])
            else:
                del array[op[2]]
        else:
            raise ValueError(name)
    return root[0]


# --------------------------------------------------------------------------------------------
# JSON of parsed types, for one spot of the candidate
# --------------------------------------------------------------------------------------------


class Unplaceable(Exception):
    """A type that cannot be written at a spot without a forward reference, a second
    definition or a null-namespace name inside a namespace."""


class Placement:
    """The named types a value written at one spot of the candidate may use.

    ``referable``: defined before the spot (or in another file): referred to by name.
    ``blocked``: defined after the spot: neither referable nor definable there.
    ``namespace``: the namespace the spot's names are read in (a name without a dot resolves
    there first, so a null-namespace type cannot be referred to inside a namespace except by
    Java's fallback, which fastavro and the Python avro package do not have, nor defined there
    with ``"namespace": ""``, which the avro package does not read).
    Anything else is defined where it is first written (and referable after that).
    """

    def __init__(
        self, referable: Container[str], blocked: Container[str], namespace: str | None
    ) -> None:
        self.referable = referable
        self.blocked = blocked
        self.namespace = namespace
        self.added: set[str] = set()

    def can_refer(self, fullname: str) -> bool:
        return fullname in self.added or fullname in self.referable


class CandidateView(Protocol):
    """The candidate as its plans and their proof see it (``suggest.Candidate``)."""

    loaded: LoadedSchema
    foreign: set[int]  # ids of the named types defined in referenced files
    foreign_names: frozenset[str]

    @property
    def value(self) -> Any: ...

    @property
    def document(self) -> Document: ...

    @property
    def editor(self) -> JsonEditor: ...

    def parse(self, text: str) -> tuple[Any, Schema] | None: ...

    def field_names(self, record: RecordSchema) -> frozenset[str]: ...

    def candidate_names(self) -> set[str]: ...

    def placement(self, pointer: str, *, replacing: bool) -> Placement: ...

    def defined_within(self, pointer: str) -> set[str]: ...

    def references(self, named: NamedSchema) -> list[tuple[str, str]]: ...


def to_json(schema: Schema, placement: Placement) -> Any:
    """``schema`` as Avro JSON written at ``placement``'s spot: named types the spot may refer
    to by name (full name), the others defined (with their namespace when it is not the
    enclosing one), everything else kept (docs, aliases, defaults, logical types and other
    properties). Raises :class:`Unplaceable`."""
    return _json(schema, placement, placement.namespace)


def _json(schema: Schema, placement: Placement, space: str | None) -> Any:
    if isinstance(schema, UnionSchema):
        return [_json(branch, placement, space) for branch in schema.types]
    if isinstance(schema, NamedSchema):
        full = schema.fullname
        if placement.can_refer(full):
            if schema.namespace is None and space:
                raise Unplaceable(f"{full} is in the null namespace")
            return full
        if full in placement.blocked:
            raise Unplaceable(f"{full} is defined after this place")
        if schema.namespace is None and space:
            # "namespace": "" inside a namespace: Java reads it, the Python avro package keeps
            # the enclosing namespace and then cannot find the type's own references
            raise Unplaceable(f"{full} is in the null namespace")
        placement.added.add(full)
        out: dict[str, Any] = {
            "type": "error"
            if isinstance(schema, RecordSchema) and schema.is_error
            else schema.type,
            "name": schema.simple_name,
        }
        if schema.namespace != space:
            out["namespace"] = schema.namespace or ""
        if schema.doc is not None:
            out["doc"] = schema.doc
        if schema.aliases:
            out["aliases"] = list(schema.aliases)
        if isinstance(schema, RecordSchema):
            out["fields"] = [_field(f, placement, schema.namespace) for f in schema.fields]
        elif isinstance(schema, EnumSchema):
            out["symbols"] = list(schema.symbols)
            if schema.default is not None:
                out["default"] = schema.default
        elif isinstance(schema, FixedSchema):
            out["size"] = schema.size
        out.update(schema.props)
        return out
    if isinstance(schema, ArraySchema):
        return {"type": "array", "items": _json(schema.items, placement, space), **schema.props}
    if isinstance(schema, MapSchema):
        return {"type": "map", "values": _json(schema.values, placement, space), **schema.props}
    if schema.props:
        return {"type": schema.type, **schema.props}
    return schema.type


def field_json(f: Field, placement: Placement) -> dict[str, Any]:
    """A field as JSON written at ``placement`` (see :func:`to_json`)."""
    return _field(f, placement, placement.namespace)


def _field(f: Field, placement: Placement, space: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "type": _json(f.type, placement, space)}
    if f.doc is not None:
        out["doc"] = f.doc
    if f.has_default:
        out["default"] = f.default
    if f.aliases:
        out["aliases"] = list(f.aliases)
    if f.order != "ascending":
        out["order"] = f.order
    out.update(f.props)
    return out


# --------------------------------------------------------------------------------------------
# Where a finding is: the reader's and the writer's nodes at its location
# --------------------------------------------------------------------------------------------


@dataclass
class Site:
    """The nodes a finding's location reaches, in the reader and the writer.

    ``field`` is the innermost field on the way (reader's and writer's, with their records);
    ``attribute`` the named type's member the location ends at (name, symbols, size);
    ``branch`` the writer's union branch of a union-vs-union finding.
    """

    reader: Schema | None = None
    writer: Schema | None = None
    reader_field: Field | None = None
    writer_field: Field | None = None
    reader_record: RecordSchema | None = None
    writer_record: RecordSchema | None = None
    at_field: bool = False  # the location is the field itself (/fields/N)
    attribute: str | None = None
    branch: Schema | None = None


def _writer_field(reader_field: Field, writer: RecordSchema) -> Field | None:
    found = writer.field_map.get(reader_field.name)
    if found is not None:
        return found
    for alias in reader_field.aliases:
        found = writer.field_map.get(alias)
        if found is not None:
            return found
    return None


def locate(reader: Schema, writer: Schema, pointer: str) -> Site | None:
    """Walk ``reader`` and ``writer`` along Java's location ``pointer``; None if it does not
    walk (a location Java replays from a union trial, see compat's docstring)."""
    steps = split_pointer(pointer) if pointer != "/" else []
    site = Site()
    r, w = reader, writer
    i = 0
    try:
        while i < len(steps):
            token = steps[i]
            if token == "fields" and isinstance(r, RecordSchema) and isinstance(w, RecordSchema):
                rf = r.fields[int(steps[i + 1])]
                wf = _writer_field(rf, w)
                site.reader_field, site.writer_field = rf, wf
                site.reader_record, site.writer_record = r, w
                if i + 2 == len(steps):
                    site.reader, site.writer, site.at_field = r, w, True
                    return site
                if steps[i + 2] != "type":
                    return None
                if wf is None:  # Java's quirk: an enum with a default against the record
                    site.reader, site.writer = rf.type, w
                    return site if i + 3 == len(steps) else None
                r, w = rf.type, wf.type
                i += 3
                continue
            if token == "items" and isinstance(r, ArraySchema) and isinstance(w, ArraySchema):
                r, w = r.items, w.items
            elif token == "values" and isinstance(r, MapSchema) and isinstance(w, MapSchema):
                r, w = r.values, w.values
            elif token.isdigit() and isinstance(w, UnionSchema):
                branch = w.types[int(token)]
                if isinstance(r, UnionSchema):
                    site.reader, site.writer, site.branch = r, w, branch
                    return site if i + 1 == len(steps) else None
                w = branch
            elif token in ("name", "symbols", "size") and i + 1 == len(steps):
                site.attribute = token
                break
            else:
                return None
            i += 1
    except (IndexError, ValueError):
        return None
    site.reader, site.writer = r, w
    return site
