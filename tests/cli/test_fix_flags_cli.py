"""One rule for --fix / --diff / --unsafe-fixes and -o, in lint, check and gate
(commands.fix_options.fix_mode): every combination of the flags in every format gives one valid
document of the format asked for (the report, or the format's error document), never a diff or
a schema in its place, and a refusal writes nothing. The rule's messages, one by one:
test_gate_fix_cli."""

from __future__ import annotations

import itertools

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.cli.test_check_fix_cli import BROKEN, SUBJECT
from tests.cli.test_fix_writes_cli import GATE_FILE
from tests.cli.test_lint_cli import OPTIONAL
from tests.output_documents import FORMATS, parse

FLAGS = ("--fix", "--diff", "--unsafe-fixes")
COMBINATIONS = [c for n in range(len(FLAGS) + 1) for c in itertools.combinations(FLAGS, n)]


def run(*args: object, input: str | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def _allowed(flags: tuple[str, ...], fmt: str, stdin: bool = False) -> bool:
    fix, diff, unsafe = (f in flags for f in FLAGS)
    if (unsafe and not (fix or diff)) or (fix and diff):
        return False
    if diff and fmt != "text":
        return False
    return not (fix and stdin and fmt != "text")


@pytest.mark.parametrize("fmt", ["text", *FORMATS])
@pytest.mark.parametrize("flags", COMBINATIONS, ids="+".join)
@pytest.mark.parametrize("command", ["lint", "check", "gate"])
def test_every_fix_flag_and_format_gives_one_document_or_a_usage_error(
    project, command, flags, fmt
):
    path = project / "v3.avsc" if command != "gate" else project / GATE_FILE
    path.write_text(OPTIONAL if command == "lint" else BROKEN)
    target = {
        "lint": ("lint", path),
        "check": ("check", path, "-s", SUBJECT),
        "gate": ("gate",),
    }[command]
    result = run(*target, *flags, "-o", fmt)
    assert "Traceback" not in result.output
    if _allowed(flags, fmt):
        assert result.exit_code in (0, 1), result.output
    else:
        assert result.exit_code == 2, result.output
        assert (path.read_text() == OPTIONAL) if command == "lint" else (path.read_text() == BROKEN)
    if fmt != "text":
        parse(fmt, result.stdout)
        assert "--- a/" not in result.stdout and '"type": "record"' not in result.stdout


@pytest.mark.parametrize("fmt", ["text", *FORMATS])
@pytest.mark.parametrize("flags", COMBINATIONS, ids="+".join)
def test_lint_of_standard_input_follows_the_same_rule(project, flags, fmt):
    result = run("lint", "-", *flags, "-o", fmt, input=OPTIONAL)
    assert "Traceback" not in result.output
    assert result.exit_code in ((0, 1) if _allowed(flags, fmt, stdin=True) else (2,)), result.output
    if fmt != "text":
        parse(fmt, result.stdout)
