"""Reader/writer compatibility, exactly as Apache Avro Java's ``SchemaCompatibility`` decides it.

Confluent Schema Registry answers "is this schema compatible?" by calling
``SchemaCompatibility.checkReaderWriterCompatibility(reader, writer)`` from the Avro 1.12 jar.
This module is our own implementation of the same algorithm, kept case for case in agreement by
``tests/oracle`` (differential tests against the jar). Its quirks are Java's and are kept on
purpose; ``docs/compatibility.md`` lists them. In short:

* named types match on their *simple* names (namespaces are ignored), or when a reader alias is
  the writer's full name;
* reader/writer pairs are memoised by node identity, which breaks recursion and also means a
  pair met twice reports the location where it was first met;
* inside a reader union (and for each writer branch of a union-vs-union check) branches are
  tried on a fresh location, so only the union itself is reported;
* a reader field missing from the writer, without default, whose type is an enum with a default
  is compared against the writer *record* (a TYPE_MISMATCH);
* a reader field whose name and aliases match more than one writer field makes Java throw; we
  report it as :data:`AMBIGUOUS_FIELD_MATCH` (the registry then calls the schema incompatible).

``check(reader, writer)`` returns a :class:`CompatResult`; ``check_level`` applies a registry
compatibility level to a candidate and a subject's history.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from schemacli.contracts.avro.facts import PRIMITIVE_TYPES, PROMOTIONS
from schemacli.contracts.avro.parse import SELF_COMPATIBLE, parse_schema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    NamedSchema,
    PrimitiveSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.evolution.incompatibility import (
    Ambiguous,
    Incompatibility,
    JavaPath,
    ambiguous_finding,
    finding,
)
from schemacli.contracts.evolution.levels import BACKWARD, FORWARD, Level, comparisons
from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext import nesting
from schemacli.kinds import INCOMPATIBILITIES, Kind

# Incompatibility kinds (Java's SchemaIncompatibilityType names, plus AMBIGUOUS_FIELD_MATCH)
# with their templates and hints: schemacli.kinds. Bound to names once here: the engine
# compares and builds them per incompatibility, and an enum attribute costs ~0.7 us on 3.11.
NAME_MISMATCH = Kind.NAME_MISMATCH
FIXED_SIZE_MISMATCH = Kind.FIXED_SIZE_MISMATCH
MISSING_ENUM_SYMBOLS = Kind.MISSING_ENUM_SYMBOLS
READER_FIELD_MISSING_DEFAULT_VALUE = Kind.READER_FIELD_MISSING_DEFAULT_VALUE
TYPE_MISMATCH = Kind.TYPE_MISMATCH
MISSING_UNION_BRANCH = Kind.MISSING_UNION_BRANCH
AMBIGUOUS_FIELD_MATCH = Kind.AMBIGUOUS_FIELD_MATCH

KINDS = INCOMPATIBILITIES

_NO_PROMOTION: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CompatResult:
    """Whether the reader can read all the writer's data, and every incompatibility found."""

    compatible: bool
    findings: tuple[Finding, ...] = ()

    def __bool__(self) -> bool:
        return self.compatible


# What the checks accept for a schema: a parsed Schema, JSON text, or parsed JSON.
SchemaInput = Schema | str | dict[str, Any] | list[Any]
_Found = tuple[Incompatibility, ...]


# A sentinel in the memo, compared by identity and never read as findings.
_IN_PROGRESS = cast(_Found, ("in progress",))
_OK: _Found = ()


class _Checker:
    """One check: the memo of reader/writer pairs, by identity, as Java keeps it.

    Pairs of two primitive nodes are decided on the spot, without the memo: a primitive node has
    exactly one parent, so such a pair is only ever met once (through its parents' pair, which is
    memoised), and the memo could only replay a location, never change a verdict.
    """

    __slots__ = ("memo", "unions", "leaves", "trials")

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int], _Found] = {}
        self.unions: dict[int, _UnionIndex] = {}  # id(reader union) -> its index
        self.leaves: dict[int, bool] = {}  # id(named node) -> whether it is a leaf
        # id(writer) -> (reader union index, how many of its branches Java tried): the trials
        # whose name-mismatched leaf branches were skipped (see union_reads).
        self.trials: dict[int, list[tuple[_UnionIndex, int]]] = {}

    def get(self, token: str, reader: Schema, writer: Schema, location: JavaPath) -> _Found:
        if reader.__class__ is PrimitiveSchema and writer.__class__ is PrimitiveSchema:
            rtype = reader.type
            wtype = writer.type
            if rtype == wtype or wtype in PROMOTIONS.get(rtype, _NO_PROMOTION):
                return _OK
            location.append(token)
            found = (Incompatibility(TYPE_MISMATCH, reader, writer, None, location),)
            location.pop()
            return found
        location.append(token)
        key = (id(reader), id(writer))
        memo = self.memo
        result = memo.get(key)
        if result is None and self.trials and self.skipped(reader, writer):
            # Java tried this pair inside a reader union, on a fresh location, and memoised it:
            # replay that trial now (its result depends on nothing else, see union_reads).
            memo[key] = _IN_PROGRESS
            result = memo[key] = self.calculate(reader, writer, [""])
        if result is None:
            memo[key] = _IN_PROGRESS
            result = self.calculate(reader, writer, location)
            memo[key] = result
        elif result is _IN_PROGRESS:
            result = _OK  # recursion: compatible unless proven otherwise
        location.pop()
        return result

    def calculate(self, reader: Schema, writer: Schema, location: JavaPath) -> _Found:
        # The type names say which Schema subclass both are: the casts only tell mypy so.
        rtype = reader.type
        wtype = writer.type
        if rtype == wtype:
            if rtype == "record":
                r_record, w_record = cast(RecordSchema, reader), cast(RecordSchema, writer)
                if r_record.simple_name == w_record.simple_name:
                    return self.fields(r_record, w_record, location)
                return self.names(r_record, w_record, location) + self.fields(
                    r_record, w_record, location
                )
            if rtype in PRIMITIVE_TYPES:
                return _OK
            if rtype == "array":
                r_items, w_items = cast(ArraySchema, reader).items, cast(ArraySchema, writer).items
                return self.get("items", r_items, w_items, location)
            if rtype == "map":
                r_values, w_values = cast(MapSchema, reader).values, cast(MapSchema, writer).values
                return self.get("values", r_values, w_values, location)
            if rtype == "enum":
                r_enum, w_enum = cast(EnumSchema, reader), cast(EnumSchema, writer)
                return self.names(r_enum, w_enum, location) + self.symbols(r_enum, w_enum, location)
            if rtype == "fixed":
                r_fixed, w_fixed = cast(FixedSchema, reader), cast(FixedSchema, writer)
                result = self.names(r_fixed, w_fixed, location)
                if r_fixed.size != w_fixed.size:
                    location.append("size")
                    result += (
                        Incompatibility(FIXED_SIZE_MISMATCH, reader, writer, None, location),
                    )
                    location.pop()
                return result
            # union vs union: every writer branch must be readable by the reader union
            out: _Found = _OK
            for index, branch in enumerate(cast(UnionSchema, writer).types):
                location.append(str(index))
                if self.get("", reader, branch, []):
                    out += (
                        Incompatibility(MISSING_UNION_BRANCH, reader, writer, branch, location),
                    )
                location.pop()
            return out
        if wtype == "union":
            out = _OK
            for index, branch in enumerate(cast(UnionSchema, writer).types):
                out += self.get(str(index), reader, branch, location)
            return out
        if wtype in PROMOTIONS.get(rtype, _NO_PROMOTION):
            return _OK
        if rtype == "union":
            if self.union_reads(cast(UnionSchema, reader), writer):
                return _OK
            return (Incompatibility(MISSING_UNION_BRANCH, reader, writer, writer, location),)
        return (Incompatibility(TYPE_MISMATCH, reader, writer, None, location),)

    def union_reads(self, reader: UnionSchema, writer: Schema) -> bool:
        """Whether a branch of ``reader`` reads ``writer`` (not a union), as Java decides it.

        Java tries the branches in order, each on a fresh location, up to the first that reads
        the writer, and memoises every pair it tried: with thousands of branches that is
        quadratic in time and memory. When the writer is a *leaf* named type (see
        :meth:`is_leaf`), a leaf named branch that matches it by neither simple name nor alias
        cannot read it (a NAME_MISMATCH or TYPE_MISMATCH) and its check reaches no pair that
        another path can meet, so only the branches that may read it (an index by name and
        alias, plus every other kind of branch) are checked, in Java's order. The skipped pairs
        are remembered by range (``trials``) and replayed on the same fresh location if they
        are ever met again (``skipped``), so findings and locations stay Java's.
        """
        branches = reader.types
        index = self.unions.get(id(reader))
        if index is None:
            index = self.unions[id(reader)] = _UnionIndex(self, reader)
        if not index.leaves or not (isinstance(writer, NamedSchema) and self.is_leaf(writer)):
            for branch in branches:
                if not self.get("", branch, writer, []):
                    return True
            return False
        tried = len(branches)
        found = False
        for position in index.candidates(writer):
            if not self.get("", branches[position], writer, []):
                tried, found = position, True
                break
        self.trials.setdefault(id(writer), []).append((index, tried))
        return found

    def skipped(self, reader: Schema, writer: Schema) -> bool:
        """Whether Java checked (reader, writer) in a union trial that union_reads skipped."""
        for index, tried in self.trials.get(id(writer), ()):
            position = index.leaves.get(id(reader))
            if position is not None and position < tried:
                return True
        return False

    def is_leaf(self, schema: NamedSchema) -> bool:
        """An enum, a fixed, or a record whose fields have no aliases and no named types."""
        key = id(schema)
        leaf = self.leaves.get(key)
        if leaf is None:
            leaf = self.leaves[key] = schema.__class__ is not RecordSchema or all(
                not field.aliases and ("_ptype" in field.__dict__ or _no_named_types(field.type))
                for field in schema.fields
            )
        return leaf

    @staticmethod
    def names(reader: NamedSchema, writer: NamedSchema, location: JavaPath) -> _Found:
        if reader.simple_name == writer.simple_name or writer.fullname in reader.aliases:
            return _OK
        location.append("name")
        found = (Incompatibility(NAME_MISMATCH, reader, writer, None, location),)
        location.pop()
        return found

    @staticmethod
    def symbols(reader: EnumSchema, writer: EnumSchema, location: JavaPath) -> _Found:
        if reader.default is not None or reader.symbols == writer.symbols:
            return _OK
        reader_symbols = set(reader.symbols)
        missing = sorted(s for s in writer.symbols if s not in reader_symbols)
        if not missing:
            return _OK
        location.append("symbols")
        found = (Incompatibility(MISSING_ENUM_SYMBOLS, reader, writer, missing, location),)
        location.pop()
        return found

    def fields(self, reader: RecordSchema, writer: RecordSchema, location: JavaPath) -> _Found:
        out: _Found = _OK
        writer_fields = writer.field_map
        get = self.get
        location.append("fields")
        for field in reader.fields:
            writer_field = writer_fields.get(field.name)
            if field.aliases:
                matches = [writer_field] if writer_field is not None else []
                matches += [writer_fields[a] for a in field.aliases if a in writer_fields]
                if len(matches) > 1:
                    location.append(str(field.position))
                    raise Ambiguous(field, [m.name for m in matches], location)
                writer_field = matches[0] if matches else None
            if writer_field is not None:
                # Two primitives are decided here (see the class docstring), by their names: a
                # field whose type is a bare primitive name keeps just the name (``_ptype``)
                # until someone asks for its node.
                r = field.__dict__.get("_ptype")
                if r is None:
                    rtype = field.type
                    r = rtype.type if rtype.__class__ is PrimitiveSchema else None
                if r is not None:
                    w = writer_field.__dict__.get("_ptype")
                    if w is None:
                        wtype = writer_field.type
                        w = wtype.type if wtype.__class__ is PrimitiveSchema else None
                    if w is not None and (r == w or w in PROMOTIONS.get(r, _NO_PROMOTION)):
                        continue
                location.append(str(field.position))
                found = get("type", field.type, writer_field.type, location)
                if found:
                    out += found
            elif not field.has_default:
                location.append(str(field.position))
                ftype = field.type
                if isinstance(ftype, EnumSchema) and ftype.default is not None:
                    # Java compares the enum with the writer *record* here (a TYPE_MISMATCH).
                    out += get("type", ftype, writer, location)
                else:
                    out += (
                        Incompatibility(
                            READER_FIELD_MISSING_DEFAULT_VALUE, reader, writer, field, location
                        ),
                    )
            else:
                continue
            location.pop()
        location.pop()
        return out


class _UnionIndex:
    """A reader union's branches by name: which ones may read a given leaf named writer.

    ``leaves`` maps each leaf named branch (by identity) to its position; every other branch
    (primitives, arrays, maps, records with named types inside) is ``other`` and always tried.
    """

    __slots__ = ("leaves", "other", "by_name", "by_alias")

    def __init__(self, checker: _Checker, union: UnionSchema) -> None:
        self.leaves: dict[int, int] = {}
        self.other: list[int] = []
        self.by_name: dict[str, list[int]] = {}
        self.by_alias: dict[str, list[int]] = {}
        for position, branch in enumerate(union.types):
            if isinstance(branch, NamedSchema) and checker.is_leaf(branch):
                self.leaves[id(branch)] = position
                self.by_name.setdefault(branch.simple_name, []).append(position)
                for alias in branch.aliases:
                    self.by_alias.setdefault(alias, []).append(position)
            else:
                self.other.append(position)

    def candidates(self, writer: NamedSchema) -> list[int]:
        """Positions of the branches that may read ``writer``, in the union's order."""
        found = set(self.other)
        found.update(self.by_name.get(writer.simple_name, ()))
        found.update(self.by_alias.get(writer.fullname, ()))
        return sorted(found)


def _no_named_types(schema: Schema) -> bool:
    """Whether ``schema`` (a field's type) contains no named type: only primitives inside."""
    if isinstance(schema, NamedSchema):
        return False
    if isinstance(schema, UnionSchema):
        return all(_no_named_types(branch) for branch in schema.types)
    if schema.type == "array":
        return _no_named_types(cast(ArraySchema, schema).items)
    if schema.type == "map":
        return _no_named_types(cast(MapSchema, schema).values)
    return True


def _as_schema(value: SchemaInput) -> Schema:
    return value if isinstance(value, Schema) else parse_schema(value)


def check(reader: SchemaInput, writer: SchemaInput) -> CompatResult:
    """Can ``reader`` read everything written with ``writer``? Java's verdict and findings.

    Both are JSON text, parsed JSON or a parsed :class:`Schema`. Returns a :class:`CompatResult`
    whose findings carry Java's kind and location (as a JSON pointer into the reader); raises
    :class:`~schemacli.errors.SchemaParseError` when either schema is not valid Avro.
    """
    if reader.__class__ is str and writer.__class__ is str:
        key = (reader, writer)
        cached = _RESULTS.get(key)
        if cached is None:
            cached = _check(reader, writer)
            if len(_RESULTS) >= _RESULTS_MAX:
                _RESULTS.clear()
            _RESULTS[key] = cached
        return cached
    return _check(reader, writer)


def _check(reader: SchemaInput, writer: SchemaInput) -> CompatResult:
    reader_schema = _as_schema(reader)
    # The same text read by itself: one tree, so the self-check below can answer at once.
    same_text = writer.__class__ is str and writer == reader
    writer_schema = reader_schema if same_text else _as_schema(writer)
    if reader_schema is writer_schema and _self_compatible(reader_schema):
        return _COMPATIBLE
    return nesting.call_deep(_verdict, reader_schema, writer_schema)


def _verdict(reader: Schema, writer: Schema) -> CompatResult:
    try:
        found = _Checker().get("", reader, writer, [])
    except Ambiguous as ambiguous:
        return CompatResult(False, (ambiguous_finding(ambiguous, reader),))
    if not found:
        return _COMPATIBLE
    return CompatResult(False, tuple(finding(inc, reader) for inc in found))


# Results of checks between schema texts (results are immutable, so they can be shared): the gate
# and the levels check the same pairs again and again. Emptied by clear_caches().
_RESULTS: dict[tuple[str, str], CompatResult] = {}
_RESULTS_MAX = 4096


def clear_caches() -> None:
    """Forget the check results (for benchmarks measuring cold checks)."""
    _RESULTS.clear()


_COMPATIBLE = CompatResult(True)


def _self_compatible(schema: Schema) -> bool:
    """Whether checking ``schema`` against itself (the same parsed tree) is known to pass.

    True when the parser saw no field aliases anywhere in the tree. Then every (node, node) pair
    the check meets is compatible: records match by their own names and field names (no alias
    can make a field match two writer fields, Java's only way to fail here), enums have the
    same symbols, fixed types the same size, and a union reads each of its own branches with
    that same branch. Pinned against Java by tests/oracle (every generated schema vs itself).
    """
    return bool(schema.__dict__.get(SELF_COMPATIBLE, False))


def incompatibilities(reader: Schema, writer: Schema) -> tuple[tuple[Kind, str], ...]:
    """(kind, JSON pointer into the reader) of every finding :func:`check` gives, in its
    order, without their words: the fix proofs compare thousands of small checks' places."""
    try:
        found = nesting.call_deep(_Checker().get, "", reader, writer, [])
    except Ambiguous as ambiguous:
        where = ambiguous_finding(ambiguous, reader).location.pointer
        return ((AMBIGUOUS_FIELD_MATCH, where or ""),)
    return tuple((inc.kind, inc.pointer) for inc in found)


def is_compatible(reader: SchemaInput, writer: SchemaInput) -> bool:
    """Just the verdict of :func:`check` (the same work, without building messages)."""
    reader_schema = _as_schema(reader)
    writer_schema = _as_schema(writer)
    try:
        return not _Checker().get("", reader_schema, writer_schema, [])
    except Ambiguous:
        return False


# --------------------------------------------------------------------------------------------
# Registry compatibility levels
# --------------------------------------------------------------------------------------------

_DIRECTION_WORDS = {
    BACKWARD: "BACKWARD: the new schema must read data written with {label}",
    FORWARD: "FORWARD: readers using {label} must read data written with the new schema",
}


@dataclass(frozen=True)
class PairResult:
    """One check a level makes: against which earlier version, in which direction, the result.

    ``direction`` is BACKWARD (the candidate reads version ``index``) or FORWARD (version
    ``index`` reads the candidate); the findings' messages say so and their ``subject`` is the
    version's label.
    """

    index: int
    direction: str
    result: CompatResult


def check_pairs(
    level: Level | str,
    candidate: SchemaInput,
    history: Sequence[SchemaInput],
    *,
    labels: Sequence[str] | None = None,
) -> tuple[PairResult, ...]:
    """Every reader/writer check ``level`` makes of ``candidate`` against ``history``.

    In the registry's order (``levels.comparisons``): newest version first. ``labels`` name the
    versions in findings (default ``version 1`` ... ``version N``). Raises SchemaParseError for
    an invalid schema.
    """
    level = Level.parse(level) if isinstance(level, str) else level
    pairs = comparisons(level, len(history))
    if not pairs:
        return ()
    names = (
        list(labels) if labels is not None else [f"version {n}" for n in range(1, len(history) + 1)]
    )
    new = _as_schema(candidate)
    parsed: dict[int, Schema] = {}
    out = []
    for index, direction in pairs:
        old = parsed.get(index)
        if old is None:
            old = parsed[index] = _as_schema(history[index])
        reader, writer = (new, old) if direction == BACKWARD else (old, new)
        result = check(reader, writer)
        if not result.compatible:
            label = names[index]
            prefix = _DIRECTION_WORDS[direction].format(label=label)
            result = CompatResult(
                False,
                tuple(
                    replace(finding, message=f"{finding.message} ({prefix}.)", subject=label)
                    for finding in result.findings
                ),
            )
        out.append(PairResult(index, direction, result))
    return tuple(out)


def check_level(
    level: Level | str,
    candidate: SchemaInput,
    history: Sequence[SchemaInput],
    *,
    labels: Sequence[str] | None = None,
) -> CompatResult:
    """Apply a registry compatibility ``level`` to ``candidate`` against ``history``.

    ``history`` is the subject's versions, oldest first; ``labels`` name them in findings
    (default ``version 1`` ... ``version N``). Non-transitive levels check the latest version
    only, ``*_TRANSITIVE`` every version; an empty history (first registration) always passes.
    Each finding's ``subject`` is the label of the version it is against and its message says
    which direction failed. Raises SchemaParseError for an invalid schema.
    """
    pairs = check_pairs(level, candidate, history, labels=labels)
    return CompatResult(
        all(p.result.compatible for p in pairs),
        tuple(f for p in pairs for f in p.result.findings),
    )


def describe(result: CompatResult) -> str:
    """A short JSON-able summary, handy in logs and tests."""
    return json.dumps(
        {
            "compatible": result.compatible,
            "findings": [[f.kind, f.location.pointer] for f in result.findings],
        }
    )
