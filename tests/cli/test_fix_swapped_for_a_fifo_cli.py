"""A schema swapped for a FIFO after `--fix` read it is refused (exit 2, nothing written), and
nothing blocks on opening the FIFO: check, lint and gate alike (issue #38, item 4)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.test_check_fix_cli import BROKEN

DEADLINE = 120.0  # only a hang reaches it

# Each command, the module attribute to wrap (it runs after the file was read, before the
# write), and the file to fix.
CASES = {
    "check": (
        "schemacli.commands.check",
        "fix_candidate",
        ["check", "schemas/subjects/taxi-rides-value/v3.avsc", "--fix"],
    ),
    "gate": ("schemacli.commands.gate", "fix_store", ["gate", "--fix"]),
    "lint": (
        "schemacli.contracts.lint.engine",
        "lint_paths",
        ["lint", "schemas/subjects/taxi-rides-value/v3.avsc", "--fix", "--unsafe-fixes"],
    ),
}
PROBE = """
import importlib, os, sys
from typer.testing import CliRunner
module = importlib.import_module({module!r})
real = getattr(module, {attribute!r})
target = "schemas/subjects/taxi-rides-value/v3.avsc"

def swapped(*args, **kwargs):
    out = real(*args, **kwargs)
    os.remove(target)
    os.mkfifo(target)
    return out

setattr(module, {attribute!r}, swapped)
from schemacli.app import app
result = CliRunner().invoke(app, {args!r})
sys.stdout.write(result.output)
sys.exit(result.exit_code)
"""


@pytest.mark.parametrize("command", list(CASES))
def test_a_schema_swapped_for_a_fifo_during_fix_is_refused_without_blocking(project, command):
    path = Path("schemas/subjects/taxi-rides-value/v3.avsc")
    # a new field without a default (check and gate fix it) that is an optional field with
    # null second (lint fixes it)
    path.write_text(BROKEN.replace('"type": "int"}\n  ]', '"type": ["int", "null"]}\n  ]'))
    module, attribute, args = CASES[command]
    probe = textwrap.dedent(PROBE.format(module=module, attribute=attribute, args=args))
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=DEADLINE
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a regular file" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert path.is_fifo()  # nothing was written over it
