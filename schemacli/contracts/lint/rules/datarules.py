"""Data-quality rule sets (R001-R003): the rule set beside a store version
(``v<N>.contract.json`` beside ``v<N>.avsc``, docs/rules.md): R001 a rule without a name, R002
a rule running on WRITE without ``onFailure``, R003 a CONDITION true for every record.

"True for every record" is decided by evaluating the condition with no record at all: an
expression that reads the record then meets an error, and CEL's ``||`` absorbs errors, so
``true``, ``1 < 2`` and ``message.total > 0.0 || true`` give true without a record, while
anything that depends on it gives an error or false. The findings point into the contract
file; fixes never touch it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.source import is_stdin
from schemacli.contracts.lint.files import error_finding
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run
from schemacli.errors import SchemacliError
from schemacli.kinds import Kind

if TYPE_CHECKING:
    from schemacli.contracts.rules.model import Contract
    from schemacli.contracts.rules.model import Rule as DomainRule

R001 = Rule(
    Kind.R001,
    "rule-without-name",
    Category.RULES,
    default=True,
    fixable=Fixable.NONE,
    summary="every rule of a version's rule set has a name",
)
R002 = Rule(
    Kind.R002,
    "write-rule-without-on-failure",
    Category.RULES,
    default=True,
    fixable=Fixable.NONE,
    summary="a rule that runs on WRITE says what a failing record does (onFailure)",
)
R003 = Rule(
    Kind.R003,
    "always-true-expression",
    Category.RULES,
    default=True,
    fixable=Fixable.NONE,
    summary="a CONDITION can fail for some record",
)


def always_true(rule: DomainRule) -> bool:
    """Whether the rule's condition holds whatever the record (guard aside: a guard only
    makes a condition pass more often). The CEL engine loads here, when a contract file is
    there to lint, not for every schema `validate` and `lint` read (~0.1 s of start-up)."""
    from schemacli.contracts.rules.cel.evaluate import compile_expr
    from schemacli.contracts.rules.cel.parser import CelSyntaxError, parse
    from schemacli.contracts.rules.cel.values import CelEvalError

    _, body, _ = rule.guard_and_body
    try:
        return compile_expr(parse(body)).run({}) is True
    except (CelSyntaxError, CelEvalError):
        return False


def lint_contract(contract: Contract, on: Callable[[Kind], bool]) -> list[Finding]:
    """The R* findings of ``contract``'s rules; ``on(kind)`` says which rules are selected."""
    from schemacli.contracts.rules.model import CEL_TYPES

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


def lint_beside(version: Path, on: Callable[[Kind], bool]) -> list[Finding]:
    """The R* findings of the contract file beside a version (``v2.avsc`` ->
    ``v2.contract.json``); none when it has none. A contract file that cannot be read is one
    error finding. The contract model loads here, when a store version is linted, not for
    every schema ``validate`` reads."""
    from schemacli.contracts.rules.model import CONTRACT_SUFFIX, read_contract

    beside = version.with_name(version.name.removesuffix(".avsc") + CONTRACT_SUFFIX)
    if not beside.is_file():
        return []
    try:
        contract = read_contract(beside)
    except SchemacliError as err:
        return [error_finding(err, str(beside))]
    return lint_contract(contract, on)


def _end(run: Run) -> None:
    path = run.loaded.path
    if path is not None and not is_stdin(path):
        run.findings.extend(lint_beside(path, run.on))


FAMILY = Family((R001, R002, R003), end=_end)
