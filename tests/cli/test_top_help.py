"""``schemacli --help`` alone has two roads: ``schemacli.toplevel`` writes the page without
click or typer, and the app writes it through click. Both are fed the same widths, program
names and environments here and must give the same bytes and exit code; every other command
line takes the app's road."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import click
import pytest
import typer

from schemacli import toplevel
from schemacli.app import app

SCHEMACLI = Path(sys.executable).with_name("schemacli")  # the installed console script
DEADLINE = 120.0  # only a hang reaches it

# Loaded by the child through PYTHONPATH: SCHEMACLI_TEST_APP_ROAD closes the top-level help's
# road (the app answers --help as it would without it); SCHEMACLI_TEST_PROBE says at exit,
# on stderr, whether click was loaded.
SITECUSTOMIZE = """
import atexit
import os
import sys

if os.environ.get("SCHEMACLI_TEST_APP_ROAD"):
    import schemacli.toplevel

    schemacli.toplevel.answers_help = lambda argv, environ: False
if os.environ.get("SCHEMACLI_TEST_PROBE"):
    atexit.register(lambda: sys.stderr.write(f"click loaded: {'click' in sys.modules}\\n"))
"""

PROGRAMS = {
    "script": [str(SCHEMACLI)],
    "module": [sys.executable, "-m", "schemacli"],
}


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hooks")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return folder


def child_env(hooks: Path, **extra: str) -> dict[str, str]:
    """The environment of a child: no COLUMNS, no completion request, the hooks on the path."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("COLUMNS", "LINES", "NO_COLOR", "TERM") and not key.endswith("_COMPLETE")
    }
    path = os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))
    return {**env, "PYTHONPATH": path, **extra}


def both_roads(argv: list[str], env: dict[str, str]) -> list[subprocess.CompletedProcess[bytes]]:
    return [
        subprocess.run(argv, env=road, capture_output=True, timeout=DEADLINE)
        for road in (env, {**env, "SCHEMACLI_TEST_APP_ROAD": "1"})
    ]


def clicks_page(prog: str) -> str:
    """The app's top-level help as click writes it for ``--help`` (at the width of COLUMNS)."""
    group = typer.main.get_command(app)
    ctx = click.Context(group, info_name=prog, **group.context_settings)
    return group.get_help(ctx)


@pytest.mark.parametrize(
    "prog",
    ["schemacli", "python -m schemacli", "a-program-name-long-enough-to-push-the-usage-down"],
)
def test_the_top_help_page_is_clicks_at_every_width(monkeypatch, prog):
    for columns in range(20, 201):
        monkeypatch.setenv("COLUMNS", str(columns))
        assert toplevel.help_page(prog, toplevel.terminal_columns()) == clicks_page(prog), columns


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("option", ["--help", "-h"])
@pytest.mark.parametrize(
    "extra",
    [{}, {"COLUMNS": "20"}, {"COLUMNS": "64"}, {"COLUMNS": "200"}, {"COLUMNS": "x"}],
    ids=["no-terminal", "20", "64", "200", "not-a-number"],
)
def test_both_roads_write_the_same_help_and_exit_code(hooks, program, option, extra):
    fast, slow = both_roads([*PROGRAMS[program], option], child_env(hooks, **extra))
    assert slow.returncode == 0, slow.stderr
    assert (fast.stdout, fast.stderr, fast.returncode) == (slow.stdout, slow.stderr, 0)


@pytest.mark.parametrize("extra", [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"TERM": "xterm-256color"}])
def test_colour_settings_change_neither_road(hooks, extra):
    fast, slow = both_roads([str(SCHEMACLI), "--help"], child_env(hooks, COLUMNS="90", **extra))
    assert (fast.stdout, fast.stderr, fast.returncode) == (slow.stdout, slow.stderr, 0)


def on_a_terminal(argv: list[str], env: dict[str, str], columns: int) -> bytes:
    """What ``argv`` writes to a terminal ``columns`` wide (a pseudo-terminal on stdout)."""
    main, child_end = pty.openpty()
    fcntl.ioctl(child_end, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    child = subprocess.Popen(argv, env=env, stdout=child_end, stderr=subprocess.DEVNULL)
    os.close(child_end)
    out = b""
    try:
        while select.select([main], [], [], DEADLINE)[0]:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed its end (EIO on Linux)
                break
            if not chunk:
                break
            out += chunk
        assert child.wait(timeout=DEADLINE) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(main)
    return out


@pytest.mark.parametrize("columns", [30, 60, 120])
def test_both_roads_take_the_terminals_width(hooks, columns):
    env = child_env(hooks)
    fast = on_a_terminal([str(SCHEMACLI), "--help"], env, columns)
    slow = on_a_terminal(
        [str(SCHEMACLI), "--help"], {**env, "SCHEMACLI_TEST_APP_ROAD": "1"}, columns
    )
    assert fast == slow
    assert b"Usage: schemacli [OPTIONS] COMMAND [ARGS]..." in fast


def test_both_roads_exit_1_quietly_when_the_reader_is_gone(hooks):
    answers = []
    for env in (child_env(hooks), child_env(hooks, SCHEMACLI_TEST_APP_ROAD="1")):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            done = subprocess.run(
                [str(SCHEMACLI), "--help"],
                env=env,
                stdout=write_end,
                stderr=subprocess.PIPE,
                timeout=DEADLINE,
            )
        finally:
            os.close(write_end)
        answers.append((done.returncode, done.stderr))
    assert answers == [(1, b""), (1, b"")]


@pytest.mark.parametrize("option", ["--help", "-h"])
def test_the_help_option_alone_loads_no_click(hooks, option):
    done = subprocess.run(
        [str(SCHEMACLI), option],
        env=child_env(hooks, SCHEMACLI_TEST_PROBE="1"),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0
    assert done.stderr == "click loaded: False\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["--help", "--version"],
        ["--version", "--help"],
        ["-h", "extra"],
        ["validate", "--help"],
        ["--version"],
        ["--HELP"],
        [],
    ],
)
def test_every_other_command_line_takes_the_apps_road(hooks, argv):
    done = subprocess.run(
        [str(SCHEMACLI), *argv],
        env=child_env(hooks, SCHEMACLI_TEST_PROBE="1"),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.stderr.endswith("click loaded: True\n")


def test_a_completion_request_takes_the_apps_road_whatever_the_words(hooks):
    done = subprocess.run(
        [str(SCHEMACLI), "--help"],
        env=child_env(
            hooks,
            SCHEMACLI_TEST_PROBE="1",
            _SCHEMACLI_COMPLETE="complete_bash",
            COMP_WORDS="schemacli val",
            COMP_CWORD="1",
        ),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0
    assert done.stdout.split() == ["validate"]
    assert done.stderr == "click loaded: True\n"


def test_an_ascii_stdout_is_left_to_click(hooks):
    # click writes the page's "·" through a stream of its own when stdout is ASCII
    done = subprocess.run(
        [str(SCHEMACLI), "--help"],
        env=child_env(hooks, SCHEMACLI_TEST_PROBE="1", PYTHONIOENCODING="ascii"),
        capture_output=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0
    assert done.stderr.endswith(b"click loaded: True\n")
