"""`-` as a path: validate, check and diff read the schema from standard input, named <stdin>."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
BAD = ROOT / "tests/fixtures/avsc/bad/duplicate_field.avsc"


def run(*args: str, stdin: bytes):
    return CliRunner().invoke(app, list(args), input=stdin)


def test_validate_reads_standard_input_and_names_it_stdin():
    good = run("validate", "-", stdin=V1.read_bytes())
    assert good.exit_code == 0 and "<stdin>" in good.stdout
    bad = run("validate", "-", stdin=BAD.read_bytes())
    assert bad.exit_code == 2
    assert "<stdin>:7:14: error[DUPLICATE_FIELD]" in bad.stdout


def test_validate_mixes_stdin_with_files():
    result = run("validate", "-", str(V1), "-o", "json", stdin=BAD.read_bytes())
    assert result.exit_code == 2
    assert '"source": "<stdin>"' in result.stdout and str(V1) in result.stdout


def test_check_reads_the_candidate_from_stdin(project):
    result = run("check", "-", "--subject", "taxi-rides-value", stdin=BREAKING.read_bytes())
    assert result.exit_code == 1
    assert "<stdin>:11:38" in result.stdout and "TYPE_MISMATCH" in result.stdout


def test_check_from_stdin_needs_a_subject_the_file_name_cannot_give(project):
    result = run("check", "-", stdin=V1.read_bytes())
    assert result.exit_code == 2
    assert "<stdin>" in result.output and "--subject" in result.output


def test_diff_takes_either_side_from_stdin_but_not_both():
    result = run("diff", str(V1), "-", stdin=BREAKING.read_bytes())
    assert result.exit_code == 0 and "<stdin>:11:38" in result.stdout
    both = run("diff", "-", "-", stdin=V1.read_bytes())
    assert both.exit_code == 2 and "cannot both be -" in both.output


def test_empty_or_binary_stdin_is_an_input_error_naming_stdin():
    empty = run("validate", "-", stdin=b"")
    assert empty.exit_code == 2 and "<stdin>:1:1" in empty.stdout and "empty" in empty.stdout
    binary = run("check", "-", "--subject", "s", stdin=b"Obj\x01\x00\x00")
    assert binary.exit_code == 2 and "<stdin>" in binary.output and "NUL" in binary.output
