"""The README's offline examples print what the README says they print.

Every ``$ command`` in a ``console`` block of README.md whose command is offline (no registry, no
Kafka, no Spark) runs here, in a copy of the bundled example, and its output is compared with
the lines under it. The README's conventions: ``[exit N]`` is the exit code (0 when absent);
a line ``...`` stands for lines left out, and then the shown lines must appear in that order;
otherwise the output is exactly the shown lines (stdout and stderr together, in any order of
the two streams, since a terminal interleaves them).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# What runs offline; the registry, Kafka and Spark examples are covered by the integration tests.
OFFLINE = (
    "schemacli validate ",
    "schemacli gate",
    "schemacli check ",
    "schemacli diff ",
    "schemacli readers ",
    "schemacli spark ddl ",
    "schemacli migrate plan ",
    "schemacli migrate validate ",
    "schemacli report ",
    "cat examples/",
)
ONLINE_MARKERS = ("--registry", "/tmp/", "$")


@dataclass(frozen=True)
class Example:
    command: str
    shown: list[str]
    exit_code: int
    line: int

    def __str__(self) -> str:
        return f"README.md:{self.line}: $ {self.command}"


def examples(text: str) -> list[Example]:
    found: list[Example] = []
    for block in re.finditer(r"```console\n(.*?)```", text, re.S):
        first_line = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            start, command = i, lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            i += 1
            shown: list[str] = []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i].rstrip())
                i += 1
            while shown and not shown[-1]:
                shown.pop()
            exit_code = 0
            if shown and (mark := re.fullmatch(r"\[exit (\d+)\]", shown[-1])):
                exit_code = int(mark.group(1))
                shown.pop()
            found.append(Example(command, shown, exit_code, first_line + start))
    return found


def is_offline(example: Example) -> bool:
    command = example.command
    rest = command.split(" ", 2)[-1]
    return command.startswith(OFFLINE) and not any(m in rest for m in ONLINE_MARKERS)


OFFLINE_EXAMPLES = [e for e in examples(README.read_text(encoding="utf-8")) if is_offline(e)]


def fresh_project(root: Path) -> Path:
    """The bundled example as a user's checkout has it: store, examples, fixtures, config."""
    for folder in ("schemas", "examples", "tests/fixtures/avsc"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


class Story:
    """The README is a story: an example runs in the project the examples before it left (a
    reader added, a fix written). ``before(i)`` gives a project where examples ``0..i-1`` ran,
    whatever order the tests run in: examples are replayed in one project while the tests go
    forward, and a test that goes back starts a fresh copy and replays up to it."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.project: Path | None = None
        self.ran = 0

    def before(self, index: int) -> Path:
        if self.project is None or self.ran > index:
            self.project = fresh_project(self.factory.mktemp("readme"))
            self.ran = 0
        for earlier in OFFLINE_EXAMPLES[self.ran : index]:
            run(earlier.command, self.project)
        self.ran = index
        return self.project

    def after(self, index: int) -> None:
        self.ran = index + 1


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    return Story(tmp_path_factory)


@pytest.fixture(scope="module")
def example_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_project(tmp_path_factory.mktemp("readme-plan"))


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    if words[0] == "schemacli":
        words = [sys.executable, "-m", "schemacli", *words[1:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEMACLI_")}
    env.update(COLUMNS="100", NO_COLOR="1", TERM="dumb", PYTHONPATH=str(ROOT))
    return subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_readme_shows_offline_examples_of_every_contract_command():
    commands = {" ".join(e.command.split()[:2]) for e in OFFLINE_EXAMPLES}
    assert {"schemacli validate", "schemacli gate", "schemacli check", "schemacli diff"} <= commands
    assert any(e.command.startswith("schemacli migrate validate") for e in OFFLINE_EXAMPLES)


@pytest.mark.parametrize(
    "index", range(len(OFFLINE_EXAMPLES)), ids=[str(e) for e in OFFLINE_EXAMPLES]
)
def test_an_offline_readme_example_prints_what_the_readme_shows(index, story):
    example = OFFLINE_EXAMPLES[index]
    result = run(example.command, story.before(index))
    story.after(index)
    printed = [line.rstrip() for line in (result.stdout + result.stderr).splitlines()]
    assert result.returncode == example.exit_code, f"{example}\n{result.stdout}{result.stderr}"
    shown = [line for line in example.shown if line.strip() != "..."]
    if len(shown) < len(example.shown):  # lines left out: the shown ones, in order
        remaining = iter(printed)
        missing = [line for line in shown if not any(line == p for p in remaining)]
        assert not missing, f"{example}: not printed (in this order): {missing}\n" + "\n".join(
            printed
        )
    else:
        assert sorted(printed) == sorted(shown), f"{example}: printed\n" + "\n".join(printed)


def test_the_mapping_in_examples_is_what_migrate_plan_writes_today(example_project):
    planned = [e for e in OFFLINE_EXAMPLES if e.command.startswith("schemacli migrate plan ")]
    assert planned, "README.md has no offline `migrate plan` example"
    for example in planned:
        words = shlex.split(example.command)
        out = words[words.index("--out") + 1]
        assert run(example.command, example_project).returncode == 0
        assert (example_project / out).read_text() == (ROOT / out).read_text(), example
