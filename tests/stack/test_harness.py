"""The stack harness keeps its promises: no orphaned processes, missing components announced.

These tests start plain processes (sh, sleep, python) instead of JVMs: the process-group and
signal handling is the same code the Kafka and registry launchers use.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.stack.common import ComponentUnavailable, spawn, wait_until

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    """Bounded wait for a process to disappear (not a speed assertion)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def read_pid(path: Path, seconds: float = 120) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"no pid written to {path}")


def test_stopping_a_component_also_stops_the_processes_it_started(tmp_path):
    child_file = tmp_path / "child.pid"
    process = spawn(
        "parent",
        ["sh", "-c", f"sleep 300 & echo $! > {child_file}; wait"],
        log=tmp_path / "parent.log",
    )
    child = read_pid(child_file)
    process.stop(timeout=5)
    assert gone_within(process.pid, 120)
    assert gone_within(child, 120)


def test_a_component_that_dies_during_start_fails_with_its_log_tail(tmp_path):
    process = spawn(
        "crasher",
        ["sh", "-c", "echo 'port 1 already in use'; exit 7"],
        log=tmp_path / "crasher.log",
    )
    with pytest.raises(ComponentUnavailable) as failure:
        wait_until("crasher", lambda: False, process=process, timeout=30, what="healthy")
    assert "exited with code 7" in str(failure.value)
    assert "port 1 already in use" in failure.value.log_tail


SPAWNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from tests.stack.common import spawn
    process = spawn("sleeper", ["sleep", "300"], log=Path({log!r}))
    Path({pid_file!r}).write_text(str(process.pid))
    if sys.argv[1] == "wait":
        time.sleep(300)
    """
)


def run_spawner(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[bytes], int]:
    script = tmp_path / "spawner.py"
    pid_file = tmp_path / "sleeper.pid"
    script.write_text(
        SPAWNER.format(root=str(ROOT), log=str(tmp_path / "s.log"), pid_file=str(pid_file))
    )
    runner = subprocess.Popen([sys.executable, str(script), mode])
    return runner, read_pid(pid_file)


def test_components_are_stopped_when_the_test_process_exits(tmp_path):
    runner, sleeper = run_spawner(tmp_path, "exit")
    assert runner.wait(timeout=30) == 0
    assert gone_within(sleeper, 120)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_components_are_stopped_when_the_test_process_is_interrupted(tmp_path, signum):
    runner, sleeper = run_spawner(tmp_path, "wait")
    assert alive(sleeper)
    runner.send_signal(signum)
    runner.wait(timeout=30)
    assert gone_within(sleeper, 120)


def pytest_env_without_go(tmp_path: Path, ci: bool) -> dict[str, str]:
    """Environment where the AxonOps registry cannot be obtained: empty cache, no `go`."""
    path = [d for d in os.environ["PATH"].split(os.pathsep) if not Path(d, "go").exists()]
    env = {**os.environ, "PATH": os.pathsep.join(path), "SCHEMACLI_STACK_CACHE": str(tmp_path)}
    env.pop("SCHEMACLI_REGISTRY_IMPL", None)
    env["CI"] = "true" if ci else ""
    return env


def run_registry_test_without_registry(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess:
    smoke = "tests/integration/test_stack_smoke.py"
    test = f"{smoke}::test_registry_lists_the_registered_taxi_ride_subject"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--registry-impl",
            "axonops",
            test,
        ],
        cwd=ROOT,
        env=pytest_env_without_go(tmp_path, ci),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_missing_registry_is_announced_and_skipped_outside_ci(tmp_path):
    done = run_registry_test_without_registry(tmp_path, ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "registry  MISSING -> tests SKIPPED" in done.stdout
    assert "1 skipped" in done.stdout
    assert "stack components that did not start" in done.stdout


def test_missing_registry_fails_the_run_in_ci(tmp_path):
    done = run_registry_test_without_registry(tmp_path, ci=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "registry  MISSING -> FAILS (CI)" in done.stdout
    assert "CI=true and a stack component is unavailable" in done.stdout
    assert "`go` is not on PATH" in done.stdout


@pytest.fixture
def archive(tmp_path, monkeypatch):
    """The drivers' class-data archive, under tmp_path (no JVM is started)."""
    from tests.stack import spark

    path = tmp_path / "cds" / "spark-driver-test.jsa"
    monkeypatch.setattr(spark, "driver_archive", lambda: path)
    return path


def _driver_opts(confs: tuple[str, ...]) -> str:
    (driver,) = [c for c in confs if c.startswith("spark.driver.extraJavaOptions=")]
    return driver


def test_a_driver_that_ends_well_leaves_its_class_archive_to_the_drivers_after_it(archive):
    from tests.stack.common import JVM_BASE_OPTS
    from tests.stack.spark import archiving_driver

    with archiving_driver() as first:
        assert first.written is not None
        assert f"-XX:ArchiveClassesAtExit={first.written}" in _driver_opts(first.confs)
        first.written.write_bytes(b"archive")  # what the driver's JVM writes at its exit
        first.keep()
    assert archive.read_bytes() == b"archive" and not first.written.exists()
    with archiving_driver() as later:
        assert later.written is None
        assert f"-XX:SharedArchiveFile={archive}" in _driver_opts(later.confs)
    executor = [c for c in later.confs if c.startswith("spark.executor.extraJavaOptions=")]
    assert executor == ["spark.executor.extraJavaOptions=" + " ".join(JVM_BASE_OPTS)]


def test_a_driver_that_failed_or_wrote_nothing_leaves_no_archive_and_no_temporary_file(archive):
    from tests.stack.spark import archiving_driver

    with archiving_driver() as failed:  # the run failed: keep() is not called
        assert failed.written is not None
        failed.written.write_bytes(b"archive")
    assert not archive.exists() and not failed.written.exists()
    with archiving_driver() as empty:  # killed while writing: nothing whole to keep
        assert empty.written is not None
        empty.written.touch()
        empty.keep()
    assert not archive.exists() and not empty.written.exists()


def test_while_another_process_writes_the_archive_a_driver_runs_without_one(archive):
    import fcntl

    from tests.stack.spark import archiving_driver

    archive.parent.mkdir(parents=True)
    with open(archive.with_suffix(".lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the other writer (flock: per open file)
        with archiving_driver() as run:
            assert run.written is None
            assert "Archive" not in _driver_opts(run.confs)
