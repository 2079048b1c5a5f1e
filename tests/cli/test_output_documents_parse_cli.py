"""Every ``-o`` format is one document its consumer parses, whatever the names in it hold.

File and subject names (and schema names) with spaces, commas, colons, newlines, control
characters, ``%``, ``#``, ``]]>``, quotes, a bidi override, non-ASCII and an undecodable byte go
through ``gate`` (findings in that file), ``validate`` (an invalid schema of that name) and two
error paths (a missing file; an unreachable registry): stdout is one valid JSON, JUnit, SARIF
2.1.0, GitLab code quality or GitHub workflow-command document, a file's SARIF ``uri`` decodes
back to its path, GitHub's ``file=`` unescapes back to it, GitLab's ``path`` is the path itself
(GitLab matches it literally) — and a secret planted in the registry URL shows in neither stdout
nor stderr. A command line that does not parse (a misspelt option, a missing argument, a bad
number) still writes the asked format's error document, click's words staying on stderr.
"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.redact import printable
from tests.output_documents import FORMATS, parse

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
SECRET = "Pl4nted-SECRET-9"

NAMES = {
    "space": "a b",
    "comma": "a,b",
    "colon": "a:b",
    "newline": "nl\nx",
    "carriage-return": "cr\rx",
    "escape-and-bell": "esc\x1b]0;t\x07",
    "nul-like-controls": "c\x01\x02\x1f",
    "delete": "del\x7f",
    "percent": "pct%41%",
    "hash-and-query": "h#q?x",
    "non-ascii": "ünï€",
    "cdata-end": "cd]]>x",
    "quotes": "q\"uo'te",
    "markup": "lt<&>",
    "bidi-override": "bidi\u202ex",
    "tab": "tab\tx",
    "undecodable-byte": "bad\udcff",  # the name a file named b"bad\xff" has in Python
}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def run(tmp_path, monkeypatch, clean_registry_env):
    """Run schemacli in ``tmp_path`` with a secret planted in the environment's registry URL."""
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    env = {"SCHEMACLI_REGISTRY_URL": f"http://ci:{SECRET}@127.0.0.1:{closed_port()}"}

    def invoke(*args: str):
        result = CliRunner().invoke(app, list(args), env=env)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        assert SECRET not in result.stdout and SECRET not in result.stderr
        return result

    return invoke


def assert_path_round_trips(fmt: str, document, path: str) -> None:
    """The file's place in the document leads back to the file."""
    if fmt == "sarif":
        uris = {
            loc["physicalLocation"]["artifactLocation"]["uri"]
            for run_ in document["runs"]
            for result in run_["results"] + _notifications(run_)
            for loc in result.get("locations", [])
            if "physicalLocation" in loc
        }
        assert uris and {unquote(u, errors="surrogateescape") for u in uris} == {path}
    elif fmt == "gitlab":
        assert {issue["location"]["path"] for issue in document} == {printable(path)}
    elif fmt == "github":
        files = {command["file"] for command in document if "file" in command}
        shown = printable(path, keep="\r\n\t")  # and a lone surrogate as stdout escapes it
        assert files == {shown.encode("utf-8", "backslashreplace").decode("utf-8")}


def _notifications(run_: dict) -> list[dict]:
    return [
        n for inv in run_.get("invocations", []) for n in inv.get("toolExecutionNotifications", [])
    ]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_gate_findings_in_an_oddly_named_subject_make_a_valid_document(run, tmp_path, fmt, name):
    subject = tmp_path / "store/subjects" / name
    subject.mkdir(parents=True)
    shutil.copy(V1, subject / "v1.avsc")
    shutil.copy(BREAKING, subject / "v2.avsc")
    result = run("gate", "--store", "store", "-q", "--no-cache", "-o", fmt)
    assert result.exit_code == 1, result.stderr
    document = parse(fmt, result.stdout)
    assert_path_round_trips(fmt, document, f"store/subjects/{name}/v2.avsc")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_validate_of_an_oddly_named_invalid_schema_makes_a_valid_document(run, tmp_path, fmt, name):
    path = tmp_path / f"{name}.avsc"
    schema = {"type": "record", "name": name, "fields": [{"name": "f", "type": "int"}]}
    path.write_text(json.dumps(schema))
    result = run("validate", path.name, "-o", fmt)
    assert result.exit_code == 2, result.stderr
    document = parse(fmt, result.stdout)
    assert_path_round_trips(fmt, document, path.name)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_a_command_that_cannot_read_its_file_still_writes_one_valid_document(run, fmt, name):
    result = run("check", f"{name}.avsc", "--subject", name, "-o", fmt)
    assert result.exit_code == 2, result.stderr
    document = parse(fmt, result.stdout)
    assert_path_round_trips(fmt, document, f"{name}.avsc")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["a b,c:d", "nl\nx\x1b", "ünï€%"])
def test_an_unreachable_registry_still_writes_one_valid_document_without_the_secret(
    run, tmp_path, fmt, name
):
    path = tmp_path / f"{name}.avsc"
    shutil.copy(V1, path)
    url = f"http://ci:{SECRET}@127.0.0.1:{closed_port()}"
    result = run(
        "check", path.name, "--subject", name, "--registry", url, "--retries", "0", "-o", fmt
    )
    assert result.exit_code == 3, result.stderr
    parse(fmt, result.stdout)
    assert "127.0.0.1" in result.stderr  # the URL is named, without its user info


USAGE_ERRORS = {
    "misspelt-option": ["gate", "--storr", "schemas"],
    "missing-argument": ["check", "--subject", "s"],
    "bad-number": ["gate", "--registry", "http://127.0.0.1:1", "--retries", "many"],
    "nested-command": ["migrate", "validate", "--bogus"],
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("args", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_a_command_line_that_does_not_parse_still_writes_one_valid_document(run, args, fmt):
    result = run(*args, "-o", fmt)
    assert result.exit_code == 2, result.output
    assert "Try 'schemacli" in result.stderr  # click's own words stay on stderr
    parse(fmt, result.stdout)


def test_a_usage_error_writes_no_document_for_a_format_the_command_does_not_have(run):
    result = run("subjects", "list", "-o", "junit")
    assert result.exit_code == 2 and result.stdout == ""


@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_the_github_step_summary_of_oddly_named_subjects_is_utf8_text_without_controls(
    run, tmp_path, monkeypatch, name
):
    subject = tmp_path / "store/subjects" / name
    subject.mkdir(parents=True)
    shutil.copy(V1, subject / "v1.avsc")
    shutil.copy(BREAKING, subject / "v2.avsc")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run("gate", "--store", "store", "-q", "--no-cache", "-o", "github")
    assert result.exit_code == 1, result.stderr
    text = summary.read_bytes().decode("utf-8")  # strict: the file is UTF-8
    assert not any(ord(c) < 32 and c != "\n" for c in text)
    assert "| incompatible |" in text
