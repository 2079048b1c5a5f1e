"""Every migrate command answers `-o json` (plan, deploy, stop as well as validate and status),
and the migration window's state file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.extras import require

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
V2 = "schemas/migration/taxi-ride-v2-breaking.avsc"
V1 = "schemas/subjects/taxi-rides-value/v1.avsc"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_plan_as_json_carries_the_mapping_and_the_rule_counts(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run("migrate", "plan", "--from", V2, "--to", V1, "-o", "json")
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)
    assert plan["out"] is None
    assert plan["mapping"]["fields"]["total_amount"]["convert"] == "parse_number"
    assert plan["value"]["rules"] == len(plan["mapping"]["fields"])
    assert plan["value"]["unresolved"] == []


def test_plan_as_json_with_out_writes_the_yaml_and_says_where(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "m.yaml"
    r = run("migrate", "plan", "--from", V2, "--to", V1, "--out", out, "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["out"] == str(out) and out.read_text().startswith("#")


def test_deploy_dry_run_as_json_lists_the_command_and_credential_names(tmp_path):
    require("pyspark", "spark")  # the dry run names pyspark's own spark-submit
    r = run(
        "migrate", "deploy", EXAMPLE, "-b", "localhost:9092", "--registry",
        "http://bob:pw@localhost:8081", "--state-dir", tmp_path / "s", "--dry-run", "-o", "json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    done = json.loads(r.stdout)
    assert done["dry_run"] is True and done["pid"] is None
    assert any(arg.endswith("converters/job.py") for arg in done["command"])
    assert done["credential_variables"] == [
        "SCHEMACLI_REGISTRY_PASSWORD",
        "SCHEMACLI_REGISTRY_USER",
    ]
    assert "pw" not in json.dumps(done["command"])


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_dry_run_with_a_secret_conf_names_its_file_never_its_value(tmp_path, fmt):
    require("pyspark", "spark")
    r = run(
        "migrate", "deploy", EXAMPLE, "-b", "localhost:9092", "--registry",
        "http://localhost:8081", "--state-dir", tmp_path / "s", "--dry-run", "-o", fmt,
        "--conf", "spark.hadoop.fs.s3a.secret.key=s3cr3t-v4lue", "--conf", "spark.executor.cores=1",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "s3cr3t-v4lue" not in r.output and "--properties-file" in r.output
    assert "spark.executor.cores=1" in r.output  # other confs stay on the command line
    if fmt == "json":
        command = json.loads(r.stdout)["command"]
        assert command[command.index("--properties-file") + 1].endswith("s/spark-secrets.conf")
    assert not (tmp_path / "s").exists()  # a dry run writes nothing


def test_stop_as_json_says_not_running(tmp_path):
    state = tmp_path / "s"
    state.mkdir()
    (state / "progress.json").write_text('{"totals": {"in": 1}}')
    r = run("migrate", "stop", "--state-dir", state, "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {
        "state_dir": str(state), "pid": None, "how": "not running", "seconds": 0.0
    }  # fmt: skip


def test_status_shows_the_migration_window_state_with_its_times(tmp_path):
    from converters.ops.window import advance

    state = tmp_path / "s"
    state.mkdir()
    (state / "progress.json").write_text('{"totals": {"in": 3, "converted": 3}}')
    advance(state, "running", planned_at=1_700_000_000.0)
    r = run("migrate", "status", "--state-dir", state, "-o", "json")
    assert r.exit_code == 0, r.output
    window = json.loads(r.stdout)["window"]
    assert window["state"] == "running" and window["since"]["planned"] == 1_700_000_000.0
    text = run("migrate", "status", "--state-dir", state).stdout
    assert "migration: running (planned 2023-11-14 22:13:20 UTC, running " in text


def test_a_corrupt_migration_state_file_is_an_input_error_naming_it(tmp_path):
    state = tmp_path / "s"
    state.mkdir()
    (state / "progress.json").write_text("{}")
    (state / "migration.json").write_text('{"state": "sideways", "since": {}}')
    r = run("migrate", "status", "--state-dir", state)
    assert r.exit_code == 2 and "migration.json" in r.output and "corrupt" in r.output


def _deployment(tmp_path):
    state = tmp_path / "s"
    state.mkdir()
    (state / "progress.json").write_text(
        '{"totals": {"in": 7, "converted": 5, "dead_letter": 2, "skipped": 0}, '
        '"input_rows_per_second": 12.0, "processed_rows_per_second": 11.0}'
    )
    return state


def test_watch_redraws_until_its_count_one_block_per_refresh(tmp_path):
    state = _deployment(tmp_path)
    r = run("migrate", "status", "--state-dir", state, "--watch", "--every", "0.2", "--count", "2")
    assert r.exit_code == 0, r.output
    assert r.stdout.count("--- ") == 2 and r.stdout.count("converted 5, dead-lettered 2") == 2


def test_watch_as_json_is_one_document_per_line(tmp_path):
    state = _deployment(tmp_path)
    r = run("migrate", "status", "--state-dir", state, "-w", "--every", "0.2", "--count", "3",
            "-o", "json")  # fmt: skip
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and all(json.loads(x)["totals"]["converted"] == 5 for x in lines)


def test_the_dashboard_shows_rates_lag_counts_and_state(tmp_path):
    from rich.console import Console

    from converters.ops.status import status
    from converters.ops.window import advance
    from schemacli.output.migrate import status_dashboard

    state = _deployment(tmp_path)
    advance(state, "running")
    console = Console(record=True, width=120)
    console.print(status_dashboard(status(state, topic=None, bootstrap=None), state))
    screen = console.export_text()
    assert "in 12 msg/s · out 11 msg/s · converted 5 · dead-lettered 2" in screen
    assert "migration running" in screen and "lag" in screen


def test_plan_and_validate_take_types_defined_in_another_file(tmp_path, monkeypatch):
    # Since named types resolve from any file (the name index), a side may use a type its own
    # file does not define: the converter gets the schema with that type inlined.
    monkeypatch.chdir(tmp_path)
    place = {"type": "record", "name": "Place", "namespace": "geo",
             "fields": [{"name": "zone", "type": "int"}]}  # fmt: skip
    (tmp_path / "place.avsc").write_text(json.dumps(place))
    for name, amount in (("v2.avsc", "string"), ("v1.avsc", "float")):
        ride = {
            "type": "record",
            "name": "Ride",
            "namespace": "taxi",
            "fields": [{"name": "pickup", "type": "geo.Place"}, {"name": "amount", "type": amount}],
        }
        (tmp_path / name).write_text(json.dumps(ride))
    planned = run("migrate", "plan", "--from", "v2.avsc", "--to", "v1.avsc", "--out", "m.yaml")
    assert planned.exit_code == 0, planned.output
    checked = run("migrate", "validate", "m.yaml", "-o", "json")
    assert checked.exit_code in (0, 1), checked.output  # an answer, never a crash
    assert checked.exception is None or isinstance(checked.exception, SystemExit)
    assert json.loads(checked.stdout)["fields"]
