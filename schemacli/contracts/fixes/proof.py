"""The proof of a suggested fix: what applying it does to the check, at a cost that follows it.

A plan (``plans.Plan``: operations on the candidate's JSON, and their text edits) is *proven*
for a finding when, at the subject's level:

* the edited candidate parses;
* that finding is gone, and no comparison of the level gained a finding (an ambiguous field is
  the exception: Java stops there, so the comparison's other findings were unknown, and may
  show once it is gone; never a new ambiguity);
* every field whose text and whose named types' definitions no edit touches keeps its Parsing
  Canonical Form (Java's check compares simple names, so a type that starts to resolve to
  another namespace would pass it);
* nothing fastavro or the Python avro package refuse was added: no named type defined twice, no
  name that only Java resolves (a forward reference, or a fallback to the null namespace).

Two roads answer, and a test feeds both the same plans and compares
(tests/unit/test_fix_proof.py):

* **the field road** (most fixes of a wide record: a default, an optional union, a primitive
  type, a promotion, a field split into two): when both sides are records and every edited or
  added top-level field holds no named type, before and after, a top-level field's findings
  depend only on itself and the earlier version's fields it matches. So only the fields the
  plan touches, and on a FORWARD comparison the earlier version's fields that match them (with
  every field they share a named type with), are checked, before and after; the findings of
  all the others are the ones the candidate already has. Cost: the touched fields, not the
  record's width.
* **the whole road**, for everything else: the edited text is parsed and checked whole.

A plan is proven once however many findings propose it (BACKWARD and FORWARD findings of one
field at FULL propose the same ones), and the whole road's work is bounded per check
(:data:`BUDGET_PER_FIELD`): a plan past the bound is neither proven nor refuted (``UNPROVEN``),
and ``suggest`` says so instead of offering it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.loader import LoadedSchema, NameUse, scan_names
from schemacli.contracts.avro.parse import SELF_COMPATIBLE, parse_schema
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
from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.levels import BACKWARD
from schemacli.contracts.fixes.edits import EditError, TextEdit, apply_edits, overlapping
from schemacli.contracts.fixes.plans import Op, edited, tokens
from schemacli.contracts.jsontext.source import Document
from schemacli.contracts.lint import validate
from schemacli.errors import SchemacliError
from schemacli.kinds import Kind

if TYPE_CHECKING:  # suggest builds the proof of its candidate
    from schemacli.contracts.fixes.suggest import Candidate

__all__ = ["Budget", "FindingKey", "Proof", "Verdict"]

FindingKey = tuple[int, str, str, str]  # (version index, direction, kind, pointer)
Keys = Counter[tuple[str, str]]  # (kind, pointer) -> how often the engine reports it
_Comparison = tuple[int, str]  # (id of the earlier version's schema, direction)

AMBIGUOUS = Kind.AMBIGUOUS_FIELD_MATCH.value

# The whole road may check at most this many (top-level field x comparison) units per field of
# the candidate and comparison, plus BUDGET_FLOOR: about 64 whole re-checks, whatever the width.
BUDGET_PER_FIELD = 64
BUDGET_FLOOR = 100_000


class Verdict(Enum):
    PROVEN = "proven"
    REFUTED = "refuted"
    UNPROVEN = "unproven"  # the bound was reached first


class Budget:
    """How much proving one check may still do, in (top-level field x comparison) units."""

    def __init__(self, width: int, comparisons: int, *, left: int | None = None) -> None:
        self.width = width + 1
        if left is None:
            left = BUDGET_PER_FIELD * self.width * max(comparisons, 1) + BUDGET_FLOOR
        self.left = left

    def take(self, units: int) -> bool:
        if units > self.left:
            return False
        self.left -= units
        return True


@dataclass(frozen=True)
class _Effect:
    """What a plan does to one comparison: the findings after it, and on the field road the
    touched fields' findings before it (the rest of the comparison does not change)."""

    after: Keys
    before_local: Keys | None = None

    def removes(self, found: tuple[str, str], before: Keys) -> bool:
        if self.after[found]:
            return False
        return self.before_local is None or before[found] - self.before_local[found] <= 0


_BROKEN = _Effect(Counter())  # the edited text does not parse, or breaks what the proof keeps


class _Plan:
    """What one plan does, found out once and shared by every finding and check proposing it."""

    def __init__(self, broken: bool) -> None:
        self.broken = broken
        self.fields: _Changed | None | bool = False  # the field road's view; False: not yet
        self.whole: tuple[Any, Schema] | None | bool = False  # the edited schema; False: not yet
        self.effects: dict[_Comparison, _Effect] = {}


class Proof:
    """Proves plans for one candidate (``suggest.Candidate``), against any of its checks: the
    plans' effects are kept per comparison, so ``diff``'s BACKWARD, FORWARD and FULL checks of
    one candidate prove each plan once per direction."""

    def __init__(self, candidate: Candidate, *, field_road: bool = True) -> None:
        """``field_road=False``: every plan by the whole road (the test comparing the two)."""
        self.candidate = candidate
        self.use_field_road = field_road
        self._before: dict[_Comparison, tuple[LoadedSchema, Keys, bool]] = {}
        self._plans: dict[tuple[TextEdit, ...], _Plan] = {}
        self._road: _FieldRoad | None | bool = False  # False: not looked at yet
        self._untouched: _Untouched | None = None
        self._refusals: tuple[int, int, int] | None = None
        self._warnings: Counter[str] | None = None

    # -- the check before any fix ------------------------------------------------------------
    def before(self, old: LoadedSchema, direction: str) -> tuple[Keys, bool]:
        """The engine's findings of the candidate against ``old`` in ``direction``, and
        whether Java stopped at an ambiguous field there (its other findings unknown)."""
        key = (id(old.schema), direction)
        found = self._before.get(key)
        if found is None or found[0].schema is not old.schema:
            keys = self._keys(self.candidate.loaded.schema, old, direction)
            masked = any(kind == AMBIGUOUS for kind, _ in keys)
            found = self._before[key] = (old, keys, masked)
        return found[1], found[2]

    @staticmethod
    def _keys(schema: Schema, old: LoadedSchema, direction: str) -> Keys:
        if direction == BACKWARD:
            return _keys(schema, old.schema)
        return _keys(old.schema, schema)

    # -- proving -----------------------------------------------------------------------------
    def prove(
        self,
        comparisons: Sequence[tuple[int, str]],
        history: Sequence[LoadedSchema],
        budget: Budget,
        ops: Sequence[Op],
        edits: tuple[TextEdit, ...],
        key: FindingKey,
    ) -> Verdict:
        """Whether the plan ``ops`` (whose text edits are ``edits``) fixes the finding ``key``
        at a level that makes ``comparisons`` against ``history``, and breaks nothing (see the
        module's docstring); UNPROVEN when ``budget`` runs out first."""
        plan = self._plans.get(edits)
        if plan is None:
            plan = self._plans[edits] = _Plan(overlapping(edits))
        if plan.broken:
            return Verdict.REFUTED
        target: bool | None = None
        for index, direction in comparisons:
            old = history[index]
            before, masked = self.before(old, direction)
            effect = plan.effects.get((id(old.schema), direction))
            if effect is None:
                effect = self._effect(plan, ops, edits, old, direction, masked, budget)
                if effect is None:
                    return Verdict.UNPROVEN
                plan.effects[(id(old.schema), direction)] = effect
            if effect is _BROKEN or _gained(effect.after, before, masked):
                return Verdict.REFUTED
            if (index, direction) == (key[0], key[1]):
                target = effect.removes((key[2], key[3]), before)
        return Verdict.PROVEN if target else Verdict.REFUTED

    def _effect(
        self,
        plan: _Plan,
        ops: Sequence[Op],
        edits: tuple[TextEdit, ...],
        old: LoadedSchema,
        direction: str,
        masked: bool,
        budget: Budget,
    ) -> _Effect | None:
        road = self.field_road
        if plan.fields is False:
            plan.fields = road.changed(ops) if road is not None else None
        if road is not None and isinstance(plan.fields, _Changed):
            if plan.fields.broken:
                return _BROKEN
            if not masked:
                local = road.effect(plan.fields, old, direction)
                if local is not None:
                    cost, effect = local
                    return effect if budget.take(cost) else None
        # the whole road: the edited text parsed (once per plan) and checked whole
        if plan.whole is False:
            if not budget.take(budget.width):
                return None
            plan.whole = self._parsed(edits)
        if not isinstance(plan.whole, tuple):
            return _BROKEN
        if not budget.take(budget.width):
            return None
        return _Effect(self._keys(plan.whole[1], old, direction))

    # -- the whole road ----------------------------------------------------------------------
    def _parsed(self, edits: tuple[TextEdit, ...]) -> tuple[Any, Schema] | None:
        """The edited candidate as (JSON value, schema); None when it does not parse, defines
        or uses names readers refuse, or changes a field it does not touch."""
        candidate = self.candidate
        try:
            text = apply_edits(candidate.loaded.document.text, edits)
        except EditError:
            return None
        parsed = candidate.parse(text)
        if parsed is None or not self._readable(*parsed):
            return None
        if self._warnings is None:
            self._warnings = _warned(candidate.loaded.value, candidate.loaded.schema)
        if _warned(*parsed) - self._warnings:
            return None
        if self._untouched is None:
            self._untouched = _Untouched(candidate)
        if not self._untouched.kept(edits, parsed[1]):
            return None
        return parsed

    def _readable(self, value: Any, schema: Schema) -> bool:
        """No more names defined twice, and no more names only Java resolves, than before."""
        candidate = self.candidate
        if self._refusals is None:
            self._refusals = _refusals(candidate.loaded.value, candidate.loaded.schema, candidate)
        now = _refusals(value, schema, candidate)
        return all(n <= b for n, b in zip(now, self._refusals, strict=True))

    # -- the field road ----------------------------------------------------------------------
    @property
    def field_road(self) -> _FieldRoad | None:
        if self._road is False:
            self._road = _FieldRoad.of(self.candidate) if self.use_field_road else None
        return self._road if isinstance(self._road, _FieldRoad) else None


def _keys(reader: Schema, writer: Schema) -> Keys:
    return Counter(
        (kind.value, pointer) for kind, pointer in compat.incompatibilities(reader, writer)
    )


def _gained(after: Keys, before: Keys, masked: bool) -> bool:
    """Whether a comparison gained a finding (see the module's docstring for ambiguity;
    ``masked``: Java stopped at an ambiguous field there before)."""
    return any(found not in before and (not masked or found[0] == AMBIGUOUS) for found in after)


# --------------------------------------------------------------------------------------------
# What the readers that validate names refuse
# --------------------------------------------------------------------------------------------


def _refusals(value: Any, schema: Schema, candidate: Candidate) -> tuple[int, int, int]:
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


def _warned(value: Any, schema: Schema) -> Counter[str]:
    """``validate``'s warnings about ``schema`` (parsed from ``value``), by kind: what Java
    accepts but fastavro or the Python avro package refuse or read otherwise."""
    text = json.dumps(value, ensure_ascii=False)
    document = Document(value=value, source="<fixed>", text=text)
    loaded = LoadedSchema(source="<fixed>", document=document, schema=schema)
    return Counter(f.kind.value for f in validate.lint(loaded))


def _may_warn(fields: Sequence[Any]) -> bool:
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
    if isinstance(value, dict):
        return "logicalType" in value or any(_logical(v) for v in value.values())
    if isinstance(value, list):
        return any(_logical(v) for v in value)
    return False


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


def _readable_use(use: NameUse, defined: dict[str, str], candidate: Candidate) -> bool:
    full = use.candidates[0]
    if full in candidate.foreign_names:
        return True
    at = defined.get(full)
    return at is not None and _order(at) <= _order(use.pointer)


def _order(pointer: str) -> tuple[tuple[int, int | str], ...]:
    """A pointer's place in document order (the walk ``scan_names`` makes)."""
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in tokens(pointer))


# --------------------------------------------------------------------------------------------
# Untouched fields keep their Parsing Canonical Form
# --------------------------------------------------------------------------------------------


class _Untouched:
    """Every record field of the candidate: its text span, the named types its type names
    directly, and its canonical form; the named types' definition spans and what each one
    names directly (built once, for the whole road)."""

    def __init__(self, candidate: Candidate) -> None:
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


# --------------------------------------------------------------------------------------------
# The field road
# --------------------------------------------------------------------------------------------


class _Fields:
    """One record's top-level fields: by name and by alias, which share a named type (groups),
    and which reach the record itself (a recursive record's fields are not independent)."""

    def __init__(self, record: RecordSchema) -> None:
        self.record = record
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
        return _copy(
            self.record, {"fields": tuple(fields), "field_map": {f.name: f for f in fields}}
        )


@dataclass(frozen=True)
class _Changed:
    """A plan as the field road sees it: the edited top-level fields (by position) and the
    added ones, each holding no named type; ``broken`` when the edits do not give a valid
    record (a field added twice or under a taken name)."""

    edited: dict[int, Field]
    added: tuple[Field, ...]
    broken: bool = False


class _FieldRoad:
    """The field road (see the module's docstring) for one candidate."""

    def __init__(self, candidate: Candidate, fields: _Fields) -> None:
        self.candidate = candidate
        self.fields = fields
        self.values: list[Any] = candidate.loaded.value["fields"]
        self.versions: dict[int, tuple[RecordSchema, _Fields]] = {}
        self.befores: dict[tuple[object, ...], Keys] = {}
        self.warnings: dict[tuple[int, ...], Counter[str]] = {}

    @classmethod
    def of(cls, candidate: Candidate) -> _FieldRoad | None:
        """The road, or None when the candidate is not a record written as one."""
        schema, value = candidate.loaded.schema, candidate.loaded.value
        if not isinstance(schema, RecordSchema) or not isinstance(value, dict):
            return None
        fields = value.get("fields")
        if not isinstance(fields, list) or len(fields) != len(schema.fields):
            return None
        return cls(candidate, _Fields(schema))

    def version(self, old: LoadedSchema) -> _Fields | None:
        """The earlier version's fields (None when it is not a record)."""
        schema = old.schema
        if not isinstance(schema, RecordSchema):
            return None
        found = self.versions.get(id(schema))
        if found is None or found[0] is not schema:
            found = self.versions[id(schema)] = (schema, _Fields(schema))
        return found[1]

    def effect(
        self, changed: _Changed, old_loaded: LoadedSchema, direction: str
    ) -> tuple[int, _Effect] | None:
        """(cost, effect) of the plan on the comparison with ``old_loaded`` in
        ``direction``; None when the road cannot tell (a recursive record on the way)."""
        old = self.version(old_loaded)
        if old is None:
            return None
        record = self.fields.record
        edited, added = changed.edited, list(changed.added)
        if direction == BACKWARD:
            positions = sorted(edited)
            was_key: tuple[object, ...] = (id(old.record), direction, tuple(positions))
            reader_now = self.fields.view([edited[p] for p in positions] + added)
            reader_was = self.fields.view([record.fields[p] for p in positions])
            writer_was = writer_now = old.record
            cost = len(positions) + len(added)
        else:
            names = {record.fields[p].name for p in edited} | {f.name for f in added}
            readers = sorted(old.closed(old.matching(names)))
            if any(old.reaches_record(p) for p in readers):
                return None
            read = [old.record.fields[p] for p in readers]
            wanted = sorted(self.fields.matched_by(read) | set(edited))
            if any(self.fields.reaches_record(p) for p in wanted):
                return None
            was_key = (id(old.record), direction, tuple(readers), tuple(wanted))
            reader_was = reader_now = old.view(read)
            writer_was = self.fields.view([record.fields[p] for p in wanted])
            writer_now = self.fields.view([edited.get(p, record.fields[p]) for p in wanted] + added)
            cost = len(readers) + len(wanted) + len(added)
        before_local = self.befores.get(was_key)
        if before_local is None:
            before_local = self.befores[was_key] = _keys(reader_was, writer_was)
        return cost, _Effect(_keys(reader_now, writer_now), before_local)

    def changed(self, ops: Sequence[Op]) -> _Changed | None:
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
            tiny = {"type": "record", "name": "_", "fields": values + appended}
            parsed = parse_schema(tiny)
        except (KeyError, IndexError, TypeError, ValueError, SchemacliError, RecursionError):
            return None  # the whole road decides (a name from elsewhere, or an invalid edit)
        assert isinstance(parsed, RecordSchema)
        if not all(_plain(f) for f in parsed.fields):
            return None
        out: dict[int, Field] = {}
        for position, f in zip(positions, parsed.fields, strict=False):
            if f.name != record.fields[position].name:
                return None
            out[position] = _copy(f, {"position": position, "pointer": f"/fields/{position}"})
        added: list[Field] = []
        names: set[str] = set()
        for offset, f in enumerate(parsed.fields[len(positions) :]):
            if f.name in record.field_map or f.name in names:
                return _Changed({}, (), broken=True)
            names.add(f.name)
            position = len(record.fields) + offset
            added.append(_copy(f, {"position": position, "pointer": f"/fields/{position}"}))
        if _may_warn(tiny["fields"]) and _warned(tiny, parsed) - self._warnings_before(positions):
            return _Changed({}, (), broken=True)  # readers would refuse or misread it
        return _Changed(out, tuple(added))

    def _warnings_before(self, positions: list[int]) -> Counter[str]:
        key = tuple(positions)
        found = self.warnings.get(key)
        if found is None:
            tiny = {"type": "record", "name": "_", "fields": [self.values[p] for p in positions]}
            found = self.warnings[key] = _warned(tiny, parse_schema(tiny))
        return found


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
