"""`migrate stop`/`status` signal only the converter they deployed: pid files are checked first.

A pid file may be corrupt (``-1`` would signal every process we may signal, ``0`` our own
group) or stale (the kernel reused the pid for another program): neither is ever signalled.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from converters.ops import process
from converters.ops.status import status
from converters.ops.stop import StalePidFile, stop
from schemacli.errors import ExitCode, InputError
from tests.unit.test_converter_deploy import fake_spark_submit


@pytest.fixture
def unrelated():
    """A live process that is not the converter (what a reused pid points at)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    yield proc
    proc.kill()
    proc.wait(5)


@pytest.mark.parametrize("content", ["-1", "0", "1", "99999999999999999999999", "abc", ""])
def test_stop_refuses_a_corrupt_pid_file_without_signalling(tmp_path: Path, content: str):
    pid_file = tmp_path / "submit.pid"
    pid_file.write_text(content)
    with pytest.raises(InputError) as caught:
        stop(tmp_path, timeout=1)
    err = caught.value
    assert err.exit_code == ExitCode.INPUT_ERROR and "corrupt pid file" in err.message
    assert err.location.source == str(pid_file) and "Delete" in err.hint
    assert pid_file.exists()  # left for the user to look at


def test_status_refuses_a_corrupt_pid_file(tmp_path: Path):
    (tmp_path / "submit.pid").write_text("99999999999999999999999")
    with pytest.raises(InputError, match="corrupt pid file"):
        status(tmp_path, topic=None, bootstrap=None)


def test_stop_does_not_signal_a_reused_pid(tmp_path: Path, unrelated):
    (tmp_path / "submit.pid").write_text(str(unrelated.pid))
    with pytest.raises(StalePidFile) as caught:
        stop(tmp_path, timeout=1)
    assert "not spark-submit" in caught.value.message
    assert caught.value.exit_code == ExitCode.INPUT_ERROR
    assert unrelated.poll() is None  # still running: never signalled


def test_status_reports_a_reused_pid_as_a_stale_pid_file(tmp_path: Path, unrelated):
    (tmp_path / "submit.pid").write_text(str(unrelated.pid))
    st = status(tmp_path, topic=None, bootstrap=None)
    assert not st.running and "not spark-submit" in st.stale


def test_spark_submit_of_another_deployment_is_not_this_converter(tmp_path: Path):
    other = fake_spark_submit(tmp_path / "other")
    try:
        state = tmp_path / "mine"
        state.mkdir()
        (state / "submit.pid").write_text(str(other.pid))
        with pytest.raises(StalePidFile, match="not of this converter"):
            stop(state, timeout=1)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait(5)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_pid_started_later_than_the_recorded_start_time_is_stale(tmp_path: Path):
    proc = fake_spark_submit(tmp_path)
    try:
        (tmp_path / "submit.pid").write_text(str(proc.pid))
        real = process.start_time(proc.pid)
        (tmp_path / "deploy.json").write_text(
            json.dumps({"submit": {"pid": proc.pid, "start_time": real - 1}})
        )
        with pytest.raises(StalePidFile, match="reused"):
            stop(tmp_path, timeout=1)
        assert proc.poll() is None
        (tmp_path / "deploy.json").write_text(
            json.dumps({"submit": {"pid": proc.pid, "start_time": real}})
        )
        assert stop(tmp_path, timeout=10).how == "stopped"
    finally:
        proc.kill()
        proc.wait(5)


def test_a_dead_pid_reads_as_not_running_and_its_file_is_removed(tmp_path: Path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(5)
    (tmp_path / "submit.pid").write_text(str(gone.pid))
    assert stop(tmp_path).how == "not running"
    assert not (tmp_path / "submit.pid").exists()


def test_stop_on_a_directory_without_converter_state_is_an_input_error(tmp_path: Path):
    with pytest.raises(InputError, match="no converter state") as caught:
        stop(tmp_path)
    assert "--state-dir" in caught.value.hint
