"""Lint rules over a version's rule set (``v<N>.contract.json``): R001 a rule without a name,
R002 a rule running on WRITE without ``onFailure``, R003 a CONDITION true for every record.

"True for every record" is decided by evaluating the condition with no record at all: an
expression that reads the record then meets an error, and CEL's ``||`` absorbs errors, so
``true``, ``1 < 2`` and ``message.total > 0.0 || true`` give true without a record, while
anything that depends on it gives an error or false.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext.source import join_pointer
from schemacli.contracts.lint.validate import error_finding
from schemacli.contracts.rules.cel.evaluate import CelEvalError, compile_expr
from schemacli.contracts.rules.cel.parser import CelSyntaxError, parse
from schemacli.contracts.rules.model import CEL_TYPES, Contract, Rule, read_contract
from schemacli.errors import SchemacliError
from schemacli.kinds import Kind

CONTRACT_SUFFIX = ".contract.json"  # as the store names a version's contract (docs/store.md)


def always_true(rule: Rule) -> bool:
    """Whether the rule's condition holds whatever the record (guard aside: a guard only
    makes a condition pass more often)."""
    _, body, _ = rule.guard_and_body
    try:
        return compile_expr(parse(body)).run({}) is True
    except (CelSyntaxError, CelEvalError):
        return False


def lint_contract(contract: Contract, on: Callable[[Kind], bool]) -> list[Finding]:
    """The R* findings of ``contract``'s rules; ``on(kind)`` says which rules are selected."""
    out: list[Finding] = []

    def add(kind: Kind, at: str, **values: object) -> None:
        out.append(
            Finding(
                kind=kind,
                message=kind.message(**values),
                location=contract.location(at),
                hint=kind.hint_for(**values),
                severity=kind.severity,
            )
        )

    for rule in contract.rule_set.rules:
        if on(Kind.R001) and not (rule.name or "").strip():
            add(Kind.R001, rule.pointer, pointer=rule.pointer)
        if (
            on(Kind.R002)
            and rule.runs_on("WRITE")
            and rule.on_failure is None
            and not rule.disabled
        ):
            add(Kind.R002, rule.pointer, name=rule.label)
        if (
            on(Kind.R003)
            and rule.is_condition
            and rule.type in CEL_TYPES
            and rule.expr
            and always_true(rule)
        ):
            add(Kind.R003, join_pointer(rule.pointer, "expr"), name=rule.label, expr=rule.expr)
    return out


def lint_beside(version: Path, rules: frozenset[Kind]) -> list[Finding]:
    """The R* findings of the contract file beside a version (``v2.avsc`` ->
    ``v2.contract.json``); none when it has none or no R rule is selected. A contract file
    that cannot be read is one error finding."""
    if not any(k in rules for k in (Kind.R001, Kind.R002, Kind.R003)):
        return []
    beside = version.with_name(version.name.removesuffix(".avsc") + CONTRACT_SUFFIX)
    if not beside.is_file():
        return []
    try:
        contract = read_contract(beside)
    except SchemacliError as err:
        return [error_finding(err, str(beside))]
    return lint_contract(contract, rules.__contains__)
