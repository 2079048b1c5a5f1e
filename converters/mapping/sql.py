"""Compile a mapping into Spark SQL: one expression per v1 field, one for the failure reasons.

Every conversion is plain Spark SQL over the decoded v2 record's fields (no Python UDF), so the
job runs at Spark's speed and ``validate`` can show users exactly what runs. ``try_cast`` is used
everywhere a value may not fit: it returns NULL instead of failing (Spark 4 runs in ANSI mode),
and "the input was not NULL but the result is" is the conversion-failed condition.

A rule with ``on_error: fail`` contributes a reason to ``error_sql`` (non-empty reason -> the
record goes to the dead-letter topic); ``on_error: default`` replaces the value by the default.
The SQL of each conversion of a value, and which types it accepts, is its spec's
(``converters.mapping.conversions``); this module walks the v1 record around it.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from typing import Any

from converters.mapping.conversions import value_spec
from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import SPARK_TYPES, AvroField, AvroType, view
from converters.mapping.sqltext import ident, string_literal
from schemacli.contracts.avro.facts import RANGES
from schemacli.contracts.findings import Finding
from schemacli.errors import CheckFailed
from schemacli.kinds import Kind


def spark_type(t: AvroType) -> str:
    """Spark SQL DDL type of an Avro type, as from_avro produces it."""
    if t.kind == "union":
        nn = t.non_null()
        if nn.kind == "union":
            raise ValueError(f"union {t.describe()} has no single Spark type")
        return spark_type(nn)
    if t.kind == "record":
        inner = ", ".join(f"{ident(f.name)}: {spark_type(f.type)}" for f in t.fields)
        return f"STRUCT<{inner}>"
    if t.kind == "array":
        return f"ARRAY<{spark_type(t.element)}>"
    if t.kind == "map":
        return f"MAP<STRING, {spark_type(t.element)}>"
    if t.logical in ("timestamp-millis", "timestamp-micros"):
        return "TIMESTAMP"
    if t.logical == "date":
        return "DATE"
    if t.kind == "null":
        return "VOID"
    return SPARK_TYPES[t.kind]


def fits(value: Any, t: AvroType) -> bool:
    """Whether ``value`` (a default as the mapping file's YAML gives it) is a value of ``t``,
    as Avro reads a default: a number for int/long/float/double (whole and in range for
    int/long), a string for string/bytes/fixed/enum (a symbol for an enum), a dict for a
    record (its fields fitting, missing ones with a default) or a map, a list for an array;
    null only for a nullable type. :func:`literal` can turn every value that fits."""
    if t.kind == "union":
        if value is None:
            return t.nullable
        rest = t.non_null()
        return rest.kind != "union" and fits(value, rest)
    k = t.kind
    if value is None:
        return k == "null"
    if k == "boolean":
        return isinstance(value, bool)
    if k in RANGES:
        low, high = RANGES[k]
        return type(value) is int and low <= value <= high
    if k in ("float", "double"):
        return type(value) in (int, float)
    if k in ("string", "bytes", "fixed"):
        return isinstance(value, str) and (k == "string" or all(ord(c) < 256 for c in value))
    if k == "enum":
        return isinstance(value, str) and value in t.symbols
    if k == "record":
        return isinstance(value, dict) and all(
            fits(value[f.name], f.type) if f.name in value else f.has_default for f in t.fields
        )
    if k == "array":
        return (
            isinstance(value, list) and t.items is not None and all(fits(v, t.items) for v in value)
        )
    if k == "map":
        return (
            isinstance(value, dict)
            and t.items is not None
            and all(isinstance(key, str) and fits(v, t.items) for key, v in value.items())
        )
    return False


def literal(value: Any, t: AvroType) -> str:
    """A typed Spark SQL literal for an Avro default ``value`` of type ``t``."""
    if t.kind == "union":
        if value is None and t.nullable:
            return f"CAST(NULL AS {spark_type(t)})"
        return literal(value, t.non_null())
    if value is None:
        return f"CAST(NULL AS {spark_type(t)})"
    k = t.kind
    if k == "boolean":
        return "true" if value else "false"
    if k in ("int", "long"):
        return f"CAST({int(value)} AS {spark_type(t)})"
    if k in ("float", "double"):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return f"CAST({string_literal(str(v).replace('inf', 'Infinity'))} AS {spark_type(t)})"
        return f"CAST({v!r} AS {spark_type(t)})"
    if k in ("string", "enum"):
        return string_literal(str(value))
    if k in ("bytes", "fixed"):
        return f"unhex({string_literal(str(value).encode('latin-1').hex())})"
    if k == "record":
        parts = []
        for f in t.fields:
            fv = value.get(f.name, f.default) if isinstance(value, dict) else None
            parts.append(f"{string_literal(f.name)}, {literal(fv, f.type)}")
        return f"named_struct({', '.join(parts)})"
    if k == "array":
        if not value:
            return f"CAST(array() AS {spark_type(t)})"
        return f"array({', '.join(literal(v, t.element) for v in value)})"
    if k == "map":
        if not value:
            return f"CAST(map() AS {spark_type(t)})"
        kv = ", ".join(f"{string_literal(k2)}, {literal(v, t.element)}" for k2, v in value.items())
        return f"map({kv})"
    raise ValueError(f"no literal for {t.describe()}")


@dataclass(frozen=True)
class FieldSql:
    """What one v1 field becomes: its value expression and (policy fail) its failure reason."""

    target: str
    value: str
    reason: str | None  # SQL producing a message when the conversion failed, else NULL
    rule: Rule | None


@dataclass(frozen=True)
class Compiled:
    """The compiled mapping: ``columns`` (top-level v1 field name -> SQL), ``error_sql``,
    findings."""

    columns: tuple[tuple[str, str], ...]
    error_sql: str
    fields: tuple[FieldSql, ...]
    findings: tuple[Finding, ...]
    source: AvroType
    target: AvroType

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


def field_at(record: AvroType, path: str) -> AvroField | None:
    """The field at a dotted path, stepping through ``["null", record]`` unions."""
    cur: AvroField | None = None
    t = record
    for part in path.split("."):
        t = t.non_null()
        if t.kind != "record":
            return None
        cur = next((f for f in t.fields if f.name == part), None)
        if cur is None:
            return None
        t = cur.type
    return cur


def compile_mapping(mapping: Mapping) -> Compiled:
    """Compile ``mapping`` (schemas loaded) into Spark SQL. Problems become findings, not errors,
    so ``validate`` can list all of them; the job refuses a mapping whose findings hold an error."""
    source = view(mapping.source.schema_json)
    target = view(mapping.target.schema_json)
    c = _Compiler(mapping, source, target)
    columns = []
    for f in target.fields:
        columns.append((f.name, c.field(f, f.name)))
    reasons = [fs.reason for fs in c.out if fs.reason]
    error_sql = f"concat_ws('; ', {', '.join(reasons)})" if reasons else "''"
    # Rules that name no v1 field are mistakes worth stopping for.
    known = {fs.target for fs in c.out} | c.containers
    for r in mapping.rules:
        if r.target not in known:
            c.finding(
                Kind.UNKNOWN_TARGET,
                r,
                f"{r.target!r} is not a field of the v1 schema",
                "Remove the rule or fix the path (nested fields are written a.b).",
            )
    return Compiled(tuple(columns), error_sql, tuple(c.out), tuple(c.findings), source, target)


class _Compiler:
    def __init__(self, mapping: Mapping, source: AvroType, target: AvroType) -> None:
        self.mapping = mapping
        self.source = source
        self.target = target
        self.out: list[FieldSql] = []
        self.findings: list[Finding] = []
        self.containers: set[str] = set()

    def finding(
        self, kind: Kind, rule: Rule | None, message: str, hint: str, path: str = ""
    ) -> None:
        pointer = f"/fields/{rule.target if rule else path}"
        self.findings.append(
            Finding(kind=kind, message=message, hint=hint, location=self.mapping.location(pointer))
        )

    def field(self, f: AvroField, path: str) -> str:
        rule = self.mapping.rule(path)
        t = f.type
        if rule is None:
            nn = t.non_null()
            if nn.kind == "record" and self._has_children(path):
                return self._record(f, path, None)
            self.finding(
                Kind.MISSING_RULE,
                None,
                f"no rule produces v1 field {path!r} ({t.describe()})",
                f"Add `{path}: {{from: <v2 field>}}` or `{{convert: default}}`.",
                path,
            )
            return f"CAST(NULL AS {self._spark(t)})"
        if rule.convert is Conversion.RECORD:
            return self._record(f, path, rule)
        value, failed = self._convert(rule, f)
        return self._finish(rule, f, value, failed)

    def _default(self, rule: Rule, f: AvroField, default: Any) -> str:
        """The literal of ``default`` for v1 field ``f``; a default that is no value of its
        type is a BAD_DEFAULT finding at the rule's ``default`` (line:col), never a crash."""
        # a value literal() cannot render either (too deep, an odd shape) is as wrong as one
        # that does not fit: both fall through to the BAD_DEFAULT finding below
        with contextlib.suppress(ValueError, TypeError, AttributeError, RecursionError):
            if fits(default, f.type):
                return literal(default, f.type)
        shown = json.dumps(default, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        where = "the rule's" if rule.has_default else "v1's"
        kind = f.type.describe()
        pointer = f"/fields/{rule.target}" + ("/default" if rule.has_default else "")
        instead = (
            "map it `from:` a v2 field instead"
            if rule.convert is Conversion.DEFAULT
            else "use `on_error: fail` to dead-letter the record instead"
        )
        self.findings.append(
            Finding(
                kind=Kind.BAD_DEFAULT,
                message=f"{where} default {shown} for {rule.target!r} is not a value of its "
                f"type: it must be {_a(kind)}",
                hint=f"Give `default:` {_a(kind)} (e.g. {_example(f.type)}), or {instead}.",
                location=self.mapping.location(pointer),
            )
        )
        return f"CAST(NULL AS {self._spark(f.type)})"

    def _has_children(self, path: str) -> bool:
        return any(r.target.startswith(path + ".") for r in self.mapping.rules)

    def _spark(self, t: AvroType) -> str:
        try:
            return spark_type(t)
        except (ValueError, KeyError):
            return "STRING"

    def _record(self, f: AvroField, path: str, rule: Rule | None) -> str:
        self.containers.add(path)
        rec = f.type.non_null()
        parts = [
            f"{string_literal(sub.name)}, {self.field(sub, f'{path}.{sub.name}')}"
            for sub in rec.fields
        ]
        built = f"named_struct({', '.join(parts)})"
        if rule is not None and rule.source is not None:
            src = field_at(self.source, rule.source)
            if src is None:
                self.finding(
                    Kind.UNKNOWN_SOURCE,
                    rule,
                    f"v2 has no field {rule.source!r}",
                    "Fix `from:`; nested v2 fields are written a.b.",
                )
            elif src.type.nullable:
                if f.type.nullable:
                    return f"CASE WHEN {ident(rule.source)} IS NULL THEN NULL ELSE {built} END"
                null_reason = string_literal(f"{path}: v2 value is null, v1 field is not nullable")
                self.out.append(
                    FieldSql(
                        path,
                        "",
                        f"CASE WHEN {ident(rule.source)} IS NULL THEN {null_reason} END",
                        rule,
                    )
                )
        return built

    def _convert(self, rule: Rule, f: AvroField) -> tuple[str, str | None]:
        """(value SQL, SQL condition true when the conversion failed for a non-null input)."""
        target_t = f.type.non_null()
        conv = rule.convert
        if conv is Conversion.UNRESOLVED:
            self.finding(
                Kind.UNRESOLVED,
                rule,
                f"v1 field {rule.target!r} is unresolved: {rule.reason}",
                "Choose a conversion (see docs/migration.md), or `convert: default`, or "
                "`convert: sql`.",
            )
            return f"CAST(NULL AS {self._spark(f.type)})", None
        if conv is Conversion.DEFAULT:
            default = rule.default if rule.has_default else f.default
            if not rule.has_default and not f.has_default:
                self.finding(
                    Kind.NO_DEFAULT,
                    rule,
                    f"v1 field {rule.target!r} has no default to fill in",
                    "Give `default: <value>` in the rule, or map it `from:` a v2 field.",
                )
                return f"CAST(NULL AS {self._spark(f.type)})", None
            return self._default(rule, f, default), None
        if conv is Conversion.SQL:
            value = rule.expr or "NULL"
            if target_t.kind in SPARK_TYPES:
                value = f"CAST(({value}) AS {self._spark(target_t)})"
            return value, rule.error_when
        src = field_at(self.source, rule.source or "")
        if src is None:
            self.finding(
                Kind.UNKNOWN_SOURCE,
                rule,
                f"v2 has no field {rule.source!r}",
                "Fix `from:`; nested v2 fields are written a.b.",
            )
            return f"CAST(NULL AS {self._spark(f.type)})", None
        s = ident(rule.source or "")
        st = src.type.non_null()
        spec = value_spec(conv)
        if spec is None or not spec.accepts(st, target_t):
            self.finding(
                Kind.TYPE_MISMATCH,
                rule,
                f"convert: {conv.value} cannot turn v2 {st.describe()} into v1 "
                f"{target_t.describe()}",
                "Use the conversion `schemacli migrate plan` proposes, or `convert: sql`.",
            )
            return s, None
        return spec.sql(s, st, target_t, self._spark(target_t))

    def _finish(self, rule: Rule, f: AvroField, value: str, failed: str | None) -> str:
        """Add null handling and the error policy around a converted value."""
        path = rule.target
        s = ident(rule.source) if rule.source else None
        src = field_at(self.source, rule.source) if rule.source else None
        conds: list[tuple[str, str]] = []  # (condition, reason SQL)
        if failed is not None:
            guard = f"{s} IS NOT NULL AND " if s else ""
            # the guard makes the v2 value non-null here: no coalesce needed
            shown = f"CAST({s} AS STRING)" if s else "'?'"
            what = f"{path}: cannot convert "
            conds.append(
                (
                    f"({guard}{failed})",
                    f"concat({string_literal(what)}, {shown}, "
                    f"{string_literal(' to ' + f.type.non_null().describe())})",
                )
            )
        if (
            src is not None
            and src.type.nullable
            and not f.type.nullable
            and rule.convert not in (Conversion.SQL,)
        ):
            conds.append(
                (
                    f"{s} IS NULL",
                    string_literal(f"{path}: v2 value is null, v1 field is not nullable"),
                )
            )
        if rule.convert is Conversion.SQL and not f.type.nullable:
            # to_avro would fail the whole query on a null in a non-null field: fail the record.
            conds.append(
                (
                    f"({value}) IS NULL",
                    string_literal(f"{path}: the expression gave null, v1 field is not nullable"),
                )
            )
        if not conds:
            self.out.append(FieldSql(path, value, None, rule))
            return value
        if rule.on_error is Policy.DEFAULT:
            default = rule.default if rule.has_default else f.default
            if not rule.has_default and not f.has_default:
                self.finding(
                    Kind.NO_DEFAULT,
                    rule,
                    f"on_error: default, but v1 field {path!r} has no default",
                    "Give `default: <value>` in the rule, or use `on_error: fail`.",
                )
                default = None
            lit = self._default(rule, f, default)
            when = " OR ".join(c for c, _ in conds)
            value = f"CASE WHEN {when} THEN {lit} ELSE {value} END"
            self.out.append(FieldSql(path, value, None, rule))
            return value
        reason = "CASE " + " ".join(f"WHEN {c} THEN {r}" for c, r in conds) + " END"
        self.out.append(FieldSql(path, value, reason, rule))
        return value


def compiled_or_fail(mapping: Mapping) -> Compiled:
    """Compile ``mapping``; raise CheckFailed naming the first problem when it is not deployable.

    What the converter and the migrate-on-read readers both refuse to run."""
    compiled = compile_mapping(mapping)
    errors = [f for f in compiled.findings if f.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CheckFailed(
            first.message + more,
            location=first.location,
            hint="Run `schemacli migrate validate` to see every problem.",
        )
    return compiled


def select_sql(compiled: Compiled) -> list[str]:
    """``<expr> AS `name``` for each top-level v1 field, in v1 order."""
    return [f"{expr} AS {ident(name)}" for name, expr in compiled.columns]


def dumps_schema(schema_json: Any) -> str:
    return json.dumps(schema_json, separators=(",", ":"))


def _a(text: str) -> str:
    return ("an " if text[:1] in "aeiou" else "a ") + text


def _example(t: AvroType) -> str:
    """A value of ``t`` as YAML, for a hint."""
    t = t.non_null() if t.kind == "union" else t
    return {
        "boolean": "false",
        "int": "0",
        "long": "0",
        "float": "0.0",
        "double": "0.0",
        "string": "''",
        "bytes": "''",
        "array": "[]",
        "map": "{}",
        "record": "{}",
    }.get(t.kind, repr(t.symbols[0]) if t.kind == "enum" and t.symbols else "null")
