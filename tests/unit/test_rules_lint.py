"""Lint rules over the rule set beside a store version: R001 a rule without a name, R002 a
WRITE rule without onFailure, R003 a condition true for every record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.contracts.lint.engine import lint_paths
from schemacli.contracts.lint.rules.datarules import always_true
from schemacli.contracts.lint.ruleset import LintConfig
from schemacli.contracts.rules.model import Rule

SCHEMA = {"type": "record", "name": "Ride", "namespace": "taxi", "doc": "d",
          "fields": [{"name": "total", "type": "double", "doc": "d"}]}  # fmt: skip


def lint(tmp_path: Path, rules: list[dict]) -> list[tuple[str, int | None]]:
    (tmp_path / "v1.avsc").write_text(json.dumps(SCHEMA, indent=2))
    (tmp_path / "v1.contract.json").write_text(
        json.dumps({"ruleSet": {"domainRules": rules}}, indent=2)
    )
    report = lint_paths([tmp_path / "v1.avsc"], LintConfig())
    return [(f.kind.value, f.location.line) for f in report.findings if f.kind.value[0] == "R"]


def test_a_rule_without_a_name_is_r001_at_the_rule(tmp_path):
    found = lint(tmp_path, [{"kind": "CONDITION", "mode": "READ", "type": "CEL",
                             "expr": "message.total > 0.0"}])  # fmt: skip
    assert found == [("R001", 4)]


def test_a_write_rule_without_on_failure_is_r002_and_one_with_it_is_clean(tmp_path):
    rule = {"name": "p", "kind": "CONDITION", "mode": "WRITEREAD", "type": "CEL",
            "expr": "message.total > 0.0"}  # fmt: skip
    assert lint(tmp_path, [rule]) == [("R002", 4)]
    assert lint(tmp_path, [dict(rule, onFailure="DLQ")]) == []


@pytest.mark.parametrize(
    "expr, always",
    [
        ("true", True),
        ("1 < 2", True),
        ("message.total > 0.0 || true", True),
        ("true || message.total > 0.0", True),
        ("message.total > 0.0", False),
        ("message.total > 0.0 && true", False),
        ("has(message.total) || !has(message.total)", False),  # needs a record to be true
        ("false", False),
        ("1 / 0 == 1", False),
    ],
)
def test_always_true_is_decided_without_a_record(expr, always):
    rule = Rule("r", "CONDITION", "WRITE", "CEL", "/r", expr=expr)
    assert always_true(rule) is always


def test_an_always_true_condition_is_r003_at_its_expr(tmp_path):
    found = lint(tmp_path, [{"name": "p", "kind": "CONDITION", "mode": "READ", "type": "CEL",
                             "expr": "message.total >= 0.0 || true"}])  # fmt: skip
    assert found == [("R003", 9)]  # the line of "expr"


def test_r_rules_can_be_ignored_like_any_other(tmp_path):
    (tmp_path / "v1.avsc").write_text(json.dumps(SCHEMA))
    (tmp_path / "v1.contract.json").write_text(
        json.dumps(
            {
                "ruleSet": {
                    "domainRules": [
                        {"kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "true"}
                    ]
                }
            }
        )  # fmt: skip
    )
    report = lint_paths([tmp_path / "v1.avsc"], LintConfig(ignore=("R",)))
    assert not [f for f in report.findings if f.kind.value.startswith("R")]
