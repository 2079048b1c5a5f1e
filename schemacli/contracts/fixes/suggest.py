"""Suggested fixes for compatibility findings: edits of the candidate that make it pass.

A compatibility finding is placed in its *reader* (Java's location): the candidate for BACKWARD,
the earlier version for FORWARD. Either way the file a user can edit is the candidate, so this
module walks the reader and the writer together along the finding's location (``plans.locate``),
asks the kind's planner (``planners.PLANNERS``) for plans (small edits of the candidate's JSON),
turns each into text edits (``edits.JsonEditor``, so the file's layout is kept outside the
edited spans) and keeps a plan only when ``proof`` proves it: the finding is gone, no comparison
of the level gained one, every field the plan did not touch keeps its Parsing Canonical Form,
and nothing that fastavro or the Python avro package refuse was added. When no plan survives,
one advice-only (``DISPLAY``) fix says so and points at ``schemacli migrate plan``.

Cost: a plan is proven once however many findings propose it, against only what it can affect
(``proof``), and the proving of one check is bounded: what is left when the bound is reached
gets advice instead of fixes. tests/oracle/test_fix_differential.py proves every kept fix again
with the engine, with Apache Avro Java, fastavro and the avro package.

Pure: no terminal, no settings, no files. Costs nothing when there are no findings.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator, Sequence
from typing import Any

from schemacli.contracts.avro.defaults import default_for
from schemacli.contracts.avro.loader import LoadedSchema, NameUse, scan_names
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import NamedSchema, Names, RecordSchema, Schema, named_types
from schemacli.contracts.evolution.levels import BACKWARD, Level, comparisons
from schemacli.contracts.findings import Finding
from schemacli.contracts.fixes.edits import Applicability, EditError, Fix, JsonEditor, TextEdit
from schemacli.contracts.fixes.planners import MIGRATE_HINT, plans_for
from schemacli.contracts.fixes.plans import (
    Op,
    Placement,
    Plan,
    Site,
    Unplaceable,
    held_at,
    locate,
    to_json,
)
from schemacli.contracts.fixes.proof import Budget, FindingKey, Proof, Verdict
from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.source import parse_text
from schemacli.errors import SchemacliError

__all__ = ["Candidate", "FixContext", "MIGRATE_HINT", "default_for", "fixes_for", "to_json"]

SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY

# At most this many fixes are proven and offered per finding; plans come best first.
MAX_FIXES = 4


class Candidate:
    """What every check of one candidate shares: its text's editor, where its named types are
    defined and used, and the proof (plans proven once, whatever level asks). Built lazily."""

    def __init__(self, loaded: LoadedSchema) -> None:
        self.loaded = loaded
        foreign: set[int] = set()
        names: dict[str, NamedSchema] = {}
        for ref in loaded.references:
            for named in named_types(ref.schema):
                foreign.add(id(named))
                names.setdefault(named.fullname, named)
        self.foreign = foreign  # named types defined in referenced files: not ours to edit
        self.foreign_names = frozenset(names)
        self.ref_names = Names(names) if names else None
        self._editor: JsonEditor | None = None
        self._proof: Proof | None = None
        self._definitions: _Definitions | None = None
        self._references: dict[str, list[tuple[str, str]]] | None = None
        self._names: tuple[dict[str, str], list[NameUse]] | None = None
        self._field_names: dict[int, tuple[RecordSchema, frozenset[str]]] = {}
        self.plans: dict[tuple[int, str, str, str], _Planned] = {}
        self._kept: dict[int, LoadedSchema] = {}  # the versions ``plans`` names by id
        self._edits: dict[str, tuple[TextEdit, ...] | None] = {}  # repr of ops -> their edits

    def edits_of(self, ops: Sequence[Op]) -> tuple[TextEdit, ...] | None:
        """The text edits of ``ops`` (None when the text lacks what they name), made once for
        the candidate: a BACKWARD and a FORWARD finding of one field propose the same plans,
        and then share one tuple of edits (proven once, written once in a JSON report)."""
        key = repr(ops)  # the operations' JSON values told apart by type (1, 1.0, True)
        if key in self._edits:
            return self._edits[key]
        try:
            edits: tuple[TextEdit, ...] | None = _edits(self.editor, ops)
        except (KeyError, IndexError, TypeError, ValueError, SchemacliError):
            edits = None
        self._edits[key] = edits
        return edits

    def keep(self, old: LoadedSchema) -> None:
        self._kept[id(old.schema)] = old

    @property
    def value(self) -> Any:
        return self.loaded.value

    @property
    def document(self) -> Document:
        return self.loaded.document

    @property
    def editor(self) -> JsonEditor:
        if self._editor is None:
            self._editor = JsonEditor(self.loaded.document)
        return self._editor

    @property
    def proof(self) -> Proof:
        if self._proof is None:
            self._proof = Proof(self)
        return self._proof

    def parse(self, text: str) -> tuple[Any, Schema] | None:
        """The edited text as (JSON value, schema), None when it is not one. Plain JSON (what
        the edits write) is read by ``json`` directly; a file with comments or repeated keys
        as the loader reads it."""
        document = self.loaded.document
        try:
            if document.has_comments or document.has_duplicates:
                value = parse_text(text, self.loaded.source).value
            else:
                value = json.loads(text)
            return value, parse_schema(value, names=self.ref_names)
        except (SchemacliError, ValueError, RecursionError):
            return None

    def field_names(self, record: RecordSchema) -> frozenset[str]:
        """The names and aliases of ``record``'s fields (kept per record: a wide record's
        many findings ask again and again)."""
        found = self._field_names.get(id(record))
        if found is None or found[0] is not record:
            names = {f.name for f in record.fields} | {a for f in record.fields for a in f.aliases}
            found = self._field_names[id(record)] = (record, frozenset(names))
        return found[1]

    def names_in_text(self) -> tuple[dict[str, str], list[NameUse]]:
        """The full names the candidate's JSON defines (name -> pointer) and every reference
        (``loader.scan_names``), read once."""
        if self._names is None:
            self._names = scan_names(self.loaded.value)
        return self._names

    def candidate_names(self) -> set[str]:
        """Full names of the candidate's named types (a copy: callers add to it)."""
        return set(self.definitions.by_name)

    # -- where named types are defined and used ----------------------------------------------
    @property
    def definitions(self) -> _Definitions:
        if self._definitions is None:
            self._definitions = _Definitions(self)
        return self._definitions

    def placement(self, pointer: str, *, replacing: bool) -> Placement:
        """What a value written at ``pointer`` may use (see ``plans.Placement``): replacing
        the value there, or added at the end of the object or array there. Raises
        ``Unplaceable`` for a pointer the candidate's text lacks."""
        try:
            start, end = self.editor.span(pointer)
        except EditError as err:
            raise Unplaceable(str(err)) from None
        defs = self.definitions
        if replacing:
            before, after = defs.Before(defs, start, (start, end)), defs.After(defs, end)
            above = pointer.rpartition("/")[0]
        else:
            spot = end - 1  # before the closing bracket
            before, after = defs.Before(defs, spot, None), defs.After(defs, spot)
            above = pointer
        return Placement(before, after, defs.namespace_at(above))

    def defined_within(self, pointer: str) -> set[str]:
        """Full names of the named types defined inside the value at ``pointer``."""
        start, end = self.editor.span(pointer)
        return self.definitions.within(start, end)

    def references(self, named: NamedSchema) -> list[tuple[str, str]]:
        """(pointer, spelling) of every place the candidate refers to ``named`` by name."""
        if self._references is None:
            found: dict[str, list[tuple[str, str]]] = {}
            known = self.definitions.by_name.keys() | self.foreign_names
            value = self.loaded.value
            for use in self.names_in_text()[1]:
                target = next((c for c in use.candidates if c in known), None)
                if target is None:
                    continue
                at = use.pointer
                if isinstance(held_at(value, at), dict):
                    at += "/type"
                found.setdefault(target, []).append((at, str(held_at(value, at))))
            self._references = found
        return self._references.get(named.fullname, [])


# The candidates whose fix work is kept (the checks of one candidate come together: diff checks
# it at BACKWARD, FORWARD and FULL); each kept with its schema, so an id is never reused.
_RECENT: list[tuple[LoadedSchema, Candidate]] = []
_RECENT_MAX = 2


def _candidate(loaded: LoadedSchema) -> Candidate:
    for kept, candidate in _RECENT:
        if kept.schema is loaded.schema and kept.document is loaded.document:
            return candidate
    candidate = Candidate(loaded)
    _RECENT.insert(0, (loaded, candidate))
    del _RECENT[_RECENT_MAX:]
    return candidate


class FixContext:
    """One check's fixes: the candidate (its shared :class:`Candidate`), the versions and
    directions its level compares, and how much proving is left (``proof.Budget``)."""

    def __init__(self, candidate: LoadedSchema, history: Sequence[LoadedSchema], level: Level):
        self.candidate = candidate
        self.history = history
        self.level = level
        self.comparisons = comparisons(level, len(history))
        self.shared = _candidate(candidate)
        schema = candidate.schema
        width = len(schema.fields) if isinstance(schema, RecordSchema) else 1
        self.budget = Budget(width, len(self.comparisons))


class _Definitions:
    """Where the candidate's own named types are defined (text offsets, sorted), by name, and
    the namespace each definition's pointer opens."""

    def __init__(self, candidate: Candidate) -> None:
        document = candidate.loaded.document
        self.by_name: dict[str, list[int]] = {}
        self.namespaces: dict[str, str | None] = {}
        placed: list[tuple[int, str]] = []
        # From the JSON, as the parser names them (no model walk: a wide record's fields
        # would each build their type's node)
        for full, pointer in candidate.names_in_text()[0].items():
            if not document.pointer_exists(pointer):
                continue
            offset = document.offset(pointer)
            self.by_name.setdefault(full, []).append(offset)
            self.namespaces[pointer] = full.rsplit(".", 1)[0] if "." in full else None
            placed.append((offset, full))
        placed.sort()
        self.offsets = [offset for offset, _ in placed]
        self.names = [name for _, name in placed]
        self.foreign = candidate.foreign_names

    def within(self, start: int, end: int) -> set[str]:
        low = bisect.bisect_left(self.offsets, start)
        high = bisect.bisect_left(self.offsets, end)
        return set(self.names[low:high])

    def namespace_at(self, pointer: str) -> str | None:
        """The namespace names are read in below ``pointer`` (its innermost named type's,
        the pointer itself included)."""
        while True:
            if pointer in self.namespaces:
                return self.namespaces[pointer]
            if not pointer:
                return None
            pointer = pointer.rpartition("/")[0]

    class Before:
        """Names defined before ``spot`` and not inside ``inside`` (or in another file)."""

        def __init__(self, defs: _Definitions, spot: int, inside: tuple[int, int] | None):
            self.defs, self.spot, self.inside = defs, spot, inside

        def __contains__(self, name: object) -> bool:
            if name in self.defs.foreign:
                return True
            for offset in self.defs.by_name.get(str(name), ()):
                inside = self.inside is not None and self.inside[0] <= offset < self.inside[1]
                if offset < self.spot and not inside:
                    return True
            return False

    class After:
        """Names defined at or after ``spot``."""

        def __init__(self, defs: _Definitions, spot: int):
            self.defs, self.spot = defs, spot

        def __contains__(self, name: object) -> bool:
            return any(offset >= self.spot for offset in self.defs.by_name.get(str(name), ()))


def fixes_for(ctx: FixContext, finding: Finding, index: int, direction: str) -> tuple[Fix, ...]:
    """Proven fixes for ``finding``, the engine's finding of the comparison with version
    ``index`` in ``direction`` (its pointer is Java's location in the reader)."""
    pointer = finding.location.pointer or ""
    key: FindingKey = (index, direction, finding.kind.value, pointer)
    shared = ctx.shared
    kept: list[Fix] = []
    advice: list[Fix] = []
    titles: set[str] = set()
    unproven = False
    for plan, edits in _planned(ctx, finding, index, direction):
        if len(kept) >= MAX_FIXES:
            break  # (planners give advice only where they have no fix to offer)
        if plan.title in titles:  # two fixes of one finding never share a title
            continue
        if plan.applicability is DISPLAY:
            titles.add(plan.title)
            advice.append(Fix(plan.title, DISPLAY))
            continue
        verdict = shared.proof.prove(ctx.comparisons, ctx.history, ctx.budget, plan.ops, edits, key)
        if verdict is Verdict.UNPROVEN:
            unproven = True
        elif verdict is Verdict.PROVEN and all(_other(edits, k.edits) for k in kept):
            titles.add(plan.title)
            kept.append(Fix(plan.title, plan.applicability, edits))
    if not kept and unproven:
        advice.append(
            Fix(
                "Not proven here: proving more fixes would re-check this schema too many "
                "times; fix the other findings first (`check --fix` repeats until nothing "
                "more applies)",
                DISPLAY,
            )
        )
    elif not kept and not advice:
        advice.append(
            Fix(
                f"No edit of this file makes it {ctx.level.value}-compatible here: " + MIGRATE_HINT,
                DISPLAY,
            )
        )
    # safe fixes first (--fix applies the first), then unsafe, then advice
    kept.sort(key=lambda fix: fix.applicability is not SAFE)
    return tuple(kept + advice)


def _other(edits: tuple[TextEdit, ...], kept: tuple[TextEdit, ...]) -> bool:
    """``edits != kept``, the edits compared only when they could be equal."""
    return edits is not kept and (len(edits) != len(kept) or edits != kept)


class _Planned:
    """The plans for one finding with their text edits (display advice: none), made as they
    are asked for (most findings stop at the first few) and kept for the next check."""

    def __init__(self, plans: Iterator[Plan], shared: Candidate) -> None:
        self.plans = plans
        self.shared = shared
        self.made: list[tuple[Plan, tuple[TextEdit, ...]]] = []

    def __iter__(self) -> Iterator[tuple[Plan, tuple[TextEdit, ...]]]:
        yield from self.made
        for plan in self.plans:
            if plan.applicability is DISPLAY:
                edits: tuple[TextEdit, ...] | None = ()
            else:
                edits = self.shared.edits_of(plan.ops)
            if edits is None:
                continue
            self.made.append((plan, edits))
            yield plan, edits


def _planned(ctx: FixContext, finding: Finding, index: int, direction: str) -> _Planned:
    """The plans for ``finding`` (see :class:`_Planned`), made once per candidate, compared
    version, direction and finding."""
    pointer = finding.location.pointer or ""
    old = ctx.history[index]
    shared = ctx.shared
    memo = (id(old.schema), direction, finding.kind.value, pointer)
    found = shared.plans.get(memo)
    if found is not None:
        return found
    backward = direction == BACKWARD
    reader, writer = (
        (ctx.candidate.schema, old.schema) if backward else (old.schema, ctx.candidate.schema)
    )
    site = locate(reader, writer, pointer)
    plans: Iterator[Plan] = iter(())
    if site is not None and not _foreign(shared, site, direction):
        plans = _plans(shared, finding, backward, site)
    found = shared.plans[memo] = _Planned(plans, shared)
    shared.keep(old)
    return found


def _plans(shared: Candidate, finding: Finding, backward: bool, site: Site) -> Iterator[Plan]:
    try:
        yield from plans_for(shared, finding.kind, backward, site)
    except (KeyError, IndexError, TypeError, ValueError, SchemacliError, Unplaceable):
        return  # a node the candidate's text does not hold as the model says: no plan


def _foreign(shared: Candidate, site: Site, direction: str) -> bool:
    nodes = [site.reader if direction == BACKWARD else site.writer]
    nodes.append(site.reader_record if direction == BACKWARD else site.writer_record)
    return any(node is not None and id(node) in shared.foreign for node in nodes) or (
        shared.loaded.references != ()
        and any(
            node is not None and not shared.document.pointer_exists(node.pointer) for node in nodes
        )
    )


def _edits(editor: JsonEditor, ops: Sequence[Op]) -> tuple[TextEdit, ...]:
    """The text edits of ``ops`` (EditError for a pointer the text lacks)."""
    out: list[TextEdit] = []
    for op in ops:
        name = op[0]
        if name == "set":
            out.append(editor.set_member(op[1], op[2], op[3]))
        elif name == "replace":
            out.append(editor.replace(op[1], op[2]))
        elif name == "append":
            array = held_at(editor.document.value, op[1])
            out.append(editor.insert_element(op[1], len(array), op[2]))
        elif name == "remove":
            out.append(editor.remove_member(op[1], op[2]))
        elif name == "remove_element":
            out.append(editor.remove_element(op[1], op[2]))
        else:  # pragma: no cover - the planners use only these
            raise EditError(f"unknown operation {name!r}")
    return tuple(out)
