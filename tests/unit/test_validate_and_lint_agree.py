"""validate and lint are one rule engine: on every schema of the repository (tests/, examples/,
schemas/) no condition is reported by one and not the other, at another severity or in other
words (issue 37: a fixed(2) decimal of precision 10 was a validate warning that lint passed)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from schemacli.contracts.lint.engine import lint_paths
from schemacli.contracts.lint.ruleset import RULES, LintConfig, rule_for
from schemacli.contracts.lint.validate import VALIDATE_RULES, validate_paths

ROOT = Path(__file__).resolve().parents[2]
ALL = LintConfig(select=("ALL",))


def schema_files() -> list[Path]:
    return sorted(
        path
        for folder in ("tests", "examples", "schemas")
        for path in (ROOT / folder).rglob("*.avsc")
        if path.is_file()
    )


def said(findings) -> Counter[tuple[object, ...]]:
    return Counter(
        (
            f.kind.value,
            f.severity.value,
            f.message,
            f.hint,
            f.location.pointer,
            f.location.line,
            f.location.column,
        )
        for f in findings
    )


def validates_part(findings) -> list:
    """What of lint's findings validate also checks: its rules, and a file that did not load."""
    return [f for f in findings if f.kind in VALIDATE_RULES or rule_for(f.kind) is None]


def test_the_repository_has_schemas_of_every_kind_validate_warns_about():
    warned = {f.kind for path in schema_files() for f in validate_paths([path]).findings}
    assert VALIDATE_RULES <= warned


@pytest.mark.parametrize("path", schema_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_validate_and_lint_report_the_same_conditions(path):
    validated = validate_paths([path]).findings
    linted = lint_paths([path], ALL).findings
    assert said(validated) == said(validates_part(linted))


def test_the_rules_validate_runs_are_lint_rules_on_with_select_all():
    assert VALIDATE_RULES == {r.kind for r in RULES if r.validate}
    assert VALIDATE_RULES <= ALL.rules_for(None)


def test_a_fixed_too_small_for_its_decimal_is_one_warning_in_both(tmp_path):
    path = tmp_path / "fare.avsc"
    fixed = {"type": "fixed", "name": "Fare", "size": 2, "logicalType": "decimal", "precision": 10}
    path.write_text(
        json.dumps({"type": "record", "name": "Ride", "fields": [{"name": "f", "type": fixed}]})
    )
    (warning,) = validate_paths([path]).findings
    assert warning.kind == "INVALID_DECIMAL" and warning.severity == "warning"
    default_lint = lint_paths([path], LintConfig()).findings
    assert said(validates_part(default_lint)) == said([warning])
