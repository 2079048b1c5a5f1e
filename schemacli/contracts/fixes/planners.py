"""What could fix each kind of compatibility finding: one planner per kind, in one table.

A planner gets the finding's :class:`~schemacli.contracts.fixes.plans.Site` (the reader's and
the writer's nodes where Java's location ends) and whether the candidate is the reader
(BACKWARD) or the writer (FORWARD), and yields plans, best first; ``suggest`` proves each and
keeps the first few that hold. A new kind's planner is one function here and one line in
:data:`PLANNERS`. Types written into the candidate go through ``plans.to_json`` at the spot
they are written (``Candidate.placement``): an existing named type is referred to by name,
never defined a second time, and a plan that would need either is not made.

Applicability, ruff's way: ``SAFE`` when the edit keeps what the change meant and touches only
what Avro ignores in the data's shape or adds what the old data already had (a default, an
alias, an enum default, a restored union branch or a field restored with a default); ``UNSAFE``
when it changes or reverts what the author wrote (a type, a name, a size, removed symbols or
branches, a field split in two).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Container, Iterator
from typing import Any

from schemacli.contracts.avro.defaults import NoDefault, default_for
from schemacli.contracts.avro.facts import NAMED_SPELLINGS, PROMOTIONS
from schemacli.contracts.avro.loader import scan_names
from schemacli.contracts.avro.schema import (
    EnumSchema,
    Field,
    FixedSchema,
    NamedSchema,
    PrimitiveSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.evolution.incompatibility import type_name
from schemacli.contracts.fixes.edits import Applicability
from schemacli.contracts.fixes.plans import (
    CandidateView,
    Op,
    Plan,
    Site,
    Unplaceable,
    field_json,
    held_at,
    to_json,
)
from schemacli.contracts.jsontext.pointer import unescape_token
from schemacli.kinds import Kind

__all__ = ["MIGRATE_HINT", "PLANNERS", "plans_for"]

SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY

MIGRATE_HINT = (
    "register the new shape under a new subject and topic and convert the old topic into it "
    "(`schemacli migrate plan --from NEW.avsc --to OLD.avsc`)"
)

Planner = Callable[[CandidateView, Site, bool], Iterator[Plan]]


def plans_for(ctx: CandidateView, kind: Kind, backward: bool, site: Site) -> Iterator[Plan]:
    """The plans for a finding of ``kind`` at ``site`` (none for a kind without a planner)."""
    planner = PLANNERS.get(kind)
    if planner is not None:
        yield from planner(ctx, site, backward)


def _sides(site: Site, backward: bool) -> tuple[Schema | None, Schema | None]:
    """(the candidate's node, the earlier version's node)."""
    return (site.reader, site.writer) if backward else (site.writer, site.reader)


def _jsonable(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# The planners, one per kind
# --------------------------------------------------------------------------------------------


def missing_default(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """READER_FIELD_MISSING_DEFAULT_VALUE: a default for the new field (BACKWARD), or the removed
    field restored, deprecated, with a default (FORWARD)."""
    rf = site.reader_field
    if rf is None:
        return
    if backward:
        yield from _default_plans(ctx, rf, "it is not in the earlier version")
        return
    record = site.writer_record
    if record is None:
        return
    try:
        restored = field_json(rf, ctx.placement(record.pointer + "/fields", replacing=False))
    except Unplaceable:
        return
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


def name_mismatch(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """NAME_MISMATCH: the earlier name as an alias (BACKWARD), or the earlier name back."""
    cand, other = _sides(site, backward)
    if not isinstance(cand, NamedSchema) or not isinstance(other, NamedSchema):
        return
    if backward:
        yield Plan(
            f"Add the earlier name {other.fullname!r} to the aliases of {cand.type} "
            f"{cand.fullname}",
            SAFE,
            (("set", cand.pointer, "aliases", [*cand.aliases, other.fullname]),),
        )
    written = held_at(ctx.value, cand.pointer + "/name")
    renames: list[Op] = [("set", cand.pointer, "name", _renamed(written, other.simple_name))]
    renames += [
        ("replace", pointer, _renamed(spelled, other.simple_name))
        for pointer, spelled in ctx.references(cand)
    ]
    yield Plan(
        f"Keep the earlier name {other.simple_name!r} for {cand.type} {cand.fullname}"
        + (f" (and its {len(renames) - 1} reference(s))" if len(renames) > 1 else ""),
        UNSAFE,
        tuple(renames),
    )


def missing_enum_symbols(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """MISSING_ENUM_SYMBOLS: an enum default or the symbols back (BACKWARD); the new symbols
    removed (FORWARD)."""
    cand, other = _sides(site, backward)
    if not isinstance(cand, EnumSchema) or not isinstance(other, EnumSchema):
        return
    if backward:
        missing = [s for s in other.symbols if s not in cand.symbols]
        pick = next((s for s in cand.symbols if s.upper() in ("UNKNOWN", "OTHER")), cand.symbols[0])
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
        return
    added = [s for s in cand.symbols if s not in other.symbols]
    known = [s for s in cand.symbols if s in other.symbols]
    yield Plan(
        f"Remove the new symbol(s) {', '.join(added)} from enum {cand.fullname}: readers "
        "of the earlier version have no default for them",
        UNSAFE,
        (("replace", cand.pointer + "/symbols", known),),
    )


def fixed_size_mismatch(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """FIXED_SIZE_MISMATCH: the earlier size, or the field split."""
    cand, other = _sides(site, backward)
    if not isinstance(cand, FixedSchema) or not isinstance(other, FixedSchema):
        return
    yield Plan(
        f"Keep the size {other.size} of fixed {cand.fullname}",
        UNSAFE,
        (("set", cand.pointer, "size", other.size),),
    )
    yield from _split_field(ctx, site, backward)


def missing_union_branch(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """MISSING_UNION_BRANCH: the branch back (BACKWARD); the new branch removed, the earlier
    type, or the field split (FORWARD)."""
    cand, other = _sides(site, backward)
    if cand is None or other is None:
        return
    if backward and isinstance(cand, UnionSchema):
        lacking = site.branch if site.branch is not None else other
        try:
            branch = to_json(lacking, ctx.placement(cand.pointer, replacing=False))
        except Unplaceable:
            return
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


def type_mismatch(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """TYPE_MISMATCH: the new type kept in a new field first (it keeps what the change meant),
    then the promotions Avro allows, the earlier type, a union of both."""
    if site.writer_field is None and site.reader_field is not None and not site.at_field:
        # Java's quirk: a new enum field with a default is compared with the writer's record
        yield from missing_default(ctx, site, backward)
        return
    cand, other = _sides(site, backward)
    if cand is None or other is None:
        return
    yield from _split_field(ctx, site, backward)
    yield from _promotions(site, backward)
    yield from _revert(ctx, site, backward)
    if backward and not isinstance(cand, UnionSchema) and site.reader_field is not None:
        yield from _both(ctx, cand, other)


def ambiguous_field_match(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """AMBIGUOUS_FIELD_MATCH (BACKWARD): drop the aliases that name other writer fields."""
    rf, record = site.reader_field, site.writer_record
    if not backward or rf is None or record is None:
        return
    names = set(record.field_map)
    # Keep the aliases that name no field of the writer; when the field's own name is not one
    # of the writer's either, keep the first alias that is (the match it was meant for).
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
        (("set", rf.pointer, "aliases", still),) if still else (("remove", rf.pointer, "aliases"),)
    )
    yield Plan(
        f"Remove the alias(es) {', '.join(dropped)} of field '{rf.name}': they name other "
        "fields of the earlier version",
        SAFE,
        ops,
    )


PLANNERS: dict[Kind, Planner] = {
    Kind.READER_FIELD_MISSING_DEFAULT_VALUE: missing_default,
    Kind.NAME_MISMATCH: name_mismatch,
    Kind.MISSING_ENUM_SYMBOLS: missing_enum_symbols,
    Kind.FIXED_SIZE_MISMATCH: fixed_size_mismatch,
    Kind.MISSING_UNION_BRANCH: missing_union_branch,
    Kind.TYPE_MISMATCH: type_mismatch,
    Kind.AMBIGUOUS_FIELD_MATCH: ambiguous_field_match,
}


# --------------------------------------------------------------------------------------------
# What several planners share
# --------------------------------------------------------------------------------------------


def _default_plans(ctx: CandidateView, f: Field, why: str) -> Iterator[Plan]:
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
    if isinstance(f.type, UnionSchema) and any(b.type == "null" for b in f.type.types):
        return
    # The type as the file writes it, in the same place: its names mean what they meant.
    written = held_at(ctx.value, f.pointer + "/type")
    types = ["null", *written] if isinstance(written, list) else ["null", written]
    yield Plan(
        f"Make field '{f.name}' optional: type {_jsonable(types)} with default null",
        UNSAFE,
        (("replace", f.pointer + "/type", types), ("set", f.pointer, "default", None)),
    )


def _renamed(spelled: Any, simple: str) -> str:
    """``spelled`` (a name as the file writes it: simple, full, or with a leading dot) with its
    simple name replaced by ``simple``."""
    text = str(spelled)
    return text.rsplit(".", 1)[0] + "." + simple if "." in text else simple


def _promotions(site: Site, backward: bool) -> Iterator[Plan]:
    """Types Avro promotes to: the candidate's type replaced by one that reads (BACKWARD) or
    is read by (FORWARD) the other side's primitive type."""
    cand, other = _sides(site, backward)
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


def _revert(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """The earlier type back, written where the candidate's is."""
    cand, other = _sides(site, backward)
    if cand is None or other is None:
        return
    try:
        value = to_json(other, ctx.placement(cand.pointer, replacing=True))
    except Unplaceable:
        return
    ops: list[Op] = [("replace", cand.pointer, value)]
    fields = (site.reader_field, site.writer_field)
    cand_field, old_field = fields if backward else fields[::-1]
    if cand_field is not None and cand.pointer == cand_field.pointer + "/type":
        # the field's default goes with its type: the earlier field's, or none
        ops += _default_of(cand_field, old_field)
    yield Plan(f"Keep the earlier type {type_name(other)}", UNSAFE, tuple(ops))


def _default_of(cand_field: Field, old_field: Field | None) -> list[Op]:
    """Operations giving ``cand_field`` the default of ``old_field`` (none if it has none)."""
    if old_field is not None and old_field.has_default:
        return [("set", cand_field.pointer, "default", old_field.default)]
    if cand_field.has_default:
        return [("remove", cand_field.pointer, "default")]
    return []


def _both(ctx: CandidateView, cand: Schema, other: Schema) -> Iterator[Plan]:
    """A union of the new type (as written) and the earlier one."""
    try:
        placement = ctx.placement(cand.pointer, replacing=True)
        first = held_at(ctx.value, cand.pointer)
        placement.added |= ctx.defined_within(cand.pointer)  # the first branch defines them
        both = [first, to_json(other, placement)]
    except Unplaceable:
        return
    yield Plan(f"Accept both: type {_jsonable(both)}", UNSAFE, (("replace", cand.pointer, both),))


def _split_field(ctx: CandidateView, site: Site, backward: bool) -> Iterator[Plan]:
    """Keep the earlier field as it was, and add the new type as a new field (optional, with
    a null default): old and new readers each find what they expect."""
    rf, wf = site.reader_field, site.writer_field
    if rf is None or wf is None or site.at_field:
        return
    cand_field, old_field = (rf, wf) if backward else (wf, rf)
    record = site.reader_record if backward else site.writer_record
    document = ctx.document
    if record is None or not document.pointer_exists(cand_field.pointer):
        return
    at = cand_field.pointer + "/type"
    try:
        kept_type = to_json(old_field.type, ctx.placement(at, replacing=True))
    except Unplaceable:
        return
    ops: list[Op] = [("replace", at, kept_type), *_default_of(cand_field, old_field)]
    new_type = _renamed_copy(ctx, held_at(ctx.value, at), record)
    name = _new_field_name(ctx.field_names(record), cand_field.name, _suffix(cand_field.type))
    if isinstance(new_type, list):  # null first: the default null is the first branch's
        branches = ["null", *(b for b in new_type if b != "null")]
    else:
        branches = ["null", new_type]
    new_field = {"name": name, "type": branches, "default": None}
    yield Plan(
        f"Keep field '{cand_field.name}' as it was and add the new type as field '{name}' "
        "(optional, default null)",
        UNSAFE,
        (*ops, ("append", record.pointer + "/fields", new_field)),
    )


def _new_field_name(taken: Container[str], base: str, suffix: str) -> str:
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


def _renamed_copy(ctx: CandidateView, value: Any, record: RecordSchema) -> Any:
    """The candidate's type JSON ``value`` (written in ``record``) with every named type it
    defines renamed (``NameV2``, ``NameV3``, ...) and its references to them following: the
    copy moves to a new field, where the old definitions' names would be defined twice."""
    if not _defines(value):
        return value
    out = copy.deepcopy(value)
    holder: dict[str, Any] = {
        "type": "record",
        "name": "_",
        "namespace": record.namespace or "",
        "fields": [{"name": "_", "type": out}],
    }
    defined, uses = scan_names(holder)
    taken = ctx.candidate_names()
    renamed: dict[str, str] = {}
    for full, pointer in defined.items():
        if not pointer:  # the holder itself
            continue
        node = held_at(holder, pointer)
        base = full.rsplit(".", 1)[-1]
        space = full.rsplit(".", 1)[0] if "." in full else None
        n, simple = 2, f"{base}V2"
        while (f"{space}.{simple}" if space else simple) in taken:
            n += 1
            simple = f"{base}V{n}"
        new_full = f"{space}.{simple}" if space else simple
        taken.add(new_full)
        renamed[full] = new_full
        node["name"] = _renamed(node["name"], simple)
        node.pop("aliases", None)
    for use in uses:
        target = next((c for c in use.candidates if c in renamed or c in taken), None)
        if target not in renamed:
            continue
        at = use.pointer
        if isinstance(held_at(holder, at), dict):
            at += "/type"
        spelled = held_at(holder, at)
        _set_at(holder, at, _renamed(spelled, renamed[target].rsplit(".", 1)[-1]))
    return holder["fields"][0]["type"]


def _defines(value: Any) -> bool:
    """Whether the type JSON ``value`` defines a named type (somewhere inside)."""
    if isinstance(value, list):
        return any(_defines(v) for v in value)
    if isinstance(value, dict):
        return value.get("type") in NAMED_SPELLINGS or any(
            _defines(value.get(k)) for k in ("type", "items", "values")
        )
    return False


def _set_at(value: Any, pointer: str, new: Any) -> None:
    parent, _, last = pointer.rpartition("/")
    container = held_at(value, parent)
    if isinstance(container, list):
        container[int(last)] = new
    else:
        container[unescape_token(last)] = new
