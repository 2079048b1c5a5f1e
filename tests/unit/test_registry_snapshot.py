"""pull's level writer: edits TOML config text in place, verifies, refuses what it cannot edit."""

from __future__ import annotations

import tomllib

import pytest

from schemacli.config import Level
from schemacli.errors import ConfigError
from schemacli.registry.models import Reference
from schemacli.registry.snapshot import write_levels


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
