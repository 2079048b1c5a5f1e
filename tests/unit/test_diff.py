"""diff(old, new): what changed, field by field, with pointers, and the verdict per level."""

from __future__ import annotations

import json

import pytest

from schemacli.config import Level
from schemacli.contracts.evolution.diff import diff
from schemacli.errors import InputError


def record(*fields: dict, name: str = "Ride", **extra) -> dict:
    return {"type": "record", "name": name, "namespace": "t", "fields": list(fields), **extra}


ID = {"name": "id", "type": "int"}
TOTAL = {"name": "total_amount", "type": "float"}


def kinds(result) -> list[str]:
    return [c.kind for c in result.changes]


def test_identical_schemas_have_no_changes_and_pass_every_level():
    result = diff(record(ID, TOTAL), record(ID, TOTAL))
    assert result.changes == ()
    assert all(v.compatible for v in result.verdicts)


def test_added_field_with_default_is_reported_and_compatible_both_ways(repo_root):
    v1 = (repo_root / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
    v2 = (repo_root / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()
    result = diff(v1, v2)
    assert kinds(result) == ["FIELD_ADDED", "FIELD_ADDED"]
    tip = result.changes[0]
    assert "tip_amount" in tip.message and "default 0.0" in tip.message
    assert tip.location.pointer == "/fields/5"
    assert tip.location.line == 11
    assert [(v.level, v.compatible) for v in result.verdicts] == [
        (Level.NONE, True),
        (Level.BACKWARD, True),
        (Level.FORWARD, True),
        (Level.FULL, True),
    ]


def test_total_amount_becoming_string_is_a_type_change_that_breaks_backward_and_forward(
    repo_root,
):
    v1 = (repo_root / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
    breaking = (repo_root / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text()
    result = diff(v1, breaking)
    change = next(c for c in result.changes if c.kind == "TYPE_CHANGED")
    assert (change.old, change.new) == ("float", "string")
    assert change.location.pointer == "/fields/4/type"
    assert "DOC_ADDED" in kinds(result)
    assert result.verdict(Level.BACKWARD).compatible is False
    assert result.verdict(Level.FORWARD).compatible is False
    assert result.verdict(Level.FULL_TRANSITIVE).compatible is False
    assert result.verdict(Level.NONE).compatible is True
    assert result.verdict(Level.BACKWARD).findings[0].kind == "TYPE_MISMATCH"


def test_removed_field_without_default_breaks_forward_only():
    result = diff(record(ID, TOTAL), record(ID))
    assert kinds(result) == ["FIELD_REMOVED"]
    assert result.changes[0].location.pointer == "/fields/1"  # in the old schema
    assert result.verdict(Level.BACKWARD).compatible
    assert not result.verdict(Level.FORWARD).compatible


def test_field_renamed_through_an_alias_is_a_rename_not_remove_and_add():
    renamed = {"name": "total", "type": "float", "aliases": ["total_amount"]}
    result = diff(record(ID, TOTAL), record(ID, renamed))
    assert kinds(result) == ["FIELD_RENAMED", "ALIASES_ADDED"]
    assert result.verdict(Level.BACKWARD).compatible


def test_default_doc_and_order_changes_are_each_reported():
    old = record(ID, {**TOTAL, "default": 0.0, "doc": "gross"})
    new = record(ID, {**TOTAL, "default": 1.5, "order": "descending"})
    result = diff(old, new)
    assert kinds(result) == ["DEFAULT_CHANGED", "DOC_REMOVED", "ORDER_ADDED"]
    assert (result.changes[0].old, result.changes[0].new) == (0.0, 1.5)


def test_enum_symbols_added_and_removed():
    def pay(*symbols: str) -> dict:
        return record({"name": "pay", "type": {"type": "enum", "name": "Pay", "symbols": symbols}})

    old, new = pay("CASH", "CARD"), pay("CARD", "APP")
    result = diff(old, new)
    assert kinds(result) == ["ENUM_SYMBOLS_ADDED", "ENUM_SYMBOLS_REMOVED"]
    assert result.changes[0].new == ["APP"] and result.changes[1].old == ["CASH"]
    assert result.changes[0].location.pointer == "/fields/0/type/symbols"
    assert not result.verdict(Level.BACKWARD).compatible


def test_changes_inside_nested_records_carry_the_nested_pointer():
    old = record({"name": "where", "type": record({"name": "zone", "type": "int"}, name="Place")})
    new = record({"name": "where", "type": record({"name": "zone", "type": "long"}, name="Place")})
    result = diff(old, new)
    assert kinds(result) == ["TYPE_CHANGED"]
    change = result.changes[0]
    assert change.location.pointer == "/fields/0/type/fields/0/type"
    assert "field 'where': field 'zone': type changed from int to long" == change.message
    assert result.verdict(Level.BACKWARD).compatible  # int -> long is a promotion
    assert not result.verdict(Level.FORWARD).compatible


def test_union_branches_added_removed_and_made_optional():
    old = record({"name": "flag", "type": ["null", "string"], "default": None})
    new = record({"name": "flag", "type": ["null", "string", "int"], "default": None})
    assert kinds(diff(old, new)) == ["UNION_BRANCH_ADDED"]
    assert kinds(diff(new, old)) == ["UNION_BRANCH_REMOVED"]
    optional = record({"name": "flag", "type": "string"})
    change = diff(optional, old).changes[0]
    assert change.kind == "TYPE_CHANGED" and change.new == "union[null, string]"


def test_record_renamed_without_alias_is_named_and_breaks_compatibility():
    result = diff(record(ID), record(ID, name="Trip"))
    assert kinds(result) == ["NAME_CHANGED"]
    assert "without an alias" in result.changes[0].message
    assert not result.verdict(Level.BACKWARD).compatible


def test_recursive_schema_diff_terminates():
    node = record(ID, {"name": "next", "type": ["null", "t.Ride"], "default": None})
    grown = record(
        ID,
        {"name": "next", "type": ["null", "t.Ride"], "default": None},
        {"name": "w", "type": "int", "default": 0},
    )
    assert kinds(diff(node, grown)) == ["FIELD_ADDED"]


def test_invalid_schema_is_an_input_error_with_a_pointer():
    with pytest.raises(InputError) as caught:
        diff(record(ID), json.dumps(record({"name": "x", "type": "nope"})))
    assert caught.value.location.pointer is not None


def test_skipping_the_fields_that_did_not_change_describes_the_same_changes(monkeypatch):
    """The walk passes over a field equal in both versions whose type names no type; walking
    it too (the road without the shortcut) finds the same changes, in the same order."""
    from schemacli.contracts.avro.loader import load_schema_text
    from schemacli.contracts.evolution import diff as diff_module
    from schemacli.errors import SchemacliError
    from tests.oracle.generator import named_pairs, pairs

    def walked(a, b):
        old = load_schema_text(json.dumps(a, indent=2), "old.avsc")
        new = load_schema_text(json.dumps(b, indent=2), "new.avsc")
        return list(diff_module._Walker(old, new).run())

    corpus = [*pairs(20261128, 300), *named_pairs(20261128, 100)]
    plain_twin = {"name": "twin", "type": ["null", {"type": "array", "items": "long"}]}
    corpus.append((record(ID, TOTAL, plain_twin), record(dict(ID, type="long"), plain_twin)))
    shortcut, compared = [], 0
    for a, b in corpus:
        try:
            shortcut.append(walked(a, b))
        except SchemacliError:
            shortcut.append(None)
    monkeypatch.setattr(diff_module, "_plain", lambda node: False)
    for (a, b), fast in zip(corpus, shortcut, strict=True):
        if fast is not None:
            assert walked(a, b) == fast, (a, b)
            compared += 1
    assert compared > 300
