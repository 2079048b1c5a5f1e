"""`schemacli check --fix / --diff / --unsafe-fixes`: suggested fixes applied, shown, refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
VALUE_V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
SUBJECT = "taxi-rides-value"

# v2 of the example subject with two breaking edits, laid out by hand (one field a line): a new
# field without a default and total_amount changed from float to string.
BROKEN = """{
  "type": "record",
  "name": "TaxiRide",
  "namespace": "com.datatalksclub.taxi",
  "fields": [
    {"name": "vendorId", "type": "int"},
    {"name": "passenger_count", "type": "int"},
    {"name": "trip_distance", "type": "float"},
    {"name": "payment_type", "type": "int"},
    {"name": "total_amount", "type": "float"},
    {"name": "tip_amount", "type": "float", "default": 0.0, "doc": "Added in v2."},
    {"name": "store_and_fwd_flag", "type": ["null", "string"], "default": null},
    {"name": "zone", "type": "int"}
  ]
}
"""


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input)


@pytest.fixture
def broken(project) -> Path:
    path = project / "v3.avsc"
    path.write_text(BROKEN)
    return path


def test_check_fix_writes_the_safe_fix_and_the_file_then_passes(broken):
    result = run("check", str(broken), "-s", SUBJECT, "--fix")
    assert result.exit_code == 0, result.output
    assert "check: compatible" in result.stdout
    assert "fixed 1 problem(s); wrote" in result.stderr
    text = broken.read_text()
    # Only the edited span changed: the hand layout and every other line are kept.
    assert text == BROKEN.replace(
        '{"name": "zone", "type": "int"}', '{"name": "zone", "type": "int", "default": 0}'
    )
    assert run("check", str(broken), "-s", SUBJECT).exit_code == 0


def test_check_fix_says_which_fix_was_not_applied_and_why(broken, monkeypatch):
    from schemacli.contracts.fixes import fixing

    # the zone default was proven alone; pretend its result is refused when applied
    monkeypatch.setattr(fixing, "_refusal", lambda current, text: "zone may not have one")
    result = run("check", str(broken), "-s", SUBJECT, "--fix")
    assert result.exit_code == 1, result.output
    assert "nothing to fix" in result.stderr
    assert "not applied: Give field 'zone'" in result.stderr
    assert ": zone may not have one" in result.stderr
    assert broken.read_text() == BROKEN


def test_check_diff_prints_the_fix_and_writes_nothing(broken):
    before = broken.read_bytes()
    result = run("check", str(broken), "-s", SUBJECT, "--diff")
    assert result.exit_code == 1  # something to fix
    header = result.stdout.splitlines()[:2]  # an absolute path is shown as it is
    assert header == [f"--- {broken}", f"+++ {broken}"]
    assert '-    {"name": "zone", "type": "int"}' in result.stdout
    assert '+    {"name": "zone", "type": "int", "default": 0}' in result.stdout
    assert broken.read_bytes() == before


def test_check_diff_of_a_compatible_file_is_empty_and_exits_0(project):
    path = project / "v3.avsc"
    path.write_text(VALUE_V2.read_text().replace('"TaxiRide",', '"TaxiRide", "doc": "v3",'))
    result = run("check", str(path), "-s", SUBJECT, "--diff")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "nothing to fix" in result.stderr


def test_an_unsafe_fix_applies_only_with_unsafe_fixes(project):
    path = project / "v3.avsc"
    path.write_text(
        VALUE_V2.read_text().replace(
            '{"name": "total_amount", "type": "float"}',
            '{"name": "total_amount", "type": "string"}',
        )
    )
    before = path.read_text()
    safe_only = run("check", str(path), "-s", SUBJECT, "--fix")
    assert safe_only.exit_code == 1
    assert path.read_text() == before  # nothing safe to apply: the file is untouched
    assert "nothing to fix" in safe_only.stderr
    assert "fix (unsafe)" in safe_only.stdout
    unsafe = run("check", str(path), "-s", SUBJECT, "--fix", "--unsafe-fixes")
    assert unsafe.exit_code == 0, unsafe.output
    assert "applied (unsafe)" in unsafe.stderr
    assert run("check", str(path), "-s", SUBJECT).exit_code == 0


def test_fixes_travel_in_the_json_report(broken):
    result = run("check", str(broken), "-s", SUBJECT, "-o", "json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    findings = [f for f in _findings(document) if f["kind"] == "READER_FIELD_MISSING_DEFAULT_VALUE"]
    assert findings and findings[0]["fixes"][0]["applicability"] == "safe"
    assert findings[0]["fixes"][0]["title"].startswith("Give field 'zone' the default 0")


def _findings(document):
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "findings" and isinstance(value, list):
                yield from value
            else:
                yield from _findings(value)
    elif isinstance(document, list):
        for item in document:
            yield from _findings(item)


def test_check_fix_with_json_output_reports_the_fixed_file(broken):
    result = run("check", str(broken), "-s", SUBJECT, "--fix", "-o", "json")
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)


def test_a_fixed_store_version_passes_the_gate(project):
    path = project / "schemas/subjects/taxi-rides-value/v3.avsc"
    path.write_text(BROKEN)
    assert run("gate").exit_code == 1
    assert run("check", str(path), "--fix").exit_code == 0
    assert run("gate").exit_code == 0


# -- refusals: usage errors, nothing written ----------------------------------------------------


def test_unsafe_fixes_alone_is_a_usage_error(broken):
    result = run("check", str(broken), "-s", SUBJECT, "--unsafe-fixes")
    assert result.exit_code == 2
    assert "--unsafe-fixes only chooses which fixes --fix or --diff apply" in result.output
    assert "Traceback" not in result.output


def test_fix_of_standard_input_is_refused_and_diff_of_it_works(project):
    result = run("check", "-", "-s", SUBJECT, "--fix", input=BROKEN)
    assert result.exit_code == 2
    assert "standard input is not a file" in result.output
    shown = run("check", "-", "-s", SUBJECT, "--diff", input=BROKEN)
    assert shown.exit_code == 1
    assert "+++ b/<stdin>" in shown.stdout


def test_fix_against_a_registry_is_refused_before_connecting(broken):
    result = run("check", str(broken), "-s", SUBJECT, "--fix", "--registry", "http://127.0.0.1:9")
    assert result.exit_code == 2
    assert "not a registry's" in result.output
    assert broken.read_text() == BROKEN


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_fix_in_a_read_only_folder_writes_nothing_and_exits_2(project):
    folder = project / "ro"
    folder.mkdir()
    path = folder / "v3.avsc"
    path.write_text(BROKEN)
    folder.chmod(0o555)
    try:
        result = run("check", str(path), "-s", SUBJECT, "--fix")
    finally:
        folder.chmod(0o755)
    assert result.exit_code == 2
    assert "nothing was written" in result.output
    assert path.read_text() == BROKEN
    assert sorted(p.name for p in folder.iterdir()) == ["v3.avsc"]


def test_fix_of_a_missing_file_a_folder_bad_json_or_binary_exits_2(project):
    (project / "bad.avsc").write_text('{"type": "record", "name": ')
    (project / "bin.avsc").write_bytes(b"\x00\x01\x02")
    (project / "dir.avsc").mkdir()
    for name in ("missing.avsc", "dir.avsc", "bad.avsc", "bin.avsc"):
        path = project / name
        before = path.read_bytes() if path.is_file() else None
        result = run("check", str(path), "-s", SUBJECT, "--fix")
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output
        assert str(path.name) in result.output
        if before is not None:
            assert path.read_bytes() == before


def test_fix_keeps_a_byte_order_mark_and_crlf_line_breaks(project):
    path = project / "v3.avsc"
    path.write_bytes(b"\xef\xbb\xbf" + BROKEN.replace("\n", "\r\n").encode())
    result = run("check", str(path), "-s", SUBJECT, "--fix")
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b'{"name": "zone", "type": "int", "default": 0}\r\n' in data
    assert b"\n" not in data.replace(b"\r\n", b"")
