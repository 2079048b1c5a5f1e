"""Naming (N001-N007): names in the configured styles, a namespace on every named type, no
two fields one SQL engine cannot tell apart, no reserved words, no alias that shadows a field.

The renames keep the old name as an alias, so readers of old data still resolve it
(docs/lint.md#n001-record-name-style); a field's rename also renames its key in the defaults
that are values of its record (``fixes.renames``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from schemacli.contracts.avro.facts import TYPE_NAMES
from schemacli.contracts.avro.loader import scan_names
from schemacli.contracts.avro.schema import EnumSchema, Field, NamedSchema, RecordSchema
from schemacli.contracts.jsontext.pointer import value_at
from schemacli.contracts.lint.rule import Category, Family, Fixable, NameStyle, Rule, Run
from schemacli.kinds import Kind

if TYPE_CHECKING:  # the fixes' editor is loaded when a fix is made (validate seldom does)
    from schemacli.contracts.fixes.edits import Fix, TextEdit

N = Category.NAMING

N001 = Rule(
    Kind.N001,
    "record-name-style",
    N,
    default=True,
    fixable=Fixable.UNSAFE,
    summary="record, enum and fixed names in the configured style (PascalCase)",
    changes_canonical_form=True,
)
N002 = Rule(
    Kind.N002,
    "field-name-style",
    N,
    default=True,
    fixable=Fixable.UNSAFE,
    summary="field names in the configured style (consistent: the record's majority)",
    changes_canonical_form=True,
)
N003 = Rule(
    Kind.N003,
    "enum-symbol-style",
    N,
    default=True,
    fixable=Fixable.NONE,
    summary="enum symbols in the configured style (UPPER_SNAKE_CASE)",
)
N004 = Rule(
    Kind.N004,
    "missing-namespace",
    N,
    default=True,
    fixable=Fixable.NONE,
    summary="every named type has a namespace (its own or its parent's)",
)
N005 = Rule(
    Kind.N005,
    "case-insensitive-duplicate",
    N,
    default=True,
    fixable=Fixable.NONE,
    summary="no two fields of a record differ only by case",
)
N006 = Rule(
    Kind.N006,
    "reserved-name",
    N,
    default=True,
    fixable=Fixable.NONE,
    summary="no Avro type name or Java/Python/SQL keyword as a name",
)
N007 = Rule(
    Kind.N007,
    "alias-shadows-field",
    N,
    default=True,
    fixable=Fixable.UNSAFE,
    summary="a field alias is not another field's name or alias",
)


# Compiled by ``re`` when first matched (and kept in its cache): ``validate`` loads this module
# but runs none of its rules.
_STYLE_PATTERNS = {
    NameStyle.PASCAL: r"[A-Z][a-zA-Z0-9]*",
    NameStyle.CAMEL: r"[a-z][a-zA-Z0-9]*",
    NameStyle.SNAKE: r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*",
    NameStyle.UPPER_SNAKE: r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*",
}


def fits(name: str, style: NameStyle) -> bool:
    """Whether ``name`` is written in ``style`` (``any`` / ``consistent``: always)."""
    pattern = _STYLE_PATTERNS.get(style)
    return pattern is None or re.fullmatch(pattern, name) is not None


def words(name: str) -> list[str]:
    """``"vendorID_2x"`` -> ``["vendor", "id", "2x"]``: a name's words, lower case."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def restyle(name: str, style: NameStyle) -> str:
    """``name`` written in ``style`` (unchanged for ``any`` / ``consistent``)."""
    parts = words(name)
    if not parts or style not in _STYLE_PATTERNS:
        return name
    if style is NameStyle.SNAKE:
        out = "_".join(parts)
    elif style is NameStyle.UPPER_SNAKE:
        out = "_".join(parts).upper()
    elif style is NameStyle.PASCAL:
        out = "".join(p.capitalize() for p in parts)
    else:
        out = parts[0] + "".join(p.capitalize() for p in parts[1:])
    return out if out[0].isalpha() else "_" + out if style is NameStyle.SNAKE else "X" + out


def _majority(names: Sequence[str]) -> NameStyle | None:
    """The style most of ``names`` show unambiguously (snake_case or camelCase), or None.
    A one-word lower-case name (``id``) is both and counts for neither; a tie goes to the
    style of the first name that shows one."""
    votes: dict[NameStyle, int] = {}
    first: NameStyle | None = None
    for name in names:
        snake, camel = fits(name, NameStyle.SNAKE), fits(name, NameStyle.CAMEL)
        if snake != camel:
            style = NameStyle.SNAKE if snake else NameStyle.CAMEL
            votes[style] = votes.get(style, 0) + 1
            first = first or style
    if not votes:
        return None
    best = max(votes.values())
    leaders = [s for s, n in votes.items() if n == best]
    return first if len(leaders) > 1 else leaders[0]


_KEYWORDS = {
    "Java": frozenset(
        "abstract assert boolean break byte case catch char class const continue default do "
        "double else enum extends final finally float for goto if implements import instanceof "
        "int interface long native new package private protected public return short static "
        "strictfp super switch synchronized this throw throws transient try void volatile "
        "while".split()
    ),
    "Python": frozenset(
        "False None True and as assert async await break class continue def del elif else "
        "except finally for from global if import in is lambda nonlocal not or pass raise "
        "return try while with yield".split()
    ),
    "SQL": frozenset(
        "select from where group order by having join union table insert update delete into "
        "values create drop alter limit offset".split()
    ),
}


def _reserved(name: str) -> list[str]:
    where = ["Avro"] if name in TYPE_NAMES else []
    where += [
        lang
        for lang, words_ in _KEYWORDS.items()
        if name in words_ or (lang == "SQL" and name.lower() in words_)
    ]
    return where


def _named(run: Run, node: NamedSchema) -> None:
    what = node.type if not isinstance(node, RecordSchema) or not node.is_error else "error"
    name_at = node.pointer + "/name"
    style = run.styles.types
    if run.on(Kind.N001) and not fits(node.simple_name, style):
        suggestion = restyle(node.simple_name, style)
        run.report(
            Kind.N001,
            name_at,
            {
                "type": what,
                "name": node.simple_name,
                "style": style.value,
                "suggestion": suggestion,
            },
            lambda: _rename_type_fixes(run, node, suggestion),
        )
    if run.on(Kind.N004) and not node.namespace:
        run.report(
            Kind.N004,
            name_at,
            {"type": what, "name": node.simple_name, "lower": node.simple_name.lower()},
            partial(_namespace_fix, what, node),
        )
    if run.on(Kind.N006):
        where = _reserved(node.simple_name)
        if where:
            run.report(
                Kind.N006,
                name_at,
                {"what": f"{what} name", "name": node.simple_name, "where": ", ".join(where)},
            )
    if isinstance(node, EnumSchema) and run.on(Kind.N003):
        _symbols(run, node)


def _namespace_fix(what: str, node: NamedSchema) -> list[Fix]:
    from schemacli.contracts.fixes.edits import Applicability, Fix

    return [Fix(f'Add a "namespace" to {what} {node.simple_name}', Applicability.DISPLAY)]


def _rename_type_fixes(run: Run, node: NamedSchema, new: str) -> list[Fix]:
    """Rename a named type, every use of it in the file, and keep the old name as an alias."""
    from schemacli.contracts.fixes.edits import Applicability, Fix

    editor = run.edit()
    old_full = node.fullname
    new_full = f"{node.namespace}.{new}" if node.namespace else new
    value = run.loaded.value
    written = value_at(value, node.pointer + "/name")
    edits = [editor.replace(node.pointer + "/name", new_full if "." in str(written) else new)]
    _, uses = scan_names(value)
    for use in uses:
        if old_full not in use.candidates or not _resolves_to(run, use.candidates, old_full):
            continue
        at = use.pointer
        if isinstance(value_at(value, at), dict):
            at += "/type"
        used = value_at(value, at)
        edits.append(editor.replace(at, new_full if "." in str(used) else new))
    edits.append(_add_alias(run, node.pointer, old_full))
    return [
        Fix(
            f"Rename {node.type} {node.simple_name} to {new} (old name kept as an alias)",
            Applicability.UNSAFE,
            tuple(edits),
        )
    ]


def _resolves_to(run: Run, candidates: tuple[str, ...], full: str) -> bool:
    """Java resolves a use to its first candidate that is defined."""
    for candidate in candidates:
        if candidate in run.loaded.names:
            return candidate == full
    return False


def _add_alias(run: Run, pointer: str, alias: str) -> TextEdit:
    editor = run.edit()
    aliases = value_at(run.loaded.value, pointer + "/aliases")
    if isinstance(aliases, list):
        return editor.insert_element(pointer + "/aliases", len(aliases), alias)
    return editor.set_member(pointer, "aliases", [alias])


def _symbols(run: Run, node: EnumSchema) -> None:
    style = run.styles.symbols
    for index, symbol in enumerate(node.symbols):
        if not fits(symbol, style):
            run.report(
                Kind.N003,
                f"{node.pointer}/symbols/{index}",
                {"name": symbol, "enum": node.simple_name, "style": style.value},
            )


def _record(run: Run, node: RecordSchema) -> None:
    fields = node.fields
    style = run.styles.fields
    if style is NameStyle.CONSISTENT:
        majority = _majority([f.name for f in fields])
        style = majority if majority is not None else NameStyle.ANY
    by_fold: dict[str, Field] = {}
    names = {f.name: f for f in fields}
    aliases: dict[str, Field] = {}
    for fld in fields:
        for alias in fld.aliases:
            aliases.setdefault(alias, fld)
    for fld in fields:
        name_at = fld.pointer + "/name"
        if run.on(Kind.N002) and not fits(fld.name, style):
            suggestion = restyle(fld.name, style)
            if suggestion not in names:
                run.report(
                    Kind.N002,
                    name_at,
                    {"name": fld.name, "style": style.value, "suggestion": suggestion},
                    partial(_rename_field_fixes, run, node, fld, suggestion),
                )
        folded = fld.name.lower()
        if run.on(Kind.N005) and folded in by_fold:
            other = by_fold[folded]
            run.report(
                Kind.N005,
                name_at,
                {"name": fld.name, "other": other.name, "record": node.simple_name},
            )
        by_fold.setdefault(folded, fld)
        if run.on(Kind.N006):
            where = _reserved(fld.name)
            if where:
                run.report(
                    Kind.N006,
                    name_at,
                    {"what": "field name", "name": fld.name, "where": ", ".join(where)},
                )
        if run.on(Kind.N007):
            for index, alias in enumerate(fld.aliases):
                shadowed = names.get(alias)
                other_alias = aliases.get(alias)
                if shadowed is not None and shadowed is not fld:
                    what = f"the name of field {alias!r}"
                elif other_alias is not None and other_alias is not fld:
                    what = f"an alias of field {other_alias.name!r}"
                else:
                    continue
                run.report(
                    Kind.N007,
                    f"{fld.pointer}/aliases/{index}",
                    {"alias": alias, "name": fld.name, "other": what, "record": node.simple_name},
                    partial(_remove_alias_fix, run, fld, index),
                )


def _rename_field_fixes(run: Run, record: RecordSchema, fld: Field, new: str) -> list[Fix]:
    from schemacli.contracts.fixes.edits import Applicability, Fix
    from schemacli.contracts.fixes.renames import default_key_edits

    editor = run.edit()
    edits = (
        editor.replace(fld.pointer + "/name", new),
        _add_alias(run, fld.pointer, fld.name),
        # the defaults that spell the field's name (a value of its record) are renamed too
        *default_key_edits(editor, run.loaded.schema, record, fld.name, new),
    )
    return [
        Fix(
            f"Rename field {fld.name} to {new} (old name kept as an alias)",
            Applicability.UNSAFE,
            edits,
        )
    ]


def _remove_alias_fix(run: Run, fld: Field, index: int) -> list[Fix]:
    from schemacli.contracts.fixes.edits import Applicability, Fix

    editor = run.edit()
    alias = fld.aliases[index]
    if len(fld.aliases) == 1:
        edit = editor.remove_member(fld.pointer, "aliases")
    else:
        edit = editor.remove_element(fld.pointer + "/aliases", index)
    return [Fix(f"Remove alias {alias!r} from field {fld.name}", Applicability.UNSAFE, (edit,))]


FAMILY = Family((N001, N002, N003, N004, N005, N006, N007), named=_named, record=_record)
