"""`schemacli migrate ...` through typer's CliRunner (no network, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from converters.mapping.reader import load
from schemacli.app import app
from tests.extras import require

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
    assert "try_cast(`total_amount` AS FLOAT) + CAST(0 AS FLOAT)" in r.output
    r = run("migrate", "validate", str(out), "--generate", "4", "-o", "json")
    payload = json.loads(r.stdout)
    assert payload["ok"] and payload["dry_run"]["converted"] == 2
    assert payload["fields"][4]["sql"] == "try_cast(`total_amount` AS FLOAT) + CAST(0 AS FLOAT)"


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
    require("pyspark", "spark")  # the dry run names pyspark's own spark-submit
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


def test_status_of_a_folder_without_converter_state_is_an_input_error(tmp_path: Path):
    r = run("migrate", "status", "--state-dir", str(tmp_path))
    assert r.exit_code == 2 and "no converter state" in r.output


def test_stop_with_a_state_dir_that_does_not_exist_is_an_input_error(tmp_path: Path):
    r = run("migrate", "stop", "--state-dir", str(tmp_path / "typo"))
    assert r.exit_code == 2 and "no converter state" in r.output


def test_stop_when_not_running_exits_0(tmp_path: Path):
    (tmp_path / "deploy.json").write_text(json.dumps({"checkpoint": str(tmp_path / "cp")}))
    r = run("migrate", "stop", "--state-dir", str(tmp_path))
    assert r.exit_code == 0 and "not running" in r.output


def test_stop_with_an_empty_state_dir_is_an_input_error_like_a_missing_one(tmp_path: Path):
    r = run("migrate", "stop", "--state-dir", str(tmp_path))
    assert r.exit_code == 2 and "no converter state" in r.output and "--state-dir" in r.output


def test_plan_from_registry_subjects_embeds_the_schemas(fake, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fake.add("taxi-rides-v2-value", Path(V2).read_text())
    fake.add("taxi-rides-value", Path(V1).read_text())
    out = tmp_path / "m.yaml"
    r = run(
        "migrate",
        "plan",
        "--from",
        "taxi-rides-v2-value",
        "--to",
        "taxi-rides-value:1",
        "--registry",
        fake.url,
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    mapping = load(out)
    assert (mapping.source.subject, mapping.source.topic) == (
        "taxi-rides-v2-value",
        "taxi-rides-v2",
    )
    assert (mapping.target.subject, mapping.target.version) == ("taxi-rides-value", 1)
    assert mapping.target.schema_json["fields"][4]["type"] == "float"
    assert run("migrate", "validate", str(out)).exit_code == 0


def test_deploy_refuses_to_start_when_v1_is_not_registered(fake, tmp_path: Path):
    fake.add("taxi-rides-v2-value", Path(V2).read_text())
    r = run(
        "migrate",
        "deploy",
        str(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"),
        "--bootstrap",
        "localhost:9092",
        "--registry",
        fake.url,
        "--state-dir",
        str(tmp_path / "s"),
    )
    assert r.exit_code == 1
    assert "v1 schema is not registered under subject 'taxi-rides-value'" in r.output
    assert "schemacli register taxi-rides-value" in r.output
    assert not (tmp_path / "s" / "submit.pid").exists()  # spark-submit never ran


def test_plan_from_an_unknown_subject_is_a_registry_error(fake, tmp_path: Path):
    r = run("migrate", "plan", "--from", "nope-value", "--to", V1, "--registry", fake.url)
    assert r.exit_code == 3 and "nope-value" in r.output


def test_plan_with_key_schemas_writes_a_key_section_that_validate_dry_runs(tmp_path: Path):
    v1_key = json.loads((ROOT / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
    v2_key = {**v1_key, "fields": [{"name": "vendorId", "type": "string"}]}
    (tmp_path / "v2-key.avsc").write_text(json.dumps(v2_key))
    out = tmp_path / "m.yaml"
    key_to = str(ROOT / "schemas/subjects/taxi-rides-key/v1.avsc")
    args = ["migrate", "plan", "--from", V2, "--to", V1, "--out", str(out)]
    r = run(*args, "--key-from", str(tmp_path / "v2-key.avsc"), "--key-to", key_to)
    assert r.exit_code == 0, r.output
    assert "planned 1 key rule(s): 1 parse_number" in r.output
    mapping = load(out)
    assert mapping.key.target.subject == "taxi-rides-key" and mapping.key.target.version == 1
    assert mapping.key.source.schema == "v2-key.avsc"
    assert mapping.key.source.subject is None  # --from names no subject: nothing to infer
    key_from = str(tmp_path / "v2-key.avsc")
    args.append("--force")  # the same --out again: replacing it is asked for
    r = run(
        *args, "--source-subject", "taxi-rides-v2-value", "--key-from", key_from, "--key-to", key_to
    )
    assert load(out).key.source.subject == "taxi-rides-v2-key"  # TopicNameStrategy
    r = run(*args, "--key-from", str(tmp_path / "v2-key.avsc"), "--key-to", key_to)
    r = run("migrate", "validate", str(out), "--generate", "6")
    assert r.exit_code == 0, r.output
    assert "key: v2 v2-key.avsc -> v1 taxi-rides-key v1" in r.output
    assert "try_cast(`vendorId` AS INT)" in r.output
    payload = json.loads(run("migrate", "validate", str(out), "-o", "json").stdout)
    assert payload["ok"] and payload["key"]["dry_run"]["total"] == 20


def test_plan_needs_both_key_options(tmp_path: Path):
    r = runner.invoke(app, ["migrate", "plan", "--from", V2, "--to", V1, "--key-from", V2])
    assert r.exit_code == 2 and "--key-from and --key-to go together" in r.output


def test_deploy_refuses_to_start_when_the_v1_key_schema_is_not_registered(fake, tmp_path: Path):
    example = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
    v1_key = json.loads((ROOT / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
    v2_key = {**v1_key, "fields": [{"name": "vendorId", "type": "string"}]}
    text = example.read_text().replace("../../schemas/", str(ROOT / "schemas") + "/")
    text += (
        "key:\n"
        f"  source: {{subject: taxi-rides-v2-key, schema_json: {json.dumps(v2_key)}}}\n"
        f"  target: {{subject: taxi-rides-key, schema_json: {json.dumps(v1_key)}}}\n"
        "  fields:\n    vendorId: {from: vendorId, convert: parse_number}\n"
    )
    (tmp_path / "m.yaml").write_text(text)
    fake.add("taxi-rides-v2-value", Path(V2).read_text())
    fake.add("taxi-rides-value", Path(V1).read_text())
    fake.add("taxi-rides-v2-key", json.dumps(v2_key))
    args = ["--bootstrap", "localhost:9092", "--registry", fake.url]
    r = run(
        "migrate", "deploy", str(tmp_path / "m.yaml"), *args, "--state-dir", str(tmp_path / "s")
    )
    assert r.exit_code == 1, r.output
    assert "v1 key schema is not registered under subject 'taxi-rides-key'" in r.output
    assert "/key/target/subject" in r.output
    assert not (tmp_path / "s" / "submit.pid").exists()  # spark-submit never ran


def test_validate_renders_findings_as_junit_and_github_annotations(tmp_path: Path):
    text = (ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml").read_text()
    bad = tmp_path / "m.yaml"
    base = str(ROOT / "examples/mappings")
    bad.write_text(
        text.replace("convert: parse_number", "convert: narrow").replace(
            "schema: ../../", f"schema: {base}/../../"
        )
    )
    r = run("migrate", "validate", str(bad), "-o", "junit")
    assert r.exit_code == 1 and r.stdout.startswith("<?xml")
    assert "<failure" in r.stdout and "TYPE_MISMATCH" in r.stdout
    r = run("migrate", "validate", str(bad), "-o", "github")
    assert r.exit_code == 1 and "::error file=" in r.stdout and "TYPE_MISMATCH" in r.stdout


def test_validate_junit_of_a_deployable_mapping_has_a_passing_case():
    r = run(
        "migrate",
        "validate",
        str(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"),
        "-o",
        "junit",
    )
    assert r.exit_code == 0 and 'failures="0" errors="0"' in r.stdout


def test_deploy_dry_run_with_a_traversing_topic_creates_no_directory(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml").read_text()
    bad = tmp_path / "m.yaml"
    bad.write_text(text.replace("topic: taxi-rides-v2\n", 'topic: "../../../escaped"\n', 1))
    r = run("migrate", "deploy", str(bad), "-b", "h:1", "--dry-run")
    assert r.exit_code == 2 and "invalid topic name" in r.output
    assert list(tmp_path.iterdir()) == [bad]
