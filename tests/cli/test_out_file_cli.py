"""``--out FILE`` (migrate plan, spark codegen) never replaces a file silently: an existing file
is refused (exit 2, nothing written) unless ``--force``, the refusal comes before any registry
call, and the file is written atomically (temp file + rename)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.folderstate import folder_state

ROOT = Path(__file__).resolve().parents[2]
V2 = "v2.avsc"
V1 = "v1.avsc"
PLAN = ["migrate", "plan", "--from", V2, "--to", V1]
CODEGEN = [
    "spark", "codegen", "--subject", "taxi-rides-value", "--topic", "taxi-rides",
    "--store", "schemas", "--schema-id", "1=1", "--schema-id", "2=2",
]  # fmt: skip
COMMANDS = {"plan": PLAN, "codegen": CODEGEN}
runner = CliRunner()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copy(ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc", tmp_path / V2)
    shutil.copy(ROOT / "schemas/subjects/taxi-rides-value/v1.avsc", tmp_path / V1)
    shutil.copytree(
        ROOT / "schemas/subjects/taxi-rides-value", tmp_path / "schemas/subjects/taxi-rides-value"
    )
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_CONFIG", "SCHEMACLI_REGISTRY_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(*args: str):
    return runner.invoke(app, list(args))


@pytest.mark.parametrize("command", COMMANDS)
def test_an_existing_out_file_is_refused_and_left_as_it_was(folder, command):
    (folder / "out.txt").write_text("mine, hand-edited\n")
    before = folder_state(folder)
    result = run(*COMMANDS[command], "--out", "out.txt")
    assert result.exit_code == 2, result.output
    assert "--out out.txt exists (nothing was written)" in result.output
    assert "hint: Pass --force to replace it" in result.output
    assert folder_state(folder) == before


@pytest.mark.parametrize("command", COMMANDS)
def test_force_replaces_the_out_file_and_keeps_its_mode(folder, command):
    out = folder / "out.txt"
    out.write_text("old\n")
    out.chmod(0o640)
    result = run(*COMMANDS[command], "--out", "out.txt", "--force")
    assert result.exit_code == 0, result.output
    assert out.read_text() != "old\n" and (out.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_a_new_out_file_needs_no_force(folder, command):
    result = run(*COMMANDS[command], "--out", "new/sub/out.txt")
    assert result.exit_code == 0, result.output
    assert (folder / "new/sub/out.txt").read_text()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda root: (root / "out.txt").mkdir(), "is a folder"),
        (lambda root: (root / "dir").write_text(""), "dir is not a folder"),
    ],
    ids=["out-is-a-folder", "parent-is-a-file"],
)
def test_an_out_path_the_file_system_refuses_is_an_input_error(folder, command, make, says):
    make(folder)
    before = folder_state(folder)
    target = "out.txt" if says == "is a folder" else "dir/out.txt"
    for force in ([], ["--force"]):
        result = run(*COMMANDS[command], "--out", target, *force)
        assert result.exit_code == 2, result.output
        assert says in result.output and "nothing was written" in result.output
        assert folder_state(folder) == before


def test_the_refusal_comes_before_any_registry_call(folder):
    """The registry named here does not exist: the refusal must not wait for it."""
    (folder / "m.yaml").write_text("x")
    result = run(
        "migrate", "plan", "--from", "taxi-rides-v2-value", "--to", "taxi-rides-value:1",
        "--registry", "http://127.0.0.1:9", "--out", "m.yaml",
    )  # fmt: skip
    assert result.exit_code == 2 and "m.yaml exists" in result.output


def test_plan_json_with_an_existing_out_is_an_error_document(folder):
    (folder / "m.yaml").write_text("x")
    result = run(*PLAN, "--out", "m.yaml", "-o", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["exit_code"] == 2
    assert (folder / "m.yaml").read_text() == "x"
