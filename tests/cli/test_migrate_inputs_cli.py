"""What the migrate and gate commands take in: numbers validated when the flag is parsed, one
--bootstrap rule, every local check before Kafka or the registry is asked, `status --watch -o
json` as one JSON document per line whatever happens, help for every positional argument, and
the new user's first steps (spark-submit missing, gate's messages)."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.commands.options import Bounded

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _deployment(tmp_path: Path) -> Path:
    state = tmp_path / "s"
    state.mkdir()
    (state / "progress.json").write_text(
        '{"totals": {"in": 7, "converted": 5, "dead_letter": 2, "skipped": 0}}'
    )
    return state


@pytest.fixture
def nothing_remote(monkeypatch):
    """Kafka clients and HTTP requests that fail the test if a command makes one."""
    import requests

    class Asked:
        def __init__(self, *args, **kwargs) -> None:
            raise AssertionError("a remote call was made before the local checks failed")

    for module, name in (("confluent_kafka", "Consumer"), ("confluent_kafka", "Producer"),
                         ("confluent_kafka.admin", "AdminClient")):  # fmt: skip
        # without the kafka extra there is no client to ask with anyway
        with contextlib.suppress(ImportError):
            monkeypatch.setattr(__import__(module, fromlist=[name]), name, Asked)
    monkeypatch.setattr(requests.Session, "request", Asked)


# --- numbers ------------------------------------------------------------------------------------


def _number_cases(tmp_path: Path) -> list[tuple[list[object], str]]:
    state = _deployment(tmp_path)
    s = ["--state-dir", state]
    return [
        (["migrate", "status", *s, "--watch", "--every"], "--every"),
        (["migrate", "status", *s, "--watch", "--count"], "--count"),
        (["migrate", "status", *s, "--window"], "--window"),
        (["migrate", "finish", EXAMPLE, *s, "-b", "h:1", "--interval"], "--interval"),
        (["migrate", "finish", EXAMPLE, *s, "-b", "h:1", "--timeout"], "--timeout"),
        (["migrate", "stop", *s, "--timeout"], "--timeout"),
        (["migrate", "replay", *s, "-b", "h:1", "--limit"], "--limit"),
        (["migrate", "validate", EXAMPLE, "--generate"], "--generate"),
        (["migrate", "validate", EXAMPLE, "-b", "h:1", "--sample"], "--sample"),
        (["migrate", "deploy", EXAMPLE, "-b", "h:1", "--dry-run", "--trigger-seconds"],
         "--trigger-seconds"),
        (["migrate", "deploy", EXAMPLE, "-b", "h:1", "--dry-run", "--max-offsets-per-trigger"],
         "--max-offsets-per-trigger"),
    ]  # fmt: skip


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e300", "abc", "1" * 5000])
def test_every_number_flag_refuses_what_is_not_a_finite_number_in_range(
    tmp_path, value, nothing_remote
):
    for args, flag in _number_cases(tmp_path):
        r = run(*args, value)
        assert r.exit_code == 2, (args, r.output)
        assert f"Invalid value for '{flag}'" in r.output and " from " in r.output, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
        assert "Traceback" not in r.output


def test_zero_is_refused_where_the_range_starts_above_it(tmp_path, nothing_remote):
    state = _deployment(tmp_path)
    r = run("migrate", "status", "--state-dir", state, "--watch", "--every", "0")
    assert r.exit_code == 2
    assert "--every" in r.output and "0.2 to 3600" in r.output


def test_a_number_in_range_is_taken(tmp_path):
    state = _deployment(tmp_path)
    r = run("migrate", "status", "--state-dir", state, "-w", "--every", "0.2", "--count", "1")
    assert r.exit_code == 0, r.output


def _commands(command: click.Command, path: tuple[str, ...] = ()):
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, command


# Number options that are no duration, interval, window, limit, count or timeout.
NOT_BOUNDED = {
    "--seed",  # any whole number seeds the generator
    "--reader-version",  # a schema version number
}


def test_every_number_option_of_the_cli_is_a_bounded_number():
    from schemacli.commands.registry_options import PANEL

    unbounded = []
    for path, command in _commands(typer.main.get_command(app)):
        for param in command.params:
            if not isinstance(param, click.Option) or isinstance(param.type, Bounded):
                continue
            if getattr(param, "rich_help_panel", None) == PANEL:
                continue  # --timeout, --retries: RegistrySettings checks flag, env and file alike
            numeric = isinstance(param.type, click.types.IntParamType | click.types.FloatParamType)
            if numeric and not set(param.opts) & NOT_BOUNDED:
                unbounded.append(f"{' '.join(path)} {param.opts[0]}")
    assert unbounded == []


# --- bootstrap ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", " ", "no-port", "h:99999", "user:pw@h:9092"])
def test_every_migrate_command_refuses_a_bad_bootstrap_the_same_way(tmp_path, bad, nothing_remote):
    state = _deployment(tmp_path)
    s = ["--state-dir", state]
    for args in (
        ["migrate", "status", *s],
        ["migrate", "finish", EXAMPLE, *s],
        ["migrate", "replay", *s],
        ["migrate", "validate", EXAMPLE, "--sample", "1"],
        ["migrate", "deploy", EXAMPLE, "--dry-run"],
    ):
        r = run(*args, "-b", bad)
        assert r.exit_code == 2, (args, r.output)
        assert "Invalid value for '--bootstrap'" in r.output, r.output
        assert "pw" not in r.output.replace("put SASL", "")


# --- local checks before remote calls -----------------------------------------------------------


def test_finish_without_a_deployment_is_an_input_error_before_kafka(tmp_path, nothing_remote):
    r = run("migrate", "finish", EXAMPLE, "--state-dir", tmp_path / "none", "-b", "h:1")
    assert r.exit_code == 2 and "no converter state" in r.output


def test_status_without_a_deployment_is_an_input_error_before_kafka(tmp_path, nothing_remote):
    r = run("migrate", "status", EXAMPLE, "--state-dir", tmp_path / "none", "-b", "h:1")
    assert r.exit_code == 2 and "no converter state" in r.output


def test_finish_with_an_unreadable_properties_file_stops_before_kafka(tmp_path, nothing_remote):
    state = _deployment(tmp_path)
    r = run("migrate", "finish", EXAMPLE, "--state-dir", state, "-b", "h:1",
            "--kafka-properties", tmp_path / "missing.properties")  # fmt: skip
    assert r.exit_code == 2, r.output


def test_finish_with_a_corrupt_state_file_stops_before_kafka(tmp_path, nothing_remote):
    state = _deployment(tmp_path)
    (state / "migration.json").write_text('{"state": "sideways", "since": {}}')
    r = run("migrate", "finish", EXAMPLE, "--state-dir", state, "-b", "h:1")
    assert r.exit_code == 2 and "migration.json" in r.output


def _subject_only_mapping(tmp_path: Path) -> Path:
    """The example mapping with its v2 side naming only a subject: its schema comes from the
    registry."""
    text = EXAMPLE.read_text().replace(
        "  schema: ../../schemas/migration/taxi-ride-v2-breaking.avsc\n", ""
    )
    text = text.replace("../../schemas/", f"{ROOT}/schemas/")
    mapping = tmp_path / "m.yaml"
    mapping.write_text(text)
    return mapping


def test_replay_without_a_deployment_stops_before_the_registry_and_kafka(tmp_path, nothing_remote):
    mapping = _subject_only_mapping(tmp_path)
    r = run("migrate", "replay", mapping, "--state-dir", tmp_path / "none", "-b", "h:1",
            "--registry", "http://registry.invalid:8081")  # fmt: skip
    assert r.exit_code == 2 and "no converter state" in r.output


def test_deploy_with_a_missing_properties_file_stops_before_the_registry(tmp_path, nothing_remote):
    mapping = _subject_only_mapping(tmp_path)
    r = run("migrate", "deploy", mapping, "-b", "h:1", "--state-dir", tmp_path / "s",
            "--registry", "http://registry.invalid:8081",
            "--kafka-properties", tmp_path / "missing.properties")  # fmt: skip
    assert r.exit_code == 2 and "missing.properties" in r.output
    assert not (tmp_path / "s").exists()


def test_validate_sample_without_bootstrap_stops_before_the_registry(tmp_path, nothing_remote):
    mapping = _subject_only_mapping(tmp_path)
    r = run("migrate", "validate", mapping, "--sample", "5",
            "--registry", "http://registry.invalid:8081")  # fmt: skip
    assert r.exit_code == 2 and "--bootstrap" in r.output


# --- status --watch -o json: one document per line ----------------------------------------------


def _json_lines(stdout: str) -> list[dict]:
    lines = stdout.split("\n")
    assert lines[-1] == "", "stdout ends with a newline"
    docs = [json.loads(line) for line in lines[:-1]]  # each line alone is one JSON document
    assert all("\n" not in line and line.isascii() for line in lines)
    return docs


def test_watch_json_reports_a_missing_deployment_as_one_line(tmp_path):
    r = run("migrate", "status", "--state-dir", tmp_path / "none", "-w", "--count", "2",
            "-o", "json")  # fmt: skip
    assert r.exit_code == 2
    (doc,) = _json_lines(r.stdout)
    assert doc["error"]["exit_code"] == 2 and "no converter state" in doc["error"]["message"]


@pytest.mark.parametrize("every", ["nan", "inf", "-1", "1e300"])
@pytest.mark.parametrize("watch", ["--watch", "-w"])
def test_watch_json_refuses_a_bad_number_as_one_line(tmp_path, every, watch):
    r = run("migrate", "status", "--state-dir", tmp_path, watch, "--every", every, "-o", "json")
    assert r.exit_code == 2
    (doc,) = _json_lines(r.stdout)
    assert doc["error"]["type"] == "UsageError" and "--every" in doc["error"]["message"]


def test_watch_json_reports_a_corrupt_state_file_as_one_line(tmp_path):
    state = _deployment(tmp_path)
    (state / "progress.json").write_text('{"totals": {"in": "many\\nlines"}}')
    r = run("migrate", "status", "--state-dir", state, "-w", "--count", "2", "-o", "json")
    assert r.exit_code == 2
    (doc,) = _json_lines(r.stdout)
    assert doc["error"]["location"]["pointer"] == "/totals/in"


def test_watch_json_keeps_watching_while_kafka_is_out_of_reach(tmp_path, monkeypatch):
    import converters.ops.status
    from schemacli.errors import NetworkError

    state = _deployment(tmp_path)
    real, calls = converters.ops.status.status, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise NetworkError("cannot reach Kafka at h:1: down\nfor now", hint="Check it.")
        return real(*args, **kwargs)

    monkeypatch.setattr(converters.ops.status, "status", flaky)
    r = run("migrate", "status", "--state-dir", state, "-w", "--every", "0.2", "--count", "3",
            "-o", "json")  # fmt: skip
    assert r.exit_code == 0, r.output
    first, error, third = _json_lines(r.stdout)
    assert first["totals"]["converted"] == 5 and third["totals"]["converted"] == 5
    assert error["error"]["exit_code"] == 3 and "down\nfor now" in error["error"]["message"]


def test_watch_json_that_ends_on_an_error_exits_with_its_code(tmp_path, monkeypatch):
    import converters.ops.status
    from schemacli.errors import NetworkError

    def down(*args, **kwargs):
        raise NetworkError("cannot reach Kafka at h:1")

    monkeypatch.setattr(converters.ops.status, "status", down)
    state = _deployment(tmp_path)
    r = run("migrate", "status", "--state-dir", state, "-w", "--every", "0.2", "--count", "1",
            "-o", "json")  # fmt: skip
    assert r.exit_code == 3
    (doc,) = _json_lines(r.stdout)
    assert doc["error"]["type"] == "NetworkError"


# --- help for every positional argument ---------------------------------------------------------


def test_every_positional_argument_has_help():
    missing = [
        f"{' '.join(path)} {param.name}"
        for path, command in _commands(typer.main.get_command(app))
        for param in command.params
        if isinstance(param, click.Argument) and not getattr(param, "help", None)
    ]
    assert missing == []


def test_help_shows_the_arguments_help():
    r = run("migrate", "validate", "--help")
    assert "The mapping file" in r.stdout


# --- a new user's first steps -------------------------------------------------------------------


def test_deploy_without_spark_says_how_to_install_it(tmp_path, monkeypatch):
    import sys

    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    r = run("migrate", "deploy", EXAMPLE, "-b", "h:1", "--state-dir", tmp_path / "s",
            "--dry-run")  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "spark-submit not found" in r.output
    assert "scripts/bootstrap --all" in r.output and "schemacli[spark]" in r.output


def test_gate_names_the_store_once(project):
    r = run("gate")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("gate schemas\n") and "gate: checking" not in r.stderr


def test_gate_shows_an_absolute_store_as_given(project, tmp_path_factory, monkeypatch):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    store = project / "schemas"
    r = run("gate", "--store", store)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"gate {store}\n")


def test_commands_that_need_an_extra_say_which_and_how_to_install_it(tmp_path, monkeypatch):
    import sys

    state = _deployment(tmp_path)
    props = tmp_path / "kafka.properties"
    props.write_text("security.protocol=SASL_SSL\n")
    s = ["--state-dir", state]
    cases = [
        (["migrate", "status", *s, "-b", "h:1"], ["kafka"]),
        (["migrate", "status", *s, "--kafka-properties", props], ["kafka"]),
        (["migrate", "finish", EXAMPLE, *s, "-b", "h:1"], ["kafka"]),
        (["migrate", "replay", EXAMPLE, *s, "-b", "h:1"], ["kafka", "spark"]),
        (["migrate", "validate", EXAMPLE, "--spark"], ["spark"]),
        (["migrate", "validate", EXAMPLE, "--sample", "3", "-b", "h:1"], ["kafka"]),
        (["migrate", "deploy", EXAMPLE, "-b", "h:1", "--dry-run", "--state-dir", tmp_path / "d",
          "--kafka-properties", props], ["kafka"]),
    ]  # fmt: skip
    for module in ("confluent_kafka", "pyspark"):
        monkeypatch.setitem(sys.modules, module, None)  # the base install: neither extra
    for args, extras in cases:
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert f"needs the {' and '.join(extras)} extra" in r.output, r.output
        assert "scripts/bootstrap --all" in r.output, r.output
        assert f"pip install 'schemacli[{','.join(extras)}]'" in r.output, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception


@pytest.mark.parametrize(
    "rule, words",
    [
        ({"name": "whole", "kind": "TRANSFORM", "mode": "WRITE", "type": "CEL",
          "expr": "message"}, "a CEL TRANSFORM"),
        ({"name": "rounded", "kind": "TRANSFORM", "mode": "WRITE", "type": "CEL_FIELD",
          "tags": [], "expr": "value"}, "a TRANSFORM of float"),
    ],
    ids=["a CEL transform", "a transform of a float"],
)  # fmt: skip
def test_deploy_stops_with_exit_2_naming_a_v1_rule_spark_cannot_run_before_writing(
    fake, tmp_path, rule, words
):
    """v1's WRITE rules are compiled before the state directory is written: one with no Spark
    SQL form stops ``migrate deploy`` (exit 2, the rule named), as it would stop the job."""
    fake.keeps_rule_sets = True
    v1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
    fake.add("taxi-rides-value", v1, ruleSet={"domainRules": [rule]})
    fake.add("taxi-rides-v2-value", (ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc")
             .read_text())  # fmt: skip
    mapping = _subject_only_mapping(tmp_path)
    r = run("migrate", "deploy", mapping, "-b", "h:1", "--state-dir", tmp_path / "s",
            "--registry", fake.url)  # fmt: skip
    assert r.exit_code == 2, r.output
    assert f"rule {rule['name']}" in r.output and words in r.output, r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "s").exists()
