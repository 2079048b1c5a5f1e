"""Edits of a schema file (schemacli.contracts.fixes.edits): only the edited span changes, the
result re-parses, and new members take their siblings' style."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemacli.contracts.findings import Finding, Kind
from schemacli.contracts.fixes.edits import (
    Applicability,
    EditError,
    Fix,
    JsonEditor,
    TextEdit,
    apply_checked,
    apply_edits,
    apply_fixes,
    unified_diff,
)
from schemacli.contracts.jsontext.source import parse_text

PRETTY = """{
  "type": "record",
  "name": "Order",
  "fields": [
    {"name": "id", "type": "string"},
    {
      "name": "tip",
      "type": ["null", "double"]
    }
  ]
}
"""

ONE_LINE = '{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}'


def edit(text: str, make) -> str:
    """Apply the one edit ``make(editor)`` returns; check the result re-parses and that the text
    before and after the edited span is byte for byte the original's."""
    document = parse_text(text, "x.avsc")
    change = make(JsonEditor(document))
    assert isinstance(change, TextEdit)
    after = apply_edits(text, [change])
    parse_text(after, "x.avsc")
    assert after[: change.start] == text[: change.start]
    assert after[len(after) - (len(text) - change.end) :] == text[change.end :]
    return after


def test_adding_a_member_to_a_pretty_printed_object_follows_its_siblings_indentation():
    after = edit(PRETTY, lambda e: e.set_member("/fields/1", "default", None))
    assert '      "type": ["null", "double"],\n      "default": null\n    }' in after


def test_adding_a_member_to_a_one_line_object_stays_on_the_line():
    after = edit(ONE_LINE, lambda e: e.set_member("/fields/0", "doc", "the id"))
    assert after == ONE_LINE.replace('"string"}', '"string","doc":"the id"}')


def test_adding_a_member_after_a_single_member_keeps_the_opening_spacing():
    after = edit('{"a": 1}', lambda e: e.set_member("", "b", [1, 2]))
    assert after == '{"a": 1, "b": [1, 2]}'


def test_setting_an_existing_member_replaces_only_its_value():
    after = edit(PRETTY, lambda e: e.set_member("", "name", "Order2"))
    assert after == PRETTY.replace('"Order"', '"Order2"')


@pytest.mark.parametrize("unit", ["    ", "\t"])
def test_a_new_object_value_is_laid_out_in_the_files_indent_unit(unit):
    text = PRETTY.replace("  ", unit)
    after = edit(text, lambda e: e.set_member("", "doc", {"a": 1}))
    assert f'\n{unit}"doc": {{\n{unit}{unit}"a": 1\n{unit}}}\n}}' in after


def test_crlf_line_breaks_are_kept_in_the_new_member():
    text = PRETTY.replace("\n", "\r\n")
    after = edit(text, lambda e: e.set_member("/fields/1", "default", None))
    assert '"double"],\r\n      "default": null\r\n' in after
    assert "\n" not in after.replace("\r\n", "")


def test_unicode_before_the_edit_keeps_columns_in_characters():
    text = '{"doc": "größe ✓", "name": "A"}'
    document = parse_text(text, "x.avsc")
    change = JsonEditor(document).set_member("", "aliases", ["ß"])
    assert change.start_pos == (1, len(text))  # before the closing brace, in characters
    after = apply_edits(text, [change])
    assert json.loads(after)["aliases"] == ["ß"]
    assert '"ß"' in after  # not \u escaped


def test_nested_members_are_reached_by_pointer():
    text = '{"type": {"type": "array", "items": {"type": "map", "values": "int"}}}'
    after = edit(text, lambda e: e.replace("/type/items/values", "long"))
    assert after == text.replace('"int"', '"long"')


def test_comments_outside_the_span_survive():
    text = '{\n  // the id\n  "name": "A", /* keep */\n  "type": "fixed",\n  "size": 4\n}\n'
    after = edit(text, lambda e: e.set_member("", "namespace", "com.acme"))
    assert "// the id" in after and "/* keep */" in after
    assert parse_text(after, "x").value["namespace"] == "com.acme"


def test_a_member_is_added_to_an_empty_object_and_an_element_to_an_empty_array():
    assert edit("{}", lambda e: e.set_member("", "a", 1)) == '{"a": 1}'
    assert edit('{"s": []}', lambda e: e.insert_element("/s", 0, "X")) == '{"s": ["X"]}'
    pretty_empty = '{\n  "s": {\n  }\n}'
    after = edit(pretty_empty, lambda e: e.set_member("/s", "a", 1))
    assert after == '{\n  "s": {\n    "a": 1\n  }\n}'


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("a", '{"b": 2, "c": 3}'),  # first
        ("b", '{"a": 1, "c": 3}'),  # middle
        ("c", '{"a": 1, "b": 2}'),  # last
    ],
)
def test_removing_a_member_removes_its_comma(key, expected):
    assert edit('{"a": 1, "b": 2, "c": 3}', lambda e: e.remove_member("", key)) == expected


def test_removing_the_only_member_leaves_an_empty_object():
    assert edit('{"a": 1}', lambda e: e.remove_member("", "a")) == "{}"


def test_removing_a_member_of_a_pretty_object_removes_its_line():
    after = edit(PRETTY, lambda e: e.remove_member("", "name"))
    assert after == PRETTY.replace('  "name": "Order",\n', "")


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, '["X", "a", "b"]'),
        (1, '["a", "X", "b"]'),
        (2, '["a", "b", "X"]'),
        (9, '["a", "b", "X"]'),
    ],
)
def test_inserting_an_element_at_each_place(index, expected):
    assert edit('["a", "b"]', lambda e: e.insert_element("", index, "X")) == expected


def test_inserting_an_element_into_a_pretty_array_takes_a_line_of_its_own():
    after = edit(PRETTY, lambda e: e.insert_element("/fields", 1, {"name": "n", "type": "int"}))
    assert '"string"},\n    {"name": "n", "type": "int"},\n    {\n      "name": "tip"' in after


def test_renaming_a_key_keeps_its_value_and_place():
    after = edit(PRETTY, lambda e: e.rename_key("/fields/0", "name", "nom"))
    assert after == PRETTY.replace('{"name": "id"', '{"nom": "id"')


def test_a_missing_pointer_or_the_wrong_container_is_an_edit_error():
    editor = JsonEditor(parse_text(PRETTY, "x"))
    with pytest.raises(EditError, match="no value"):
        editor.span("/fields/7")
    with pytest.raises(EditError, match="not an object"):
        editor.set_member("/fields", "a", 1)
    with pytest.raises(EditError, match="no member"):
        editor.remove_member("", "absent")


def test_the_span_of_a_value_and_its_positions():
    editor = JsonEditor(parse_text(PRETTY, "x"))
    start, end = editor.span("/fields/1/type")
    assert PRETTY[start:end] == '["null", "double"]'
    change = editor.replace("/fields/1/type", "double")
    assert change.start_pos == (8, 15) and change.end_pos == (8, 33)


def test_overlapping_edits_are_refused_and_insertions_at_one_point_apply_in_order():
    text = "abcdef"
    a = TextEdit(1, 3, "X", (1, 2), (1, 4))
    b = TextEdit(2, 4, "Y", (1, 3), (1, 5))
    with pytest.raises(EditError, match="overlap"):
        apply_edits(text, [a, b])
    first = TextEdit(3, 3, "1", (1, 4), (1, 4))
    second = TextEdit(3, 3, "2", (1, 4), (1, 4))
    assert apply_edits(text, [first, second]) == "abc12def"


def test_apply_fixes_takes_safe_ones_and_skips_unsafe_display_and_overlapping():
    text = '{"a": 1}'
    editor = JsonEditor(parse_text(text, "x"))
    safe = Fix("Set a", Applicability.SAFE, (editor.replace("/a", 2),))
    clash = Fix("Set a again", Applicability.SAFE, (editor.replace("/a", 3),))
    unsafe = Fix("Add b", Applicability.UNSAFE, (editor.set_member("", "b", 0),))
    advice = Fix("Think about it", Applicability.DISPLAY)
    after, applied, skipped = apply_fixes(text, [safe, clash, unsafe, advice])
    assert after == '{"a": 2}' and applied == [safe] and skipped == [clash, unsafe, advice]
    after, applied, _ = apply_fixes(text, [safe, unsafe], unsafe=True)
    assert after == '{"a": 2, "b": 0}' and applied == [safe, unsafe]


def test_two_members_added_to_one_object_both_land():
    text = PRETTY
    editor = JsonEditor(parse_text(text, "x"))
    fixes = [
        Fix("doc", Applicability.SAFE, (editor.set_member("", "doc", "d"),)),
        Fix("ns", Applicability.SAFE, (editor.set_member("", "namespace", "n"),)),
    ]
    after, applied, _ = apply_fixes(text, fixes)
    assert len(applied) == 2
    assert list(json.loads(after))[-2:] == ["doc", "namespace"]


def test_unified_diff_names_the_file_and_marks_a_missing_final_line_break():
    assert unified_diff("x.avsc", "a\n", "a\n") == ""
    diff = unified_diff("x.avsc", '{"a": 1}', '{"a": 2}')
    assert diff.startswith("--- a/x.avsc\n+++ b/x.avsc\n")
    assert '-{"a": 1}\n\\ No newline at end of file\n+{"a": 2}\n' in diff


def test_a_findings_fixes_do_not_change_its_hash():
    plain = Finding(kind=Kind.INVALID_DEFAULT, message="m")
    fixed = Finding(
        kind=Kind.INVALID_DEFAULT, message="m", fixes=(Fix("t", Applicability.DISPLAY),)
    )
    assert hash(plain) == hash(fixed) and plain != fixed


def test_apply_fixes_skips_exactly_the_fixes_a_pairwise_comparison_would():
    import random

    rng = random.Random(28)
    text = "x" * 200
    for _ in range(200):
        fixes = []
        for _ in range(rng.randint(1, 12)):
            edits = []
            for _ in range(rng.randint(1, 3)):
                start = rng.randint(0, 200)
                end = min(200, start + rng.choice([0, 0, 1, 3, 10]))
                edits.append(TextEdit(start, end, "y", (1, start + 1), (1, end + 1)))
            fixes.append(Fix("f", Applicability.SAFE, tuple(edits)))
        taken: list[TextEdit] = []
        expected = []
        for fix in fixes:
            pairs = [(a, b) for a in fix.edits for b in taken]
            pairs += [(a, b) for i, a in enumerate(fix.edits) for b in fix.edits[i + 1 :]]
            if not any(a.start < b.end and b.start < a.end for a, b in pairs):
                taken.extend(fix.edits)
                expected.append(fix)
        _, applied, _ = apply_fixes(text, fixes)
        assert applied == expected


RECORD = {"type": "record", "name": "X", "fields": [{"name": "q", "type": "int"}]}


def test_a_replaced_type_stays_on_the_line_of_a_one_line_file():
    text = ONE_LINE + "\n"  # a line break at the end does not make it a multi-line file
    after = edit(text, lambda e: e.replace("/fields/0/type", RECORD))
    assert after.count("\n") == 1
    assert json.loads(after)["fields"][0]["type"] == RECORD


def test_a_replaced_type_in_a_tab_indented_file_is_indented_with_tabs():
    text = json.dumps(json.loads(PRETTY), indent="\t") + "\n"
    after = edit(text, lambda e: e.replace("/fields/1/type", RECORD))
    new_lines = [line for line in after.splitlines() if line not in text.splitlines()]
    assert new_lines and all(not line.startswith(" ") for line in new_lines)
    assert any(line.startswith("\t\t\t\t") for line in new_lines)


def test_apply_checked_drops_the_fix_the_check_refuses_and_applies_the_others():
    document = parse_text(PRETTY, "x.avsc")
    editor = JsonEditor(document)
    fixes = [
        Fix(f"doc {n}", Applicability.SAFE, (editor.set_member(f"/fields/{n}", "doc", f"d{n}"),))
        for n in (0, 1)
    ] + [Fix("bad", Applicability.SAFE, (editor.replace("/name", "not a name"),))]

    def refusal(text: str) -> str | None:
        return "invalid name" if "not a name" in text else None

    text, applied, dropped = apply_checked(PRETTY, fixes, refusal)
    assert [f.title for f in applied] == ["doc 0", "doc 1"]
    assert [(d.fix.title, d.reason) for d in dropped] == [("bad", "invalid name")]
    assert '"doc": "d0"' in text and '"doc": "d1"' in text and "not a name" not in text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_the_editors_indented_json_is_the_text_json_writes(value):
    # the editor lays containers out itself (json's indented encoder runs in Python)
    from schemacli.contracts.fixes.edits import _indented

    assert _indented(value) == json.dumps(
        value, ensure_ascii=False, indent=4, separators=(",", ": ")
    )
