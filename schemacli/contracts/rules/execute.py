"""Running a rule set on a record as Confluent's serializers do (confluent-kafka 2.16's
``_execute_rules_with_phase``, ``CelExecutor``, ``CelFieldExecutor`` and the Avro field walk):

* the domain rules run in order on WRITE (serialize), in reverse order on READ (deserialize);
  a rule runs when its mode covers the client's (WRITEREAD: both; UPDOWN: UPGRADE and
  DOWNGRADE), when it is not ``disabled``, and when the rule set's ``enableAt`` is unset, ALL
  or CLIENT;
* ``expr`` is split at its first ``;``: a guard, then the body; a guard that is not true makes
  a CONDITION pass and a TRANSFORM leave the record as it was;
* CEL: ``message`` is the record. A CONDITION fails when its value is falsy (``not result``);
  a TRANSFORM's value replaces the record (a null result is a failure);
* CEL_FIELD: the rule runs on every field (nested records, array items and map values
  included) whose tags meet its ``tags`` (every field without ``tags``) and whose value is
  of a primitive type (an enum or fixed is passed over), with ``value``, ``name``,
  ``fullName``, ``typeName`` (INT, LONG, STRING, ...), ``tags`` and ``message`` (the record
  holding the field); a CONDITION fails on the first field whose value is exactly false, a
  TRANSFORM replaces each field's value. A TRANSFORM with the same tags, mode and type as an
  earlier rule (WRITE) or a later one (READ) is skipped;
* an evaluation error is a failure; after each rule the action runs: ``onFailure`` (default
  ERROR) when it failed, ``onSuccess`` (default NONE) otherwise; ERROR refuses the record,
  DLQ sends it to the rule's ``dlq.topic`` and refuses it, NONE goes on.

``run`` gives every rule's outcome, the record after the transforms, and the rule whose action
refused it (a serializer stops there; ``run`` goes on, so a report shows every violation).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from schemacli.contracts.avro.facts import PRIMITIVE_TYPES
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.rules import avrocel
from schemacli.contracts.rules.cel.evaluate import Program, compile_expr
from schemacli.contracts.rules.cel.parser import CelSyntaxError, parse
from schemacli.contracts.rules.cel.values import CelEvalError
from schemacli.contracts.rules.model import CEL_TYPES, DLQ_TOPIC, Metadata, Rule, RuleSet
from schemacli.contracts.rules.tags import selects, tags_of

Status = Literal["pass", "fail", "error", "not-run"]
# a field's typeName as Confluent's executors give it to a CEL_FIELD rule: its Avro type, upper-case
_PRIMITIVE_TYPES = {t: t.upper() for t in PRIMITIVE_TYPES}


@dataclass(frozen=True)
class Outcome:
    """What one rule did to one record: ``pass``, ``fail`` (a condition false), ``error`` (the
    expression raised: a failure too), ``not-run`` (no executor here: ``message`` says why);
    the action a client then runs; for CEL_FIELD, the field it failed on."""

    rule: Rule
    status: Status
    action: str
    message: str | None = None
    field: str | None = None

    @property
    def failed(self) -> bool:
        return self.status in ("fail", "error")


@dataclass
class Result:
    record: Any
    outcomes: list[Outcome] = field(default_factory=list)
    refused_by: Outcome | None = None  # the first failure whose action is ERROR, DLQ, ...

    @property
    def dlq_topic(self) -> str | None:
        refused = self.refused_by
        if refused is None or refused.action != "DLQ":
            return None
        return refused.rule.params.get(DLQ_TOPIC)


@dataclass(frozen=True)
class Prepared:
    """A rule's expression parsed and compiled once: guard and body (None when the rule is
    not CEL, or does not parse: ``problem`` says why)."""

    rule: Rule
    guard: Program | None
    body: Program | None
    problem: str | None = None


def prepare(rule: Rule) -> Prepared:
    if rule.type not in CEL_TYPES:
        return Prepared(rule, None, None, f"no {rule.type} executor in schemacli")
    guard_text, body_text, _ = rule.guard_and_body
    try:
        guard = compile_expr(parse(guard_text)) if guard_text is not None else None
        body = compile_expr(parse(body_text))
    except CelSyntaxError as err:
        return Prepared(rule, None, None, f"the expression does not parse: {err.message}")
    return Prepared(rule, guard, body)


def condition_message(rule: Rule) -> str:
    """The serializer's RuleConditionError text: the rule's doc, else its expr, else name."""
    if rule.doc:
        return rule.doc
    if rule.expr:
        return f"Rule expr failed: {rule.expr}"
    return f"Rule failed: {rule.name}"


class RuleRunner:
    """A rule set prepared for one schema: ``run(record, mode)`` per record."""

    def __init__(self, rule_set: RuleSet, schema: Schema, metadata: Metadata | None = None):
        self.rule_set = rule_set
        self.schema = schema
        self.metadata = metadata or Metadata()
        self.prepared = [prepare(r) for r in rule_set.domain_rules]

    def active(self, mode: str) -> list[tuple[int, Prepared]]:
        """The rules that run in ``mode``, in the order the serde runs them."""
        place = {id(p.rule): i for i, p in enumerate(self.prepared)}
        return [
            (place[id(r)], self.prepared[place[id(r)]]) for r in active_rules(self.rule_set, mode)
        ]

    def run(self, record: Any, mode: str = "WRITE") -> Result:
        """Every active rule on ``record`` (fastavro's decoded Python value) in ``mode``."""
        result = Result(record)
        if record is None:
            return result
        rules = serde_order(self.rule_set, mode)
        for _, prepared in self.active(mode):
            rule = prepared.rule
            index = rules.index(rule)
            if prepared.problem is not None:
                outcome = Outcome(rule, "not-run", rule.action(mode, True), prepared.problem)
            elif rule.type == "CEL_FIELD" and shadowed(rule, rules, index, mode):
                continue
            elif rule.type == "CEL_FIELD":
                outcome = self._field_rule(prepared, result, mode)
            else:
                outcome = self._message_rule(prepared, result, mode)
            result.outcomes.append(outcome)
            if outcome.failed and outcome.action != "NONE" and result.refused_by is None:
                result.refused_by = outcome
        return result

    def _message_rule(self, p: Prepared, result: Result, mode: str) -> Outcome:
        rule = p.rule
        bindings = {"message": avrocel.to_cel(result.record)}
        try:
            if p.guard is not None and p.guard.run(bindings) is not True:
                return Outcome(rule, "pass", rule.action(mode, False))
            assert p.body is not None
            value = p.body.run(bindings)
        except CelEvalError as err:
            return Outcome(rule, "error", rule.action(mode, True), err.message)
        if rule.is_condition:
            if not value:
                return Outcome(rule, "fail", rule.action(mode, True), condition_message(rule))
            return Outcome(rule, "pass", rule.action(mode, False))
        if value is None:
            return Outcome(rule, "fail", rule.action(mode, True), "the transform gave null")
        result.record = avrocel.from_cel(value)
        return Outcome(rule, "pass", rule.action(mode, False))

    def _field_rule(self, p: Prepared, result: Result, mode: str) -> Outcome:
        rule = p.rule
        walker = _FieldWalk(p, self.metadata)
        record = copy.deepcopy(result.record) if not rule.is_condition else result.record
        try:
            new = walker.walk(self.schema, record)
        except _FieldFailed as failed:
            return Outcome(
                rule, "fail", rule.action(mode, True), condition_message(rule), failed.field
            )
        except CelEvalError as err:
            return Outcome(rule, "error", rule.action(mode, True), err.message, walker.current)
        if not rule.is_condition:
            result.record = new
        return Outcome(rule, "pass", rule.action(mode, False))


def serde_order(rule_set: RuleSet, mode: str) -> list[Rule]:
    """Every domain rule in the order the serde walks them in ``mode`` (reversed on READ)."""
    rules = list(rule_set.domain_rules)
    if mode == "READ":
        rules.reverse()
    return rules


def active_rules(rule_set: RuleSet, mode: str) -> list[Rule]:
    """The domain rules that run in ``mode``, in the order the serde runs them: none unless
    ``enableAt`` is unset, ALL or CLIENT; a disabled rule or one whose mode does not cover
    ``mode`` left out. (A CEL_FIELD TRANSFORM may still be ``shadowed``.)"""
    if rule_set.enable_at not in (None, "ALL", "CLIENT"):
        return []
    return [r for r in serde_order(rule_set, mode) if not r.disabled and r.runs_on(mode)]


def shadowed(rule: Rule, rules: list[Rule], index: int, mode: str) -> bool:
    """A CEL_FIELD TRANSFORM the serde skips: an earlier (WRITE/UPGRADE) or later (READ/
    DOWNGRADE) rule of ``rules`` (``serde_order``'s; ``rule`` at ``index``) transforms the
    same tags the same way."""
    if not rule.tags or rule.is_condition:
        return False
    others = rules[:index] if mode in ("WRITE", "UPGRADE") else rules[index + 1 :]
    return any(
        o.kind == rule.kind and o.mode == rule.mode and o.type == rule.type and o.tags == rule.tags
        for o in others
    )


class _FieldFailed(Exception):
    def __init__(self, field: str) -> None:
        self.field = field


class _FieldWalk:
    """The Avro field walk of a CEL_FIELD rule (common/avro.py's ``transform``)."""

    def __init__(self, prepared: Prepared, metadata: Metadata) -> None:
        self.p = prepared
        self.metadata = metadata
        self.current: str | None = None

    def walk(
        self, schema: Schema, value: Any, ctx: tuple[RecordSchema, str, Any] | None = None
    ) -> Any:
        if isinstance(schema, UnionSchema):
            branch = _branch(schema, value)
            if branch is None:
                return value
            return self.walk(branch, value, ctx)
        if isinstance(schema, ArraySchema):
            if not isinstance(value, list):
                return value
            return [self.walk(schema.items, v, ctx) for v in value]
        if isinstance(schema, MapSchema):
            if not isinstance(value, dict):
                return value
            return {k: self.walk(schema.values, v, ctx) for k, v in value.items()}
        if isinstance(schema, RecordSchema):
            if not isinstance(value, dict):
                return value
            for f in schema.fields:
                if f.name not in value:
                    continue
                new = self.walk(f.type, value[f.name], (schema, f.name, value))
                if self.p.rule.is_condition:
                    if new is False:
                        raise _FieldFailed(f"{schema.fullname}.{f.name}")
                else:
                    value[f.name] = new
            return value
        if ctx is None:
            return value
        record, name, containing = ctx
        tags = tags_of(record, name, self.metadata.tags)
        if not selects(self.p.rule.tags, tags):
            return value
        type_name = (
            _PRIMITIVE_TYPES.get(schema.type)
            if not isinstance(schema, EnumSchema | FixedSchema)
            else None
        )
        if type_name is None:
            return value
        return self.run(record, name, type_name, tags, containing, value)

    def run(
        self,
        record: RecordSchema,
        name: str,
        type_name: str,
        tags: frozenset[str],
        containing: Any,
        value: Any,
    ) -> Any:
        self.current = f"{record.fullname}.{name}"
        bindings: Mapping[str, Any] = {
            "value": avrocel.to_cel(value),
            "fullName": self.current,
            "name": name,
            "typeName": type_name,
            "tags": sorted(tags),
            "message": avrocel.to_cel(containing),
        }
        p = self.p
        if p.guard is not None and p.guard.run(bindings) is not True:
            return True if p.rule.is_condition else value
        assert p.body is not None
        out = p.body.run(bindings)
        if p.rule.is_condition:
            return out
        return avrocel.from_cel(out)


def _fits(schema: Schema, value: Any) -> bool:
    """Whether fastavro's ``validate`` accepts ``value`` for ``schema`` (the union walk's test)."""
    t = schema.type
    if isinstance(schema, UnionSchema):
        return any(_fits(b, value) for b in schema.types)
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t in ("int", "long"):
        if schema.logical_type and "timestamp" in schema.logical_type:
            return isinstance(value, int | _datetime()) and not isinstance(value, bool)
        if schema.logical_type == "date":
            return isinstance(value, int | _date()) and not isinstance(value, bool)
        return isinstance(value, int) and not isinstance(value, bool)
    if t in ("float", "double"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "bytes":
        return isinstance(value, bytes | bytearray) or schema.logical_type == "decimal"
    if isinstance(schema, EnumSchema):
        return isinstance(value, str) and value in schema.symbols
    if isinstance(schema, FixedSchema):
        return isinstance(value, bytes | bytearray) and len(value) == schema.size
    if isinstance(schema, ArraySchema):
        return isinstance(value, list) and all(_fits(schema.items, v) for v in value)
    if isinstance(schema, MapSchema):
        return isinstance(value, dict) and all(_fits(schema.values, v) for v in value.values())
    if isinstance(schema, RecordSchema):
        return isinstance(value, dict) and all(
            _fits(f.type, value.get(f.name)) if f.name in value else f.has_default
            for f in schema.fields
        )
    return False


def _datetime() -> type:
    import datetime

    return datetime.datetime


def _date() -> type:
    import datetime

    return datetime.date


def _branch(union: UnionSchema, value: Any) -> Schema | None:
    """The first branch of ``union`` that ``value`` fits (None: no branch does)."""
    for branch in union.types:
        if _fits(branch, value):
            return branch
    return None
