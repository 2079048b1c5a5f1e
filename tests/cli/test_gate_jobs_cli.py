"""`schemacli gate --jobs`: subjects checked in worker processes give the serial road's
report byte for byte (every kind of row: compatible, incompatible, invalid, duplicate, layout
problems, references, a subject without versions), errors come back to the parent, Ctrl-C
ends the workers, and the setting's bad values are refused (flag, environment, file)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.bench_gate_scale import wide_subjects, write_wide_version
from schemacli.app import app
from schemacli.config import load_settings
from schemacli.contracts.gate import pool
from schemacli.errors import InputError

pytestmark = pytest.mark.skipif(not pool.forks(), reason="the pool forks (Linux only)")


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def record(name: str, *fields: tuple[str, object]) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": name,
            "fields": [{"name": n, "type": t} for n, t in fields],
        }
    )


@pytest.fixture
def varied(project: Path) -> Path:
    """The example store, 30 generated subjects of 6 versions (shared types by reference and
    by name), and one subject of each problem the gate reports."""
    store = project / "schemas"
    names = wide_subjects(30)
    for s in range(30):
        for v in range(1, 7):
            write_wide_version(store, names, s, v)
    subjects = store / "subjects"
    broken = subjects / "broken-value"
    broken.mkdir()
    (broken / "v1.avsc").write_text(record("B", ("a", "int")))
    (broken / "v2.avsc").write_text('{"type": "record", "name": "B", "fields": [}')
    changed = subjects / "changed-value"
    changed.mkdir()
    (changed / "v1.avsc").write_text(record("C", ("a", "int")))
    (changed / "v2.avsc").write_text(record("C", ("a", "string")))
    (changed / "v3.avsc").write_text(record("C", ("a", "string")))  # a duplicate of v2
    (changed / "V4.avsc").write_text("{}")  # a badly named file
    (subjects / "empty-value").mkdir()
    (project / "schemacli.toml").write_text(
        'store = "schemas"\ndefault-level = "FULL_TRANSITIVE"\n'
    )
    return project


def test_the_report_of_worker_processes_is_the_serial_one_byte_for_byte(varied, monkeypatch):
    monkeypatch.setattr(pool, "MIN_VERSIONS", 1)  # this small store goes to the workers too
    serial = run("gate", "--no-cache", "-q", "-o", "json", "--jobs", "1")
    assert serial.exit_code == 2, serial.output  # the broken subject is an input error
    kinds = {f["kind"] for case in json.loads(serial.stdout)["cases"] for f in case["findings"]}
    assert {"INVALID_SCHEMA", "DUPLICATE_VERSION", "STORE_LAYOUT"} <= kinds
    assert any(k not in {"INVALID_SCHEMA", "DUPLICATE_VERSION", "STORE_LAYOUT"} for k in kinds)
    for jobs in ("2", "3", "7"):
        pooled = run("gate", "--no-cache", "-q", "-o", "json", "--jobs", jobs)
        assert (pooled.exit_code, pooled.stdout) == (serial.exit_code, serial.stdout)
    text = run("gate", "--no-cache", "-q", "--jobs", "1")
    assert run("gate", "--no-cache", "-q", "--jobs", "2").stdout == text.stdout


def test_the_default_is_the_cpus_this_process_may_use(varied, monkeypatch):
    monkeypatch.delenv("SCHEMACLI_JOBS", raising=False)
    assert load_settings().jobs is None
    assert pool.default_jobs() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("SCHEMACLI_JOBS", "3")
    assert load_settings().jobs == 3
    assert load_settings(flags={"jobs": 2}).jobs == 2  # the flag wins


@pytest.mark.parametrize(
    ("args", "env", "toml", "said"),
    [
        (("--jobs", "0"), {}, "", "--jobs: 0 is not valid"),
        (("--jobs", "257"), {}, "", "--jobs: 257 is not valid"),
        (("--jobs", "many"), {}, "", "'many' is not a valid integer"),
        ((), {"SCHEMACLI_JOBS": "two"}, "", "SCHEMACLI_JOBS: 'two' is not valid"),
        ((), {"SCHEMACLI_JOBS": "-1"}, "", "SCHEMACLI_JOBS: '-1' is not valid"),
        ((), {}, "jobs = true\n", "schemacli.toml:2: jobs: True is not valid"),
        ((), {}, "jobs = 0\n", "schemacli.toml:2: jobs: 0 is not valid"),
        ((), {}, "jobs = 1.5\n", "schemacli.toml:2: jobs: 1.5 is not valid"),
    ],
)
def test_a_bad_jobs_setting_is_a_usage_or_config_error(project, args, env, toml, said):
    if toml:
        (project / "schemacli.toml").write_text('store = "schemas"\n' + toml)
    result = run("gate", "--no-cache", "-q", *args, env=env)
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    assert "Traceback" not in result.output


def _refuse(subject: str) -> str:
    if subject == "s7":
        raise InputError(f"{subject} is unreadable", hint="fix it")
    return subject.upper()


def test_worker_results_come_in_the_order_asked_and_an_error_is_raised_in_the_parent():
    subjects = [f"s{i}" for i in range(7)]
    assert list(pool.in_workers(str.upper, subjects * 40, 3)) == [s.upper() for s in subjects] * 40
    with pytest.raises(InputError) as raised:
        list(pool.in_workers(_refuse, [f"s{i}" for i in range(20)], 2))
    assert (raised.value.message, raised.value.hint) == ("s7 is unreadable", "fix it")
    assert multiprocessing.active_children() == []


def _interrupt_the_parent(subject: str) -> str:
    if subject == "s3":
        os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C reaches the parent (workers ignore it)
    return subject


def test_ctrl_c_ends_the_workers_and_reaches_the_parent_once():
    with pytest.raises(KeyboardInterrupt):
        list(pool.in_workers(_interrupt_the_parent, [f"s{i}" for i in range(4)], 2))
    assert multiprocessing.active_children() == []
