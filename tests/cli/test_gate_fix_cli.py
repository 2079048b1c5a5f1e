"""`schemacli gate --fix / --diff / --unsafe-fixes`: every failing version the gate checks,
fixed as `check --fix` fixes one file; and the one rule check, lint and gate follow for the
fix flags."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.cli.test_check_fix_cli import BROKEN

SUBJECT = "taxi-rides-value"
STORE = Path("schemas/subjects")

# v2 of the example subject with two breaking edits, as test_check_fix_cli lays it out: zone
# added without a default (a safe fix adds one), total_amount left as float.
FIXED = BROKEN.replace(
    '{"name": "zone", "type": "int"}', '{"name": "zone", "type": "int", "default": 0}'
)
# v4 adds another field without a default on top of v3
BROKEN_V4 = FIXED.replace(
    '"default": 0}\n', '"default": 0},\n    {"name": "tolls", "type": "long"}\n'
)
ORDERS_V1 = '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}\n'
ORDERS_V2 = (
    '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}, '
    '{"name": "qty", "type": "int"}]}\n'
)


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def version(subject: str, n: int) -> Path:
    return STORE / subject / f"v{n}.avsc"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def broken(project) -> Path:
    path = version(SUBJECT, 3)
    path.write_text(BROKEN)
    return project


def test_gate_fix_writes_the_safe_fix_and_reports_the_fixed_store(broken):
    assert run("gate").exit_code == 1
    result = run("gate", "--fix")
    assert result.exit_code == 0, result.output
    assert "fixed 1 problem(s); wrote schemas/subjects/taxi-rides-value/v3.avsc" in result.stderr
    assert "applied (safe): Give field 'zone' the default 0" in result.stderr
    assert version(SUBJECT, 3).read_text() == FIXED  # only the edited span changed
    assert run("gate").exit_code == 0


def test_gate_fix_fixes_every_failing_version_of_every_subject_at_once(broken):
    (STORE / "orders-value").mkdir()
    version("orders-value", 1).write_text(ORDERS_V1)
    version("orders-value", 2).write_text(ORDERS_V2)
    result = run("gate", "--fix")
    assert result.exit_code == 0, result.output
    assert "fixed 2 problem(s)" in result.stderr
    assert '"name": "qty", "type": "int", "default": 0}' in version("orders-value", 2).read_text()
    assert version(SUBJECT, 3).read_text() == FIXED
    assert version("orders-value", 1).read_text() == ORDERS_V1  # a passing version: untouched


def test_a_later_version_is_fixed_against_the_earlier_one_as_fixed(broken):
    version(SUBJECT, 4).write_text(BROKEN_V4)
    result = run("gate", "--fix")
    assert result.exit_code == 0, result.output
    assert version(SUBJECT, 3).read_text() == FIXED
    assert '{"name": "tolls", "type": "long", "default": 0}' in version(SUBJECT, 4).read_text()


def test_gate_diff_prints_every_fix_and_writes_nothing(broken):
    version(SUBJECT, 4).write_text(BROKEN_V4)
    result = run("gate", "--diff")
    assert result.exit_code == 1, result.output  # something to fix
    assert "+++ b/schemas/subjects/taxi-rides-value/v3.avsc" in result.stdout
    assert "+++ b/schemas/subjects/taxi-rides-value/v4.avsc" in result.stdout
    assert '+    {"name": "zone", "type": "int", "default": 0}' in result.stdout
    assert version(SUBJECT, 3).read_text() == BROKEN
    assert version(SUBJECT, 4).read_text() == BROKEN_V4


def test_gate_diff_of_a_passing_store_is_empty_and_exits_0(project):
    result = run("gate", "--diff")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "nothing to fix" in result.stderr


def test_an_unsafe_fix_applies_only_with_unsafe_fixes(project):
    v2 = version(SUBJECT, 2).read_text()
    changed = v2.replace(
        '{"name": "total_amount", "type": "float"}', '{"name": "total_amount", "type": "string"}'
    )
    assert changed != v2
    version(SUBJECT, 3).write_text(changed)
    safe_only = run("gate", "--fix")
    assert safe_only.exit_code == 1
    assert "nothing to fix" in safe_only.stderr
    assert version(SUBJECT, 3).read_text() == changed
    unsafe = run("gate", "--fix", "--unsafe-fixes")
    assert unsafe.exit_code == 0, unsafe.output
    assert "applied (unsafe)" in unsafe.stderr


def test_with_against_only_the_versions_new_since_the_ref_are_fixed(broken):
    root = Path.cwd()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v3 as registered, breaking")
    v4 = BROKEN.replace('"int"}\n  ]', '"int"},\n    {"name": "tolls", "type": "long"}\n  ]')
    assert v4 != BROKEN
    version(SUBJECT, 4).write_text(v4)
    result = run("gate", "--against", "git:HEAD", "--fix")
    assert result.exit_code == 0, result.output
    assert version(SUBJECT, 3).read_text() == BROKEN  # history at the ref: never rewritten
    assert '"tolls", "type": "long", "default": 0}' in version(SUBJECT, 4).read_text()


@pytest.mark.parametrize("fmt", ["json", "junit", "github", "sarif", "gitlab"])
def test_gate_fix_reports_the_fixed_store_in_every_format(broken, fmt):
    result = run("gate", "--fix", "-o", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "junit":
        ET.fromstring(result.stdout)
    elif fmt != "github":
        json.loads(result.stdout)
    assert "fixed 1 problem(s)" in result.stderr  # the fixes on stderr, the document alone


def test_a_store_with_an_invalid_file_fixes_the_rest_and_exits_2(broken):
    (STORE / "orders-value").mkdir()
    version("orders-value", 1).write_text('{"type": "record", "name": ')
    shown = run("gate", "--diff")
    assert shown.exit_code == 2, shown.output
    assert version(SUBJECT, 3).read_text() == BROKEN
    fixed = run("gate", "--fix")
    assert fixed.exit_code == 2, fixed.output
    assert "orders-value/v1.avsc:1:" in fixed.output
    assert "Traceback" not in fixed.output
    assert version(SUBJECT, 3).read_text() == FIXED


def test_gate_fix_keeps_a_byte_order_mark_and_crlf_line_breaks(project):
    path = version(SUBJECT, 3)
    path.write_bytes(b"\xef\xbb\xbf" + BROKEN.replace("\n", "\r\n").encode())
    result = run("gate", "--fix")
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b'{"name": "zone", "type": "int", "default": 0}\r\n' in data


# -- refusals: usage errors, nothing written ---------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fix", "--registry", "http://127.0.0.1:9"), "not a registry's"),
        (("--diff", "--registry", "http://127.0.0.1:9"), "not a registry's"),
        (("--fix", "--register"), "not a registry's"),
    ],
)
def test_gate_fix_against_a_registry_is_refused_before_connecting(broken, args, message):
    result = run("gate", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert version(SUBJECT, 3).read_text() == BROKEN


def test_gate_fix_of_a_missing_store_exits_2_without_a_traceback(project):
    result = run("gate", "--fix", "--store", "nowhere")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "nowhere" in result.output


# The one rule of the fix flags, the same for check, lint and gate.
COMMANDS = {
    "check": ("check", str(STORE / SUBJECT / "v3.avsc")),
    "lint": ("lint", str(STORE / SUBJECT / "v3.avsc")),
    "gate": ("gate",),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--unsafe-fixes",), "--unsafe-fixes only chooses which fixes --fix or --diff apply"),
        (("--fix", "--diff"), "--fix writes the files, --diff only shows the change: give one"),
        (("--diff", "-o", "json"), "--diff prints a unified diff, not a json document"),
    ],
)
def test_the_fix_flags_follow_one_rule_in_check_lint_and_gate(broken, command, flags, message):
    result = run(*COMMANDS[command], *flags)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert version(SUBJECT, 3).read_text() == BROKEN
    if "json" in flags:  # the format asked for gets its error document, and only that
        document = json.loads(result.stdout)
        assert message in json.dumps(document)


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif", "gitlab"])
def test_diff_with_a_machine_format_is_one_valid_error_document(broken, fmt):
    for command in COMMANDS.values():
        result = run(*command, "--diff", "-o", fmt)
        assert result.exit_code == 2, result.output
        if fmt == "junit":
            ET.fromstring(result.stdout)
        else:
            json.loads(result.stdout)


def test_lint_of_stdin_with_fix_refuses_a_machine_format(project):
    result = CliRunner().invoke(app, ["lint", "-", "--fix", "-o", "sarif"], input=BROKEN)
    assert result.exit_code == 2, result.output
    json.loads(result.stdout)  # the error document, not the fixed schema
    assert "prints the fixed schema on stdout" in result.stderr
