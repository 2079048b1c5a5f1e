"""`schemacli migrate ...` through typer's CliRunner (no network, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
V2 = str(ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc")
V1 = str(ROOT / "schemas/subjects/taxi-rides-value/v1.avsc")
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_plan_writes_a_mapping_that_validate_accepts(tmp_path: Path):
    out = tmp_path / "m.yaml"
    r = run(
        "migrate",
        "plan",
        "--from",
        V2,
        "--to",
        V1,
        "--source-subject",
        "taxi-rides-v2-value",
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "total_amount: {from: total_amount, convert: parse_number, on_error: fail" in text
    assert "subject: taxi-rides-value" in text and "topic: taxi-rides-v2" in text
    r = run("migrate", "validate", str(out))
    assert r.exit_code == 0, r.output
    assert "ok: the mapping is deployable" in r.output
    assert "try_cast(`total_amount` AS FLOAT)" in r.output


def test_validate_exits_1_naming_each_unresolved_field(tmp_path: Path):
    v1 = json.loads(Path(V1).read_text())
    v1["fields"].append({"name": "zone", "type": "string"})
    (tmp_path / "v1.avsc").write_text(json.dumps(v1))
    out = tmp_path / "m.yaml"
    r = run("migrate", "plan", "--from", V2, "--to", str(tmp_path / "v1.avsc"), "--out", str(out))
    assert r.exit_code == 0 and "unresolved: zone" in r.output
    r = run("migrate", "validate", str(out), "-o", "json")
    assert r.exit_code == 1
    payload = json.loads(r.stdout)
    assert not payload["ok"] and payload["findings"][0]["kind"] == "UNRESOLVED"
    assert payload["findings"][0]["location"]["pointer"] == "/fields/zone"


def test_validate_of_a_broken_mapping_file_exits_2_with_line_and_column(tmp_path: Path):
    bad = tmp_path / "m.yaml"
    bad.write_text(
        "version: 1\nsource: {schema: a.avsc}\ntarget: {schema: b.avsc}\nfields:\n  a: "
        "{convert: nope}\n"
    )
    r = run("migrate", "validate", str(bad))
    assert r.exit_code == 2
    assert f"{bad}:5:" in r.output and "unknown conversion 'nope'" in r.output


def test_deploy_dry_run_prints_the_command_without_credentials(tmp_path: Path):
    r = runner.invoke(
        app,
        [
            "migrate",
            "deploy",
            str(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"),
            "--bootstrap",
            "localhost:9092",
            "--registry",
            "http://bob:pw@localhost:8081",
            "--state-dir",
            str(tmp_path / "s"),
            "--dry-run",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "spark-submit" in r.output and "converters/job.py" in r.output
    assert "pw" not in r.output.replace("SCHEMACLI_REGISTRY_PASSWORD", "")
    assert "credentials passed in the environment: SCHEMACLI_REGISTRY_PASSWORD" in r.output


def test_status_of_an_unknown_deployment_is_an_input_error(tmp_path: Path):
    r = run("migrate", "status", "--state-dir", str(tmp_path / "none"))
    assert r.exit_code == 2 and "no converter state" in r.output


def test_stop_when_not_running_exits_0(tmp_path: Path):
    r = run("migrate", "stop", "--state-dir", str(tmp_path))
    assert r.exit_code == 0 and "not running" in r.output
