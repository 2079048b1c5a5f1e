"""Evolution (E001-E003): what a schema must hold so that it can change compatibly later:
optional fields written ``["null", T]`` with ``"default": null``, an enum default for symbols
added later, and (at FORWARD or FULL levels) a default on every field."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from schemacli.contracts.avro.defaults import NoDefault, default_for
from schemacli.contracts.avro.schema import (
    EnumSchema,
    Field,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.evolution.levels import FORWARD
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run, union_text
from schemacli.kinds import Kind

if TYPE_CHECKING:  # the fixes' editor is loaded when a fix is made (validate seldom does)
    from schemacli.contracts.fixes.edits import Fix

E = Category.EVOLUTION

E001 = Rule(
    Kind.E001,
    "optional-field-without-null-default",
    E,
    default=True,
    fixable=Fixable.SOMETIMES,
    summary='an optional field is ["null", T] with "default": null',
    changes_canonical_form=True,
)
E002 = Rule(
    Kind.E002,
    "enum-without-default",
    E,
    default=True,
    fixable=Fixable.SOMETIMES,
    summary="every enum has a default symbol for symbols added later",
)
E003 = Rule(
    Kind.E003,
    "field-without-default-at-level",
    E,
    default=True,
    fixable=Fixable.UNSAFE,
    summary="at FORWARD or FULL levels, every field has a default (or it can never be removed)",
)


def _named(run: Run, node: NamedSchema) -> None:
    if isinstance(node, EnumSchema) and run.on(Kind.E002) and node.default is None:
        run.report(
            Kind.E002,
            node.pointer + "/name",
            {"name": node.simple_name},
            lambda: [_enum_default_fix(run, node)],
        )


_FALLBACK_SYMBOLS = ("UNKNOWN", "UNSPECIFIED", "UNDEFINED", "OTHER", "NONE", "DEFAULT")


def _enum_default_fix(run: Run, node: EnumSchema) -> Fix:
    from schemacli.contracts.fixes.edits import Applicability, Fix

    by_fold = {s.upper(): s for s in node.symbols}
    for candidate in _FALLBACK_SYMBOLS:
        if candidate in by_fold:
            symbol = by_fold[candidate]
            edit = run.edit().set_member(node.pointer, "default", symbol)
            return Fix(
                f'Add "default": "{symbol}" to enum {node.simple_name}', Applicability.SAFE, (edit,)
            )
    return Fix(
        f'Add a fallback symbol (such as "UNKNOWN") to enum {node.simple_name} and make it '
        'the "default" (a new symbol is a change of type: check it with schemacli check)',
        Applicability.DISPLAY,
    )


def _field(run: Run, fld: Field) -> None:
    kind = fld.type
    if run.on(Kind.E001) and isinstance(kind, UnionSchema) and not fld.has_default:
        nulls = [i for i, t in enumerate(kind.types) if t.type == "null"]
        if nulls:
            run.report(
                Kind.E001,
                fld.pointer,
                {"name": fld.name, "type": union_text(kind), "problem": "has no default"},
                lambda: [_null_default_fix(run, fld, kind, nulls[0])],
            )
            return
    level = run.context.level if run.context is not None else None
    if (
        run.on(Kind.E003)
        and level is not None
        and FORWARD in level.directions
        and not fld.has_default
    ):
        run.report(
            Kind.E003,
            fld.pointer,
            {"name": fld.name, "level": level.value},
            lambda: _zero_default_fixes(run, fld),
        )


def _null_default_fix(run: Run, fld: Field, union: UnionSchema, null_at: int) -> Fix:
    from schemacli.contracts.fixes.edits import Applicability, Fix

    editor = run.edit()
    add = editor.set_member(fld.pointer, "default", None)
    if null_at == 0:
        return Fix(f"Add \"default\": null to field '{fld.name}'", Applicability.SAFE, (add,))
    where = union.pointer
    move = (editor.remove_element(where, null_at), editor.insert_element(where, 0, "null"))
    return Fix(
        f'Move "null" first in the type of field \'{fld.name}\' and add "default": null '
        "(a change of type: check it with schemacli check)",
        Applicability.UNSAFE,
        (*move, add),
    )


def _zero(schema: Schema) -> tuple[bool, Any]:
    """A default of ``schema``'s type that says "nothing": (found, value). A record's is not
    offered (a whole record of zeros is rarely what its author means)."""
    while isinstance(schema, UnionSchema) and schema.types:
        schema = schema.types[0]
    if isinstance(schema, (RecordSchema, UnionSchema)):
        return False, None
    try:
        return True, default_for(schema)
    except NoDefault:
        return False, None


def _zero_default_fixes(run: Run, fld: Field) -> list[Fix]:
    from schemacli.contracts.fixes.edits import Applicability, Fix

    found, value = _zero(fld.type)
    if not found:
        return [
            Fix(
                f"Give field '{fld.name}' a default (a record needs one written out)",
                Applicability.DISPLAY,
            )
        ]
    edit = run.edit().set_member(fld.pointer, "default", value)
    shown = _json(value)
    return [
        Fix(
            f"Add \"default\": {shown} to field '{fld.name}' (readers of old data see it)",
            Applicability.UNSAFE,
            (edit,),
        )
    ]


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


FAMILY = Family((E001, E002, E003), named=_named, field=_field)
