"""The proof of a suggested fix: what applying it does to the check, at a cost that follows it.

A plan (``plans.Plan``: operations on the candidate's JSON, and their text edits) is *proven*
for a finding when, at the subject's level:

* the edited candidate parses;
* that finding is gone, and no comparison of the level gained a finding (an ambiguous field is
  the exception: Java stops there, so the comparison's other findings were unknown, and may
  show once it is gone; never a new ambiguity);
* every field whose text and whose named types' definitions no edit touches keeps its Parsing
  Canonical Form, and nothing fastavro or the Python avro package refuse or read otherwise was
  added (``guards``).

Two roads answer, and a test feeds both the same plans and compares
(tests/unit/test_fix_proof.py):

* **the field road** (``fieldroad``; most fixes of a wide record: a default, an optional union,
  a primitive type, a promotion, a field split into two): only the top-level fields the plan
  touches, and on a FORWARD comparison the earlier version's fields that read them, are
  checked, before and after; the findings of all the others are the candidate's own. Cost: the
  touched fields, not the record's width.
* **the whole road**, for everything else: the edited text is parsed and checked whole.

A plan is proven once however many findings propose it (BACKWARD and FORWARD findings of one
field at FULL propose the same ones), and once for all the fields of one shape: on the field
road, a plan editing one plain field (and appending at most one under a name no field has)
gets a verdict that cannot depend on the field's position or name, nor on the other fields
(``Proof._shape_key`` says why), so a wide change of thousands of fields of a handful of
shapes proves a handful of plans and reuses their verdicts; a test compares every shared
verdict with the one proven plan by plan (tests/unit/test_fix_proof.py), and the documents
written both ways (tests/unit/test_fix_scale_documents.py). The whole road's work is bounded
per check
(:data:`BUDGET_PER_FIELD`): a plan past the bound is neither proven nor refuted (``UNPROVEN``),
and ``suggest`` says so instead of offering it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.schema import Schema
from schemacli.contracts.evolution.levels import BACKWARD
from schemacli.contracts.fixes.edits import EditError, TextEdit, apply_edits, overlapping
from schemacli.contracts.fixes.fieldroad import Changed, FieldRoad, Keys, keys_of
from schemacli.contracts.fixes.guards import Untouched, refusals, warned
from schemacli.contracts.fixes.plans import CandidateView, Op
from schemacli.kinds import Kind

__all__ = ["Budget", "FindingKey", "Proof", "Verdict"]

FindingKey = tuple[int, str, str, str]  # (version index, direction, kind, pointer)
_Comparison = tuple[int, str]  # (id of the earlier version's schema, direction)
_Step = tuple[_Comparison, int]  # a comparison a proof looked at, and the units it cost
# a plan's edited field: (position, name, appended field's name, shape of field and plan)
_PlanShape = tuple[int, str, str | None, tuple[str, str]]
# per comparison (earlier version's id, direction, its field's shape); its fields' pointers
_Versions = tuple[tuple[tuple[int, str, str], ...], tuple[str, ...]]

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


# slots, not frozen: one per plan and comparison, never changed (a frozen init costs more)
@dataclass(slots=True)
class _Effect:
    """What a plan does to one comparison: the findings after it, and on the field road the
    touched fields' findings before it (the rest of the comparison does not change)."""

    after: Keys
    before_local: Keys | None = None
    cost: int = 0  # the proving units it took (a verdict shared by shape takes them again)

    def removes(self, found: tuple[str, str], before: Keys) -> bool:
        if self.after[found]:
            return False
        return self.before_local is None or before[found] - self.before_local[found] <= 0


_BROKEN = _Effect(Counter())  # the edited text does not parse, or breaks what the proof keeps


class _Plan:
    """What one plan does, found out once and shared by every finding and check proposing it."""

    def __init__(self, broken: bool) -> None:
        self.broken = broken
        self.fields: Changed | None | bool = False  # the field road's view; False: not yet
        self.whole: tuple[Any, Schema] | None | bool = False  # the edited schema; False: not yet
        self.effects: dict[_Comparison, _Effect] = {}
        self.charged: set[_Comparison] = set()  # the comparisons its proving was paid for
        # (position, name, appended name, shape) for ``Proof._shape_key``; None: it has none
        self.shape: _PlanShape | None = None
        self.shaped = False  # ``shape`` looked at


class Proof:
    """Proves plans for one candidate (``suggest.Candidate``), against any of its checks: the
    plans' effects are kept per comparison, so ``diff``'s BACKWARD, FORWARD and FULL checks of
    one candidate prove each plan once per direction."""

    def __init__(
        self, candidate: CandidateView, *, field_road: bool = True, by_shape: bool = True
    ) -> None:
        """``field_road=False``: every plan by the whole road; ``by_shape=False``: every plan
        proven itself, no verdict shared between fields of one shape (the tests comparing)."""
        self.candidate = candidate
        self.use_field_road = field_road
        self.by_shape = by_shape and field_road
        # a verdict for every plan of one shape key (``_shape_key``), with the comparisons
        # its proof looked at and what each cost
        self._by_shape: dict[tuple[object, ...], tuple[Verdict, tuple[_Step, ...]]] = {}
        self._field_versions: dict[
            tuple[str, str | None, int, int], tuple[object, object, _Versions | None]
        ] = {}
        self._before: dict[_Comparison, tuple[LoadedSchema, Keys, bool]] = {}
        self._plans: dict[tuple[TextEdit, ...], _Plan] = {}
        self._by_id: dict[int, tuple[tuple[TextEdit, ...], _Plan]] = {}  # id of edits -> them
        self._road: FieldRoad | None | bool = False  # False: not looked at yet
        self._untouched: Untouched | None = None
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
            return keys_of(schema, old.schema)
        return keys_of(old.schema, schema)

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
        plan = self._plan(edits)
        if plan.broken:
            return Verdict.REFUTED
        shape = self._shape_key(plan, comparisons, history, ops, key) if self.by_shape else None
        if shape is not None:
            known = self._by_shape.get(shape)
            if known is not None:
                return _reused(plan, known, budget)
        steps: list[tuple[_Comparison, _Effect]] = []
        verdict = self._proven(plan, comparisons, history, budget, ops, edits, key, steps)
        if shape is not None and verdict is not Verdict.UNPROVEN and _shareable(plan, steps):
            self._by_shape[shape] = (verdict, tuple((c, e.cost) for c, e in steps))
        return verdict

    def _proven(
        self,
        plan: _Plan,
        comparisons: Sequence[tuple[int, str]],
        history: Sequence[LoadedSchema],
        budget: Budget,
        ops: Sequence[Op],
        edits: tuple[TextEdit, ...],
        key: FindingKey,
        steps: list[tuple[_Comparison, _Effect]],
    ) -> Verdict:
        """``prove``'s answer found from the plan's effects (each comparison's found once
        per plan); ``steps`` gets the comparisons looked at, in order, with their effects."""
        target: bool | None = None
        for index, direction in comparisons:
            old = history[index]
            before, masked = self.before(old, direction)
            comparison = (id(old.schema), direction)
            effect = plan.effects.get(comparison)
            if effect is None:
                effect = self._effect(plan, ops, edits, old, direction, masked, budget)
                if effect is None:
                    return Verdict.UNPROVEN
                plan.effects[comparison] = effect
                plan.charged.add(comparison)
            steps.append((comparison, effect))
            if effect is _BROKEN or _gained(effect.after, before, masked):
                return Verdict.REFUTED
            if (index, direction) == (key[0], key[1]):
                target = effect.removes((key[2], key[3]), before)
        return Verdict.PROVEN if target else Verdict.REFUTED

    # -- one verdict for every field of one shape ----------------------------------------------
    def _shape_key(
        self,
        plan: _Plan,
        comparisons: Sequence[tuple[int, str]],
        history: Sequence[LoadedSchema],
        ops: Sequence[Op],
        key: FindingKey,
    ) -> tuple[object, ...] | None:
        """What the verdict of ``plan`` (operations ``ops``) for the finding ``key`` can
        depend on, with the edited field's position and name left out; None when it may
        depend on more.

        A plan that edits one top-level field (not its name) of a record, the field plain,
        without aliases, its name ASCII and matched by no other field, in the candidate and
        in every compared version, and appends at most one field under an ASCII name no field
        of the candidate or of a compared version has as a name or alias: on the field road
        its findings before and after are that field's alone (and the earlier version's field
        of its name, reading or read by it), placed under the reader field's pointer, and the
        appended field's, which reads no field and is read by none, placed after the last
        field; every other field's findings are the same before and after. So the verdict is
        a function of the field's shape (its JSON but its name), the operations relative to
        the field (the appended field but its name), each compared version's field's shape
        and the finding relative to its reader field. ``_shareable`` keeps a verdict only
        when the proof that found it took the field road, showed no name to validate's rules
        and left no alias; tests/unit/test_fix_proof.py compares the shared verdicts with
        the ones proven plan by plan."""
        if not plan.shaped:
            plan.shape, plan.shaped = self._plan_shape(ops), True
        if plan.shape is None:
            return None
        position, name, added, own = plan.shape
        versions = self._versions(name, added, comparisons, history)
        if versions is None:
            return None
        shapes, pointers = versions
        for step, ((index, direction), at) in enumerate(zip(comparisons, pointers, strict=True)):
            if index == key[0] and direction == key[1]:
                pointer = key[3]
                if direction == BACKWARD:
                    at = f"/fields/{position}"
                if pointer != at and not pointer.startswith(at + "/"):
                    return None
                # the finding's comparison by its place among the compared (``shapes`` holds
                # each one's version), not by its version's index in this history
                return (own, shapes, step, key[2], pointer[len(at) :])
        return None  # (the finding is not of these comparisons: not asked)

    def _plan_shape(self, ops: Sequence[Op]) -> _PlanShape | None:
        """(the edited field's position, its name, the appended field's name, the plan's
        shape: the field's and the operations' relative to it), or None (see ``_shape_key``)."""
        road = self.field_road
        edited = _one_field(ops) if road is not None else None
        if road is None or edited is None:
            return None
        position, appended = edited
        alone = road.alone(position)
        if alone is None:
            return None
        added = None if appended is None else appended["name"]
        if added is not None and not road.unheard(added, None):
            return None
        return position, alone[0], added, (alone[1], _relative(ops, position))

    def _versions(
        self,
        name: str,
        added: str | None,
        comparisons: Sequence[tuple[int, str]],
        history: Sequence[LoadedSchema],
    ) -> _Versions | None:
        """For each comparison, (its earlier version's id, the direction, the shape of that
        version's field ``name``), and the pointers of those fields; None when one of them
        lacks a shape key's conditions or ``added`` names a field there. Kept per name and
        check (the comparisons and history a check asks with are the same objects)."""
        memo = (name, added, id(comparisons), id(history))
        found = self._field_versions.get(memo)
        if found is not None and found[0] is comparisons and found[1] is history:
            return found[2]
        road = self.field_road
        shapes: list[tuple[int, str, str]] = []
        pointers: list[str] = []
        answer: _Versions | None = None
        for index, direction in comparisons:
            old = history[index]
            there = road.counterpart(old, name) if road is not None else None
            if road is None or there is None:
                break
            if added is not None and not road.unheard(added, old):
                break
            shapes.append((id(old.schema), direction, there[1]))
            pointers.append(f"/fields/{there[0]}")
        else:
            answer = (tuple(shapes), tuple(pointers))
        self._field_versions[memo] = (comparisons, history, answer)
        return answer

    def _plan(self, edits: tuple[TextEdit, ...]) -> _Plan:
        """The plan whose text edits are ``edits``: one for equal edits, found by the tuple's
        identity first (a finding's plans are proven at every level that asks: hashing the
        edits each time cost more than the rest of a proof already made)."""
        found = self._by_id.get(id(edits))
        if found is not None and found[0] is edits:
            return found[1]
        plan = self._plans.get(edits)
        if plan is None:
            plan = self._plans[edits] = _Plan(overlapping(edits))
        self._by_id[id(edits)] = (edits, plan)
        return plan

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
        if road is not None and isinstance(plan.fields, Changed):
            if plan.fields.broken:
                return _BROKEN
            if not masked:
                local = road.effect(plan.fields, old, direction)
                if local is not None:
                    cost, after, before_local = local
                    charged = (id(old.schema), direction) in plan.charged
                    if not charged and not budget.take(cost):
                        return None
                    return _Effect(after, before_local, cost)
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
            self._warnings = warned(candidate.loaded.value, candidate.loaded.schema)
        if warned(*parsed) - self._warnings:
            return None
        if self._untouched is None:
            self._untouched = Untouched(candidate)
        if not self._untouched.kept(edits, parsed[1]):
            return None
        return parsed

    def _readable(self, value: Any, schema: Schema) -> bool:
        """No more names defined twice, and no more names only Java resolves, than before."""
        candidate = self.candidate
        if self._refusals is None:
            self._refusals = refusals(candidate.loaded.value, candidate.loaded.schema, candidate)
        now = refusals(value, schema, candidate)
        return all(n <= b for n, b in zip(now, self._refusals, strict=True))

    # -- the field road ----------------------------------------------------------------------
    @property
    def field_road(self) -> FieldRoad | None:
        if self._road is False:
            self._road = FieldRoad.of(self.candidate) if self.use_field_road else None
        return self._road if isinstance(self._road, FieldRoad) else None


def _gained(after: Keys, before: Keys, masked: bool) -> bool:
    """Whether a comparison gained a finding (see the module's docstring for ambiguity;
    ``masked``: Java stopped at an ambiguous field there before)."""
    return any(found not in before and (not masked or found[0] == AMBIGUOUS) for found in after)


def _reused(plan: _Plan, known: tuple[Verdict, tuple[_Step, ...]], budget: Budget) -> Verdict:
    """A verdict found for another plan of the same shape key, the proving units paid as that
    plan's proof paid them (each comparison once per plan), so the bound falls where it would
    have fallen had this plan been proven itself."""
    verdict, steps = known
    for comparison, cost in steps:
        if comparison in plan.charged:
            continue
        if not budget.take(cost):
            return Verdict.UNPROVEN
        plan.charged.add(comparison)
    return verdict


def _shareable(plan: _Plan, steps: list[tuple[_Comparison, _Effect]]) -> bool:
    """Whether the verdict just proven for ``plan`` holds for every plan of its shape key:
    the field road looked at one edited field and at most one added one, and nothing else
    (no name seen by validate's rules, no alias on either) for every comparison."""
    changed = plan.fields
    if not isinstance(changed, Changed) or changed.broken or changed.named:
        return False
    if len(changed.edited) != 1 or len(changed.added) > 1:
        return False
    if any(f.aliases for f in (*changed.edited.values(), *changed.added)):
        return False
    return all(effect.before_local is not None for _, effect in steps)


def _one_field(ops: Sequence[Op]) -> tuple[int, Any] | None:
    """(the position of the one top-level field every operation of ``ops`` but one append of
    a field edits inside, not its name nor the field replaced whole; the appended field's
    JSON or None); None when the operations are not of that form."""
    position: int | None = None
    appended: Any = None
    for op in ops:
        pointer = op[1]
        if pointer == "/fields" and op[0] == "append" and appended is None:
            appended = op[2]
            if not isinstance(appended, dict) or not isinstance(appended.get("name"), str):
                return None
            continue
        if not isinstance(pointer, str) or not pointer.startswith("/fields/"):
            return None
        number, slash, _ = pointer[len("/fields/") :].partition("/")
        if not (number.isascii() and number.isdigit()) or (len(number) > 1 and number[0] == "0"):
            return None
        if not slash and (op[0] not in ("set", "remove") or op[2] == "name"):
            return None
        if position is None:
            position = int(number)
        elif position != int(number):
            return None
    return None if position is None else (position, appended)


def _relative(ops: Sequence[Op], position: int) -> str:
    """``ops`` with their pointers relative to the field at ``position`` and an appended
    field's name left out (``repr``: the JSON values told apart by type, 1, 1.0 and True)."""
    cut = len(f"/fields/{position}")
    return repr(
        tuple(
            ("append", [(k, v) for k, v in op[2].items() if k != "name"])
            if op[1] == "/fields"
            else (op[0], op[1][cut:], *op[2:])
            for op in ops
        )
    )
