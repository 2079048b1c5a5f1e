"""Declared readers online: the reader schemas from the store, the writer versions from the REAL
registry the stack starts (fixture ``registry``). Fresh subject names per test."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.output_documents import parse

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"


@pytest.fixture
def subject() -> str:
    return f"readers-{uuid.uuid4().hex[:10]}-value"


@pytest.fixture
def cli(registry, tmp_path, monkeypatch):
    url = registry if isinstance(registry, str) else registry.url
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_CONFIG", "SCHEMACLI_STORE", "SCHEMACLI_REGISTRY_USER"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "schemas" / "subjects").mkdir(parents=True)
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')

    def run(*args):
        return CliRunner().invoke(app, [str(a) for a in args], env={"SCHEMACLI_REGISTRY_URL": url})

    run.url = url  # type: ignore[attr-defined]
    return run


def without_total(tmp_path: Path) -> Path:
    """v2 without total_amount, which has no default: BACKWARD accepts it (the new schema reads
    the old), a consumer still reading total_amount cannot read it."""
    schema = json.loads(V2.read_text())
    schema["fields"] = [f for f in schema["fields"] if f["name"] != "total_amount"]
    path = tmp_path / "v3.avsc"
    path.write_text(json.dumps(schema, indent=2))
    return path


def test_check_registry_judges_the_candidate_against_the_declared_readers(cli, subject, tmp_path):
    assert cli("register", V1, "--subject", subject).exit_code == 0
    assert cli("register", V2, "--subject", subject).exit_code == 0
    added = cli("readers", "add", "billing", V2, "-s", subject, "-g", "billing-1", "--owner", "t")
    assert added.exit_code == 0, added.output
    candidate = without_total(tmp_path)
    result = cli("check", candidate, "-s", subject, "--registry", cli.url, "-o", "json")
    assert result.exit_code == 1, result.output
    assert "-> agree" in result.stderr  # the registry itself says compatible at BACKWARD
    findings = json.loads(result.stdout)["cases"][0]["findings"]
    ours = [f for f in findings if f.get("reader")]
    assert ours and ours[0]["reader"]["consumer"] == "billing"
    assert ours[0]["kind"] == "READER_FIELD_MISSING_DEFAULT_VALUE"
    assert "Consumer billing (owner t; group(s) billing-1)" in ours[0]["message"]


def test_gate_registry_fails_a_new_version_a_declared_reader_cannot_read(cli, subject, tmp_path):
    assert cli("register", V1, "--subject", subject).exit_code == 0
    store = tmp_path / "schemas" / "subjects" / subject
    store.mkdir()
    shutil.copy(V1, store / "v1.avsc")
    shutil.copy(without_total(tmp_path), store / "v2.avsc")
    before = cli("gate", "--registry", cli.url, "-q")
    assert before.exit_code == 0, before.output  # at the registry's level it passes
    cli("readers", "add", "billing", V1, "-s", subject, "-g", "billing-1")
    result = cli("gate", "--registry", cli.url, "-q", "--register", "-o", "json")
    assert result.exit_code == 1, result.output
    messages = [f["message"] for c in json.loads(result.stdout)["cases"] for f in c["findings"]]
    assert any("Consumer billing" in m and f"cannot read {subject} v2" in m for m in messages)
    # all or nothing: the refused version was not registered
    listed = cli("subjects", "show", subject, "-o", "json")
    assert [v["version"] for v in json.loads(listed.stdout)["versions"]] == [1]


def test_gate_registry_judges_the_registrys_latest_version(cli, subject, tmp_path):
    assert cli("register", V1, "--subject", subject).exit_code == 0
    store = tmp_path / "schemas" / "subjects" / subject
    store.mkdir()
    shutil.copy(V1, store / "v1.avsc")
    needs = json.loads(V1.read_text())
    needs["fields"].append({"name": "zone", "type": "string"})
    reader = tmp_path / "needs-zone.avsc"
    reader.write_text(json.dumps(needs))
    cli("readers", "add", "audit", reader, "-s", subject, "-g", "audit-1")
    result = cli("gate", "--registry", cli.url, "-q")
    assert result.exit_code == 1, result.output
    assert f"cannot read {subject} v1 (registry)" in result.output


def test_readers_only_online_asks_only_the_declared_readers(cli, subject, tmp_path):
    assert cli("register", V1, "--subject", subject).exit_code == 0
    store = tmp_path / "schemas" / "subjects" / subject
    store.mkdir()
    shutil.copy(V1, store / "v1.avsc")
    breaking = json.loads(V1.read_text())
    breaking["fields"].append({"name": "zone", "type": "string"})  # BACKWARD refuses it
    (store / "v2.avsc").write_text(json.dumps(breaking))
    cli("readers", "add", "billing", V1, "-s", subject, "-g", "billing-1")
    assert cli("gate", "--registry", cli.url, "-q").exit_code == 1
    result = cli("gate", "--registry", cli.url, "-q", "--readers-only", "-o", "json")
    assert result.exit_code == 0, result.output
    case = next(c for c in json.loads(result.stdout)["cases"] if c["name"] == subject)
    assert case["level"] == "READERS"
    assert not [f for f in case["findings"] if f["kind"] == "LEVEL_DIFFERS"]


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "github", "sarif", "gitlab"])
def test_readers_list_registry_reads_the_latest_version_from_the_registry(
    cli, subject, tmp_path, fmt
):
    assert cli("register", V1, "--subject", subject).exit_code == 0
    cli("readers", "add", "billing", V1, "-s", subject, "-g", "billing-1")
    result = cli("readers", "list", subject, "--registry", cli.url, "-o", fmt)
    assert result.exit_code == 0, result.output
    if fmt in ("text", "json"):
        assert f"{subject} v1" in result.output
    if fmt != "text":
        parse(fmt, result.stdout)
    assert cli("register", without_total(tmp_path), "--subject", subject).exit_code == 0
    broken = cli("readers", "list", subject, "--registry", cli.url, "-o", fmt)
    assert broken.exit_code == 1
    assert "billing" in broken.output
    if fmt != "text":
        parse(fmt, broken.stdout)
