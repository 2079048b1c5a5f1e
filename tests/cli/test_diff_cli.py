"""`schemacli diff OLD NEW`: the changes and the verdict for every level, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_diff_lists_added_fields_and_every_level_passing():
    result = run("diff", V1, V2)
    assert result.exit_code == 0
    assert f"{V2}:11:5 (at /fields/5): FIELD_ADDED: field 'tip_amount' added" in result.stdout
    assert "allowed at: BACKWARD, FORWARD, FULL" in result.stdout


def test_diff_shows_the_type_change_and_the_failing_levels_but_exits_0():
    result = run("diff", V1, BREAKING)
    assert result.exit_code == 0  # a diff describes; check and gate decide
    assert "type changed from float to string" in result.stdout
    assert "allowed at: NONE only" in result.stdout
    assert "TYPE_MISMATCH" in result.stdout


def test_diff_json_has_changes_and_a_verdict_per_level():
    payload = json.loads(run("diff", V1, BREAKING, "-o", "json").stdout)
    assert {c["kind"] for c in payload["changes"]} == {"TYPE_CHANGED", "DOC_ADDED"}
    verdicts = {c["name"]: c["verdict"] for c in payload["cases"]}
    assert verdicts == {
        "NONE": "compatible",
        "BACKWARD": "incompatible",
        "FORWARD": "incompatible",
        "FULL": "incompatible",
    }


def test_diff_github_output_has_a_notice_per_change():
    out = run("diff", V1, V2, "-o", "github").stdout.splitlines()
    notices = [line for line in out if line.startswith("::notice ")]
    assert len(notices) == 2
    assert notices[0].startswith(f"::notice file={V2},line=11,col=5,title=FIELD_ADDED::")


def test_diff_with_an_invalid_file_exits_2_naming_it(tmp_path):
    bad = tmp_path / "bad.avsc"
    bad.write_text('{"type": "record", "name": "R", "fields": [{"name": "x"}]}')
    result = run("diff", V1, bad)
    assert result.exit_code == 2
    assert str(bad) in result.stderr
    assert "Traceback" not in result.output


def test_diff_with_a_missing_file_exits_2(tmp_path):
    result = run("diff", V1, tmp_path / "missing.avsc")
    assert result.exit_code == 2
    assert "no such file" in result.stderr


def test_diff_of_an_enum_losing_a_symbol_names_it_at_backward(tmp_path):
    old, new = tmp_path / "old.avsc", tmp_path / "new.avsc"
    old.write_text('{"type": "enum", "name": "E", "symbols": ["A", "B"]}')
    new.write_text('{"type": "enum", "name": "E", "symbols": ["A"]}')
    result = run("diff", str(old), str(new))
    assert result.exit_code == 0, result.output
    assert "error MISSING_ENUM_SYMBOLS" in result.stdout and "symbol(s) B" in result.stdout
    assert "BACKWARD   new reads old   incompatible (1)" in result.stdout


def test_an_unreadable_schema_is_still_a_ci_document_in_junit_and_github_output(tmp_path):
    import xml.etree.ElementTree as ET

    bad = tmp_path / "bad.avsc"
    bad.write_text('{"type": "record", "name": "R", "fields": [\n  {"name": "x", "type": NaN}]}')
    junit = run("diff", V1, str(bad), "-o", "junit")
    assert junit.exit_code == 2
    case = ET.fromstring(junit.stdout).find("testsuite/testcase")
    assert case.get("file") == str(bad) and case.find("error").get("type") == "JsonSyntaxError"
    github = run("diff", V1, str(bad), "-o", "github")
    assert github.exit_code == 2
    assert github.stdout.startswith(f"::error file={bad},line=2,col=")
    assert "title=schemacli%3A JsonSyntaxError::" in github.stdout


def test_diff_walks_schemas_nested_as_deep_as_java_reads(tmp_path):
    def nested(leaf: str) -> str:
        text = f'"{leaf}"'
        for i in range(333):  # 999 JSON levels: Java reads up to 1000
            text = f'{{"type":"record","name":"R{i}","fields":[{{"name":"f","type":{text}}}]}}'
        return text

    old, new = tmp_path / "old.avsc", tmp_path / "new.avsc"
    old.write_text(nested("int"))
    new.write_text(nested("long"))
    result = run("diff", old, new, "-o", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    [change] = payload["changes"]
    assert change["kind"] == "TYPE_CHANGED"
    assert change["location"]["pointer"].count("/fields/0") == 333
    verdicts = {c["name"]: c["verdict"] for c in payload["cases"]}
    assert verdicts["BACKWARD"] == "compatible" and verdicts["FORWARD"] == "incompatible"


def test_text_utf8_cannot_encode_is_printed_escaped_in_every_format(tmp_path):
    """Java reads a lone surrogate escape ("\\ud800") in a default; printing it must not fail."""
    import subprocess
    import sys

    new = tmp_path / "new.avsc"
    new.write_text(
        '{"type": "record", "name": "R", "fields": '
        '[{"name": "a", "type": "string", "default": "\\ud800"}]}'
    )
    for fmt in ("text", "json", "junit", "github"):
        done = subprocess.run(
            [sys.executable, "-m", "schemacli", "diff", str(V1), str(new), "-o", fmt],
            capture_output=True,
        )
        assert done.returncode == 0, (fmt, done.stderr.decode())
        assert b"\\ud800" in done.stdout and b"Traceback" not in done.stderr, fmt


def test_error_messages_cannot_drive_the_terminal():
    """A control sequence in a name an error quotes (here a file name) is shown escaped."""
    result = run("diff", "rides\x1b]0;pwned\x07.avsc", V1)
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "rides\\x1b]0;pwned\\x07.avsc" in result.stderr
