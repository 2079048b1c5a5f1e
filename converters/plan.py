"""Derive a mapping from two schemas: every v1 (target) field matched to a v2 (source) value.

Matching follows Avro's own rules for a reader (v1) reading a writer (v2): by name, then by the
v1 field's aliases, then by a v2 field whose aliases name the v1 field. Where the types differ,
the planner proposes the safe conversion from the catalogue, or writes an explicit ``unresolved``
marker naming why no safe conversion exists: such a mapping is not deployable until a person
decides (``validate`` exits 1 naming each marker).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from converters.mapping import FORMAT_VERSION, Conversion, Endpoint, Mapping, Policy, Rule
from converters.schemaview import AvroField, AvroType, same_type, view
from converters.sql import PROMOTIONS
from schemacli.errors import InputError, Location

NUMERIC = ("int", "long", "float", "double")


def plan(
    source_json: Any,
    target_json: Any,
    *,
    source: Endpoint | None = None,
    target: Endpoint | None = None,
    dead_letter_topic: str | None = None,
) -> Mapping:
    """Propose a mapping from v2 (``source_json``) to v1 (``target_json``). Pure; never raises on
    an impossible field, it marks it ``unresolved`` instead."""
    source = source or Endpoint()
    target = target or Endpoint()
    src, tgt = _view(source_json, "v2", source), _view(target_json, "v1", target)
    for side, t, endpoint in (("v2", src, source), ("v1", tgt, target)):
        if t.kind != "record":
            raise InputError(
                f"{side} schema is a{'n' if t.kind[0] in 'aeiou' else ''} {t.kind}, not a record",
                location=Location(source=endpoint.schema or endpoint.subject, pointer=""),
                hint="A mapping converts records field by field; both schemas must be records.",
            )
    rules: list[Rule] = []
    _record(src, tgt, "", "", rules)
    if dead_letter_topic is None and source.topic:
        dead_letter_topic = f"{source.topic}.dead-letter"
    return Mapping(
        version=FORMAT_VERSION,
        source=Endpoint(source.subject, source.version, source.schema, source.topic, source_json),
        target=Endpoint(target.subject, target.version, target.schema, target.topic, target_json),
        rules=tuple(rules),
        dead_letter_topic=dead_letter_topic,
    )


def plan_key(
    mapping: Mapping,
    source_json: Any,
    target_json: Any,
    *,
    source: Endpoint | None = None,
    target: Endpoint | None = None,
) -> Mapping:
    """``mapping`` with a ``key`` section planned from the v2 key schema (``source_json``) to the
    v1 key schema (``target_json``), by the same rules as the value. Keys have no topic."""
    key = plan(
        source_json,
        target_json,
        source=replace(source or Endpoint(), topic=None),
        target=replace(target or Endpoint(), topic=None),
    )
    return replace(mapping, key=replace(key, dead_letter_topic=None, prefix="/key"))


def match(source: AvroType, field: AvroField) -> tuple[AvroField | None, str | None]:
    """The v2 field feeding v1 ``field``, and a note when it was found through an alias."""
    by_name = {f.name: f for f in source.fields}
    if field.name in by_name:
        return by_name[field.name], None
    for alias in field.aliases:
        if alias in by_name:
            return by_name[alias], f"matched through v1 alias {alias!r}"
    for f in source.fields:
        if field.name in f.aliases:
            return f, f"matched through v2 alias of {f.name!r}"
    return None, None


def _record(
    src: AvroType, tgt: AvroType, src_prefix: str, tgt_prefix: str, rules: list[Rule]
) -> None:
    for tf in tgt.fields:
        path = tgt_prefix + tf.name
        sf, note = match(src, tf)
        if sf is None:
            rules.append(_missing(tf, path))
            continue
        rules.extend(_pair(sf, tf, src_prefix + sf.name, path, note))


def _missing(tf: AvroField, path: str) -> Rule:
    if tf.has_default:
        return Rule(target=path, convert=Conversion.DEFAULT, note="not in v2: v1 default")
    return Rule(
        target=path,
        convert=Conversion.UNRESOLVED,
        reason=f"v2 has no field {tf.name!r} (nor an alias of it) and v1 gives no default",
    )


def _pair(sf: AvroField, tf: AvroField, spath: str, tpath: str, note: str | None) -> list[Rule]:
    s, t = sf.type.non_null(), tf.type.non_null()
    notes = [note] if note else []
    null_to_required = sf.type.nullable and not tf.type.nullable
    if null_to_required:
        notes.append(
            "v2 allows null, v1 does not: a null goes to the dead letter (or on_error: default)"
        )

    def rule(conv: Conversion, extra: str | None = None) -> list[Rule]:
        n = notes + ([extra] if extra else [])
        return [
            Rule(
                target=tpath,
                source=spath,
                convert=conv,
                on_error=Policy.FAIL,
                note="; ".join(n) or None,
            )
        ]

    sk, tk = s.kind, t.kind
    if s.kind == "union" or t.kind == "union":
        if same_type(s, t):
            return rule(Conversion.COPY)
        return [
            Rule(
                target=tpath,
                source=spath,
                convert=Conversion.UNRESOLVED,
                reason=f"union {s.describe()} -> {t.describe()} has no automatic conversion",
            )
        ]
    if sk == "record" and tk == "record":
        if same_type(s, t):
            return rule(Conversion.COPY)
        out = [
            Rule(
                target=tpath, source=spath, convert=Conversion.RECORD, note="; ".join(notes) or None
            )
        ]
        _record(s, t, spath + ".", tpath + ".", out)
        return out
    if sk == tk:
        if sk == "enum":
            if set(s.symbols) <= set(t.symbols):
                return rule(Conversion.COPY)
            missing = sorted(set(s.symbols) - set(t.symbols))
            return rule(
                Conversion.TO_ENUM, f"v2 symbols {missing} are not in v1: those records fail"
            )
        if sk in ("array", "map", "fixed") and not same_type(s, t):
            return [
                Rule(
                    target=tpath,
                    source=spath,
                    convert=Conversion.UNRESOLVED,
                    reason=f"{s.describe()} -> {t.describe()}: element conversion is not "
                    "automatic; "
                    "write `convert: sql` with transform()",
                )
            ]
        if s.logical != t.logical:
            return [
                Rule(
                    target=tpath,
                    source=spath,
                    convert=Conversion.UNRESOLVED,
                    reason=f"logical type {s.logical} -> {t.logical} has no automatic conversion",
                )
            ]
        return rule(Conversion.COPY)
    if (sk, tk) in PROMOTIONS:
        return rule(Conversion.COPY, f"Avro promotion {sk} -> {tk}")
    if sk == "string" and tk in NUMERIC:
        return rule(Conversion.PARSE_NUMBER, f"string -> {tk}: non-numbers fail")
    if (sk, tk) in (("long", "int"), ("double", "float")):
        return rule(Conversion.NARROW, f"{sk} -> {tk}: values out of range fail")
    if tk == "string" and sk in ("enum", "boolean", *NUMERIC):
        return rule(Conversion.TO_STRING)
    if tk == "enum" and sk == "string":
        return rule(Conversion.TO_ENUM, "strings that are not v1 symbols fail")
    if sk in ("bytes", "fixed") and tk == "string":
        return rule(Conversion.BYTES_TO_STRING, "invalid UTF-8 fails")
    if sk == "string" and tk == "bytes":
        return rule(Conversion.STRING_TO_BYTES)
    return [
        Rule(
            target=tpath,
            source=spath,
            convert=Conversion.UNRESOLVED,
            reason=f"no safe conversion from v2 {s.describe()} to v1 {t.describe()}",
        )
    ]


def _view(schema_json: Any, side: str, endpoint: Endpoint) -> AvroType:
    """``view`` of one side; its InputError names the side and where its schema came from."""
    try:
        return view(schema_json)
    except InputError as err:
        origin = endpoint.schema or endpoint.subject
        raise InputError(
            f"{side} schema: {err.message}",
            location=replace(err.location, source=origin) if err.location else None,
            hint=err.hint,
        ) from err
