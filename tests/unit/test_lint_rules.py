"""The lint rules (schemacli.contracts.lint.engine, .ruleset): each rule fires where it should and
not elsewhere, selection follows ruff, suppression lives in the schema, the table is consistent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.lint.engine import lint_paths, lint_text
from schemacli.contracts.lint.rule import Category, NameStyle
from schemacli.contracts.lint.rules.naming import restyle, words
from schemacli.contracts.lint.ruleset import (
    RULES,
    LintConfig,
    UnknownSelector,
    check_selectors,
    find_rule,
    rule_for,
    select_rules,
)
from schemacli.kinds import LINT, Kind

ROOT = Path(__file__).resolve().parents[2]
ALL = LintConfig(select=("ALL",))


def record(*fields: dict, **extra) -> str:
    schema = {"type": "record", "name": "Ride", "namespace": "com.acme", "doc": "a ride"}
    schema.update(extra)
    schema["fields"] = [{"doc": "d", **f} for f in fields]
    return json.dumps(schema, indent=2)


def codes(text: str, config: LintConfig = ALL) -> list[str]:
    return [f.kind.value for f in lint_text(text, config)]


# -- the table ----------------------------------------------------------------------------------


def test_every_lint_kind_has_exactly_one_rule_and_every_rule_a_lint_kind():
    lint_kinds = {k for k in Kind if k.anchor.startswith(LINT)}
    assert lint_kinds == {r.kind for r in RULES}
    assert len({r.name for r in RULES}) == len(RULES)
    for rule in RULES:
        assert rule_for(rule.kind) is rule
        assert rule.kind.anchor == f"{LINT}{rule.code.lower()}-{rule.name}"
        assert rule.summary
        # validate's rules write each message for the problem found; the others fill templates
        assert rule.validate or (rule.kind.template and rule.kind.hint)


def test_rule_codes_start_with_their_categorys_letter_or_are_validates_kinds():
    letters = {
        Category.NAMING: "N",
        Category.DOCS: "D",
        Category.EVOLUTION: "E",
        Category.TYPES: "T",
        Category.SPARK: "S",
        Category.RULES: "R",
    }
    for rule in RULES:
        if re.fullmatch(r"[A-Z][0-9]{3}", rule.code):
            assert rule.code.startswith(letters[rule.category])
        else:  # a kind validate has always reported keeps its name as the rule's code
            assert rule.validate


def test_docs_document_every_rule_with_its_heading():
    text = (ROOT / "docs/lint.md").read_text()
    for rule in RULES:
        assert f"### {rule.code} {rule.name}\n" in text


def test_find_rule_takes_a_code_or_a_name_in_any_case():
    assert find_rule("e001") is find_rule("optional-field-without-null-default") is not None
    assert find_rule("X999") is None


# -- selection ----------------------------------------------------------------------------------


def test_default_selection_is_the_rules_marked_on():
    assert select_rules(None) == {r.kind for r in RULES if r.default}
    assert Kind.D001 not in select_rules(None)


def test_select_takes_all_categories_prefixes_and_codes_and_ignore_removes():
    assert select_rules(["ALL"]) == {r.kind for r in RULES}
    assert select_rules(["docs"]) == {Kind.D001, Kind.D002}
    assert select_rules(["N00"], ["N001", "naming"]) == set()
    assert select_rules(["E", "T002"], ["E003"]) == {Kind.E001, Kind.E002, Kind.T002}
    assert select_rules(["portability"]) == {r.kind for r in RULES if r.validate} - {
        Kind.INVALID_DECIMAL  # a type rule (it was T001)
    }


def test_a_prefix_selects_short_codes_only_and_a_kind_code_is_named_whole():
    assert select_rules(["N"]) == {r.kind for r in RULES if r.category is Category.NAMING}
    assert Kind.ENUM_DEFAULT_NOT_SYMBOL not in select_rules(["E"])
    assert select_rules(["NON_ASCII_NAME", "duplicate-key"]) == {
        Kind.NON_ASCII_NAME,
        Kind.DUPLICATE_KEY,
    }


def test_t001_the_decimal_rules_old_code_still_selects_and_explains_it():
    assert select_rules(["T001"]) == {Kind.INVALID_DECIMAL}
    assert select_rules(["ALL"], ["t001"]) == {r.kind for r in RULES} - {Kind.INVALID_DECIMAL}
    assert find_rule("T001") is find_rule("invalid-decimal") is rule_for(Kind.INVALID_DECIMAL)
    check_selectors(["T001"])


def test_a_selector_that_names_no_rule_is_refused():
    with pytest.raises(UnknownSelector, match="'X1' selects no rule"):
        check_selectors(["E", "X1"])


def test_per_file_ignores_match_the_path_or_its_end():
    config = LintConfig(per_file_ignores=(("legacy/*.avsc", ("N",)), ("**/gen/*", ("E001",))))
    assert Kind.N001 not in config.rules_for("schemas/legacy/a.avsc")
    assert Kind.N001 in config.rules_for("schemas/current/a.avsc")
    assert Kind.E001 not in config.rules_for("x/gen/a.avsc")
    assert Kind.N001 in config.rules_for(None)


# -- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "style", "expected"),
    [
        ("vendorId", NameStyle.SNAKE, "vendor_id"),
        ("passenger_count", NameStyle.CAMEL, "passengerCount"),
        ("taxi_ride", NameStyle.PASCAL, "TaxiRide"),
        ("HTTPStatus", NameStyle.SNAKE, "http_status"),
        ("inProgress", NameStyle.UPPER_SNAKE, "IN_PROGRESS"),
    ],
)
def test_restyle_writes_a_names_words_in_the_style(name, style, expected):
    assert restyle(name, style) == expected


def test_words_split_camel_snake_and_acronyms():
    assert words("vendorID_2x") == ["vendor", "id", "2x"]


def test_record_names_not_in_pascal_case_are_n001_with_an_unsafe_rename():
    (finding,) = [f for f in lint_text(record(name="ride_event"), ALL) if f.kind is Kind.N001]
    assert finding.message == "record name 'ride_event' is not PascalCase"
    (fix,) = finding.fixes
    assert fix.applicability == "unsafe" and "RideEvent" in fix.title


def test_field_style_consistent_follows_the_records_majority_like_the_taxi_schema():
    text = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()
    found = [f for f in lint_text(text, ALL) if f.kind is Kind.N002]
    assert [f.message for f in found] == ["field 'vendorId' is not snake_case"]


def test_a_configured_field_style_applies_to_every_record():
    text = record({"name": "trip_id", "type": "int"}, {"name": "zone", "type": "int"})
    assert codes(text, LintConfig(select=("N002",), field_style=NameStyle.CAMEL)) == ["N002"]
    assert codes(text, LintConfig(select=("N002",), field_style=NameStyle.ANY)) == []


def test_enum_symbols_not_in_upper_snake_case_are_n003():
    enum = {
        "type": "enum",
        "name": "Pay",
        "symbols": ["CASH", "creditCard"],
        "default": "CASH",
        "doc": "d",
    }
    assert codes(record({"name": "p", "type": enum}), LintConfig(select=("N003",))) == ["N003"]


def test_a_named_type_without_any_namespace_is_n004_and_a_nested_one_inherits():
    inner = {"type": "fixed", "name": "Uuid", "size": 16}
    with_ns = record({"name": "id", "type": inner})
    assert codes(with_ns, LintConfig(select=("N004",))) == []
    schema = json.loads(with_ns)
    del schema["namespace"]
    assert codes(json.dumps(schema), LintConfig(select=("N004",))) == ["N004", "N004"]


def test_fields_differing_only_by_case_are_an_n005_error():
    findings = lint_text(
        record({"name": "tip", "type": "int"}, {"name": "Tip", "type": "int"}),
        LintConfig(select=("N005",)),
    )
    assert [(f.kind, f.severity.value) for f in findings] == [(Kind.N005, "error")]
    assert findings[0].location.pointer == "/fields/1/name"


@pytest.mark.parametrize("name", ["from", "class", "select", "record"])
def test_reserved_words_as_field_names_are_n006(name):
    assert codes(record({"name": name, "type": "int"}), LintConfig(select=("N006",))) == ["N006"]


def test_an_alias_that_is_another_fields_name_is_n007_with_a_fix_removing_it():
    text = record({"name": "a", "type": "int"}, {"name": "b", "type": "int", "aliases": ["a"]})
    (finding,) = lint_text(text, LintConfig(select=("N007",)))
    assert finding.location.pointer == "/fields/1/aliases/0"
    assert finding.fixes[0].title == "Remove alias 'a' from field b"


def test_docs_rules_are_off_by_default_and_find_missing_docs_when_selected():
    text = json.dumps(
        {"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type": "int"}]}
    )
    assert codes(text, LintConfig()) == []
    assert codes(text, LintConfig(select=("docs",))) == ["D001", "D002"]


# -- evolution --------------------------------------------------------------------------------


def test_an_optional_field_without_a_default_is_e001_fixed_safely_when_null_is_first():
    (finding,) = lint_text(record({"name": "tip", "type": ["null", "double"]}), ALL)
    assert finding.kind is Kind.E001 and finding.severity.value == "error"
    (fix,) = finding.fixes
    assert fix.applicability == "safe" and fix.title == "Add \"default\": null to field 'tip'"


def test_null_not_first_is_e001_with_an_unsafe_fix_that_reorders():
    (finding,) = lint_text(record({"name": "zone", "type": ["string", "null"]}), ALL)
    (fix,) = finding.fixes
    assert fix.applicability == "unsafe" and len(fix.edits) == 3


def test_an_optional_field_with_its_null_default_is_clean():
    assert codes(record({"name": "tip", "type": ["null", "double"], "default": None})) == []


def test_an_enum_without_default_is_e002_fixed_safely_with_an_unknown_symbol():
    enum = {"type": "enum", "name": "Pay", "symbols": ["CASH", "UNKNOWN"], "doc": "d"}
    (finding,) = lint_text(record({"name": "p", "type": enum}), ALL)
    assert finding.kind is Kind.E002
    assert finding.fixes[0].applicability == "safe"
    assert finding.fixes[0].title == 'Add "default": "UNKNOWN" to enum Pay'
    enum["symbols"] = ["CASH", "CARD"]
    (finding,) = lint_text(record({"name": "p", "type": enum}), ALL)
    assert finding.fixes[0].applicability == "display"


def _store(tmp_path: Path, subject: str, *versions: str) -> Path:
    folder = tmp_path / "schemas" / "subjects" / subject
    folder.mkdir(parents=True)
    for n, text in enumerate(versions, 1):
        (folder / f"v{n}.avsc").write_text(text)
    return tmp_path / "schemas"


def test_a_field_without_default_is_e003_only_in_a_subject_at_a_forward_level(tmp_path):
    store = _store(tmp_path, "rides-value", record({"name": "n", "type": "int"}))
    path = store / "subjects/rides-value/v1.avsc"
    forward = SubjectLevels(Level.BACKWARD, {"rides-value": Level.FULL})
    found = lint_paths([path], ALL, store=store, levels=forward).findings
    assert [f.kind for f in found] == [Kind.E003]
    assert found[0].subject == "rides-value"
    assert found[0].fixes[0].title.startswith('Add "default": 0 to field')
    backward = SubjectLevels(Level.BACKWARD)
    assert lint_paths([path], ALL, store=store, levels=backward).findings == ()
    assert lint_paths([path], ALL).findings == ()  # not in a store: the level is unknown


# -- types and spark ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decimal", "problem"),
    [
        ({"type": "bytes", "logicalType": "decimal"}, "decimal precision null is not a positive"),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 4},
            "decimal scale 4 is greater than precision 2",
        ),
        ({"type": "bytes", "logicalType": "decimal", "precision": 0}, "precision 0 is not a"),
        (  # issue 37: validate warned, lint --select ALL passed it
            {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 10},
            "fixed com.acme.F of 2 byte(s) holds at most 4 decimal digits, not precision 10",
        ),
    ],
)
def test_a_decimal_java_would_ignore_is_invalid_decimal_by_default(decimal, problem):
    (finding,) = lint_text(record({"name": "p", "type": decimal}), LintConfig())
    assert finding.kind is Kind.INVALID_DECIMAL and problem in finding.message
    assert finding.severity == "warning"  # as validate says it: Java reads the data as bytes


def test_mixed_timestamp_precision_in_one_file_is_t002_at_the_second_precision():
    millis = {"type": "long", "logicalType": "timestamp-millis"}
    micros = {"type": "long", "logicalType": "local-timestamp-micros"}
    text = record(
        {"name": "a", "type": millis}, {"name": "b", "type": micros}, {"name": "c", "type": millis}
    )
    (finding,) = lint_text(text, ALL)
    assert finding.kind is Kind.T002 and finding.location.pointer == "/fields/1/type"


def test_mixed_timestamp_precision_across_a_subjects_versions_is_t002(tmp_path):
    millis = record({"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}})
    micros = record({"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}})
    store = _store(tmp_path, "rides-value", millis, micros)
    report = lint_paths([store], ALL, store=store, levels=SubjectLevels(Level.BACKWARD))
    (finding,) = report.findings
    assert finding.kind is Kind.T002 and finding.location.source.endswith("v2.avsc")
    assert "rides-value v1 (/fields/0/type)" in finding.message


def test_a_union_with_two_non_null_branches_is_s001():
    text = record({"name": "v", "type": ["null", "int", "string"], "default": None})
    assert codes(text) == ["S001"]
    assert codes(record({"name": "v", "type": ["null", "int"], "default": None})) == []


# -- suppression --------------------------------------------------------------------------------


def test_schemacli_ignore_on_a_node_silences_rules_there_and_below_only():
    schema = json.loads(
        record(
            {"name": "from", "type": "int", "schemacli:ignore": ["N006"]},
            {"name": "class", "type": "int"},
        )
    )
    found = lint_text(json.dumps(schema), ALL)
    assert [f.location.pointer for f in found] == ["/fields/1/name"]


def test_schemacli_ignore_at_the_root_covers_the_file_and_takes_categories():
    schema = json.loads(record({"name": "from", "type": ["null", "int"]}))
    schema["schemacli:ignore"] = ["naming", "E001"]
    assert codes(json.dumps(schema)) == []


def test_a_bad_schemacli_ignore_is_reported_where_it_is():
    schema = json.loads(
        record(
            {"name": "a", "type": "int", "schemacli:ignore": "N006"},
            {"name": "b", "type": "int", "schemacli:ignore": ["X9"]},
        )
    )
    found = lint_text(json.dumps(schema, indent=2), ALL)
    assert [(f.kind, f.location.pointer) for f in found] == [
        (Kind.INVALID_INPUT, "/fields/0/schemacli:ignore"),
        (Kind.INVALID_INPUT, "/fields/1/schemacli:ignore"),
    ]
    assert "names no rule: 'X9'" in found[1].message


def test_a_clean_schema_has_no_findings_under_every_rule():
    enum = {
        "type": "enum",
        "name": "Pay",
        "symbols": ["CASH", "UNKNOWN"],
        "default": "UNKNOWN",
        "doc": "d",
    }
    text = record(
        {"name": "ride_id", "type": "string"},
        {"name": "pay", "type": enum},
        {"name": "tip", "type": ["null", "double"], "default": None},
    )
    assert codes(text) == []


def test_findings_come_in_text_order():
    text = record({"name": "from", "type": "int"}, {"name": "tip", "type": ["null", "int"]})
    lines = [f.location.line for f in lint_text(text, ALL)]
    assert lines == sorted(lines)


def test_rule_messages_have_no_unfilled_placeholder():
    text = (ROOT / "tests/unit/test_lint_rules.py").read_text()  # itself: a sanity anchor
    assert text
    for finding in lint_text(record({"name": "from", "type": ["string", "null"]}), ALL):
        assert not re.search(r"\{[a-z]+\}", finding.message + (finding.hint or ""))
