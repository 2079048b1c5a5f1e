"""JSON loading with positions: every syntax error names file:line:col and says how to fix it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import fastavro
import pytest
from fastavro.repository.base import SchemaRepositoryError

from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.source import load_json
from schemacli.errors import ExitCode, InputError

SYNTAX_ERRORS = [
    # (name, text, line, column, words in the message, words in the hint)
    (
        "trailing_comma_in_array",
        '{"type": "enum", "name": "E",\n "symbols": ["A", "B",]}',
        2,
        22,
        "trailing comma",
        "remove the comma",
    ),
    (
        "trailing_comma_in_object",
        '{"type": "fixed",\n "name": "F",\n "size": 4,\n}',
        3,
        11,
        "trailing comma",
        "remove the comma",
    ),
    ("unquoted_key", '{type: "int"}', 1, 2, "key in double quotes", '"key": value'),
    ("single_quoted_key", "{'type': 'int'}", 1, 2, "single quotes", "double quotes"),
    ("single_quoted_value", "{\"type\": 'int'}", 1, 10, "single quotes", "double quotes"),
    ("bare_type_name", '{"type": int}', 1, 10, "found a word without", "must be quoted"),
    ("truncated_file", '{"type": "record",\n "fields": [', 2, 13, "ends before", "close"),
    ("unterminated_string", '{"type": "rec', 1, 10, "never closed", "closing double quote"),
    ("missing_comma", '{"type": "int"\n "doc": "x"}', 2, 2, "expected ','", "missing comma"),
    ("missing_colon", '{"type" "int"}', 1, 9, "expected ':'", '"key": value'),
    ("not_a_number", '{"type": "double",\n "default": NaN}', 2, 13, "NaN", "no NaN"),
    ("content_after_schema", '"int"\n"long"', 2, 1, "after the end", "exactly one JSON value"),
    ("comment_after_schema", '"int" // the key', 1, 7, "after the end", "exactly one JSON value"),
    ("raw_newline_in_string", '{"doc": "two\nlines"}', 1, 13, "control character", "escape"),
    ("bad_escape", '{"doc": "a\\qb"}', 1, 11, "escape", "valid escapes"),
    ("unclosed_comment", '{"type": "int" /* note }', 1, 16, "never closed", "*/"),
    ("empty_file", "", 1, 1, "empty", "one JSON value"),
    ("whitespace_only_file", "  \n\n", 1, 1, "empty", "one JSON value"),
]


@pytest.mark.parametrize(
    "name,text,line,column,what,how", SYNTAX_ERRORS, ids=[c[0] for c in SYNTAX_ERRORS]
)
def test_json_syntax_error_names_file_line_column_and_fix(
    tmp_path: Path, name: str, text: str, line: int, column: int, what: str, how: str
) -> None:
    path = tmp_path / f"{name}.avsc"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_json(path)
    err = caught.value
    assert err.location is not None
    assert err.location.source == str(path)
    assert (err.location.line, err.location.column) == (line, column)
    assert what in err.message
    assert err.hint is not None and how in err.hint
    assert err.exit_code == ExitCode.INPUT_ERROR


def test_position_of_nested_value_is_its_line_and_column() -> None:
    text = (
        '{\n  "type": "record",\n  "name": "R",\n  "fields": [\n'
        '    {"name": "a", "type": "int"},\n'
        '    {"name": "b", "type": {"type": "array", "items": "long"}}\n  ]\n}\n'
    )
    doc = load_json(text, source="r.avsc")
    assert doc.position("") == (1, 1)
    assert doc.position("/fields") == (4, 13)
    assert doc.position("/fields/0/type") == (5, 27)
    assert doc.position("/fields/1") == (6, 5)
    assert doc.position("/fields/1/type/items") == (6, 54)
    loc = doc.location("/fields/1/type")
    assert (loc.source, loc.pointer, loc.line, loc.column) == ("r.avsc", "/fields/1/type", 6, 27)


def test_position_of_missing_member_falls_back_to_its_object() -> None:
    doc = load_json('{"type": "record",\n "fields": [\n  {"name": "a"}]}')
    assert doc.position("/fields/0/type") == doc.position("/fields/0") == (3, 3)
    assert not doc.pointer_exists("/fields/0/type")


def test_pointer_tokens_with_slash_and_tilde_are_escaped() -> None:
    doc = load_json('{"a/b": {"c~d": 1}}')
    pointer = join_pointer("", "a/b", "c~d")
    assert pointer == "/a~1b/c~0d"
    assert doc.position(pointer) == (1, 17)


def test_escaped_keys_are_decoded_for_pointers() -> None:
    doc = load_json('{"n\\u0061me": "x", "b": [1, 2]}')
    assert doc.position("/name") == (1, 15)
    assert doc.position("/b/1") == (1, 29)


def test_columns_count_characters_not_bytes() -> None:
    doc = load_json('{"doc": "äöü", "type": "int"}')
    assert doc.position("/type") == (1, 24)


def test_comments_are_accepted_like_java_but_warned() -> None:
    doc = load_json('{"type": /* the type */ "int",\n // why\n "doc": "x // not a comment"}')
    assert doc.value == {"type": "int", "doc": "x // not a comment"}
    assert doc.position("/doc") == (3, 9)
    [note] = doc.notes
    assert note.kind == "JSON_COMMENT"
    assert note.kind.severity == "warning"
    assert (note.location.line, note.location.column) == (1, 10)
    assert "fastavro" in note.message and "1 more" in note.message


def test_comment_markers_inside_strings_are_not_comments() -> None:
    doc = load_json('{"doc": "see http://x/*y*/", "type": "int"}')
    assert doc.value["doc"] == "see http://x/*y*/"
    assert doc.notes == ()


def test_duplicate_key_keeps_last_value_like_java_and_warns() -> None:
    doc = load_json('{"type": "fixed", "name": "F",\n "size": 4, "size": 8}')
    assert doc.value["size"] == 8
    [note] = doc.notes
    assert note.kind == "DUPLICATE_KEY"
    assert note.location.pointer == "/size"
    assert (note.location.line, note.location.column) == (2, 13)


def test_duplicate_key_claim_matches_fastavro_keeping_the_last_value(tmp_path: Path) -> None:
    path = tmp_path / "dup.avsc"
    path.write_text('{"type": "fixed", "name": "F", "size": 4, "size": 8}')
    assert fastavro.schema.load_schema(str(path))["size"] == 8


def test_comment_claim_matches_fastavro_and_python_avro_refusing(tmp_path: Path) -> None:
    import avro.schema

    text = '{"type": /* c */ "int"}'
    path = tmp_path / "c.avsc"
    path.write_text(text)
    with pytest.raises(SchemaRepositoryError) as caught:
        fastavro.schema.load_schema(str(path))
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)
    with pytest.raises(Exception, match="(?i)json|parse"):
        avro.schema.parse(text)


def test_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bom.avsc"
    path.write_bytes(b'\xef\xbb\xbf{"type": "int"}')
    assert load_json(path).value == {"type": "int"}


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "latin1.avsc"
    path.write_bytes('{"type": "int",\n "doc": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(InputError) as caught:
        load_json(path)
    assert "UTF-8" in caught.value.message
    assert (caught.value.location.line, caught.value.location.column) == (2, 13)
    assert "UTF-8" in caught.value.hint


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.avro"
    path.write_bytes(b"Obj\x01\x04\x14avro.codec\x08null\x00\x00")
    with pytest.raises(InputError, match="binary"):
        load_json(path)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_utf16_and_utf32_files_are_read_as_java_reads_them_with_a_warning(
    tmp_path: Path, encoding: str
) -> None:
    path = tmp_path / "wide.avsc"
    bom = {"utf-16-be": "\ufeff", "utf-32-be": "\ufeff"}.get(encoding, "")
    path.write_bytes((bom + '"int"').encode(encoding))
    doc = load_json(path)
    assert doc.value == "int"
    assert [n.kind for n in doc.notes] == ["ENCODING_NOT_UTF8"]
    assert encoding[:6].upper() in doc.notes[0].message


def test_missing_file_and_directory_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_json(tmp_path / "nope.avsc")
    with pytest.raises(InputError, match="directory"):
        load_json(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "secret.avsc"
    path.write_text('"int"')
    path.chmod(0)
    try:
        with pytest.raises(InputError, match="permission denied") as caught:
            load_json(path)
        assert "chmod" in caught.value.hint
    finally:
        path.chmod(0o644)


def test_primitive_and_union_documents_parse() -> None:
    assert load_json('"string"').value == "string"
    doc = load_json('["null", {"type": "map", "values": "int"}]')
    assert doc.position("/1/values") == (1, 36)


def test_permission_denied_is_an_input_error_even_when_running_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "locked.avsc"
    path.write_text('"int"')

    import schemacli.textfile

    def refuse(path, flags, *args):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(schemacli.textfile.os, "open", refuse)
    with pytest.raises(InputError, match="permission denied") as caught:
        load_json(path)
    assert caught.value.location.source == str(path)


def _random_json(rnd, depth: int):
    choice = rnd.random()
    if depth <= 0 or choice < 0.3:
        return rnd.choice([None, True, 1, -2.5e3, "s", "a/b~c", 'quote"d', "\u00e4", ""])
    if choice < 0.65:
        keys = ["k", "a/b", "t~", "\u00e9", "x y", ""]
        return {
            rnd.choice(keys) + str(i): _random_json(rnd, depth - 1)
            for i in range(rnd.randint(0, 4))
        }
    return [_random_json(rnd, depth - 1) for _ in range(rnd.randint(0, 4))]


@pytest.mark.parametrize("seed", range(40))
def test_path_lookup_agrees_with_a_full_token_walk(seed: int) -> None:
    import random

    from schemacli.contracts.jsontext.document import _build_index

    rnd = random.Random(seed)
    value = _random_json(rnd, 5)
    text = json.dumps(value, indent=rnd.choice([None, 1, 4]), ensure_ascii=rnd.random() < 0.5)
    doc = load_json(text)
    offsets = _build_index(text).offsets
    assert offsets  # the root at least
    for pointer, offset in offsets.items():
        assert doc.offset(pointer) == offset, pointer
        assert doc.pointer_exists(pointer)
    assert not doc.pointer_exists("/no-such-member/0")


def test_repeated_key_position_is_that_of_the_value_kept() -> None:
    doc = load_json('{"a": {"b": 1}, "a": {"b": 2}}')
    assert doc.value["a"]["b"] == 2
    assert doc.position("/a/b") == (1, 28)


def test_device_is_refused_instead_of_read_forever() -> None:
    with pytest.raises(InputError, match="not a regular file"):
        load_json(Path("/dev/zero"))


@pytest.mark.parametrize(
    "text",
    [
        "ghp_PLANTED0123",
        "root:x:0:0:root:/root:/bin/bash",
        '{"a": 1} ghp_PLANTED_TAIL',
        '{"a" ghp_PLANTED}',
        "{ghp_PLANTED: 1}",
        "[1 ghp_PLANTED]",
        '{"a": 1}\n"ghp_PLANTED"',
        "[1, 2] 12345ghp_PLANTED",
        "€ghp_PLANTED",
    ],
)
def test_an_error_about_text_that_is_not_json_never_quotes_the_text(text: str) -> None:
    with pytest.raises(InputError) as caught:
        load_json(text, source="x.avsc")
    err = caught.value
    shown = f"{err.message} {err.hint}"
    assert "ghp" not in shown and "root:" not in shown and "PLANTED" not in shown
    assert err.location is not None and err.location.line is not None
