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
field at FULL propose the same ones), and the whole road's work is bounded per check
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


class Proof:
    """Proves plans for one candidate (``suggest.Candidate``), against any of its checks: the
    plans' effects are kept per comparison, so ``diff``'s BACKWARD, FORWARD and FULL checks of
    one candidate prove each plan once per direction."""

    def __init__(self, candidate: CandidateView, *, field_road: bool = True) -> None:
        """``field_road=False``: every plan by the whole road (the test comparing the two)."""
        self.candidate = candidate
        self.use_field_road = field_road
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
                    return _Effect(after, before_local) if budget.take(cost) else None
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
