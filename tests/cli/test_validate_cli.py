"""`schemacli validate`: exit codes, output formats, and no traceback on any broken input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "avsc"
KEY_V1 = ROOT / "schemas/subjects/taxi-rides-key/v1.avsc"


def run(*args: str | Path):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def test_valid_store_exits_0_and_prints_each_file_with_its_fingerprint() -> None:
    result = run("validate", ROOT / "schemas")
    assert result.exit_code == 0
    ok_lines = [line for line in result.stdout.splitlines() if line.startswith("ok  ")]
    assert len(ok_lines) == 4
    assert all("crc64 " in line for line in ok_lines)
    assert result.stdout.splitlines()[-1] == "validate: 4 files, 0 invalid, 0 errors, 0 warnings"


def test_invalid_file_exits_2_with_file_line_col_kind_and_hint() -> None:
    path = FIXTURES / "bad" / "unknown_type.avsc"
    result = run("validate", path)
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"{path}:7:30: error[UNDEFINED_NAME]: Undefined name: com.acme.Zone (at /fields/1/type)"
    )
    assert lines[1].startswith("  hint: ")


def test_warnings_exit_0_and_strict_makes_them_exit_2() -> None:
    path = FIXTURES / "warn" / "union_default_not_first.avsc"
    relaxed = run("validate", path)
    assert relaxed.exit_code == 0
    assert f"{path}:5:61: warning[UNION_DEFAULT_NOT_FIRST]: " in relaxed.stdout
    strict = run("validate", "--strict", path)
    assert strict.exit_code == 2
    assert f"{path}:5:61: error[UNION_DEFAULT_NOT_FIRST]: " in strict.stdout
    assert "--strict" in strict.stdout.splitlines()[-1]


def test_show_canonical_prints_the_parsing_canonical_form() -> None:
    result = run("validate", "--show-canonical", KEY_V1)
    assert result.exit_code == 0
    [canonical] = [line for line in result.stdout.splitlines() if "canonical: " in line]
    form = canonical.split("canonical: ", 1)[1]
    assert form.startswith('{"name":"') and " " not in form


def test_json_output_lists_files_fingerprints_and_findings() -> None:
    bad = FIXTURES / "bad" / "duplicate_field.avsc"
    result = run("validate", "-o", "json", "--show-canonical", KEY_V1, bad)
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and payload["errors"] == 1
    good, invalid = payload["files"]
    assert good["ok"] and len(good["fingerprint"]["crc64"]) == 16 and good["canonical"]
    [finding] = invalid["findings"]
    assert finding["kind"] == "DUPLICATE_FIELD"
    assert finding["location"] == {
        "source": str(bad),
        "pointer": "/fields/2/name",
        "line": 7,
        "column": 14,
    }
    assert finding["hint"]


def test_github_output_annotates_file_and_line() -> None:
    result = run("validate", "-o", "github", FIXTURES / "bad" / "trailing_comma.avsc")
    assert result.exit_code == 2
    assert "::error file=" in result.stdout and "line=5" in result.stdout


def test_junit_output_is_xml_with_one_case_per_file() -> None:
    result = run("validate", "-o", "junit", FIXTURES / "refs")
    assert result.exit_code == 0
    assert result.stdout.startswith("<?xml") and result.stdout.count("<testcase ") == 6


def test_junit_output_stays_well_formed_xml_when_a_schema_holds_control_characters(
    tmp_path: Path,
) -> None:
    import xml.dom.minidom

    path = tmp_path / "control.avsc"
    path.write_text('{"type": "record", "name": "a\\u0001b", "fields": []}')
    result = run("validate", path, "-o", "junit")
    assert result.exit_code == 2  # an invalid name, reported
    document = xml.dom.minidom.parseString(result.stdout)
    assert "\\u0001" in document.getElementsByTagName("error")[0].firstChild.data


def test_truly_broken_set_of_inputs_exits_2_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "binary.avsc").write_bytes(b"Obj\x01\x00\x00\xff\xfe")
    (tmp_path / "no-schemas").mkdir()
    (tmp_path / "no-schemas" / "readme.txt").write_text("nothing here")
    locked = tmp_path / "locked.avsc"
    locked.write_text('"int"')
    import schemacli.textfile

    real_open = schemacli.textfile.os.open

    def open_file(path, flags, *args):
        if Path(path).name == "locked.avsc":  # root ignores chmod 000: refuse as the OS would
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(schemacli.textfile.os, "open", open_file)
    result = run(
        "validate",
        tmp_path / "binary.avsc",
        tmp_path / "no-schemas",
        tmp_path / "missing.avsc",
        locked,
        tmp_path,  # a folder holding all of it
    )
    assert result.exit_code == 2
    out = result.stdout
    assert "error[PATH_NOT_FOUND]: no such file or folder" in out
    assert "error[NO_SCHEMA_FILES]" in out
    assert f"{tmp_path / 'binary.avsc'}:1:5: error[UNREADABLE_FILE]: this is a binary file" in out
    assert f"{locked}: error[UNREADABLE_FILE]: permission denied" in out
    assert out.splitlines()[-1].startswith("validate: 2 files, 2 invalid")


def test_symbolic_links_in_a_loop_exit_2_naming_the_link_in_every_command(tmp_path: Path) -> None:
    (tmp_path / "a.avsc").symlink_to("b.avsc")
    (tmp_path / "b.avsc").symlink_to("a.avsc")
    loop = tmp_path / "a.avsc"
    for args in (
        ("validate", loop),
        ("validate", tmp_path),  # found while walking a folder
        ("diff", loop, KEY_V1),
        ("check", loop, "--subject", "taxi-rides-key", "--store", ROOT / "schemas"),
        ("spark", "ddl", loop),
        ("migrate", "plan", "--from", loop, "--to", KEY_V1),
    ):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert f"{loop}" in result.output and "symbolic links in a loop" in result.output, args


def test_a_number_longer_than_java_reads_exits_2_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "long.avsc"
    digits = "9" * 5000  # past what Python reads (4,300 digits) as well as Java (1,000)
    path.write_text(
        '{"type": "record", "name": "R",\n "fields": [{"name": "a", "type": "long", '
        f'"default": {digits}}}]}}'
    )
    for args in (("validate", path), ("diff", path, path), ("validate", path, "-o", "json")):
        result = run(*args)
        assert result.exit_code == 2, args
        assert "a number of 5000 digits; Apache Avro Java (Jackson) reads at most 1000" in (
            result.output
        )
    assert f"{path}:2:54: error[INVALID_JSON]" in run("validate", path).output


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_unreadable_file_exits_2(tmp_path: Path) -> None:
    locked = tmp_path / "locked.avsc"
    locked.write_text('"int"')
    locked.chmod(0)
    try:
        result = run("validate", locked)
    finally:
        locked.chmod(0o644)
    assert result.exit_code == 2
    assert "permission denied" in result.stdout


def test_no_path_is_a_usage_error() -> None:
    result = run("validate")
    assert result.exit_code == 2


def test_help_in_a_subprocess_exits_0_and_lists_validate() -> None:
    script = Path(sys.executable).with_name("schemacli")  # the installed console script
    command = [str(script)] if script.exists() else [sys.executable, "-m", "schemacli"]
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "validate" in done.stdout
    assert "Traceback" not in done.stderr


def test_validate_help_documents_exit_codes() -> None:
    result = run("validate", "--help")
    assert result.exit_code == 0
    assert "Exit codes" in result.stdout and "--strict" in result.stdout
