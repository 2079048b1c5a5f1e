"""Rule sets judged for CI: a contract's CEL against its schema, rules kept across versions
against the next schema, field tags against the rules and the policy. Every finding is placed
in the contract file (line:col inside the ``expr`` string), or in the schema for a tagged
field; its kind is one of the catalogue's ``RULE_*`` (docs/rules.md#finding-kinds).

What is judged (the domain rules of type CEL and CEL_FIELD; other types are not read):

* the guard and the body parse (``RULE_SYNTAX``);
* they type-check against the record as the executors present it (``avrocel``): a field the
  record lacks (``RULE_UNKNOWN_FIELD``), an operator or function the types do not allow
  (``RULE_TYPE_MISMATCH``: ``message.total >= 0`` on a double), a name the executors do not
  bind (``RULE_UNKNOWN_NAME``), a decimal or time-of-day read (``RULE_UNSUPPORTED_VALUE``); a
  CONDITION whose value is not a bool is a type mismatch too;
* a CEL_FIELD rule is checked once per distinct type of the fields its tags select, with
  ``value`` of that type; tags that select no field are ``RULE_SELECTS_NO_FIELD``;
* a rule the previous version had too (same name, type and expr), whose fields the new schema
  drops or retypes: ``RULE_FIELD_REMOVED`` / ``RULE_FIELD_RETYPED`` (not the plain unknown field);
* a field carrying a tag the policy names (``require-tags``) that no enabled CEL_FIELD rule
  selects: ``RULE_REQUIRED_FOR_TAG``, at the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.schema import EnumSchema, FixedSchema, RecordSchema, UnionSchema
from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.rules.avrocel import cel_type, record_type
from schemacli.contracts.rules.cel.ast import Expr
from schemacli.contracts.rules.cel.checker import Checked, FieldUse, Issue, check
from schemacli.contracts.rules.cel.parser import CelSyntaxError, parse
from schemacli.contracts.rules.cel.types import (
    BOOL,
    DYN,
    STRING,
    TIMESTAMP,
    CelType,
    ListT,
    MapT,
)
from schemacli.contracts.rules.model import CEL_TYPES, Contract, Rule, RulesPolicy
from schemacli.contracts.rules.tags import TaggedField, fields, selects
from schemacli.errors import Location
from schemacli.kinds import Kind

NO_POLICY = RulesPolicy()
_CODE_KIND = {
    "unknown-field": Kind.RULE_UNKNOWN_FIELD,
    "type-mismatch": Kind.RULE_TYPE_MISMATCH,
    "unknown-name": Kind.RULE_UNKNOWN_NAME,
    "unsupported": Kind.RULE_UNSUPPORTED_VALUE,
}


@dataclass(frozen=True)
class Version:
    """One version to judge: its schema and its contract (None: no contract file; the
    registry then keeps the previous version's rules, and so do we)."""

    number: int
    schema: LoadedSchema
    contract: Contract | None
    label: str = ""  # how messages name it (default v<number>)


def _primitive(f: TaggedField) -> bool:
    """Whether the executors' field walk calls the rule on this field's values (an enum, a
    fixed, a record, an array or map of them are passed over)."""
    node = f.schema
    branches = node.types if isinstance(node, UnionSchema) else (node,)
    return any(
        b.type in ("int", "long", "float", "double", "boolean", "string", "bytes")
        and not isinstance(b, EnumSchema | FixedSchema)
        for b in branches
    ) or any(getattr(b, "items", None) is not None for b in branches)


def selected_fields(rule: Rule, schema: LoadedSchema, contract: Contract) -> list[TaggedField]:
    """The fields a CEL_FIELD rule's tags select (every field when it has no tags)."""
    return [f for f in fields(schema.schema, contract.metadata.tags) if selects(rule.tags, f.tags)]


def _value_type(f: TaggedField) -> CelType:
    t, _, _ = cel_type(f.schema)
    while isinstance(t, ListT):  # the walk visits array items one by one
        t = t.elem
    if isinstance(t, MapT):
        t = t.value
    return t


class _Judge:
    def __init__(self, subject: str | None) -> None:
        self.subject = subject
        self.out: list[Finding] = []

    def add(self, kind: Kind, message: str, where: Location, hint: str | None) -> None:
        self.out.append(
            Finding(
                kind=kind,
                message=message,
                location=where,
                hint=hint,
                severity=kind.severity,
                subject=self.subject,
            )
        )

    def parse_rule(self, rule: Rule, contract: Contract) -> list[tuple[Expr, int]] | None:
        """The rule's guard and body ASTs with their offsets in expr; None (and a finding)
        when one does not parse."""
        guard, body, body_at = rule.guard_and_body
        parts = ([(guard, 0)] if guard is not None else []) + [(body, body_at)]
        out = []
        for text, offset in parts:
            try:
                out.append((parse(text), offset))
            except CelSyntaxError as err:
                self.add(
                    Kind.RULE_SYNTAX,
                    f"rule {rule.label}: the CEL does not parse: {err.message}",
                    contract.expr_location(rule, offset + err.pos),
                    "CEL's syntax: https://github.com/google/cel-spec/blob/master/doc/langdef.md"
                    " (a guard goes before the first `;`).",
                )
                return None
        return out

    def checks(
        self, rule: Rule, contract: Contract, schema: LoadedSchema
    ) -> list[tuple[Checked, int, bool]] | None:
        """Each part of the rule checked: (result, offset, is the body); for CEL_FIELD one
        per distinct field type. None when it does not parse or selects nothing."""
        parsed = self.parse_rule(rule, contract)
        if parsed is None:
            return None
        top = schema.schema
        if not isinstance(top, RecordSchema):
            return []
        variable_sets: list[dict[str, CelType]]
        if rule.type == "CEL":
            variable_sets = [{"message": record_type(top), "now": TIMESTAMP}]
        else:
            chosen = [f for f in selected_fields(rule, schema, contract) if _primitive(f)]
            if not chosen:
                if rule.tags:
                    self.add(
                        Kind.RULE_SELECTS_NO_FIELD,
                        f"rule {rule.label}: its tags {list(rule.tags)} select no field of "
                        f"{top.fullname}: the rule never runs",
                        contract.location(join_pointer(rule.pointer, "tags")),
                        'Tag the fields it is for ("confluent:tags" in the schema, or '
                        "metadata.tags in the contract), or fix the tag's spelling.",
                    )
                return None
            seen: dict[tuple[str, str], dict[str, CelType]] = {}
            for f in chosen:
                vt = _value_type(f)
                seen.setdefault(
                    (str(vt), f.record.fullname),
                    {
                        "value": vt,
                        "name": STRING,
                        "fullName": STRING,
                        "typeName": STRING,
                        "tags": ListT(STRING),
                        "message": record_type(f.record),
                        "now": TIMESTAMP,
                    },
                )
            variable_sets = list(seen.values())
        out = []
        for variables in variable_sets:
            for n, (expr, offset) in enumerate(parsed):
                out.append((check(expr, variables), offset, n == len(parsed) - 1))
        return out

    def judge(
        self,
        rule: Rule,
        contract: Contract,
        schema: LoadedSchema,
        previous: tuple[Rule, Contract, LoadedSchema] | None,
        label: str,
    ) -> None:
        results = self.checks(rule, contract, schema)
        if results is None:
            return
        moved = self.moved_fields(rule, schema, previous, label)
        for pos, (kind, message, hint) in sorted(moved.items()):
            self.add(kind, f"rule {rule.label}: {message}", contract.expr_location(rule, pos), hint)
        retyped = any(kind is Kind.RULE_FIELD_RETYPED for kind, _, _ in moved.values())
        reported: set[tuple[int, str]] = set()
        for checked, offset, is_body in results:
            for issue in checked.issues:
                key = (offset + issue.pos, issue.message)
                if key in reported or offset + issue.pos in moved:
                    continue
                if retyped and issue.code == "type-mismatch":
                    continue  # the retyped field's finding says why
                reported.add(key)
                where = contract.expr_location(rule, offset + issue.pos)
                self.issue(rule, issue, where)
            if is_body and rule.is_condition and checked.type not in (BOOL, DYN):
                key = (offset, "not bool")
                if key not in reported:
                    reported.add(key)
                    self.add(
                        Kind.RULE_TYPE_MISMATCH,
                        f"rule {rule.label}: a CONDITION gives {checked.type}, not a bool",
                        contract.expr_location(rule, offset),
                        "A condition passes when its value is true: write a comparison.",
                    )

    def issue(self, rule: Rule, issue: Issue, where: Location) -> None:
        self.add(_CODE_KIND[issue.code], f"rule {rule.label}: {issue.message}", where, issue.hint)

    def moved_fields(
        self,
        rule: Rule,
        schema: LoadedSchema,
        previous: tuple[Rule, Contract, LoadedSchema] | None,
        label: str,
    ) -> dict[int, tuple[Kind, str, str]]:
        """Offsets in expr of field reads the previous version's schema had and this one
        dropped or retyped, with the finding to give there."""
        if previous is None:
            return {}
        old_rule, old_contract, old_schema = previous
        before = self.checks_quiet(old_rule, old_contract, old_schema)
        if before is None:
            return {}
        now = {(u.pos, u.path[1:]): u for u in _uses(self.checks_quiet(rule, old_contract, schema))}
        out: dict[int, tuple[Kind, str, str]] = {}
        for use in _uses(before):
            path = ".".join(use.path[1:])
            current = now.get((use.pos, use.path[1:]))
            if current is None:
                out[use.pos] = (
                    Kind.RULE_FIELD_REMOVED,
                    f"{label} removes field {path!r} ({use.field.avro}) that the rule reads",
                    f"Keep the field, or change the rule in {label}'s contract before "
                    "removing it: the registry keeps the previous version's rules.",
                )
            elif current.field.type != use.field.type:
                out[use.pos] = (
                    Kind.RULE_FIELD_RETYPED,
                    f"{label} changes field {path!r} from {use.field.avro} to "
                    f"{current.field.avro}, which the rule reads as {use.field.type}",
                    "Keep the type, or change the rule to the new type in the new version's "
                    "contract.",
                )
        return out

    def checks_quiet(
        self, rule: Rule, contract: Contract, schema: LoadedSchema
    ) -> list[tuple[Checked, int, bool]] | None:
        saved = self.out
        self.out = []
        try:
            return self.checks(rule, contract, schema)
        finally:
            self.out = saved


def _uses(results: Sequence[tuple[Checked, int, bool]] | None) -> Iterable[FieldUse]:
    for checked, offset, _ in results or ():
        for use in checked.uses:
            yield FieldUse(offset + use.pos, use.path, use.record, use.field)


def _same_rule(a: Rule, b: Rule) -> bool:
    return a.name == b.name and a.type == b.type and a.expr == b.expr and a.kind == b.kind


def judge_versions(
    versions: Sequence[Version],
    *,
    subject: str | None = None,
    policy: RulesPolicy = NO_POLICY,
    judged: Iterable[int] | None = None,
) -> list[Finding]:
    """The findings of each version's rule set (its own contract, or the last one before it:
    the registry keeps rules across versions) against its schema, oldest first. ``judged``:
    the version numbers to report on (default: all)."""
    wanted = set(judged) if judged is not None else None
    judge = _Judge(subject)
    effective: Contract | None = None
    previous: Version | None = None
    previous_contract: Contract | None = None
    for version in versions:
        if version.contract is not None:
            effective = version.contract
        if effective is None or (wanted is not None and version.number not in wanted):
            previous, previous_contract = version, effective
            continue
        for rule in effective.rule_set.domain_rules:
            if rule.type not in CEL_TYPES or not rule.expr:
                continue
            before = None
            if previous is not None and previous_contract is not None:
                old = next(
                    (r for r in previous_contract.rule_set.domain_rules if _same_rule(r, rule)),
                    None,
                )
                if old is not None:
                    before = (old, previous_contract, previous.schema)
            judge.judge(
                rule, effective, version.schema, before, version.label or f"v{version.number}"
            )
        _required_tags(judge, effective, version.schema, policy)
        previous, previous_contract = version, effective
    return judge.out


def judge_contract(
    contract: Contract,
    schema: LoadedSchema,
    *,
    subject: str | None = None,
    policy: RulesPolicy = NO_POLICY,
    previous: tuple[Contract, LoadedSchema] | None = None,
) -> list[Finding]:
    """One contract against one schema (``check``, ``rules test``): with ``previous`` (the
    rules' version before), field reads the new schema dropped or retyped are named so."""
    versions = []
    if previous is not None:
        versions.append(Version(0, previous[1], previous[0]))
    versions.append(Version(1, schema, contract, label="the new schema"))
    return judge_versions(versions, subject=subject, policy=policy, judged=[1])


def _required_tags(
    judge: _Judge, contract: Contract, schema: LoadedSchema, policy: RulesPolicy
) -> None:
    if not policy.require_tags:
        return
    rules = [
        r
        for r in contract.rule_set.domain_rules
        if r.type == "CEL_FIELD" and not r.disabled and r.expr
    ]
    for f in fields(schema.schema, contract.metadata.tags):
        wanted = sorted(f.tags.intersection(policy.require_tags))
        if not wanted or any(selects(r.tags, f.tags) for r in rules):
            continue
        if f.inline.intersection(wanted):
            where = schema.location(f.pointer)
        else:
            pattern = next(
                (p for p, ts in contract.metadata.tags.items() if set(ts) & set(wanted)), None
            )
            where = (
                contract.location(join_pointer("/metadata/tags", pattern))
                if pattern is not None
                else schema.location(f.pointer)
            )
        judge.add(
            Kind.RULE_REQUIRED_FOR_TAG,
            f"field {f.full_name} is tagged {', '.join(wanted)} and no CEL_FIELD rule covers "
            "it (required by [tool.schemacli.rules] require-tags)",
            where,
            f'Add a CEL_FIELD rule with "tags": {wanted} to {contract.source} (a condition '
            "or a transform such as a mask), or drop the tag.",
        )
