"""Two config files in one folder: schemacli.toml wins, and the user is told which one."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.config import load_settings
from schemacli.errors import SchemacliWarning


@pytest.fixture
def both(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEMACLI_CONFIG", raising=False)
    monkeypatch.delenv("SCHEMACLI_STORE", raising=False)
    (tmp_path / "schemas/subjects").mkdir(parents=True)
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.schemacli]\nstore = "elsewhere"\n')
    return tmp_path


def test_schemacli_toml_wins_and_a_warning_names_both_files(both):
    with pytest.warns(SchemacliWarning, match="using schemacli.toml") as caught:
        settings = load_settings(cwd=both, env={})
    assert settings.store == both / "schemas"
    assert "pyproject.toml" in str(caught[0].message)


def test_the_cli_prints_the_warning_once_on_stderr(both):
    result = CliRunner().invoke(app, ["gate", "-o", "json"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and "both configure schemacli" in lines[0]
    assert "warning" not in result.stdout  # machine output stays clean


def test_a_pyproject_without_our_table_is_no_conflict(both):
    (both / "pyproject.toml").write_text('[project]\nname = "x"\n')
    result = CliRunner().invoke(app, ["gate"])
    assert "warning:" not in result.stderr
