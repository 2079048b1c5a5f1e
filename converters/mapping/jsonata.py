"""Compile a mapping into Confluent migration rules: JSONata doing what the converter's SQL does.

The sibling of ``converters.mapping.sql``: the same rules, the same null handling and the same
``on_error`` policy, written for the JSONata engine Confluent's Python deserializer runs
(jsonata-python, through ``confluent_kafka.schema_registry.rules.jsonata``). Pure: text in, text
out, no engine needed to compile.

What the engine sees, and so what a rule may assume (read in confluent-kafka's ``AvroDeserializer``:
the v2 record is decoded by fastavro's ``schemaless_reader`` with the writer schema alone, handed
to ``Jsonata.evaluate``, and the result is the record the application gets):

* a record is a dict, a union's value is the bare branch value, an enum is its symbol, a map a
  dict, an array a list, a long a Python int (kept exact while it is only copied);
* jsonata-python accepts JSON-like values only: a record holding ``bytes``, ``fixed``, or a
  logical type fastavro turns into a Python object (date, time, timestamps, decimal, uuid) makes
  the rule fail for every record, so such schemas are refused here, by field;
* JSONata computes in doubles: a long built from text, or written as text, can lose digits, so
  those conversions are refused; a record that the converter dead-letters raises ``$error`` and
  the rule's ``onFailure: ERROR`` makes the deserializer fail it instead of passing it altered.

A conversion JSONata cannot express raises :class:`~schemacli.errors.InputError` naming the
conversion and the line:col of its rule. Each conversion's JSONata (and its inverse, for UPGRADE)
is its spec's (``converters.mapping.conversions``); this module walks the record around it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from converters.mapping.conversions import value_spec
from converters.mapping.conversions.spec import (
    JSONATA_ENGINE,
    Jsonata,
    jsonata_string,
    no_jsonata,
)
from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType, view
from converters.mapping.sql import compile_mapping, field_at, fits
from schemacli.errors import InputError

# logical types fastavro decodes to Python objects jsonata-python refuses as input
_OBJECT_LOGICALS = (
    "date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros",
    "timestamp-nanos", "local-timestamp-millis", "local-timestamp-micros",
    "local-timestamp-nanos", "decimal", "uuid",
)  # fmt: skip

RULE_TYPE = "JSONATA"
# the deserializer the rules are written for: how it presents the record to JSONata
CLIENTS = ("python", "java")
DEFAULT_CLIENT = "python"


@dataclass(frozen=True)
class MigrationRules:
    """The compiled rules: the DOWNGRADE expression (v2 -> v1), the UPGRADE one (v1 -> v2) or
    why there is none, and the Confluent ``onFailure`` action matching the mapping's policy."""

    downgrade: str
    upgrade: str | None
    no_upgrade: str | None  # why the mapping cannot be inverted (None when upgrade is set)
    on_failure: str = "ERROR"


def compile_rules(mapping: Mapping, *, client: str = DEFAULT_CLIENT) -> MigrationRules:
    """Compile ``mapping`` (schemas loaded) into JSONata for ``client``'s deserializer. Raises
    InputError (file:line:col) when the mapping is not deployable, or a conversion has no JSONata
    form.

    ``python`` (confluent-kafka): the record is plain JSON-like values, a union's value bare.
    ``java`` (Confluent's Java serializers, JSONata4Java): the record is Avro's JSON encoding of
    it, a union's non-null value wrapped as ``{"<branch type name>": value}``, and the result is
    read back with Avro's JSON decoder and v1, so a union is written wrapped with v1's names.
    """
    if client not in CLIENTS:
        raise ValueError(f"client {client!r}: one of {CLIENTS}")
    compiled = compile_mapping(mapping)
    errors = [f for f in compiled.findings if f.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InputError(
            first.message + more,
            location=first.location,
            hint="Run `schemacli migrate validate` to see every problem.",
        )
    source, target = view(mapping.source.schema_json), view(mapping.target.schema_json)
    _refuse_opaque(mapping, source)
    down = _Down(mapping, source, client)
    body = down.record(target, "")
    downgrade = f"(\n{down.definitions()}  {body}\n)"
    upgrade: str | None
    why: str | None
    if client == "java":
        upgrade, why = None, "UPGRADE rules are generated for the python client only"
    else:
        upgrade, why = _Up(mapping, target).compile(source)
    return MigrationRules(downgrade, upgrade, why)


def rule_set(rules: MigrationRules, *, name: str) -> dict[str, Any]:
    """The ``ruleSet`` of a register call: ``migrationRules`` with DOWNGRADE (and UPGRADE)."""
    out = [_rule(f"{name}-downgrade", "DOWNGRADE", rules.downgrade, rules.on_failure)]
    if rules.upgrade is not None:
        out.append(_rule(f"{name}-upgrade", "UPGRADE", rules.upgrade, rules.on_failure))
    return {"migrationRules": out}


def _rule(name: str, mode: str, expr: str, on_failure: str) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "TRANSFORM",
        "type": RULE_TYPE,
        "mode": mode,
        "expr": expr,
        "onFailure": on_failure,
    }


def register_body(
    mapping: Mapping, rules: MigrationRules, *, major_version: int, property_name: str
) -> dict[str, Any]:
    """The JSON body of ``POST /subjects/{v2 subject}/versions``: the v2 schema, its metadata
    (``properties.<property_name>`` = the major version) and the rule set."""
    name = (mapping.source.subject or "migration").replace(" ", "-")
    return {
        "schemaType": "AVRO",
        "schema": json.dumps(mapping.source.schema_json, separators=(",", ":")),
        "metadata": {"properties": {property_name: str(major_version)}},
        "ruleSet": rule_set(rules, name=name),
    }


# ---------------------------------------------------------------------------------------------
# JSONata text


def _path(path: str) -> str:
    """``pickup.lat`` -> ``$$.`pickup`.`lat``` read from the input record (the root)."""
    return "$$." + ".".join("`" + part + "`" for part in path.split("."))


def _fetch(path: str) -> str:
    # a path through a null record gives `undefined` in JSONata, NULL in Spark: make it null
    if "." not in path:
        return _path(path)
    return f"($x := {_path(path)}; $exists($x) ? $x : null)"


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _opaque(t: AvroType, seen: frozenset[str] = frozenset()) -> str | None:
    """Why values of ``t`` cannot reach jsonata-python (None when they can)."""
    if t.kind in ("bytes", "fixed"):
        return f"{t.describe()} (fastavro gives Python bytes)"
    if t.logical in _OBJECT_LOGICALS:
        return f"logical type {t.logical} (fastavro gives a Python object)"
    if t.kind == "record":
        if t.name in seen:
            return None
        for f in t.fields:
            why = _opaque(f.type, seen | {t.name or ""})
            if why:
                return why
    if t.kind == "union":
        for b in t.branches:
            why = _opaque(b, seen)
            if why:
                return why
    if t.kind in ("array", "map") and t.items is not None:
        return _opaque(t.items, seen)
    return None


def _refuse_opaque(mapping: Mapping, source: AvroType) -> None:
    for f in source.fields:
        why = _opaque(f.type)
        if why is None:
            continue
        rule = next(
            (r for r in mapping.rules if r.source and r.source.split(".")[0] == f.name), None
        )
        where = mapping.location(f"/fields/{rule.target}" if rule else "/source")
        raise InputError(
            f"v2 field {f.name!r} holds {why}: {JSONATA_ENGINE} accepts only JSON values, so a "
            "JSONata migration rule would fail for every record",
            location=where,
            hint="Migrate this subject with the converter (`schemacli migrate deploy`) or "
            "read it with migrate-on-read; JSONata rules need a v2 schema of JSON-like types.",
        )


def _refuse(mapping: Mapping, rule: Rule, why: str) -> InputError:
    return InputError(
        f"convert: {rule.convert.value} of v1 field {rule.target!r} has no JSONata form: {why}",
        location=mapping.location(f"/fields/{rule.target}/convert"),
        hint="Change the rule (see docs/migration.md#migration-rules), or migrate with the "
        "converter, which runs every conversion.",
    )


class _Down:
    """DOWNGRADE: the v1 record built from the v2 record, field by field, as sql._Compiler does."""

    def __init__(self, mapping: Mapping, source: AvroType, client: str = DEFAULT_CLIENT) -> None:
        self.mapping = mapping
        self.source = source
        self.client = client
        self.helpers: dict[str, str] = {}  # the functions the fields call: name -> body

    def _read(self, path: str, rule: Rule) -> str:
        """The v2 value at ``path`` (JSONata null when absent or null), a union's value bare."""
        if self.client != "java":
            return _fetch(path)
        steps, t, wrapped = [], self.source, False
        for name in path.split("."):
            f = next((x for x in t.fields if x.name == name), None)
            assert f is not None  # compile_mapping found no UNKNOWN_SOURCE
            steps.append(name)
            t = f.type
            if t.kind == "union":
                t = t.non_null()
                if t.kind == "union":
                    raise _refuse(self.mapping, rule, "a union of several types (java client)")
                steps.append(_branch(t))
                wrapped = True
        read = "$$." + ".".join("`" + s + "`" for s in steps)
        if len(steps) == 1:
            return read
        return f"($x := {read}; $exists($x) ? $x : null)" if wrapped or "." in path else read

    def _write(self, f: AvroField, value: str) -> str:
        """``value`` as v1 field ``f`` holds it in the client's presentation."""
        if self.client != "java" or f.type.kind != "union":
            return value
        branch = jsonata_string(_branch(f.type.non_null()))
        if value == "null":
            return value
        return f"($w := {value}; $w = null ? null : {{{branch}: $w}})"

    def _java_copy(self, rule: Rule, st: AvroType) -> None:
        if self.client == "java" and st.kind in ("record", "array", "map") and _has_union(st):
            raise _refuse(
                self.mapping,
                rule,
                "a copied value holding a union keeps v2's branch names in Avro's JSON "
                "encoding (java client); map its fields one by one",
            )

    def definitions(self) -> str:
        """``$read_int := function($v) {...};`` for each helper used, defined once up front."""
        out = []
        for name in sorted(self.helpers):
            out.append(f"  ${name} := function($v) {{ {self.helpers[name]} }};\n")
        return "".join(out)

    def record(self, t: AvroType, prefix: str) -> str:
        parts = []
        for f in t.fields:
            path = f"{prefix}.{f.name}" if prefix else f.name
            parts.append(f"{jsonata_string(f.name)}: {self._write(f, self.field(f, path))}")
        # one member per line, indented by depth: what a reviewer reads in the registry
        pad = "\n" + "  " * (prefix.count(".") + (2 if prefix else 1) + 1)
        return "{" + pad + ("," + pad).join(parts) + pad[:-2] + "}"

    def field(self, f: AvroField, path: str) -> str:
        rule = self.mapping.rule(path)
        if rule is None or rule.convert is Conversion.RECORD:
            built = self.record(f.type.non_null(), path)
            if rule is None or rule.source is None:
                return built
            src = field_at(self.source, rule.source)
            assert src is not None  # compile_mapping found no UNKNOWN_SOURCE
            if not src.type.nullable:
                return built
            null = "null" if f.type.nullable else self._null_failure(rule, f)
            return f"({self._read(rule.source, rule)} = null ? {null} : {built})"
        if rule.convert is Conversion.DEFAULT:
            return self._default(rule, f)
        if rule.convert in (Conversion.SQL, Conversion.UNRESOLVED):
            raise _refuse(
                self.mapping,
                rule,
                "a hand-written Spark SQL expression is not JSONata"
                if rule.convert is Conversion.SQL
                else "it is unresolved",
            )
        src = field_at(self.source, rule.source or "")
        assert src is not None
        self._java_copy(rule, src.type.non_null())
        got = self._convert(rule, src.type.non_null(), f.type.non_null())
        # the value of the non-null v2 value `$v`, with the failure test around it
        value = got.value
        if got.failed is not None:
            value = f"({got.failed}) ? {self._failure(rule, f)} : {value}"
        if got.bind is not None:  # bound first (the number read), then tested and used
            value = f"({got.bind}; {value})"
        if src.type.nullable:
            null = "null" if f.type.nullable else self._null_failure(rule, f)
            value = f"$v = null ? {null} : {value}"
        if value == "$v":
            return self._read(rule.source or "", rule)
        return f"($v := {self._read(rule.source or '', rule)}; {value})"

    def _convert(self, rule: Rule, st: AvroType, tt: AvroType) -> Jsonata:
        spec = value_spec(rule.convert)
        got = spec.jsonata(st, tt) if spec is not None else no_jsonata(st, tt)
        if isinstance(got, str):
            raise _refuse(self.mapping, rule, got)
        self.helpers.update(got.helpers)
        return got

    def _failure(self, rule: Rule, f: AvroField) -> str:
        """What a failed conversion becomes: the default, or ``$error`` (the record fails)."""
        if rule.on_error is Policy.DEFAULT:
            return self._default(rule, f)
        what = jsonata_string(f"{rule.target}: cannot convert ")
        to = jsonata_string(f" to {f.type.non_null().describe()}")
        return f"$error({what} & $string($v) & {to})"

    def _null_failure(self, rule: Rule, f: AvroField) -> str:
        if rule.on_error is Policy.DEFAULT:
            return self._default(rule, f)
        reason = f"{rule.target}: v2 value is null, v1 field is not nullable"
        return f"$error({jsonata_string(reason)})"

    def _default(self, rule: Rule, f: AvroField) -> str:
        value = rule.default if rule.has_default else f.default
        if _opaque(f.type) is not None:
            raise _refuse(self.mapping, rule, f"a default of {f.type.describe()} is bytes")
        assert fits(value, f.type)  # compile_mapping checked it (BAD_DEFAULT)
        return _literal(value)


def _branch(t: AvroType) -> str:
    """The name Avro's JSON encoding labels a union branch with: a named type's full name."""
    return t.name if t.kind in ("record", "enum", "fixed") and t.name else t.kind


def _has_union(t: AvroType, seen: frozenset[str] = frozenset()) -> bool:
    if t.kind == "union":
        return True
    if t.kind == "record":
        if t.name in seen:
            return False
        return any(_has_union(f.type, seen | {t.name or ""}) for f in t.fields)
    if t.kind in ("array", "map") and t.items is not None:
        return _has_union(t.items, seen)
    return False


class _Up:
    """UPGRADE: the v2 record from a v1 one, when every v2 field is a v1 field read back exactly
    or has a default. Returns (expression, None) or (None, why not)."""

    def __init__(self, mapping: Mapping, target: AvroType) -> None:
        self.mapping = mapping
        self.target = target
        self.by_source = {r.source: r for r in mapping.rules if r.source}

    def compile(self, source: AvroType) -> tuple[str | None, str | None]:
        try:
            return f"(\n  {self.record(source, '')}\n)", None
        except _NotInvertible as exc:
            return None, str(exc)

    def record(self, t: AvroType, prefix: str) -> str:
        parts = []
        for f in t.fields:
            path = f"{prefix}.{f.name}" if prefix else f.name
            parts.append(f"{jsonata_string(f.name)}: {self.field(f, path)}")
        return "{" + ", ".join(parts) + "}"

    def field(self, f: AvroField, path: str) -> str:
        rule = self.by_source.get(path)
        if rule is None or rule.convert is Conversion.DEFAULT:
            if f.has_default:
                return _literal(f.default)
            raise _NotInvertible(f"v2 field {path!r} comes from no v1 field and has no default")
        v1 = field_at(self.target, rule.target)
        assert v1 is not None
        if v1.type.nullable and not f.type.nullable:
            raise _NotInvertible(f"v1 field {rule.target!r} may be null, v2 field {path!r} not")
        tt, st = f.type.non_null(), v1.type.non_null()
        if rule.convert is Conversion.RECORD or (
            tt.kind == "record" and rule.convert is not Conversion.COPY
        ):
            built = self.record(tt, path)
            if v1.type.nullable:
                return f"({_fetch(rule.target)} = null ? null : {built})"
            return built
        spec = value_spec(rule.convert)
        value = spec.invert(st, tt) if spec is not None else None
        if value is None:
            raise _NotInvertible(
                f"convert: {rule.convert.value} ({st.describe()} -> v1 field {rule.target!r}) "
                "has no exact inverse"
            )
        if value == "$v":
            return _fetch(rule.target)
        if v1.type.nullable:
            value = f"$v = null ? null : {value}"
        return f"($v := {_fetch(rule.target)}; {value})"


class _NotInvertible(Exception):
    """The mapping has no exact inverse: no UPGRADE rule (the message says why)."""
