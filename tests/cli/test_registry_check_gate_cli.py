"""`check --registry` and `gate --registry [--register]` through the CLI (in-process fake)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from registry_fake import free_port
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_CONFIG", "SCHEMACLI_REGISTRY_URL", "SCHEMACLI_STORE"):
        monkeypatch.delenv(name, raising=False)
    shutil.copytree(ROOT / "schemas" / "subjects", tmp_path / "schemas" / "subjects")
    return tmp_path


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_check_registry_shows_both_verdicts(fake, project):
    fake.add("taxi-rides-value", V1.read_text())
    result = run("check", V2, "--subject", "taxi-rides-value", "--registry", fake.url)
    assert result.exit_code == 0, result.output
    assert "says compatible; local engine says compatible -> agree" in result.stderr


def test_check_registry_incompatible_exits_1_with_both_reasons(fake, project):
    fake.add("taxi-rides-value", V1.read_text())
    fake.compat_answer = {"is_compatible": False, "messages": ["reader type STRING vs FLOAT"]}
    result = run(
        "check", BREAKING, "--subject", "taxi-rides-value", "--registry", fake.url, "-o", "json"
    )
    assert result.exit_code == 1
    kinds = {f["kind"] for case in json.loads(result.stdout)["cases"] for f in case["findings"]}
    assert {"TYPE_MISMATCH", "REGISTRY_INCOMPATIBLE"} <= kinds


def test_check_registry_incompatible_renders_as_text_for_people(fake, project):
    fake.add("taxi-rides-value", V1.read_text())
    fake.compat_answer = {"is_compatible": False, "messages": ["reader type STRING vs FLOAT"]}
    result = run("check", BREAKING, "--subject", "taxi-rides-value", "--registry", fake.url)
    assert result.exit_code == 1
    assert "REGISTRY_INCOMPATIBLE" in result.stdout
    assert "reader type STRING vs FLOAT" in result.stdout
    assert "-> agree" in result.stderr


def test_check_registry_disagreement_is_loud_and_fails(fake, project):
    fake.add("taxi-rides-value", V1.read_text())
    result = run("check", BREAKING, "--subject", "taxi-rides-value", "--registry", fake.url)
    assert result.exit_code == 1
    assert "DISAGREE" in result.stderr
    assert "REGISTRY_DISAGREEMENT" in result.stdout


def test_check_registry_down_exits_3(project):
    url = f"http://127.0.0.1:{free_port()}"
    result = run("check", V2, "--subject", "taxi-rides-value", "--registry", url)
    assert result.exit_code == 3
    assert "Cannot connect" in result.stderr


def test_gate_register_registers_all_new_versions(fake, project):
    fake.add("taxi-rides-value", V1.read_text())
    result = run("gate", "--registry", fake.url, "--register")
    assert result.exit_code == 0, result.output
    assert "taxi-rides-value: registered as version 2" in result.stderr
    assert sorted(fake.subjects) == ["taxi-rides-key", "taxi-rides-value"]
    again = run("gate", "--registry", fake.url, "--register")
    assert again.exit_code == 0 and "0 version(s) registered" in again.stderr


def test_gate_register_registers_nothing_if_one_check_fails(fake, project):
    fake.add("taxi-rides-value", V1.read_text())
    shutil.copy(BREAKING, project / "schemas/subjects/taxi-rides-value/v3.avsc")
    result = run("gate", "--registry", fake.url, "--register")
    assert result.exit_code == 1
    assert "nothing was registered" in result.stderr
    assert list(fake.subjects) == ["taxi-rides-value"]
    assert len(fake.subjects["taxi-rides-value"]) == 1


def test_gate_registry_and_against_together_is_a_usage_error(fake, project):
    result = run("gate", "--registry", fake.url, "--against", "git:HEAD")
    assert result.exit_code == 2


def test_gate_registry_with_github_output_writes_the_step_summary_too(fake, project, monkeypatch):
    fake.add("taxi-rides-value", V1.read_text())
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run("gate", "--registry", fake.url, "-o", "github")
    assert result.exit_code == 0, result.output
    assert summary.read_text().startswith("### schemacli gate: ")
    assert "| taxi-rides-value |" in summary.read_text()
