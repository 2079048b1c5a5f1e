"""register, pull, subjects and config against an in-process fake registry, through the CLI."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from registry_fake import free_port

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "schemas" / "subjects"
V1 = STORE / "taxi-rides-value" / "v1.avsc"
V2 = STORE / "taxi-rides-value" / "v2.avsc"
BREAKING = ROOT / "schemas" / "migration" / "taxi-ride-v2-breaking.avsc"


@pytest.fixture
def cli(fake_registry_cli):
    return fake_registry_cli


# ---- register ------------------------------------------------------------------------------


def test_first_registration_creates_version_1(cli, fake):
    result = cli("register", V1, "--subject", "taxi-rides-value")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "taxi-rides-value: registered as version 1, id 1"
    assert list(fake.subjects) == ["taxi-rides-value"]


def test_registering_the_same_schema_again_says_already_registered(cli, fake):
    cli("register", V1, "--subject", "taxi-rides-value")
    result = cli("register", V1, "--subject", "taxi-rides-value")
    assert result.exit_code == 0
    assert "already registered as version 1, id 1" in result.stdout
    assert len(fake.subjects["taxi-rides-value"]) == 1


def test_register_json_output_is_machine_readable(cli):
    result = cli("register", V1, "--subject", "taxi-rides-value", "--output", "json")
    data = json.loads(result.stdout)
    assert data["outcome"] == "registered"
    assert (data["id"], data["version"], data["subject"]) == (1, 1, "taxi-rides-value")


def test_dry_run_registers_nothing(cli, fake):
    cli("register", V1, "--subject", "taxi-rides-value")
    result = cli("register", V2, "--subject", "taxi-rides-value", "--dry-run")
    assert result.exit_code == 0
    assert "would be registered" in result.stdout
    assert len(fake.subjects["taxi-rides-value"]) == 1


def test_incompatible_registration_exits_1_with_the_registry_reasons(cli, fake):
    cli("register", V1, "--subject", "taxi-rides-value")
    fake.compat_answer = {"is_compatible": False, "messages": ["TYPE_MISMATCH at /fields/4/type"]}
    result = cli("register", BREAKING, "--subject", "taxi-rides-value")
    assert result.exit_code == 1
    assert "incompatible" in result.stderr
    assert "TYPE_MISMATCH at /fields/4/type" in result.stderr
    assert "hint:" in result.stderr
    assert "Traceback" not in result.output


def test_invalid_schema_file_is_refused_locally_with_line_and_column(cli, fake, tmp_path):
    bad = tmp_path / "bad.avsc"
    bad.write_text(
        '{"type": "record", "name": "R", "fields": [\n  {"name": "a", "type": "intt"}\n]}'
    )
    result = cli("register", bad, "--subject", "r-value")
    assert result.exit_code == 2
    assert f"{bad}:2:" in result.stderr
    assert fake.requests == []  # nothing sent


def test_bad_reference_flag_is_a_usage_error(cli):
    result = cli("register", V1, "--subject", "s", "--reference", "Money")
    assert result.exit_code == 2
    assert "NAME=SUBJECT:VERSION" in result.stderr


def test_registry_down_exits_3_with_a_hint(cli):
    url = f"http://127.0.0.1:{free_port()}"
    result = cli(
        "register", V1, "--subject", "s", "--retries", "0", env={"SCHEMACLI_REGISTRY_URL": url}
    )
    assert result.exit_code == 3
    assert f"Cannot connect to the registry at {url}" in result.stderr
    assert "hint:" in result.stderr


def test_registry_error_as_json_keeps_status_and_code(cli, fake):
    fake.fail_next(500, {"error_code": 50001, "message": "Error in the backend data store"})
    result = cli("register", V1, "--subject", "s", "--output", "json", "--retries", "0")
    assert result.exit_code == 3
    error = json.loads(result.stdout)["error"]
    assert (error["status"], error["error_code"]) == (500, 50001)
    assert error["server_message"] == "Error in the backend data store"


# ---- subjects ------------------------------------------------------------------------------


def test_subjects_list_and_show(cli, fake):
    fake.add("taxi-rides-value", V1.read_text())
    fake.add("taxi-rides-value", V2.read_text())
    fake.add("taxi-rides-key", (STORE / "taxi-rides-key" / "v1.avsc").read_text())
    listed = cli("subjects", "list")
    assert listed.stdout.split() == ["taxi-rides-key", "taxi-rides-value"]
    shown = cli("subjects", "show", "taxi-rides-value", "--output", "json")
    data = json.loads(shown.stdout)
    assert data["versions"] == [{"version": 1, "id": 2}, {"version": 2, "id": 3}] or data[
        "versions"
    ] == [{"version": 1, "id": 1}, {"version": 2, "id": 2}]
    assert data["level"] == "BACKWARD" and data["level_source"] == "global"
    assert json.loads(data["schema"]["text"])["fields"][-1]["name"] == "store_and_fwd_flag"


def test_subjects_show_unknown_subject_exits_3_naming_it(cli):
    result = cli("subjects", "show", "ghost-value")
    assert result.exit_code == 3
    assert "Subject 'ghost-value' not found" in result.stderr


def test_subjects_delete_requires_yes(cli, fake):
    fake.add("taxi-rides-value", V1.read_text())
    refused = cli("subjects", "delete", "taxi-rides-value")
    assert refused.exit_code == 2
    assert "--yes" in refused.stderr
    assert cli("subjects", "list").stdout.split() == ["taxi-rides-value"]


def test_subjects_delete_soft_then_permanent(cli, fake):
    fake.add("taxi-rides-value", V1.read_text())
    soft = cli("subjects", "delete", "taxi-rides-value", "--yes")
    assert soft.exit_code == 0 and "soft-deleted version(s) 1" in soft.stdout
    assert cli("subjects", "list", "--deleted").stdout.split() == ["taxi-rides-value"]
    hard = cli("subjects", "delete", "taxi-rides-value", "--yes", "--permanent")
    assert hard.exit_code == 0 and "permanently deleted" in hard.stdout
    assert fake.subjects == {}


def test_permanent_delete_of_a_live_subject_soft_deletes_first(cli, fake):
    fake.add("taxi-rides-value", V1.read_text())
    result = cli("subjects", "delete", "taxi-rides-value", "--yes", "--permanent")
    assert result.exit_code == 0, result.output
    assert fake.subjects == {}


# ---- config --------------------------------------------------------------------------------


def test_config_set_get_delete(cli, fake):
    assert cli("config", "get").stdout.strip() == "global: BACKWARD"
    assert (
        cli("config", "set", "taxi-rides-value", "full").stdout.strip() == "taxi-rides-value: FULL"
    )
    assert cli("config", "get", "taxi-rides-value").stdout.strip() == "taxi-rides-value: FULL"
    assert cli("config", "delete", "taxi-rides-value").exit_code == 0
    inherited = cli("config", "get", "taxi-rides-value", "--output", "json")
    assert json.loads(inherited.stdout) | {"registry": None} == {
        "registry": None,
        "subject": "taxi-rides-value",
        "level": "BACKWARD",
        "source": "global",
    }
    assert cli("config", "set", "NONE").stdout.strip() == "global: NONE"


def test_config_set_unknown_level_is_a_usage_error_listing_levels(cli, fake):
    result = cli("config", "set", "taxi-rides-value", "SIDEWAYS")
    assert result.exit_code == 2
    assert "FULL_TRANSITIVE" in result.stderr
    assert "error: LEVEL: 'SIDEWAYS' is not valid" in result.stderr  # the argument, not --LEVEL
    assert [r.method for r in fake.requests] == []


# ---- pull ----------------------------------------------------------------------------------


def test_pull_writes_versions_levels_and_a_snapshot_record(cli, fake, tmp_path):
    fake.add("taxi-rides-value", V1.read_text())
    fake.add("taxi-rides-value", V2.read_text())
    fake.configs["taxi-rides-value"] = "FULL"
    result = cli("pull", "--store", tmp_path / "schemas")
    assert result.exit_code == 0, result.output
    subject_dir = tmp_path / "schemas" / "subjects" / "taxi-rides-value"
    assert sorted(p.name for p in subject_dir.iterdir()) == ["registry.json", "v1.avsc", "v2.avsc"]
    assert json.loads((subject_dir / "v2.avsc").read_text()) == json.loads(V2.read_text())
    config = tomllib.loads((tmp_path / "schemacli.toml").read_text())
    assert config["subjects"]["taxi-rides-value"]["level"] == "FULL"
    again = cli("pull", "--store", tmp_path / "schemas")
    assert "0 written, 2 unchanged" in again.stdout


def test_pull_closes_registry_gaps_and_records_the_mapping(cli, fake, tmp_path):
    fake.add("taxi-rides-value", V1.read_text())
    fake.add("taxi-rides-value", V2.read_text())
    fake.subjects["taxi-rides-value"][0]["deleted"] = True
    cli("pull", "taxi-rides-value", "--store", tmp_path / "schemas")
    subject_dir = tmp_path / "schemas" / "subjects" / "taxi-rides-value"
    assert json.loads((subject_dir / "v1.avsc").read_text()) == json.loads(V2.read_text())
    meta = json.loads((subject_dir / "registry.json").read_text())
    assert [(v["store_version"], v["registry_version"]) for v in meta["versions"]] == [(1, 2)]


def test_pull_keeps_a_differing_local_version_and_exits_1(cli, fake, tmp_path):
    fake.add("taxi-rides-value", V1.read_text())
    local = tmp_path / "schemas" / "subjects" / "taxi-rides-value" / "v1.avsc"
    local.parent.mkdir(parents=True)
    local.write_text(V2.read_text())
    result = cli("pull", "--store", tmp_path / "schemas", "--output", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["conflicts"] == [str(local)]
    assert json.loads(local.read_text()) == json.loads(V2.read_text())
    forced = cli("pull", "--store", tmp_path / "schemas", "--force")
    assert forced.exit_code == 0
    assert json.loads(local.read_text()) == json.loads(V1.read_text())


def test_pull_updates_levels_in_pyproject_without_losing_anything(cli, fake, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.schemacli]\nstore = "schemas"  # the store\n\n'
        '[tool.schemacli.subjects."taxi-rides-value"]\nlevel = "NONE"\n'
    )
    fake.add("taxi-rides-value", V1.read_text())
    fake.add("taxi-rides-key", (STORE / "taxi-rides-key" / "v1.avsc").read_text())
    fake.configs["taxi-rides-key"] = "FULL_TRANSITIVE"
    result = cli("pull")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "pyproject.toml").read_text()
    assert "# the store" in text
    table = tomllib.loads(text)["tool"]["schemacli"]
    assert table["subjects"] == {
        "taxi-rides-value": {"level": "BACKWARD"},
        "taxi-rides-key": {"level": "FULL_TRANSITIVE"},
    }
    assert (tmp_path / "schemas" / "subjects" / "taxi-rides-key" / "v1.avsc").is_file()


def test_pull_unknown_subject_exits_3(cli, tmp_path):
    result = cli("pull", "ghost-value", "--store", tmp_path / "schemas")
    assert result.exit_code == 3
    assert "ghost-value" in result.stderr


def test_pull_writes_references_so_the_offline_gate_resolves_them(cli, fake, tmp_path):
    money = {
        "type": "record",
        "name": "Money",
        "namespace": "com.acme",
        "fields": [{"name": "cents", "type": "long"}],
    }
    ride = {
        "type": "record",
        "name": "Ride",
        "namespace": "com.acme",
        "fields": [{"name": "fare", "type": "com.acme.Money"}],
    }
    fake.add("money-value", money)
    fake.add(
        "ride-value",
        ride,
        references=[{"name": "com.acme.Money", "subject": "money-value", "version": 1}],
    )
    result = cli("pull", "--store", tmp_path / "schemas")
    assert result.exit_code == 0, result.output
    sidecar = tmp_path / "schemas/subjects/ride-value/v1.references.json"
    assert json.loads(sidecar.read_text()) == [
        {"name": "com.acme.Money", "subject": "money-value", "version": 1}
    ]
    gate = cli("gate", "--store", tmp_path / "schemas")
    assert gate.exit_code == 0, gate.output
