"""scripts/demo, the whole migration story on a stack of its own, runs green and tells the story:
each step printed as the command a user would type, in order."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
STEPS = [
    "$ scripts/devstack up",
    "$ schemacli register schemas/subjects/taxi-rides-value/v1.avsc --subject taxi-rides-value",
    "$ python examples/taxi.py produce --topic taxi-rides --version 1 --count 20",
    "$ schemacli check schemas/migration/taxi-ride-v2-breaking.avsc --subject taxi-rides-value",
    "$ schemacli register schemas/migration/taxi-ride-v2-breaking.avsc --subject taxi-rides-v2",
    "$ python examples/taxi.py produce --topic taxi-rides-v2 --version 2 --count 30 --bad 3",
    "$ schemacli migrate plan --from taxi-rides-v2-value --to taxi-rides-value:1",
    "$ schemacli migrate validate",
    "$ schemacli migrate deploy",
    "$ python examples/taxi.py consume --topic taxi-rides --group billing --seconds 5",
    "$ schemacli migrate status",
    "$ schemacli migrate finish",
    "$ python examples/taxi.py consume --topic taxi-rides-v2 --group billing-v2",
    "$ schemacli migrate status",
    "$ schemacli migrate finish",
    "$ scripts/devstack down",
]


def test_the_demo_tells_the_whole_migration_story():
    done = subprocess.run(
        ["bash", "scripts/demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "NO_COLOR": "1"},
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    assert done.returncode == 0, out[-4000:] + done.stderr[-4000:]
    at = 0
    for step in STEPS:  # every step, in this order
        found = out.find(step, at)
        assert found >= 0, f"missing or out of order: {step}\n{out[-3000:]}"
        at = found + len(step)
    assert "(refused, exit 1: total_amount as a string breaks v1 readers" in out
    assert "(converted from v2)" in out  # a v1 consumer reads converted rides
    assert "consumer group 'billing' still reads taxi-rides" in done.stderr + out
    assert "moved to v2 taxi-rides-v2: billing-v2" in out
    assert "in 30, converted 27, dead-lettered 3, skipped 0" in out
    assert "3  total_amount: cannot convert n/a to float" in out
    assert "migration taxi-rides-v2 -> taxi-rides: finished" in out
