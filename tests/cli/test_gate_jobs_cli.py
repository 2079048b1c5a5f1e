"""`schemacli gate --jobs`: subjects checked in worker processes give the serial road's
report byte for byte (every kind of row: compatible, incompatible, invalid, duplicate, layout
problems, references, a subject without versions), errors come back to the parent, Ctrl-C
ends the workers, and the setting's bad values are refused (flag, environment, file)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
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


ROOT = Path(__file__).resolve().parents[2]


def in_fresh_process(*args: str, cwd: Path, env: dict[str, str] | None = None):
    """A fresh interpreter (one thread: the pool forks only from such a process; a pytest
    worker runs others)."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,  # only a hang reaches it
    )


@pytest.fixture
def varied(project: Path) -> Path:
    """The example store, 100 generated subjects of 20 versions (shared types by reference
    and by name: 2,000 versions, so the pool is used), and one subject of each problem the
    gate reports."""
    store = project / "schemas"
    names = wide_subjects(100)
    for s in range(100):
        for v in range(1, 21):
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


def gate_in_fresh_process(project: Path, *args: str):
    return in_fresh_process("-m", "schemacli", "gate", "--no-cache", "-q", *args, cwd=project)


def test_the_report_of_worker_processes_is_the_serial_one_byte_for_byte(varied):
    assert pool.MIN_VERSIONS <= 2000  # this store goes to the workers (in a fresh process)
    serial = gate_in_fresh_process(varied, "-o", "json", "--jobs", "1")
    assert serial.returncode == 2, serial.stderr  # the broken subject is an input error
    kinds = {f["kind"] for case in json.loads(serial.stdout)["cases"] for f in case["findings"]}
    assert {"INVALID_SCHEMA", "DUPLICATE_VERSION", "STORE_LAYOUT"} <= kinds
    assert any(k not in {"INVALID_SCHEMA", "DUPLICATE_VERSION", "STORE_LAYOUT"} for k in kinds)
    for jobs in ("2", "3"):
        pooled = gate_in_fresh_process(varied, "-o", "json", "--jobs", jobs)
        assert (pooled.returncode, pooled.stdout) == (serial.returncode, serial.stdout)
    text = gate_in_fresh_process(varied, "--jobs", "1")
    assert gate_in_fresh_process(varied, "--jobs", "2").stdout == text.stdout


def test_a_process_running_other_threads_checks_in_itself():
    # a fork copies one thread: a lock another holds would stay held in the child for ever
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not pool.forks()
        assert list(pool.in_workers(str.upper, ["a", "b"], 2)) == ["A", "B"]
    finally:
        stop.set()
        other.join()


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
        (("--jobs", "0"), {}, "", "0 is out of range: give a whole number from 1 to 256"),
        (("--jobs", "257"), {}, "", "257 is out of range"),
        (("--jobs", "many"), {}, "", "'many' is not a whole number from 1 to 256"),
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


def _in_order_and_errors_raised_here() -> None:
    assert pool.forks()
    subjects = [f"s{i}" for i in range(7)]
    assert list(pool.in_workers(str.upper, subjects * 40, 3)) == [s.upper() for s in subjects] * 40
    try:
        list(pool.in_workers(_refuse, [f"s{i}" for i in range(20)], 2))
    except InputError as err:
        assert (err.message, err.hint) == ("s7 is unreadable", "fix it")
    else:
        raise AssertionError("the worker's error was not raised")
    assert multiprocessing.active_children() == []


def _interrupt_the_parent(subject: str) -> str:
    if subject == "s3":
        os.kill(os.getppid(), signal.SIGINT)  # Ctrl-C reaches the parent (workers ignore it)
    return subject


def _ctrl_c_ends_the_workers() -> None:
    assert pool.forks()
    try:
        list(pool.in_workers(_interrupt_the_parent, [f"s{i}" for i in range(4)], 2))
    except KeyboardInterrupt:
        assert multiprocessing.active_children() == []
    else:
        raise AssertionError("no KeyboardInterrupt")


@pytest.mark.parametrize("case", ["_in_order_and_errors_raised_here", "_ctrl_c_ends_the_workers"])
def test_workers_give_results_in_order_raise_errors_here_and_end_on_ctrl_c(case):
    ran = in_fresh_process(
        "-c", f"from tests.cli.test_gate_jobs_cli import {case}; {case}()", cwd=ROOT
    )
    assert ran.returncode == 0, ran.stderr
