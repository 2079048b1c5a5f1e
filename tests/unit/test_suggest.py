"""Suggested fixes for compatibility findings (contracts/suggest.py), without Java.

tests/oracle/test_fix_differential.py proves every fix against Apache Avro Java on thousands of
pairs; these tests pin the behaviour each kind and level promises, one case each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.diff import diff
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.fixes import suggest
from schemacli.contracts.fixes.edits import Applicability, apply_edits
from schemacli.contracts.fixes.fixing import fix_candidate
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.store.tree import FileTree
from tests.unit.test_compat_kinds import KIND_FIXTURES

SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY


def text(value) -> str:
    return json.dumps(value, indent=2) + "\n"


def record(*fields, name="R", **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def checked(old, new, level=Level.BACKWARD, *more_old):
    history = [
        load_schema_text(text(o), f"v{i}.avsc", version=i)
        for i, o in enumerate((old, *more_old), 1)
    ]
    candidate = load_schema_text(text(new), "new.avsc")
    return candidate, history, check_candidate(candidate, history, subject="s", level=level)


def applied(candidate, fix) -> dict:
    return json.loads(apply_edits(candidate.document.text, fix.edits))


def still_incompatible(history, fixed_value, level) -> bool:
    candidate = load_schema_text(text(fixed_value), "fixed.avsc")
    return not check_candidate(candidate, history, subject="s", level=level).compatible


@pytest.mark.parametrize("kind", sorted(KIND_FIXTURES))
@pytest.mark.parametrize("side", ["reader is new", "writer is new"])
def test_every_kind_gets_fixes_and_each_applied_fix_removes_its_finding(kind, side):
    reader, writer, _ = KIND_FIXTURES[kind]
    old, new = (writer, reader) if side == "reader is new" else (reader, writer)
    level = Level.BACKWARD if side == "reader is new" else Level.FORWARD
    candidate, history, report = checked(old, new, level)
    assert report.findings
    for finding in report.findings:
        assert finding.fixes, finding
        for fix in finding.fixes:
            if not fix.applies:
                assert fix.applicability is DISPLAY and "migrate plan" in fix.title + " "
                continue
            after = load_schema_text(apply_edits(candidate.document.text, fix.edits), "f.avsc")
            again = check_candidate(after, history, subject="s", level=level)
            assert all(
                (f.kind, f.location.pointer) != (finding.kind, finding.location.pointer)
                for f in again.findings
            ), fix.title


def test_a_new_field_without_default_gets_the_default_of_its_first_union_branch():
    old = record({"name": "a", "type": "int"})
    new = record({"name": "a", "type": "int"}, {"name": "n", "type": ["long", "null"]})
    candidate, _, report = checked(old, new)
    (finding,) = report.findings
    first = finding.fixes[0]
    assert first.applicability is SAFE
    assert applied(candidate, first)["fields"][1]["default"] == 0


def test_default_for_each_type_is_a_valid_avro_default():
    schema = parse_schema(
        record(
            {
                "name": "e",
                "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"], "default": "Y"},
            },
            {"name": "f", "type": {"type": "fixed", "name": "F", "size": 3}},
            {"name": "u", "type": ["string", "null"]},
            {"name": "m", "type": {"type": "map", "values": "int"}},
            {"name": "d", "type": "double", "default": 1.5},
        )
    )
    assert suggest.default_for(schema) == {"e": "Y", "f": "\u0000" * 3, "u": "", "m": {}, "d": 1.5}


def test_a_record_that_always_contains_itself_has_no_default_and_says_why():
    node = record({"name": "next", "type": "Node"}, name="Node")
    old = record({"name": "a", "type": "int"}, name="Top")
    new = record(
        {"name": "a", "type": "int"},
        {"name": "head", "type": {"type": "array", "items": "int"}},
        {"name": "node", "type": node},
        name="Top",
    )
    _, _, report = checked(old, new)
    node_finding = next(f for f in report.findings if f.new == "node")
    assert [f.applicability for f in node_finding.fixes if not f.applies] == [DISPLAY]
    assert "no finite value exists" in node_finding.fixes[-1].title


def test_a_promotion_is_offered_at_backward_but_not_at_full_where_it_breaks_forward():
    old, new = record({"name": "n", "type": "long"}), record({"name": "n", "type": "int"})
    _, _, backward = checked(old, new, Level.BACKWARD)
    titles = [f.title for f in backward.findings[0].fixes]
    assert any(t.startswith("Use float") for t in titles)
    _, _, full = checked(old, new, Level.FULL)
    for finding in full.findings:
        assert not any(f.title.startswith("Use float") for f in finding.fixes)


def test_fixes_at_a_transitive_level_are_proven_against_every_version():
    enum = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}
    v1 = record({"name": "e", "type": enum})
    v2 = record({"name": "e", "type": dict(enum, symbols=["A", "B"])})
    new = record({"name": "e", "type": dict(enum, symbols=["A", "Z"])})
    candidate, history, report = checked(v1, new, Level.BACKWARD_TRANSITIVE, v2)
    assert len(report.findings) == 2
    for finding in report.findings:
        restore = next(f for f in finding.fixes if f.title.startswith("Restore"))
        assert still_incompatible(history, applied(candidate, restore), report.level) == (
            finding.old == ["B"]  # restoring B alone leaves v1's C missing
        )
    fixed = fix_candidate(candidate, history, subject="s", level=Level.BACKWARD_TRANSITIVE)
    assert fixed.report.compatible


def test_forward_removed_field_is_restored_as_deprecated_with_a_default():
    old = record({"name": "a", "type": "int"}, {"name": "b", "type": "string"})
    new = record({"name": "a", "type": "int"})
    candidate, _, report = checked(old, new, Level.FORWARD)
    fix = report.findings[0].fixes[0]
    assert fix.applicability is SAFE
    assert applied(candidate, fix)["fields"][1] == {
        "name": "b",
        "type": "string",
        "default": "",
        "doc": "Deprecated: kept for readers of earlier versions.",
    }


def test_forward_added_enum_symbol_can_only_be_removed_and_that_is_unsafe():
    enum = {"type": "enum", "name": "E", "symbols": ["A"]}
    old, new = (
        record({"name": "e", "type": enum}),
        record({"name": "e", "type": dict(enum, symbols=["A", "B"])}),
    )
    _, _, report = checked(old, new, Level.FORWARD)
    assert [f.applicability for f in report.findings[0].fixes if f.applies] == [UNSAFE]


def test_renaming_back_takes_the_references_along():
    old = record({"name": "next", "type": ["null", "Node"], "default": None}, name="Node")
    new = record({"name": "next", "type": ["null", "Link"], "default": None}, name="Link")
    candidate, history, report = checked(old, new, Level.FULL)
    keep = next(f for f in report.findings[0].fixes if f.title.startswith("Keep the earlier"))
    value = applied(candidate, keep)
    assert value["name"] == "Node" and value["fields"][0]["type"] == ["null", "Node"]
    assert not still_incompatible(history, value, Level.FULL)


def test_a_compatible_check_builds_no_fix_context(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("fixes computed without findings")

    monkeypatch.setattr("schemacli.contracts.evolution.check.FixContext", boom)
    old = record({"name": "a", "type": "int"})
    new = record({"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 0})
    _, _, report = checked(old, new, Level.FULL)
    assert report.compatible


def test_fixes_false_gives_the_engines_findings_alone():
    old, new = record({"name": "a", "type": "int"}), record({"name": "a", "type": "string"})
    history = [load_schema_text(text(old), "v1.avsc", version=1)]
    candidate = load_schema_text(text(new), "new.avsc")
    report = check_candidate(candidate, history, subject="s", level=Level.BACKWARD, fixes=False)
    assert report.findings and all(f.fixes == () for f in report.findings)


def test_diff_findings_carry_fixes_proven_both_ways_at_full():
    old = record({"name": "a", "type": "int"}, {"name": "b", "type": "string"})
    new = record({"name": "a", "type": "int"})
    result = diff(text(old), text(new))
    full = result.verdict(Level.FULL)
    assert not full.compatible and all(f.fixes for f in full.findings)
    fixed = apply_edits(json.dumps(new, indent=2), full.findings[0].fixes[0].edits)
    assert diff(text(old), fixed).verdict(Level.FULL).compatible


def test_gate_findings_carry_fixes_and_a_cached_row_keeps_them(tmp_path):
    from schemacli.contracts.evolution.verdicts import VerdictCache

    store = tmp_path / "schemas"
    subject = store / "subjects" / "s-value"
    subject.mkdir(parents=True)
    (subject / "v1.avsc").write_text(text(record({"name": "a", "type": "int"})))
    (subject / "v2.avsc").write_text(
        text(record({"name": "a", "type": "int"}, {"name": "b", "type": "int"}))
    )
    cache_dir = tmp_path / "cache"
    rows = []
    for _ in range(2):  # cold, then from the cache
        cache = VerdictCache(cache_dir, min_cost=0)
        report = gate(
            FileTree(store, display_root="schemas"), SubjectLevels(Level.BACKWARD), verdicts=cache
        )
        rows.append(report.findings)
    assert rows[0] == rows[1]
    (finding,) = rows[1]
    assert finding.fixes[0].applicability is SAFE
    assert finding.fixes[0].title.startswith("Give field 'b' the default 0")


def test_edits_keep_the_layout_outside_the_edited_span(tmp_path):
    layout = (
        '{"type": "record", "name": "R",\n'
        '   "fields": [ {"name": "a", "type": "int"},\n'
        '               {"name": "b",   "type": "string"} ] }\n'
    )
    history = [load_schema_text(text(record({"name": "a", "type": "int"})), "v1", version=1)]
    candidate = load_schema_text(layout, "new.avsc")
    fixed = fix_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    assert fixed.report.compatible
    (edit,) = fixed.applied[0].edits
    assert edit.start == edit.end  # an insertion: every byte of the file is still there
    assert fixed.text[: edit.start] + fixed.text[edit.start + len(edit.text) :] == layout
    assert edit.text.lstrip(", ") == '"default": ""'


def test_a_type_defined_in_a_referenced_file_is_not_edited_here(tmp_path: Path):
    from schemacli.contracts.avro.loader import load_schema_file

    (tmp_path / "E.avsc").write_text(text({"type": "enum", "name": "E", "symbols": ["A"]}))
    (tmp_path / "new.avsc").write_text(text(record({"name": "e", "type": "E"})))
    (tmp_path / "new.references.json").write_text(
        json.dumps([{"name": "E", "subject": "e", "version": 1, "path": "E.avsc"}])
    )
    candidate = load_schema_file(tmp_path / "new.avsc")
    old = record({"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}})
    history = [load_schema_text(text(old), "v1.avsc", version=1)]
    report = check_candidate(candidate, history, subject="s", level=Level.BACKWARD)
    (finding,) = report.findings
    assert [f.applicability for f in finding.fixes] == [DISPLAY]


def test_a_forward_findings_fix_names_the_candidate_file_it_edits():
    old = record({"name": "a", "type": "int"}, {"name": "b", "type": "string"})
    new = record({"name": "a", "type": "int"}, {"name": "c", "type": "int"})
    _, _, report = checked(old, new, Level.FULL)
    by_direction = {("FORWARD" in f.message): f for f in report.findings}
    assert by_direction[True].location.source == "v1.avsc"
    assert {fix.source for fix in by_direction[True].fixes if fix.edits} == {"new.avsc"}
    assert {fix.source for fix in by_direction[False].fixes} == {None}


def test_a_fix_survives_the_gate_cache_encoding_with_its_file():
    from schemacli.contracts.evolution.verdicts import decode_finding, encode_finding

    old = record({"name": "a", "type": "int"}, {"name": "b", "type": "string"})
    new = record({"name": "a", "type": "int"})
    _, _, report = checked(old, new, Level.FORWARD)
    (finding,) = report.findings
    again = decode_finding(json.loads(json.dumps(encode_finding(finding))))
    assert again == finding and again.fixes[0].source == "new.avsc"
