"""The field road of the proof: a plan checked on the top-level fields it touches, not the record.

When the candidate and an earlier version are records and a plan edits or adds only top-level
fields that hold no named type, before and after (a default, an optional union, a primitive
type, a promotion, a field split in two: nearly every fix of a wide change), a top-level reader
field's findings depend only on itself and the writer fields it matches (Java's memo, keyed by
node identity, is shared between fields only through a named type). So:

* BACKWARD (the candidate reads): the touched fields are checked against the earlier version,
  before and after the plan;
* FORWARD (the earlier version reads): its fields that read a touched field, with every field
  they share a named type with, are checked against the candidate's fields they read.

Every other field's findings are the candidate's own. Recursive records (a field reaching its
own record) are left to the whole road. ``tests/unit/test_fix_proof.py`` feeds every plan of a
corpus to this road and to the whole road and requires the same answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.names import name_error
from schemacli.contracts.avro.parse import SELF_COMPATIBLE, parse_schema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    Field,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.levels import BACKWARD
from schemacli.contracts.fixes.guards import may_warn, warned
from schemacli.contracts.fixes.plans import CandidateView, Op, edited
from schemacli.errors import SchemacliError

__all__ = ["Changed", "FieldRoad", "Keys", "keys_of"]

Keys = Counter[tuple[str, str]]  # (kind, pointer) -> how often the engine reports it


def keys_of(reader: Schema, writer: Schema) -> Keys:
    """The engine's findings of ``reader`` reading ``writer``, by (kind, pointer)."""
    return Counter((k.value, pointer) for k, pointer in compat.incompatibilities(reader, writer))


class Fields:
    """One record's top-level fields: by name and by alias, which share a named type (groups),
    and which reach the record itself (a recursive record's fields are not independent)."""

    def __init__(self, record: RecordSchema, values: Any = None) -> None:
        """``values``: the fields as the file writes them (JSON), when known."""
        self.record = record
        self.values: list[Any] | None = (
            values if isinstance(values, list) and len(values) == len(record.fields) else None
        )
        self.by_name: dict[str, list[int]] = {}
        self.by_alias: dict[str, list[int]] = {}
        # Union-find over the fields (-1 - position) and the named types (their id).
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while x != root:
                parent[x], x = root, parent[x]
            return root

        def union(a: int, b: int) -> None:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb

        seen: set[int] = set()
        recursive = False
        for position, f in enumerate(record.fields):
            self.by_name.setdefault(f.name, []).append(position)
            for alias in f.aliases:
                self.by_alias.setdefault(alias, []).append(position)
            if "_ptype" in f.__dict__:
                continue
            stack: list[tuple[Schema, int]] = [(f.type, -1 - position)]
            while stack:
                node, owner = stack.pop()
                if isinstance(node, NamedSchema):
                    union(owner, id(node))
                    if node is record:
                        recursive = True
                    if id(node) in seen or node is record:
                        continue
                    seen.add(id(node))
                    if isinstance(node, RecordSchema):
                        stack.extend((g.type, id(node)) for g in node.fields)
                elif isinstance(node, ArraySchema):
                    stack.append((node.items, owner))
                elif isinstance(node, MapSchema):
                    stack.append((node.values, owner))
                elif isinstance(node, UnionSchema):
                    stack.extend((branch, owner) for branch in node.types)
        self.group_of = [find(-1 - position) for position in range(len(record.fields))]
        self.groups: dict[int, list[int]] = {}
        for position, group in enumerate(self.group_of):
            self.groups.setdefault(group, []).append(position)
        self.recursive = find(id(record)) if recursive else None

    def reaches_record(self, position: int) -> bool:
        return self.recursive is not None and self.group_of[position] == self.recursive

    def matching(self, names: set[str]) -> set[int]:
        """Positions of the fields a writer field named one of ``names`` is read into."""
        out: set[int] = set()
        for name in names:
            out.update(self.by_name.get(name, ()))
            out.update(self.by_alias.get(name, ()))
        return out

    def json(self, position: int) -> Any:
        """The field at ``position`` as the file writes it (None when not known)."""
        return self.values[position] if self.values is not None else None

    def matched_by(self, readers: Sequence[Field]) -> set[int]:
        """Positions of the fields (as a writer) that the reader fields ``readers`` read."""
        out: set[int] = set()
        for r in readers:
            for name in (r.name, *r.aliases):
                out.update(self.by_name.get(name, ()))
        return out

    def closed(self, positions: set[int]) -> set[int]:
        """``positions`` with every field sharing a named type with one of them."""
        out: set[int] = set()
        for position in positions:
            out.update(self.groups[self.group_of[position]])
        return out

    def view(self, fields: Sequence[Field]) -> RecordSchema:
        """The record with only ``fields`` (in order) as its fields."""
        return _view(self.record, fields)


# slots, not frozen: one per plan and comparison, never changed (a frozen init costs more)
@dataclass(slots=True)
class Changed:
    """A plan as the field road sees it: the edited top-level fields (by position) and the
    added ones, each holding no named type; ``broken`` when the edits do not give a valid
    record (a field added twice or under a taken name)."""

    edited: dict[int, Field]
    added: tuple[Field, ...]
    broken: bool = False
    values: dict[int, Any] | None = None  # the edited and added fields' JSON, by position
    named: bool = False  # validate's rules were asked about the fields (they see the names)


class FieldRoad:
    """The field road (see the module's docstring) for one candidate."""

    def __init__(self, candidate: CandidateView, fields: Fields) -> None:
        self.candidate = candidate
        self.fields = fields
        self.values: list[Any] = candidate.loaded.value["fields"]
        self.versions: dict[int, tuple[RecordSchema, Fields]] = {}
        self.befores: dict[tuple[object, ...], Keys] = {}
        self.warnings: dict[tuple[int, ...], Counter[str]] = {}
        # One reader field's findings against the writer field it reads, by what both say
        # besides the name (a wide change repeats a few shapes thousands of times).
        self.shapes: dict[tuple[str, str, str], tuple[tuple[str, str], ...]] = {}
        self.roots: dict[tuple[int, int, str], Keys] = {}
        self.templates: dict[str, Field] = {}  # a field's shape, parsed once
        self.shaped: dict[int, tuple[Any, str]] = {}  # id of a field's JSON -> (it, its shape)

    @classmethod
    def of(cls, candidate: CandidateView) -> FieldRoad | None:
        """The road, or None when the candidate is not a record written as one."""
        schema, value = candidate.loaded.schema, candidate.loaded.value
        if not isinstance(schema, RecordSchema) or not isinstance(value, dict):
            return None
        fields = value.get("fields")
        if not isinstance(fields, list) or len(fields) != len(schema.fields):
            return None
        return cls(candidate, Fields(schema, fields))

    def version(self, old: LoadedSchema) -> Fields | None:
        """The earlier version's fields (None when it is not a record)."""
        schema = old.schema
        if not isinstance(schema, RecordSchema):
            return None
        found = self.versions.get(id(schema))
        if found is None or found[0] is not schema:
            found = self.versions[id(schema)] = (schema, Fields(schema, old.value.get("fields")))
        return found[1]

    def effect(
        self, changed: Changed, old_loaded: LoadedSchema, direction: str
    ) -> tuple[int, Keys, Keys] | None:
        """(cost, findings after, findings before) of the touched fields on the comparison
        with ``old_loaded`` in ``direction``; None when the road cannot tell (a recursive
        record on the way)."""
        old = self.version(old_loaded)
        if old is None:
            return None
        record = self.fields.record
        edited, added = changed.edited, list(changed.added)
        candidate, earlier = self.fields.record, old.record
        if direction == BACKWARD:  # the candidate reads the earlier version
            positions = sorted(edited)
            was_key: tuple[object, ...] = (id(old.record), direction, tuple(positions))
            reader_was = [record.fields[p] for p in positions]
            reader_now = [edited[p] for p in positions] + added
            readers: tuple[RecordSchema, list[Field], list[Field]] = (
                candidate,
                reader_was,
                reader_now,
            )
            writers: tuple[RecordSchema, list[Field] | None, list[Field] | None] = (
                earlier,
                None,
                None,
            )
            cost = len(positions) + len(added)
        else:  # the earlier version reads the candidate
            names = {record.fields[p].name for p in edited} | {f.name for f in added}
            positions = sorted(old.closed(old.matching(names)))
            if any(old.reaches_record(p) for p in positions):
                return None
            read = [old.record.fields[p] for p in positions]
            wanted = sorted(self.fields.matched_by(read) | set(edited))
            if any(self.fields.reaches_record(p) for p in wanted):
                return None
            was_key = (id(old.record), direction, tuple(positions), tuple(wanted))
            writer_was = [record.fields[p] for p in wanted]
            writer_now = [edited.get(p, record.fields[p]) for p in wanted] + added
            readers, writers = (earlier, read, read), (candidate, writer_was, writer_now)
            cost = len(positions) + len(wanted) + len(added)
        before_local = self.befores.get(was_key)
        if before_local is None:
            before_local = self._keys(
                readers[0], readers[1], writers[0], writers[1], old, direction, changed, was=True
            )
            self.befores[was_key] = before_local
        after = self._keys(
            readers[0], readers[2], writers[0], writers[2], old, direction, changed, was=False
        )
        return cost, after, before_local

    def _keys(
        self,
        reader_record: RecordSchema,
        reader_fields: list[Field],
        writer_record: RecordSchema,
        chosen: list[Field] | None,
        old: Fields,
        direction: str,
        changed: Changed,
        *,
        was: bool,
    ) -> Keys:
        """The findings of ``reader_record`` with only ``reader_fields`` (before the plan when
        ``was``, else after) reading ``writer_record`` (with only ``chosen``, or all): field
        by field through ``shapes`` when every reader field is plain, without aliases, and
        reads the writer field of its own name; else whole."""
        backward = direction == BACKWARD
        field_map = writer_record.field_map if chosen is None else {f.name: f for f in chosen}
        shapes = []
        for r in reader_fields:
            w = field_map.get(r.name)
            r_json = self._json(r.position, changed, was) if backward else old.json(r.position)
            w_json = None
            if w is not None:
                w_json = old.json(w.position) if backward else self._json(w.position, changed, was)
            if r.aliases or not _plain(r) or r_json is None or (w is not None and w_json is None):
                writer = writer_record if chosen is None else _view(writer_record, chosen)
                return keys_of(_view(reader_record, reader_fields), writer)
            shapes.append((r, w, (direction, self._shape(r_json), self._shape(w_json))))
        out: Keys = Counter()
        dict.update(out, self._root_keys(reader_record, writer_record, direction))
        for r, w, shape in shapes:
            found = self.shapes.get(shape)
            prefix = f"/fields/{r.position}"
            if found is None:
                alone = keys_of(
                    _view(reader_record, [r]), _view(writer_record, [] if w is None else [w])
                )
                found = self.shapes[shape] = tuple(
                    (kind, pointer[len(prefix) :])
                    for (kind, pointer), n in alone.items()
                    for _ in range(n)
                    if pointer == prefix or pointer.startswith(prefix + "/")
                )
            for kind, rest in found:  # counted as Counter.update counts, without its checks
                key = (kind, prefix + rest)
                out[key] = out.get(key, 0) + 1
        return out

    def _root_keys(self, reader: RecordSchema, writer: RecordSchema, direction: str) -> Keys:
        """The findings about the two records themselves (their names), no field looked at:
        the same for every plan of one comparison."""
        key = (id(reader), id(writer), direction)
        found = self.roots.get(key)
        if found is None:
            found = self.roots[key] = keys_of(_view(reader, []), _view(writer, []))
        return found

    def _json(self, position: int, changed: Changed, was: bool) -> Any:
        """A candidate field's JSON before (``was``) or after the plan."""
        if not was and changed.values is not None and position in changed.values:
            return changed.values[position]
        return self.values[position] if position < len(self.values) else None

    def changed(self, ops: Sequence[Op]) -> Changed | None:
        """The plan ``ops`` as the field road sees it; None when the plan edits anything but
        top-level fields that hold no named type, before and after (the whole road's)."""
        record = self.fields.record
        per_field: dict[int, list[Op]] = {}
        appended: list[Any] = []
        for op in ops:
            pointer: str = op[1]
            if pointer == "/fields":
                if op[0] != "append":
                    return None
                appended.append(op[2])
                continue
            if not pointer.startswith("/fields/"):
                return None
            number, _, rest = pointer[len("/fields/") :].partition("/")
            if not number.isdigit() or int(number) >= len(record.fields):
                return None
            position = int(number)
            if not rest and op[0] in ("set", "remove") and op[2] == "name":
                return None  # a field renamed: matched by another name
            if not _plain(record.fields[position]):
                return None
            relative = "/" + rest if rest else ""
            per_field.setdefault(position, []).append((op[0], relative, *op[2:]))
        positions = sorted(per_field)
        try:
            values = [edited(self.values[p], per_field[p]) for p in positions]
            templates = self._parsed(values + appended)
        except (KeyError, IndexError, TypeError, ValueError, SchemacliError, RecursionError):
            return None  # the whole road decides (a name from elsewhere, or an invalid edit)
        if templates is None:
            return None
        out: dict[int, Field] = {}
        for position, (template, name) in zip(positions, templates, strict=False):
            if name != record.fields[position].name:
                return None
            out[position] = _named(template, name, position)
        added: list[Field] = []
        names: set[str] = set()
        for offset, (template, name) in enumerate(templates[len(positions) :]):
            if name in record.field_map or name in names:
                return Changed({}, (), broken=True)
            names.add(name)
            added.append(_named(template, name, len(record.fields) + offset))
        tiny = values + appended
        named = may_warn(tiny)
        if named:
            fields = [_named(t, name, i) for i, (t, name) in enumerate(templates)]
            if warned(_record_of(tiny), _view(_HOLDER, fields)) - self._warnings_before(positions):
                return Changed({}, (), broken=True, named=True)  # readers would refuse it
        written = dict(zip(positions, values, strict=True))
        written.update((f.position, v) for f, v in zip(added, appended, strict=True))
        return Changed(out, tuple(added), values=written, named=named)

    def alone(self, position: int) -> tuple[str, str] | None:
        """(name, shape) of the candidate's field at ``position`` when its findings and those
        of the fields reading it can depend only on what its JSON says besides its name: a
        plain field without aliases, its name ASCII (validate's rules look at nothing else of
        a name) and held by no other field as a name or alias; None otherwise."""
        fields = self.fields
        if position >= len(fields.record.fields) or position >= len(self.values):
            return None
        f = fields.record.fields[position]
        value = self.values[position]
        if f.aliases or not isinstance(value, dict) or not f.name.isascii() or not _plain(f):
            return None
        if fields.by_name.get(f.name) != [position] or f.name in fields.by_alias:
            return None
        return f.name, self._shape(value)

    def unheard(self, name: str, old_loaded: LoadedSchema | None) -> bool:
        """Whether ``name`` is ASCII and neither a name nor an alias of a field of the
        candidate (``old_loaded`` None) or of that earlier version (a record)."""
        fields = self.fields if old_loaded is None else self.version(old_loaded)
        return (
            fields is not None
            and name.isascii()
            and name not in fields.by_name
            and name not in fields.by_alias
        )

    def counterpart(self, old_loaded: LoadedSchema, name: str) -> tuple[int, str] | None:
        """(position, shape) of the earlier version's field ``name`` when it is the only
        field matching that name, plain and without aliases (so it reads, and is read by,
        the candidate's field of that name alone); None otherwise."""
        old = self.version(old_loaded)
        if old is None or name in old.by_alias:
            return None
        found = old.by_name.get(name)
        if found is None or len(found) != 1:
            return None
        position = found[0]
        f = old.record.fields[position]
        value = old.json(position)
        if f.aliases or not isinstance(value, dict) or not _plain(f):
            return None
        return position, self._shape(value)

    def _parsed(self, values: list[Any]) -> list[tuple[Field, str]] | None:
        """The fields ``values`` (JSON) as the parser reads them, each as (its shape's field
        under a stand-in name, its name); None when one holds a named type. A field's meaning
        does not depend on its name: each shape is parsed once (a wide change repeats a few),
        and named after (names checked as the parser checks them). Raises SchemaParseError."""
        out: list[tuple[Field, str]] = []
        for value in values:
            if not isinstance(value, dict) or name_error(value.get("name")) is not None:
                return None  # the whole road says why
            shape = self._shape(value)
            template = self.templates.get(shape)
            if template is None:
                parsed = parse_schema(_record_of([{**value, "name": "_"}]))
                assert isinstance(parsed, RecordSchema)
                template = self.templates[shape] = parsed.fields[0]
            if not _plain(template):
                return None
            out.append((template, value["name"]))
        return out

    def _shape(self, value: Any) -> str:
        """``_shape(value)``, kept for the values the road meets again (the fields as the
        file and the earlier versions write them, a plan's edited fields): by identity, the
        value kept alive with it."""
        found = self.shaped.get(id(value))
        if found is None or found[0] is not value:
            found = self.shaped[id(value)] = (value, _shape(value))
        return found[1]

    def _warnings_before(self, positions: list[int]) -> Counter[str]:
        key = tuple(positions)
        found = self.warnings.get(key)
        if found is None:
            tiny = _record_of([self.values[p] for p in positions])
            found = self.warnings[key] = warned(tiny, parse_schema(tiny))
        return found


def _record_of(fields: list[Any]) -> dict[str, Any]:
    """A record holding ``fields`` (JSON), for the parser and validate."""
    return {"type": "record", "name": "_", "fields": fields}


# the record _record_of's fields are parsed into
_HOLDER = cast(RecordSchema, parse_schema(_record_of([])))


def _view(record: RecordSchema, fields: Sequence[Field]) -> RecordSchema:
    """``record`` with only ``fields`` (in order) as its fields."""
    return _copy(record, {"fields": tuple(fields), "field_map": {f.name: f for f in fields}})


def _named(template: Field, name: str, position: int) -> Field:
    """A field parsed under a stand-in name, named and placed at ``position``."""
    return _copy(template, {"name": name, "position": position, "pointer": f"/fields/{position}"})


def _shape(value: Any) -> str:
    """What a field's JSON says besides its name (None: no field)."""
    if not isinstance(value, dict):
        return repr(value)
    return repr([(k, v) for k, v in value.items() if k != "name"])


_T = TypeVar("_T", Field, RecordSchema)


def _copy(node: _T, changes: dict[str, Any]) -> _T:
    """A frozen model node with some attributes changed, built as the parser builds nodes (a
    dataclass ``replace`` costs ten times more, and the field road makes two per plan)."""
    out = object.__new__(type(node))
    attrs = dict(node.__dict__)
    attrs.pop(SELF_COMPATIBLE, None)
    attrs.update(changes)
    object.__setattr__(out, "__dict__", attrs)
    return out


def _plain(f: Field) -> bool:
    """A field whose type holds no named type (only primitives, arrays, maps and unions)."""
    return "_ptype" in f.__dict__ or compat._no_named_types(f.type)
