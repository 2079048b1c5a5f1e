"""Suggested fixes for compatibility findings: edits of the candidate that make it pass.

A compatibility finding is placed in its *reader* (Java's location): the candidate for BACKWARD,
the earlier version for FORWARD. Either way the file a user can edit is the candidate, so this
module walks the reader and the writer together along the finding's location (the tokens Java's
checker walked: ``fields``, a field's position, ``type``, ``items``, ``values``, a writer union's
branch, ``name`` / ``symbols`` / ``size``), finds the pair of nodes that disagree, and proposes
plans: small edits of the candidate's JSON (set a member, replace a value, append an element).

Nothing is proposed on hope. Each plan becomes text edits (``edits.JsonEditor``, so the file's
layout is kept outside the edited spans), the edited text is parsed again and checked at the
subject's level against every version the level compares, and the plan is kept only when the
finding is gone and no comparison gained a finding. When no plan survives, one advice-only
(``DISPLAY``) fix says so and points at ``schemacli migrate plan``.

Applicability, ruff's way: ``SAFE`` when the edit keeps what the change meant and touches only
what Avro ignores in the data's shape or adds what the old data already had (a default, an alias,
an enum default, a restored union branch or a field restored with a default); ``UNSAFE`` when it
changes or reverts what the author wrote (a type, a name, a size, removed symbols or branches, a
field split in two). tests/oracle/test_fix_differential.py proves every kept fix with the engine
and with Apache Avro Java, and that every field the fix did not touch keeps its canonical form.

Pure: no terminal, no settings, no files. Costs nothing when there are no findings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from schemacli.contracts.avro.defaults import NoDefault, default_for
from schemacli.contracts.avro.facts import PROMOTIONS
from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    MapSchema,
    NamedSchema,
    Names,
    PrimitiveSchema,
    RecordSchema,
    Schema,
    UnionSchema,
    named_types,
)
from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.incompatibility import type_name
from schemacli.contracts.evolution.levels import BACKWARD, Level, comparisons
from schemacli.contracts.findings import Finding, Kind
from schemacli.contracts.fixes.edits import (
    Applicability,
    Fix,
    JsonEditor,
    TextEdit,
    apply_edits,
)
from schemacli.contracts.jsontext.pointer import unescape_token, value_at
from schemacli.contracts.jsontext.source import Document, parse_text
from schemacli.errors import SchemacliError

__all__ = ["FixContext", "MIGRATE_HINT", "default_for", "fixes_for", "to_json"]

SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY

MIGRATE_HINT = (
    "register the new shape under a new subject and topic and convert the old topic into it "
    "(`schemacli migrate plan --from NEW.avsc --to OLD.avsc`)"
)

# At most this many fixes are proven and offered per finding (each costs a parse and a check of
# the candidate against every version the level compares); plans come best first.
MAX_FIXES = 4

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
# JSON of parsed types
# --------------------------------------------------------------------------------------------


def to_json(schema: Schema, defined: set[str]) -> Any:
    """``schema`` as Avro JSON that means the same wherever it is placed: named types carry
    their namespace (``""`` for none), a name in ``defined`` (already defined in the target,
    or earlier in this output) is referenced by full name, everything else (docs, aliases,
    defaults, logical types and other properties) is kept. ``defined`` is updated."""
    if isinstance(schema, UnionSchema):
        return [to_json(branch, defined) for branch in schema.types]
    if isinstance(schema, NamedSchema):
        if schema.fullname in defined:
            return schema.fullname
        defined.add(schema.fullname)
        out: dict[str, Any] = {
            "type": "error"
            if isinstance(schema, RecordSchema) and schema.is_error
            else schema.type,
            "name": schema.simple_name,
            "namespace": schema.namespace or "",
        }
        if schema.doc is not None:
            out["doc"] = schema.doc
        if schema.aliases:
            out["aliases"] = list(schema.aliases)
        if isinstance(schema, RecordSchema):
            out["fields"] = [field_json(f, defined) for f in schema.fields]
        elif isinstance(schema, EnumSchema):
            out["symbols"] = list(schema.symbols)
            if schema.default is not None:
                out["default"] = schema.default
        elif isinstance(schema, FixedSchema):
            out["size"] = schema.size
        out.update(schema.props)
        return out
    if isinstance(schema, ArraySchema):
        return {"type": "array", "items": to_json(schema.items, defined), **schema.props}
    if isinstance(schema, MapSchema):
        return {"type": "map", "values": to_json(schema.values, defined), **schema.props}
    if schema.props:
        return {"type": schema.type, **schema.props}
    return schema.type


def field_json(f: Field, defined: set[str]) -> dict[str, Any]:
    """A field as JSON (see :func:`to_json`)."""
    out: dict[str, Any] = {"name": f.name, "type": to_json(f.type, defined)}
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
    tokens = [unescape_token(t) for t in pointer.split("/")[1:]] if pointer not in ("", "/") else []
    site = Site()
    r, w = reader, writer
    i = 0
    try:
        while i < len(tokens):
            token = tokens[i]
            if token == "fields" and isinstance(r, RecordSchema) and isinstance(w, RecordSchema):
                rf = r.fields[int(tokens[i + 1])]
                wf = _writer_field(rf, w)
                site.reader_field, site.writer_field = rf, wf
                site.reader_record, site.writer_record = r, w
                if i + 2 == len(tokens):
                    site.reader, site.writer, site.at_field = r, w, True
                    return site
                if tokens[i + 2] != "type":
                    return None
                if wf is None:  # Java's quirk: an enum with a default against the record
                    site.reader, site.writer = rf.type, w
                    return site if i + 3 == len(tokens) else None
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
                    return site if i + 1 == len(tokens) else None
                w = branch
            elif token in ("name", "symbols", "size") and i + 1 == len(tokens):
                site.attribute = token
                break
            else:
                return None
            i += 1
    except (IndexError, ValueError):
        return None
    site.reader, site.writer = r, w
    return site


# --------------------------------------------------------------------------------------------
# The context of one check: candidate, history, level, and the findings before any fix
# --------------------------------------------------------------------------------------------

FindingKey = tuple[int, str, str, str]  # (version index, direction, kind, pointer)


class FixContext:
    """What every fix of one candidate is judged against; built once per checked candidate,
    lazily (nothing is computed until a finding asks for fixes)."""

    def __init__(self, candidate: LoadedSchema, history: Sequence[LoadedSchema], level: Level):
        self.candidate = candidate
        self.history = history
        self.level = level
        self.comparisons = comparisons(level, len(history))
        foreign: set[int] = set()
        names: dict[str, NamedSchema] = {}
        for ref in candidate.references:
            for named in named_types(ref.schema):
                foreign.add(id(named))
                names.setdefault(named.fullname, named)
        self.foreign = foreign  # named types defined in referenced files: not ours to edit
        self.ref_names = Names(names) if names else None
        self._before: frozenset[FindingKey] | None = None
        self._editor: JsonEditor | None = None
        self._names: frozenset[str] | None = None

    @property
    def editor(self) -> JsonEditor:
        if self._editor is None:
            self._editor = JsonEditor(self.candidate.document)
        return self._editor

    @property
    def before(self) -> frozenset[FindingKey]:
        if self._before is None:
            self._before = self.findings_of(self.candidate.schema)
        return self._before

    def findings_of(self, schema: Schema) -> frozenset[FindingKey]:
        out: set[FindingKey] = set()
        for index, direction in self.comparisons:
            old = self.history[index].schema
            reader, writer = (schema, old) if direction == BACKWARD else (old, schema)
            for f in compat.check(reader, writer).findings:
                out.add((index, direction, f.kind.value, f.location.pointer or ""))
        return frozenset(out)

    def parse(self, text: str) -> Schema | None:
        """The edited text as a schema, None when it is not one. Plain JSON (what the edits
        write) is read by ``json`` directly; a file with comments or repeated keys as the
        loader reads it."""
        document = self.candidate.document
        try:
            if document.has_comments or document.has_duplicates:
                value = parse_text(text, self.candidate.source).value
            else:
                value = json.loads(text)
            return parse_schema(value, names=self.ref_names)
        except (SchemacliError, ValueError, RecursionError):
            return None

    def candidate_names(self) -> set[str]:
        """Full names of the candidate's named types (a copy: callers add to it)."""
        if self._names is None:
            self._names = frozenset(n.fullname for n in named_types(self.candidate.schema))
        return set(self._names)


# --------------------------------------------------------------------------------------------
# Plans for each kind and direction
# --------------------------------------------------------------------------------------------


def _jsonable(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _new_field_name(record: RecordSchema, base: str, suffix: str) -> str:
    taken = {f.name for f in record.fields} | {a for f in record.fields for a in f.aliases}
    name = f"{base}_{suffix}"
    n = 2
    while name in taken:
        name = f"{base}_{suffix}{n}"
        n += 1
    return name


def _suffix(schema: Schema) -> str:
    if isinstance(schema, NamedSchema):
        return schema.simple_name.lower()
    if isinstance(schema, UnionSchema):
        return "_or_".join(_suffix(b) for b in schema.types if b.type != "null") or "null"
    return schema.type


def _renamed_copy(value: Any, taken: set[str]) -> Any:
    """A named type's JSON renamed so it cannot clash with a type of the same name."""
    if (
        isinstance(value, dict)
        and "name" in value
        and value.get("type")
        in (
            "record",
            "enum",
            "fixed",
            "error",
        )
    ):
        out = dict(value)
        base = str(value["name"])
        name = f"{base}V2"
        n = 3
        while name in taken:
            name = f"{base}V{n}"
            n += 1
        out["name"] = name
        out.pop("aliases", None)
        return out
    return value


def _default_plans(ctx: FixContext, f: Field, why: str) -> Iterator[Plan]:
    """Give candidate field ``f`` a default (safe), or make it optional (unsafe)."""
    try:
        value = default_for(f.type)
    except NoDefault as no:
        yield Plan(
            f"Field '{f.name}' cannot get a default: its type {no} always contains itself, so "
            f'no finite value exists ({why}); make it optional (["null", ...]) or ' + MIGRATE_HINT,
            DISPLAY,
            (),
        )
        return
    yield Plan(
        f"Give field '{f.name}' the default {_jsonable(value)} ({why})",
        SAFE,
        (("set", f.pointer, "default", value),),
    )
    if isinstance(f.type, UnionSchema):
        if any(b.type == "null" for b in f.type.types):
            return
        types = ["null"] + [to_json(b, ctx.candidate_names()) for b in f.type.types]
    else:
        types = ["null", value_at(ctx.candidate.document.value, f.pointer + "/type")]
    yield Plan(
        f"Make field '{f.name}' optional: type {_jsonable(types)} with default null",
        UNSAFE,
        (("replace", f.pointer + "/type", types), ("set", f.pointer, "default", None)),
    )


def _plans(ctx: FixContext, kind: Kind, direction: str, site: Site) -> Iterator[Plan]:
    backward = direction == BACKWARD
    cand = site.reader if backward else site.writer
    other = site.writer if backward else site.reader
    doc = ctx.candidate.document
    if kind == Kind.READER_FIELD_MISSING_DEFAULT_VALUE or (
        kind == Kind.TYPE_MISMATCH
        and site.writer_field is None
        and site.reader_field is not None
        and not site.at_field
    ):
        rf = site.reader_field
        assert rf is not None
        if backward:
            yield from _default_plans(ctx, rf, "it is not in the earlier version")
            return
        # FORWARD: readers of the earlier version need the field the candidate dropped.
        record = site.writer_record
        assert record is not None
        restored = field_json(rf, ctx.candidate_names())
        if not rf.has_default:
            try:
                restored["default"] = default_for(rf.type)
            except NoDefault as no:
                yield Plan(
                    f"Field '{rf.name}' cannot be restored with a default: its type {no} always "
                    "contains itself, so no finite default exists; readers of the earlier "
                    "version need it, so " + MIGRATE_HINT,
                    DISPLAY,
                    (),
                )
                return
        restored.setdefault("doc", "Deprecated: kept for readers of earlier versions.")
        yield Plan(
            f"Restore field '{rf.name}' as deprecated, with the default "
            f"{_jsonable(restored['default'])} (readers of the earlier version need it)",
            SAFE,
            (("append", record.pointer + "/fields", restored),),
        )
        return
    if cand is None or other is None:
        return
    if (
        kind == Kind.NAME_MISMATCH
        and isinstance(cand, NamedSchema)
        and isinstance(other, NamedSchema)
    ):
        if backward:
            aliases = list(cand.aliases) + [other.fullname]
            yield Plan(
                f"Add the earlier name {other.fullname!r} to the aliases of {cand.type} "
                f"{cand.fullname}",
                SAFE,
                (("set", cand.pointer, "aliases", aliases),),
            )
        renames: list[Op] = [
            (
                "set",
                cand.pointer,
                "name",
                _renamed(value_at(doc.value, cand.pointer + "/name"), other.simple_name),
            )
        ]
        renames += [
            ("replace", pointer, _renamed(spelled, other.simple_name))
            for pointer, spelled in _references(doc.value, cand)
        ]
        yield Plan(
            f"Keep the earlier name {other.simple_name!r} for {cand.type} {cand.fullname}"
            + (f" (and its {len(renames) - 1} reference(s))" if len(renames) > 1 else ""),
            UNSAFE,
            tuple(renames),
        )
        return
    if (
        kind == Kind.MISSING_ENUM_SYMBOLS
        and isinstance(cand, EnumSchema)
        and isinstance(other, EnumSchema)
    ):
        if backward:
            missing = [s for s in other.symbols if s not in cand.symbols]
            pick = next(
                (s for s in cand.symbols if s.upper() in ("UNKNOWN", "OTHER")), cand.symbols[0]
            )
            yield Plan(
                f"Give enum {cand.fullname} the default {pick!r} (read for the symbols it lacks: "
                f"{', '.join(missing)})",
                SAFE,
                (("set", cand.pointer, "default", pick),),
            )
            yield Plan(
                f"Restore the symbol(s) {', '.join(missing)} in enum {cand.fullname}",
                SAFE,
                tuple(("append", cand.pointer + "/symbols", symbol) for symbol in missing),
            )
        else:
            added = [s for s in cand.symbols if s not in other.symbols]
            known = [s for s in cand.symbols if s in other.symbols]
            yield Plan(
                f"Remove the new symbol(s) {', '.join(added)} from enum {cand.fullname}: readers "
                "of the earlier version have no default for them",
                UNSAFE,
                (("replace", cand.pointer + "/symbols", known),),
            )
        return
    if (
        kind == Kind.FIXED_SIZE_MISMATCH
        and isinstance(cand, FixedSchema)
        and isinstance(other, FixedSchema)
    ):
        yield Plan(
            f"Keep the size {other.size} of fixed {cand.fullname}",
            UNSAFE,
            (("set", cand.pointer, "size", other.size),),
        )
        yield from _split_field(ctx, site, backward)
        return
    if kind == Kind.MISSING_UNION_BRANCH:
        if backward and isinstance(cand, UnionSchema):
            lacking = site.branch if site.branch is not None else other
            branch = to_json(lacking, ctx.candidate_names())
            yield Plan(
                f"Restore the union branch {type_name(lacking)}",
                SAFE,
                (("append", cand.pointer, branch),),
            )
            return
        if not backward and isinstance(cand, UnionSchema) and site.branch is not None:
            if len(cand.types) > 1:
                yield Plan(
                    f"Remove the new union branch {type_name(site.branch)}: readers of "
                    "the earlier version cannot read it",
                    UNSAFE,
                    (("remove_element", cand.pointer, cand.types.index(site.branch)),),
                )
            yield from _split_field(ctx, site, backward)
            return
        # a union reader against a non-union writer (FORWARD: the candidate narrowed a union)
        yield from _revert(ctx, site, backward)
        yield from _split_field(ctx, site, backward)
        return
    if kind == Kind.TYPE_MISMATCH:
        # The new type kept in a new field first (it keeps what the change meant), then the
        # promotions Avro allows, the earlier type, a union of both.
        yield from _split_field(ctx, site, backward)
        yield from _promotions(site, backward)
        yield from _revert(ctx, site, backward)
        if backward and not isinstance(cand, UnionSchema) and site.reader_field is not None:
            both = [
                value_at(doc.value, cand.pointer)
                if doc.pointer_exists(cand.pointer)
                else to_json(cand, set()),
                to_json(other, ctx.candidate_names()),
            ]
            yield Plan(
                f"Accept both: type {_jsonable(both)}",
                UNSAFE,
                (("replace", cand.pointer, both),),
            )
        return
    if kind == Kind.AMBIGUOUS_FIELD_MATCH and backward and site.reader_field is not None:
        rf, record = site.reader_field, site.writer_record
        assert record is not None
        names = set(record.field_map)
        # Keep the aliases that name no field of the writer; when the field's own name is not
        # one of the writer's either, keep the first alias that is (the match it was meant for).
        matched = rf.name in names
        still: list[str] = []
        for alias in rf.aliases:
            if alias in names:
                if matched:
                    continue
                matched = True
            still.append(alias)
        dropped = [a for a in rf.aliases if a not in still]
        ops: tuple[Op, ...] = (
            (("set", rf.pointer, "aliases", still),)
            if still
            else (("remove", rf.pointer, "aliases"),)
        )
        yield Plan(
            f"Remove the alias(es) {', '.join(dropped)} of field '{rf.name}': they name other "
            "fields of the earlier version",
            SAFE,
            ops,
        )


def _renamed(spelled: Any, simple: str) -> str:
    """``spelled`` (a name as the file writes it: simple, full, or with a leading dot) with its
    simple name replaced by ``simple``."""
    text = str(spelled)
    return text.rsplit(".", 1)[0] + "." + simple if "." in text else simple


def _references(value: Any, named: NamedSchema) -> list[tuple[str, str]]:
    """(pointer, spelling) of every place the candidate's JSON refers to ``named`` by name (a
    type slot holding its simple or full name; the check decides what a spelling resolves to)."""
    spellings = {named.simple_name, named.fullname, "." + named.fullname}
    found: list[tuple[str, str]] = []

    def slot(node: Any, pointer: str) -> None:
        if isinstance(node, str):
            if node in spellings:
                found.append((pointer, node))
        elif isinstance(node, list):
            for i, branch in enumerate(node):
                slot(branch, f"{pointer}/{i}")
        elif isinstance(node, dict):
            walk(node, pointer)

    def walk(node: dict[str, Any], pointer: str) -> None:
        kind = node.get("type")
        if kind in ("record", "error") and isinstance(node.get("fields"), list):
            for i, f in enumerate(node["fields"]):
                if isinstance(f, dict) and "type" in f:
                    slot(f["type"], f"{pointer}/fields/{i}/type")
        elif kind == "array" and "items" in node:
            slot(node["items"], pointer + "/items")
        elif kind == "map" and "values" in node:
            slot(node["values"], pointer + "/values")
        elif not isinstance(kind, str) or kind not in ("enum", "fixed"):
            if "type" in node and not isinstance(kind, str):
                slot(kind, pointer + "/type")

    slot(value, "")
    return found


def _promotions(site: Site, backward: bool) -> Iterator[Plan]:
    """Types Avro promotes to: the candidate's type replaced by one that reads (BACKWARD) or
    is read by (FORWARD) the other side's primitive type."""
    cand = site.reader if backward else site.writer
    other = site.writer if backward else site.reader
    if not isinstance(other, PrimitiveSchema) or cand is None or cand.props or other.props:
        return
    if backward:  # the candidate reads ``other``: a type that promotes from it
        choices = [t for t, sources in PROMOTIONS.items() if other.type in sources]
    else:  # ``other`` reads the candidate: a type it promotes from
        choices = sorted(PROMOTIONS.get(other.type, ()))
    for t in choices:
        if t != cand.type:
            yield Plan(
                f"Use {t}: Avro promotes {other.type if backward else t} to "
                f"{t if backward else other.type}",
                UNSAFE,
                (("replace", cand.pointer, t),),
            )


def _revert(ctx: FixContext, site: Site, backward: bool) -> Iterator[Plan]:
    cand = site.reader if backward else site.writer
    other = site.writer if backward else site.reader
    if cand is None or other is None:
        return
    for value in _spellings(ctx, other):
        yield Plan(
            f"Keep the earlier type {type_name(other)}",
            UNSAFE,
            (("replace", cand.pointer, value),),
        )


def _spellings(ctx: FixContext, node: Schema) -> list[Any]:
    """``node`` as JSON to place in the candidate: defining its named types where the
    candidate lacks them, else by name (both are tried: the check decides)."""
    first = to_json(node, ctx.candidate_names())
    second = to_json(node, set())
    return [first] if first == second else [first, second]


def _split_field(ctx: FixContext, site: Site, backward: bool) -> Iterator[Plan]:
    """Keep the earlier field as it was, and add the new type as a new field (optional, with
    a null default): old and new readers each find what they expect."""
    rf, wf = site.reader_field, site.writer_field
    if rf is None or wf is None or site.at_field:
        return
    cand_field, old_field = (rf, wf) if backward else (wf, rf)
    record = site.reader_record if backward else site.writer_record
    if record is None or not ctx.candidate.document.pointer_exists(cand_field.pointer):
        return
    names = ctx.candidate_names()
    inside = cand_field.pointer + "/"
    outside = names - {
        n.fullname for n in named_types(cand_field.type) if n.pointer.startswith(inside)
    }
    kept_type = to_json(old_field.type, outside)
    ops: list[Op] = [("replace", cand_field.pointer + "/type", kept_type)]
    if old_field.has_default:
        ops.append(("set", cand_field.pointer, "default", old_field.default))
    elif cand_field.has_default:
        ops.append(("remove", cand_field.pointer, "default"))
    new_type = value_at(ctx.candidate.document.value, cand_field.pointer + "/type")
    new_type = _renamed_copy(new_type, names)
    name = _new_field_name(record, cand_field.name, _suffix(cand_field.type))
    if isinstance(new_type, list):
        branches = new_type if "null" in new_type else ["null", *new_type]
    else:
        branches = ["null", new_type]
    new_field = {"name": name, "type": branches, "default": None}
    yield Plan(
        f"Keep field '{cand_field.name}' as it was and add the new type as field '{name}' "
        "(optional, default null)",
        UNSAFE,
        (*ops, ("append", record.pointer + "/fields", new_field)),
    )


# --------------------------------------------------------------------------------------------
# From plans to verified fixes
# --------------------------------------------------------------------------------------------


def _edits(editor: JsonEditor, ops: Sequence[Op], document: Document) -> tuple[TextEdit, ...]:
    out: list[TextEdit] = []
    for op in ops:
        name = op[0]
        if name == "set":
            out.append(editor.set_member(op[1], op[2], op[3]))
        elif name == "replace":
            out.append(editor.replace(op[1], op[2]))
        elif name == "append":
            array = value_at(document.value, op[1])
            out.append(editor.insert_element(op[1], len(array), op[2]))
        elif name == "remove":
            out.append(editor.remove_member(op[1], op[2]))
        elif name == "remove_element":
            out.append(editor.remove_element(op[1], op[2]))
        else:  # pragma: no cover - the plans above use only these
            raise ValueError(name)
    return tuple(out)


def fixes_for(ctx: FixContext, finding: Finding, index: int, direction: str) -> tuple[Fix, ...]:
    """Verified fixes for ``finding``, the engine's finding of the comparison with version
    ``index`` in ``direction`` (its pointer is Java's location in the reader)."""
    pointer = finding.location.pointer or ""
    old = ctx.history[index]
    reader, writer = (
        (ctx.candidate.schema, old.schema)
        if direction == BACKWARD
        else (old.schema, ctx.candidate.schema)
    )
    site = locate(reader, writer, pointer)
    key: FindingKey = (index, direction, finding.kind.value, pointer)
    kept: list[Fix] = []
    advice: list[Fix] = []
    if site is not None and not _foreign(ctx, site, direction):
        for plan in _plans(ctx, finding.kind, direction, site):
            if plan.applicability is DISPLAY:
                advice.append(Fix(plan.title, DISPLAY))
                continue
            if len(kept) >= MAX_FIXES:
                continue
            fix = _verified(ctx, plan, key)
            if fix is not None and all(fix.edits != k.edits for k in kept):
                kept.append(fix)
    if not kept and not advice:
        advice.append(
            Fix(
                f"No edit of this file makes it {ctx.level.value}-compatible here: " + MIGRATE_HINT,
                DISPLAY,
            )
        )
    # safe fixes first (--fix applies the first), then unsafe, then advice
    kept.sort(key=lambda fix: fix.applicability is not SAFE)
    return tuple(kept + advice)


def _foreign(ctx: FixContext, site: Site, direction: str) -> bool:
    nodes = [site.reader if direction == BACKWARD else site.writer]
    nodes.append(site.reader_record if direction == BACKWARD else site.writer_record)
    return any(node is not None and id(node) in ctx.foreign for node in nodes) or (
        ctx.candidate.references != ()
        and any(
            node is not None and not ctx.candidate.document.pointer_exists(node.pointer)
            for node in nodes
        )
    )


def _verified(ctx: FixContext, plan: Plan, key: FindingKey) -> Fix | None:
    document = ctx.candidate.document
    try:
        edits = _edits(ctx.editor, plan.ops, document)
        text = apply_edits(document.text, edits)
    except (KeyError, IndexError, TypeError, ValueError, SchemacliError):
        return None
    schema = ctx.parse(text)
    if schema is None:
        return None
    after = ctx.findings_of(schema)
    if key in after:
        return None
    # Java stops at an ambiguous field (no other finding of that comparison is known): once it
    # is gone, that comparison's other findings may show; check --fix then fixes those too.
    ambiguous = Kind.AMBIGUOUS_FIELD_MATCH.value
    masked = {(k[0], k[1]) for k in ctx.before if k[2] == ambiguous}
    if any(
        k not in ctx.before and ((k[0], k[1]) not in masked or k[2] == ambiguous) for k in after
    ):
        return None
    return Fix(plan.title, plan.applicability, edits)
