"""`schemacli init` scaffolds a store and its configuration, and never overwrites anything."""

from __future__ import annotations

import json
import tomllib

import pytest
import yaml
from typer.testing import CliRunner

from schemacli.app import app

runner = CliRunner()


@pytest.fixture
def empty(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL", "SCHEMACLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(*args: str):
    return runner.invoke(app, list(args))


def test_init_writes_a_store_and_schemacli_toml_that_the_gate_accepts(empty):
    result = run("init")
    assert result.exit_code == 0, result.output
    assert (empty / "schemas/subjects").is_dir()
    config = tomllib.loads((empty / "schemacli.toml").read_text())
    assert config == {"store": "schemas", "default-level": "BACKWARD"}
    assert run("gate").exit_code == 0


def test_init_adds_the_table_to_an_existing_pyproject_and_keeps_the_rest(empty):
    (empty / "pyproject.toml").write_text('[project]\nname = "orders"')
    result = run("init", "--level", "full_transitive", "--store", "contracts")
    assert result.exit_code == 0, result.output
    pyproject = tomllib.loads((empty / "pyproject.toml").read_text())
    assert pyproject["project"] == {"name": "orders"}
    assert pyproject["tool"]["schemacli"] == {
        "store": "contracts",
        "default-level": "FULL_TRANSITIVE",
    }
    assert not (empty / "schemacli.toml").exists()


def test_init_writes_ci_glue_on_request(empty):
    result = run("init", "--pre-commit", "--github", "--install", "schemacli==0.1.0")
    assert result.exit_code == 0, result.output
    hooks = yaml.safe_load((empty / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert [h["id"] for h in hooks] == ["schemacli-validate", "schemacli-gate"]
    workflow = yaml.safe_load((empty / ".github/workflows/schemacli.yml").read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    assert {"run": "pip install schemacli==0.1.0"} in steps
    assert any(
        "schemacli gate --against git:origin/${{ github.base_ref }}" in s.get("run", "")
        for s in steps
    )


def test_init_refuses_to_overwrite_and_writes_nothing_at_all(empty):
    (empty / "schemacli.toml").write_text('store = "mine"\n')
    (empty / ".pre-commit-config.yaml").write_text("repos: []\n")
    result = run("init", "--pre-commit", "--github")
    assert result.exit_code == 2
    assert "schemacli.toml exists" in result.output
    assert (
        ".pre-commit-config.yaml exists" in result.output and "nothing was written" in result.output
    )
    assert (empty / "schemacli.toml").read_text() == 'store = "mine"\n'
    assert not (empty / "schemas").exists() and not (empty / ".github").exists()


def test_init_refuses_a_second_schemacli_table(empty):
    (empty / "pyproject.toml").write_text('[tool.schemacli]\nstore = "s"\n')
    result = run("init")
    assert result.exit_code == 2 and "already has a [tool.schemacli] table" in result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--level", "SIDEWAYS"], "SIDEWAYS"),
        (["--store", "../elsewhere"], "inside the project"),
        (["no-such-folder"], "is not a folder"),
    ],
)
def test_bad_init_arguments_are_usage_errors(empty, args, says):
    result = run("init", *args)
    assert result.exit_code == 2 and says in result.output
    assert list(empty.iterdir()) == []


def test_init_reports_what_it_wrote_as_json(empty):
    result = run("init", "-o", "json")
    written = json.loads(result.stdout)["written"]
    assert [w["path"] for w in written] == ["schemas/subjects/.gitkeep", "schemacli.toml"]
