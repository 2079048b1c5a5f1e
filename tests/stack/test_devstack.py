"""scripts/devstack brings the stack up in the background, reports it, and takes it down."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def devstack(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCHEMACLI_DEVSTACK_HOME": str(home)}
    return subprocess.run(
        [str(ROOT / "scripts" / "devstack"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_devstack_up_status_down_leaves_nothing_running(tmp_path):
    home = tmp_path / "devstack"
    up = devstack(
        home,
        "up",
        "--registry-impl",
        "axonops",
        "--kafka-port",
        "0",
        "--registry-port",
        "0",
        "--spark-cluster",
        "--spark-port",
        "0",
    )
    pids: list[int] = []
    try:
        assert up.returncode == 0, up.stderr
        assert "kafka: bootstrap servers 127.0.0.1:" in up.stdout
        assert "export SCHEMACLI_REGISTRY_URL=http://127.0.0.1:" in up.stdout
        assert "export SCHEMACLI_SPARK_JARS=" in up.stdout and "spark-avro_2.13" in up.stdout
        assert "spark master: spark://127.0.0.1:" in up.stdout
        state = json.loads((home / "state.json").read_text())
        pids = [c["pid"] for c in state]
        # kafka, registry, the Spark master and two workers
        names = [c["name"] for c in state]
        assert names[2:] == ["spark-master", "spark-worker-0", "spark-worker-1"]
        assert len(pids) == 5 and all(alive(pid) for pid in pids)

        again = devstack(home, "up")
        assert again.returncode == 1 and "already up" in again.stderr

        status = devstack(home, "status")
        assert status.returncode == 0, status.stdout
        assert status.stdout.count(": up ") == 5
    finally:
        down = devstack(home, "down")
    assert down.returncode == 0
    deadline = time.monotonic() + 120  # only a hang reaches it
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    assert not any(alive(pid) for pid in pids)
    assert devstack(home, "status").stdout.strip() == "devstack is down"
