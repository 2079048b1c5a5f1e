"""``migrate validate``: is a mapping deployable, and what does each field become?

Three checks, cheapest first:

1. static - every v1 field is produced, by a conversion that fits the two types, no
   ``unresolved`` markers (``converters.mapping.sql.compile_mapping`` reports these as findings);
2. SQL syntax - without Spark, a light check of hand-written ``convert: sql`` expressions
   (balanced brackets, closed quotes and backticks, a single expression); with ``spark`` every
   compiled expression is parsed and analysed by Spark itself against the v2 record's columns;
3. a dry run on sample records - generated from the v2 schema with fastavro (seeded; values of
   string->number and ->enum fields are mixed with valid ones, so both outcomes show), or given
   by the caller (read from the topic) - converted by the Python preview and encoded with the v1
   schema by fastavro; with ``spark`` also converted by the real Spark SQL and compared.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from converters.mapping.conversions import value_spec
from converters.mapping.model import Conversion, Endpoint, Mapping, Policy
from converters.mapping.preview import NeedsSpark, Outcome, convert_record
from converters.mapping.recordplan import record_plan
from converters.mapping.sql import Compiled, FieldSql, compile_mapping, field_at
from converters.mapping.sqlnames import column_names
from converters.mapping.sqlsyntax import (
    parse_problem,  # --spark: Spark's parser
)
from schemacli.contracts.findings import Finding, Severity
from schemacli.kinds import Kind


@dataclass(frozen=True)
class FieldReport:
    """One v1 field: its type, where it comes from, how, and the Spark SQL that computes it."""

    target: str
    type: str
    source: str | None
    conversion: str
    on_error: str | None
    sql: str
    note: str | None = None


@dataclass(frozen=True)
class Sample:
    input: dict[str, Any]
    output: dict[str, Any] | None
    errors: tuple[str, ...]


@dataclass(frozen=True)
class DryRun:
    origin: str  # "generated (seed N)" or "topic <name>"
    total: int
    converted: int
    dead_lettered: int
    samples: tuple[Sample, ...]  # a few of each outcome
    engine: str  # "python preview" or "spark"
    skipped_reason: str | None = None


NO_SPARK_SQL_CHECK = "parsed without Spark (sqlglot)"


@dataclass(frozen=True)
class Report:
    mapping: str | None
    source: str
    target: str
    fields: tuple[FieldReport, ...]
    findings: tuple[Finding, ...]
    dry_run: DryRun | None = None
    sql_check: str = NO_SPARK_SQL_CHECK
    extra: dict[str, Any] = field(default_factory=dict)
    key: Report | None = None  # the key section's own report, when the mapping converts keys
    road: str = ""  # which road the exactly-once job takes (converters.mapping.recordplan)

    @property
    def ok(self) -> bool:
        errors = any(f.severity is Severity.ERROR for f in self.findings)
        return not errors and (self.key is None or self.key.ok)


def light_sql_check(expr: str) -> str | None:
    """A syntax check without Spark: brackets balance, quotes/backticks close, one expression.
    Returns what is wrong, or None. Spark's parser (``validate --spark``) is the real judge."""
    stack: list[str] = []
    pairs = {")": "(", "]": "["}
    i, n = 0, len(expr)
    if not expr.strip():
        return "the expression is empty"
    while i < n:
        ch = expr[i]
        if ch in "'\"`":
            j = i + 1
            while j < n and expr[j] != ch:
                j += 2 if expr[j] == "\\" and ch != "`" else 1
            if j >= n:
                return f"unclosed {ch} starting at character {i + 1}"
            i = j + 1
            continue
        if ch in "([":
            stack.append(ch)
        elif ch in ")]":
            if not stack or stack.pop() != pairs[ch]:
                return f"unbalanced {ch!r} at character {i + 1}"
        elif ch == ";":
            return f"';' at character {i + 1}: a rule holds one expression, not statements"
        elif expr.startswith("--", i):
            return f"SQL comment at character {i + 1}: not allowed in a rule expression"
        i += 1
    if stack:
        return f"{len(stack)} unclosed {stack[-1]!r}"
    return None


def _unknown_names(
    mapping: Mapping, compiled: Compiled, target: str, key: str, expr: str
) -> list[Finding]:
    """Warnings for the names ``expr`` reads that are no v2 field (Spark ignores case)."""
    names = [f.name for f in compiled.source.non_null().fields]
    fields = {n.lower() for n in names}
    shown = ", ".join(names[:12]) + (f", … ({len(names)} in all)" if len(names) > 12 else "")
    return [
        Finding(
            kind=Kind.SQL_UNKNOWN_NAME,
            message=f"{key} of {target!r} reads {name!r}, which is not a field of the v2 record",
            location=mapping.location(f"/fields/{target}/{key}"),
            hint=f"Fix the spelling (v2 fields: {shown}); `migrate validate --spark` runs "
            "Spark's analyser, the real judge.",
            severity=Severity.WARNING,
        )
        for name in column_names(expr)
        if name.lower() not in fields
    ]


def generate_samples(
    mapping: Mapping, compiled: Compiled, count: int, seed: int
) -> list[dict[str, Any]]:
    """``count`` v2 records from fastavro's generator, seeded; every other record gets, for each
    rule, a value its conversion turns into v1's type (``sample``: parseable numbers for
    string->number fields, v1 symbols for ->enum fields), so a dry run shows both the converted
    and the dead-lettered outcome."""
    from fastavro.utils import generate_many

    state = random.getstate()
    random.seed(seed)
    try:
        records = list(generate_many(mapping.source.schema_json, count))
        rng = random.Random(seed)
        for i, rec in enumerate(records):
            if i % 2:
                continue
            for r in mapping.rules:
                if r.source is None:
                    continue
                tf = field_at(compiled.target, r.target)
                spec = value_spec(r.convert)
                if tf is None or spec is None:
                    continue
                value = spec.sample(rng, tf.type.non_null())
                if value is not None:
                    _set(rec, r.source, value)
        return records
    finally:
        random.setstate(state)


def _set(record: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    cur: Any = record
    for p in parents:
        cur = cur.get(p) if isinstance(cur, dict) else None
        if cur is None:
            return
    if isinstance(cur, dict) and last in cur:
        cur[last] = value


# The real SQL check: runs the conversion the job runs on the records, in Spark; gives the
# outcomes in input order, or Spark's refusal. converters.pipeline.dryrun.SparkDryRun is one.
SparkRun = Callable[
    [Mapping, Compiled, list[dict[str, Any]]], tuple[list[Outcome] | None, str | None]
]


def validate(
    mapping: Mapping,
    *,
    samples: list[dict[str, Any]] | None = None,
    sample_count: int = 20,
    seed: int = 0,
    origin: str | None = None,
    spark: SparkRun | None = None,
) -> Report:
    """Check ``mapping`` (schemas loaded) and dry-run it. Returns a Report; never raises for a bad
    mapping (its problems are findings). ``spark``: the real SQL check in Spark (``SparkRun``).
    A ``key`` section is checked the same way, on keys generated from the v2 key schema, into
    ``Report.key``."""
    compiled = compile_mapping(mapping)
    findings = list(compiled.findings)
    for r in mapping.rules:
        if r.convert is Conversion.SQL:
            for key, text in (("expr", r.expr), ("error_when", r.error_when)):
                problem = light_sql_check(text) if text is not None else None
                if problem is None and text is not None and spark is None:
                    problem = parse_problem(text)
                if problem:
                    findings.append(
                        Finding(
                            kind=Kind.SQL_SYNTAX,
                            message=f"{key} of {r.target!r}: {problem}",
                            location=mapping.location(f"/fields/{r.target}/{key}"),
                            hint="Write one Spark SQL expression over the v2 fields.",
                        )
                    )
                elif text is not None and spark is None:
                    findings += _unknown_names(mapping, compiled, r.target, key, text)
    fields = tuple(_field_report(mapping, compiled, fs) for fs in compiled.fields if fs.value)
    dry = None
    if not any(f.severity is Severity.ERROR for f in findings):
        from fastavro.schema import SchemaParseException

        try:
            if samples is None:
                samples = generate_samples(mapping, compiled, sample_count, seed)
                origin = origin or f"generated from the v2 schema with fastavro (seed {seed})"
            dry, dry_findings = _dry_run(mapping, compiled, samples, origin or "given", spark)
        except SchemaParseException as exc:  # the dry run uses fastavro, stricter than Java
            reason = (
                f"fastavro refuses a schema of the mapping ({exc}), although Apache Avro Java "
                "and the registry accept it"
            )
            dry = DryRun(origin or "generated", 0, 0, 0, (), "none", skipped_reason=reason)
            dry_findings = []
        findings += dry_findings
    key_report = None
    if mapping.key is not None:
        key_report = validate(mapping.key, sample_count=sample_count, seed=seed, spark=spark)
    return Report(
        mapping=mapping.origin,
        source=_side(mapping.source),
        target=_side(mapping.target),
        fields=fields,
        findings=tuple(findings),
        dry_run=dry,
        sql_check="Spark's parser and analyser" if spark is not None else NO_SPARK_SQL_CHECK,
        key=key_report,
        road=record_plan(mapping).describe() if mapping.prefix != "/key" else "",
    )


def _side(ep: Endpoint) -> str:
    parts = []
    if ep.subject:
        parts.append(ep.subject + (f" v{ep.version}" if ep.version not in (None, "latest") else ""))
    if ep.schema:
        parts.append(ep.schema)
    if ep.topic:
        parts.append(f"topic {ep.topic}")
    return ", ".join(parts) or "inline schema"


def _field_report(mapping: Mapping, compiled: Compiled, fs: FieldSql) -> FieldReport:
    tf = field_at(compiled.target, fs.target)
    rule = fs.rule
    policy = None
    if fs.reason is not None:
        policy = "fail"
    elif rule is not None and rule.on_error is Policy.DEFAULT and "CASE WHEN" in fs.value:
        policy = "default"
    return FieldReport(
        target=fs.target,
        type=tf.type.describe() if tf else "?",
        source=rule.source if rule else None,
        conversion=rule.convert.value if rule else "record",
        on_error=policy,
        sql=fs.value,
        note=rule.note if rule else None,
    )


def _dry_run(
    mapping: Mapping,
    compiled: Compiled,
    records: list[dict[str, Any]],
    origin: str,
    spark: SparkRun | None,
) -> tuple[DryRun, list[Finding]]:
    import fastavro

    findings: list[Finding] = []
    target = fastavro.parse_schema(mapping.target.schema_json)
    try:
        outcomes = [convert_record(mapping, compiled.source, compiled.target, r) for r in records]
        engine = "python preview"
    except NeedsSpark as exc:
        if spark is None:
            return DryRun(
                origin,
                len(records),
                0,
                0,
                (),
                "none",
                skipped_reason=f"{exc.args[0]!r} is custom SQL: run with --spark",
            ), []
        outcomes = []
        engine = "spark"
    if spark is not None:
        spark_outcomes, problem = spark(mapping, compiled, records)
        if problem:
            findings.append(
                Finding(
                    kind=Kind.SPARK_SQL,
                    message=problem,
                    location=mapping.location("/fields"),
                    hint="Fix the expression; the message is Spark's.",
                )
            )
            spark_outcomes = None
        if spark_outcomes is not None and outcomes:
            for i, (a, b) in enumerate(zip(outcomes, spark_outcomes, strict=True)):
                if (a.value is None) != (b.value is None) or not _close(a.value, b.value):
                    findings.append(
                        Finding(
                            kind=Kind.PREVIEW_MISMATCH,
                            severity=Severity.WARNING,
                            message=f"sample {i}: Python preview gives {a.value or a.errors}, "
                            f"Spark gives {b.value or b.errors}",
                            location=mapping.location("/fields"),
                            hint="Spark's answer is what the job does; report the difference.",
                        )
                    )
        if spark_outcomes is not None:
            outcomes = spark_outcomes
            engine = "spark"
    converted = dead = 0
    shown: list[Sample] = []
    shown_ok = shown_bad = 0
    for rec, out in zip(records, outcomes, strict=False):
        if out.value is not None:
            try:
                fastavro.schemaless_writer(io.BytesIO(), target, out.value)
            except Exception as exc:  # fastavro raises ValueError/TypeError/... by type
                findings.append(
                    Finding(
                        kind=Kind.ENCODE_FAILED,
                        message=f"a converted record does not encode with the v1 schema: {exc}",
                        location=mapping.location("/fields"),
                        old=_jsonable(rec),
                        new=_jsonable(out.value),
                        hint="A field's conversion produces a value of the wrong type.",
                    )
                )
                out = Outcome(None, (f"encode: {exc}",))
        if out.value is not None:
            converted += 1
            if shown_ok < 3:
                shown.append(Sample(_jsonable(rec), _jsonable(out.value), ()))
                shown_ok += 1
        else:
            dead += 1
            if shown_bad < 3:
                shown.append(Sample(_jsonable(rec), None, out.errors))
                shown_bad += 1
    return DryRun(origin, len(records), converted, dead, tuple(shown), engine), findings


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        import math

        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6)
    return bool(a == b)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value
