"""The app's start-up: each command's module loads only when that command runs, --help lists
every command from the static table without loading one, and Ctrl-C at any moment of start-up
is one line and exit 130."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
from typer.testing import CliRunner

from schemacli.app import COMMANDS, app, build_command

ROOT = Path(__file__).resolve().parents[2]
SCHEMACLI = Path(sys.executable).with_name("schemacli")  # the installed console script
ONE = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'
DEADLINE = 120.0  # only a hang reaches it


def loaded_modules(prefix: str, *args: str, cwd: Path = ROOT) -> list[str]:
    """The modules under ``prefix`` a fresh process has loaded once ``schemacli ARGS`` has run
    (the exit code does not matter)."""
    script = textwrap.dedent(
        f"""
        import contextlib
        import sys
        from schemacli.app import app
        with contextlib.suppress(SystemExit):
            app({list(args)!r})
        print("loaded:", *sorted(m for m in sys.modules if m.startswith({prefix!r})))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, timeout=DEADLINE
    )
    assert done.returncode == 0, done.stderr
    # the command's own output comes first: the list is the last line, after its marker
    return done.stdout.rstrip("\n").splitlines()[-1].split()[1:]


def loaded_commands(*args: str, cwd: Path = ROOT) -> list[str]:
    """The modules of schemacli.commands a fresh process has loaded once ``schemacli ARGS``
    has run."""
    return loaded_modules("schemacli.commands.", *args, cwd=cwd)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_table_lists_each_command_as_its_own_help_starts(name):
    command = build_command(name)
    listed = CliRunner().invoke(app, ["--help"], terminal_width=200).stdout
    for limit in (20, 45, 60, 80, 120, 400):
        own = command.get_short_help_str(limit)
        from_table = app_summary(name, limit)
        assert from_table == own, (name, limit)
    assert f"  {name} " in listed


def app_summary(name: str, limit: int) -> str:
    return click.Command(name, help=COMMANDS[name].summary).get_short_help_str(limit)


def test_help_lists_every_command_with_its_summary_without_loading_one():
    assert loaded_commands("--help") == ["schemacli.commands.completion"]


def test_a_command_loads_its_own_module_and_no_other_command(tmp_path):
    schema = tmp_path / "one.avsc"
    schema.write_text(ONE)
    loaded = loaded_commands("validate", str(schema))
    others = [COMMANDS[n].module for n in COMMANDS if n != "validate"]
    assert "schemacli.commands.validate" in loaded
    assert [m for m in loaded if m in others] == []


def test_validate_loads_no_cel_engine_unless_a_contract_file_is_there(tmp_path):
    # the data-rule lint rules (R001-R003) evaluate CEL only for a v<N>.contract.json
    schema = tmp_path / "one.avsc"
    schema.write_text(ONE)
    assert loaded_modules("schemacli.contracts.rules.cel", "validate", str(schema)) == []
    (tmp_path / "one.contract.json").write_text(
        '{"ruleSet": {"domainRules": [{"name": "t", "kind": "CONDITION", "type": "CEL", '
        '"mode": "WRITE", "onFailure": "ERROR", "expr": "true"}]}}'
    )
    assert loaded_modules("schemacli.contracts.rules.cel", "lint", str(schema)) != []


def test_a_sub_command_group_runs_as_before():
    result = CliRunner().invoke(app, ["migrate", "--help"])
    assert result.exit_code == 0
    assert "plan" in result.stdout and "rules" in result.stdout


@pytest.mark.parametrize(
    "args", [["diff", "--help"], ["validate", "--help"], ["migrate", "--help"]]
)
def test_help_lists_the_positional_arguments_once_with_their_help(args):
    # click 8.5 writes its own "Positional arguments" section beside typer's "Arguments"
    shown = CliRunner().invoke(app, args, terminal_width=200).stdout
    assert "Positional arguments" not in shown
    assert shown.count("Arguments:") == (0 if args[0] == "migrate" else 1)
    if args[0] == "diff":
        assert "The earlier schema (.avsc; - for stdin)." in shown


def test_a_misspelt_command_is_suggested_once():
    result = CliRunner().invoke(app, ["chek"])
    assert result.exit_code == 2
    assert result.output.count("Did you mean 'check'?") == 1


# -- Ctrl-C during start-up -------------------------------------------------------------------

# Loaded by the child through PYTHONPATH: when the module named by SCHEMACLI_TEST_BLOCK_ON is
# about to be imported, it writes one byte to the pipe SCHEMACLI_TEST_READY_FD and blocks on
# reading SCHEMACLI_TEST_WAIT_FD (which nobody writes) until a signal ends the process: the test
# knows the process is inside start-up when it sends SIGINT, without guessing with a sleep.
SITECUSTOMIZE = """
import os
import sys

_block_on = os.environ.get("SCHEMACLI_TEST_BLOCK_ON")


class _BlockBeforeImport:
    def find_spec(self, name, path=None, target=None):
        if name == _block_on:
            sys.meta_path.remove(self)
            os.write(int(os.environ["SCHEMACLI_TEST_READY_FD"]), b"!")
            os.read(int(os.environ["SCHEMACLI_TEST_WAIT_FD"]), 1)  # until the signal
        return None


if _block_on:
    sys.meta_path.insert(0, _BlockBeforeImport())
"""


@pytest.mark.parametrize(
    "module",
    [
        "click",  # the app's own imports
        "schemacli.app",
        # the command's module and what it imports, loaded once the command has begun (where
        # a KeyboardInterrupt reaches the error edge, after the command's clean-up)
        "schemacli.commands.validate",
        "schemacli.contracts.lint.validate",
    ],
)
def test_ctrl_c_at_any_moment_of_start_up_is_one_line_and_exit_130(tmp_path, module):
    assert SCHEMACLI.exists(), "the console script is installed with the package"
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    schema = tmp_path / "one.avsc"
    schema.write_text(ONE)
    ready_read, ready_write = os.pipe()
    wait_read, wait_write = os.pipe()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
        "SCHEMACLI_TEST_BLOCK_ON": module,
        "SCHEMACLI_TEST_READY_FD": str(ready_write),
        "SCHEMACLI_TEST_WAIT_FD": str(wait_read),
    }
    child = subprocess.Popen(
        [str(SCHEMACLI), "validate", str(schema)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(ready_write, wait_read),
        text=True,
    )
    try:
        os.close(ready_write)
        os.close(wait_read)
        readable, _, _ = select.select([ready_read], [], [], DEADLINE)
        assert readable and os.read(ready_read, 1) == b"!", f"never reached {module}"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=DEADLINE)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(ready_read)
        os.close(wait_write)
    assert child.returncode == 130, err
    assert err == "interrupted\n"
    assert out == ""
