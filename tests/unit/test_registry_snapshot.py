"""pull's level writer (edits TOML config text in place, verifies, refuses what it cannot edit)
and its rules for subject names the store can hold."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from schemacli.config import Level
from schemacli.errors import ConfigError, InputError
from schemacli.registry.models import Reference
from schemacli.registry.snapshot import (
    check_subject_names,
    toml_key,
    unstorable_reason,
    write_levels,
)


def test_levels_go_into_a_new_schemacli_toml(tmp_path):
    config = tmp_path / "schemacli.toml"
    changed = write_levels(config, {"orders-value": Level.FULL, "a.b": Level.NONE})
    assert changed == {"a.b": "NONE", "orders-value": "FULL"}
    assert tomllib.loads(config.read_text())["subjects"] == {
        "orders-value": {"level": "FULL"},
        "a.b": {"level": "NONE"},
    }


def test_an_existing_level_is_replaced_and_comments_survive(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.schemacli]\nstore = "schemas"  # keep me\n\n'
        '[tool.schemacli.subjects.orders-value]\n# why FULL\nlevel = "NONE"\n'
    )
    write_levels(config, {"orders-value": Level.FULL})
    text = config.read_text()
    assert "# keep me" in text and "# why FULL" in text
    assert tomllib.loads(text)["tool"]["schemacli"]["subjects"]["orders-value"] == {"level": "FULL"}


def test_nothing_changes_when_the_level_is_already_there(tmp_path):
    config = tmp_path / "schemacli.toml"
    config.write_text('[subjects."orders-value"]\nlevel = "FULL"\n')
    before = config.read_text()
    assert write_levels(config, {"orders-value": Level.FULL}) == {}
    assert config.read_text() == before


def test_a_subject_table_without_level_gets_one(tmp_path):
    config = tmp_path / "schemacli.toml"
    config.write_text('[subjects."orders-value"]\n\n[registry]\nurl = "http://r:8081"\n')
    write_levels(config, {"orders-value": Level.FORWARD})
    parsed = tomllib.loads(config.read_text())
    assert parsed["subjects"]["orders-value"] == {"level": "FORWARD"}
    assert parsed["registry"] == {"url": "http://r:8081"}


def test_inline_subject_tables_are_refused_and_the_file_is_left_alone(tmp_path):
    config = tmp_path / "schemacli.toml"
    original = 'subjects = { "orders-value" = { level = "NONE" } }\n'
    config.write_text(original)
    with pytest.raises(ConfigError) as caught:
        write_levels(config, {"orders-value": Level.FULL})
    assert 'level = "FULL"' in (caught.value.hint or "")
    assert config.read_text() == original


@pytest.mark.parametrize(
    "subject", ["🚀-value", "café-value", 'say "hi"', "back\\slash", "tab\there", "del\x7f"]
)
def test_toml_keys_keep_unicode_and_escape_only_what_toml_requires(subject):
    key = toml_key(subject)
    assert tomllib.loads(f"{key} = 1") == {subject: 1}
    assert "\\ud83d" not in key  # no JSON-style surrogate pair, which TOML refuses


def test_an_emoji_subject_level_is_written_as_valid_toml(tmp_path):
    config = tmp_path / "schemacli.toml"
    write_levels(config, {"🚀-value": Level.FULL})
    text = config.read_text(encoding="utf-8")
    assert '[subjects."🚀-value"]' in text
    assert tomllib.loads(text)["subjects"] == {"🚀-value": {"level": "FULL"}}


def test_a_subject_table_written_with_json_escapes_is_found_and_updated(tmp_path):
    config = tmp_path / "schemacli.toml"
    config.write_text('[subjects."caf\\u00e9-value"]\nlevel = "NONE"\n')  # as older pulls wrote
    write_levels(config, {"café-value": Level.FULL})
    assert tomllib.loads(config.read_text())["subjects"] == {"café-value": {"level": "FULL"}}


@pytest.mark.parametrize(
    "subject",
    [
        "",
        ".",
        "..",
        "a/b",
        "../../x",
        "/abs",
        "a\\b",
        "nul\x00",
        "bell\x07",
        "c1\x85",
        "\ud800",
        "x" * 256,
    ],
)
def test_names_that_cannot_be_one_folder_in_the_store_are_refused(subject):
    assert unstorable_reason(subject) is not None
    with pytest.raises(InputError) as caught:
        check_subject_names([subject], Path("store"), from_registry=True)
    assert repr(subject) in caught.value.message
    assert caught.value.exit_code == 2
    assert "nothing was written" in (caught.value.hint or "")


@pytest.mark.parametrize(
    "subject", ["orders-value", ":.ctx:orders-value", "com.acme.Order", ".hidden", "🚀-value"]
)
def test_ordinary_subject_names_are_storable(subject):
    assert unstorable_reason(subject) is None


def test_names_differing_only_in_case_or_normalisation_are_refused_together():
    with pytest.raises(InputError, match="differ only in case"):
        check_subject_names(["Orders", "orders"], Path("store"), from_registry=True)
    with pytest.raises(InputError, match="differ only in case"):
        check_subject_names(["caf\u00e9", "cafe\u0301"], Path("store"), from_registry=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("com.acme.Money=money-value:3", Reference("com.acme.Money", "money-value", 3)),
        ("M=:.ctx:money-value:1", Reference("M", ":.ctx:money-value", 1)),
    ],
)
def test_reference_flag_parses_name_subject_and_version(text, expected):
    assert Reference.parse(text) == expected


@pytest.mark.parametrize("text", ["Money", "Money=subject", "Money=subject:latest", "=s:1"])
def test_malformed_reference_flags_are_refused(text):
    with pytest.raises(ValueError):
        Reference.parse(text)


def test_updating_a_level_keeps_the_comment_and_indentation_of_its_line(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.schemacli.subjects."orders-value"]\n'
        '  level = "FULL"  # agreed with payments\n'
        "other = 1\n"
    )
    write_levels(config, {"orders-value": Level.FORWARD})
    assert config.read_text().splitlines()[1] == '  level = "FORWARD"  # agreed with payments'
    table = tomllib.loads(config.read_text())["tool"]["schemacli"]["subjects"]["orders-value"]
    assert table == {"level": "FORWARD", "other": 1}
