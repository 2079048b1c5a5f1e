"""The settings file module: where a key is written, edits that keep the file's formatting, and
errors that name the file and line:col."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from schemacli.errors import ConfigError
from schemacli.tomlfile import (
    TomlEditError,
    TomlError,
    add_table,
    key_positions,
    parse,
    read,
    set_value,
    settings_path,
)

PYPROJECT = """\
# a comment with [brackets] and key = "value"
[project]
name = "x"  # store = "not ours"
description = \"\"\"
[tool.schemacli]
store = "inside a string"
\"\"\"
tags = ["a]", { store = "in an array" }, [1,
  2], # a comment inside an array
]

[tool.schemacli]
store = "schemas"
  'default-level' = "FULL"
cache.dir = "x"
subjects = { "orders-value" = { level = "NONE" }, other.level = "FULL" }

[tool.schemacli.registry]
url = "http://r:8081"
"timeout" = 0
when = 1979-05-27 07:32:00Z
"""


def test_a_keys_line_and_column_are_found_in_headers_dotted_keys_and_inline_tables():
    positions = key_positions(PYPROJECT)
    assert positions[("tool", "schemacli")] == (12, 7)  # the header, not the string above
    assert positions[("tool", "schemacli", "store")] == (13, 1)
    assert positions[("tool", "schemacli", "default-level")] == (14, 3)  # quoted, indented
    assert positions[("tool", "schemacli", "cache", "dir")] == (15, 7)  # a dotted key's part
    assert positions[("tool", "schemacli", "subjects", "orders-value", "level")] == (16, 33)
    assert positions[("tool", "schemacli", "subjects", "other", "level")] == (16, 57)
    assert positions[("tool", "schemacli", "registry")] == (18, 17)
    assert positions[("tool", "schemacli", "registry", "timeout")] == (20, 1)
    assert positions[("tool", "schemacli", "registry", "when")] == (21, 1)


def test_keys_inside_strings_comments_and_arrays_are_not_keys():
    positions = key_positions(PYPROJECT)
    assert ("project", "store") not in positions
    assert ("project", "tags", "store") not in positions
    assert positions[("project", "description")] == (4, 1)


def test_a_key_path_is_where_it_is_first_written():
    text = "[a.b]\nx = 1\n[a]\ny = 2\n"
    assert key_positions(text)[("a",)] == (1, 2)


def test_settings_path_puts_tool_schemacli_in_front_only_in_a_pyproject():
    assert settings_path(Path("pyproject.toml"), "registry") == ("tool", "schemacli", "registry")
    assert settings_path(Path("schemacli.toml"), "registry") == ("registry",)


def test_a_read_settings_file_locates_keys_of_our_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT, encoding="utf-8")
    file = read(path)
    assert file.settings()["registry"]["timeout"] == 0
    location = file.settings_location("registry", "timeout")
    assert (location.source, location.line) == (str(path), 20)
    assert file.settings_location("no-such-key").line is None


def test_bad_toml_is_an_error_naming_the_file_line_and_column(tmp_path):
    path = tmp_path / "schemacli.toml"
    path.write_text('store = "schemas"\ndefault-level = \n', encoding="utf-8")
    with pytest.raises(TomlError) as caught:
        read(path)
    location = caught.value.location
    assert (location.source, location.line, location.column) == (str(path), 2, 17)
    assert caught.value.message.startswith("invalid TOML: ")
    assert isinstance(caught.value, ConfigError)


def test_toml_nested_too_deeply_is_an_error_naming_the_file():
    with pytest.raises(TomlError) as caught:
        parse("x = " + "[" * 100_000, "deep.toml")
    assert caught.value.reason is None and caught.value.location.source == "deep.toml"


def test_setting_a_value_keeps_comments_indentation_and_the_rest_of_the_file():
    text = '# top\n[subjects."orders-value"]\n  level = "FULL"  # agreed\nother = 1\n'
    edited = set_value(text, ("subjects", "orders-value", "level"), "NONE")
    assert edited == '# top\n[subjects."orders-value"]\n  level = "NONE"  # agreed\nother = 1\n'


def test_setting_a_value_adds_the_missing_table_inside_ours_with_a_quoted_name():
    text = '[tool.schemacli]\nstore = "s"  # keep\n\n[tool.black]\nline-length = 100\n'
    edited = set_value(text, ("tool", "schemacli", "subjects", "orders-value", "level"), "FULL")
    assert edited == (
        '[tool.schemacli]\nstore = "s"  # keep\n\n'
        '[tool.schemacli.subjects."orders-value"]\nlevel = "FULL"\n\n'
        "[tool.black]\nline-length = 100\n"
    )


def test_setting_a_value_under_an_inline_table_is_refused():
    text = 'subjects = { "orders-value" = { level = "NONE" } }\n'
    with pytest.raises(TomlEditError):
        set_value(text, ("subjects", "orders-value", "level"), "FULL")


def test_setting_a_value_under_a_key_that_is_not_a_table_is_refused():
    with pytest.raises(TomlEditError):
        set_value("subjects = 5\n", ("subjects", "orders-value", "level"), "FULL")


def test_adding_a_table_keeps_the_file_and_follows_an_inline_parent():
    text = '[project]\nname = "x"  # keep\n'
    added = add_table(text, ("tool", "schemacli"), {"store": "schemas"})
    assert added.startswith(text)
    assert tomllib.loads(added)["tool"]["schemacli"] == {"store": "schemas"}
    inline = add_table("tool = { black = { x = 1 } }\n", ("tool", "schemacli"), {"store": "s"})
    assert tomllib.loads(inline)["tool"] == {"black": {"x": 1}, "schemacli": {"store": "s"}}
    assert inline.count("\n") == 1  # still one inline line


def test_the_settings_engine_imports_neither_config_nor_the_registry():
    root = Path(__file__).resolve().parents[2] / "schemacli"
    for name in ("tomlfile.py", "origin.py"):
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert not {
            m for m in imported if m and m.startswith(("schemacli.config", "schemacli.registry"))
        }


def test_a_table_added_after_a_last_line_without_newline_is_set_apart_by_a_blank_line():
    edited = set_value('store = "s"', ("subjects", "orders-value", "level"), "FULL")
    assert edited == 'store = "s"\n\n[subjects."orders-value"]\nlevel = "FULL"\n'
