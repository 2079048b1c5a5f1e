"""`schemacli gate`: the CI gate over the whole store, through the CLI (and one subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
VALUE = "schemas/subjects/taxi-rides-value"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(project):
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "t@example.com")
    git(project, "config", "user.name", "t")
    commit_all(project, "example store")
    return project


def add_version(project: Path, subject_dir: str, schema: dict | str) -> Path:
    directory = project / subject_dir
    n = len(list(directory.glob("v*.avsc"))) + 1
    path = directory / f"v{n}.avsc"
    path.write_text(schema if isinstance(schema, str) else json.dumps(schema, indent=2))
    return path


def test_gate_passes_on_the_example_store(project):
    result = run("gate")
    assert result.exit_code == 0, result.output
    assert "taxi-rides-value   BACKWARD   2" in result.stdout
    assert "gate: passed (2 subjects)" in result.stdout


def test_gate_exit_code_is_1_when_total_amount_becomes_string(project):
    v3 = add_version(project, VALUE, BREAKING.read_text())
    result = run("gate")
    assert result.exit_code == 1
    assert f"{v3.relative_to(project)}:11:38 (at /fields/4/type): error TYPE_MISMATCH" in (
        result.stdout
    )


def test_gate_lists_every_violation_not_only_the_first(project):
    add_version(project, VALUE, BREAKING.read_text())
    key = json.loads((project / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
    key["fields"].append({"name": "zone", "type": "int"})  # no default: breaks BACKWARD
    add_version(project, "schemas/subjects/taxi-rides-key", key)
    result = run("gate", "-o", "json")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    kinds = {c["name"]: [f["kind"] for f in c["findings"]] for c in payload["cases"]}
    assert kinds == {
        "taxi-rides-key": ["READER_FIELD_MISSING_DEFAULT_VALUE"],
        "taxi-rides-value": ["TYPE_MISMATCH"],
    }


def test_gate_invalid_avsc_exits_2_with_file_line_and_column(project):
    bad = add_version(project, VALUE, '{\n  "type": "record",\n  "name": "TaxiRide",\n}')
    result = run("gate")
    assert result.exit_code == 2
    assert f"{bad.relative_to(project)}:3:" in result.stdout
    assert "INVALID_SCHEMA" in result.stdout
    assert "Traceback" not in result.output


def test_gate_store_option_and_missing_store(project, tmp_path):
    assert run("gate", "--store", "schemas").exit_code == 0
    result = run("gate", "--store", "nowhere")
    assert result.exit_code == 2
    assert "does not exist" in result.stdout


def test_gate_on_a_folder_without_subjects_exits_2_instead_of_passing_nothing(project):
    (project / "not-a-store").mkdir()
    for store in ("not-a-store", "schemas/subjects"):  # one folder too high or too low
        result = run("gate", "--store", store)
        assert result.exit_code == 2, store
        assert "the store has no subjects/ folder" in result.stdout


def test_a_level_configured_for_a_subject_the_store_lacks_is_a_warning_naming_the_likely_one(
    project,
):
    (project / "schemacli.toml").write_text(
        'store = "schemas"\n[subjects."taxi-ride-value"]\nlevel = "FULL"\n'
    )
    result = run("gate", "-o", "json")
    assert result.exit_code == 0  # a warning: the real subjects still pass at their levels
    cases = json.loads(result.stdout)["cases"]
    (warning,) = [f for case in cases for f in case["findings"]]
    assert warning["severity"] == "warning"
    assert "subject 'taxi-ride-value', which the store does not hold" in warning["message"]
    assert "did you mean 'taxi-rides-value'?" in warning["message"]
    assert warning["location"]["source"].endswith("schemacli.toml")


def test_gate_against_a_ref_checks_only_what_changed_since(repo):
    # The committed history holds a breaking v3: the full gate fails, the gate against HEAD
    # (nothing new) passes; a new compatible v4 is checked against the history at the ref.
    add_version(repo, VALUE, BREAKING.read_text())
    commit_all(repo, "breaking v3")
    assert run("gate").exit_code == 1
    assert run("gate", "--against", "git:HEAD").exit_code == 0
    v4 = json.loads(BREAKING.read_text())
    v4["fields"].append({"name": "zone", "type": "int", "default": 0})
    add_version(repo, VALUE, v4)
    result = run("gate", "--against", "git:main", "-o", "json")
    assert result.exit_code == 0, result.stdout
    value = next(c for c in json.loads(result.stdout)["cases"] if c["name"] == "taxi-rides-value")
    assert value["checked"] == [4]


def test_gate_against_a_ref_rejects_an_edited_existing_version(repo):
    v2 = repo / VALUE / "v2.avsc"
    v2.write_text(v2.read_text().replace('"default": 0.0', '"default": 1.0'))
    result = run("gate", "--against", "git:main")
    assert result.exit_code == 1
    assert "HISTORY_REWRITTEN" in result.stdout
    assert "restore v2" in result.stdout
    # Located on the edited line, so the CI annotation lands on it.
    line = next(
        n for n, text in enumerate(v2.read_text().splitlines(), start=1) if '"default": 1.0' in text
    )
    assert f"{VALUE}/v2.avsc:{line}:" in result.stdout


def test_gate_against_unknown_ref_exits_2(repo):
    result = run("gate", "--against", "git:origin/main")
    assert result.exit_code == 2
    assert "unknown git ref 'origin/main'" in result.stderr


def test_gate_against_outside_git_exits_2(project):
    result = run("gate", "--against", "git:main")
    assert result.exit_code == 2
    assert "not inside a git repository" in result.stderr


def test_gate_junit_report_has_one_testcase_per_subject(project):
    add_version(project, VALUE, BREAKING.read_text())
    result = run("gate", "-o", "junit")
    assert result.exit_code == 1
    suite = ET.fromstring(result.stdout).find("testsuite")
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == ["taxi-rides-key", "taxi-rides-value"]
    assert suite.get("failures") == "1"


def test_gate_github_output_annotates_the_offending_line(project):
    add_version(project, VALUE, BREAKING.read_text())
    result = run("gate", "-o", "github")
    assert result.exit_code == 1
    assert result.stdout.startswith(
        f"::error file={VALUE}/v3.avsc,line=11,col=38,title=taxi-rides-value%3A TYPE_MISMATCH::"
    )


def test_gate_progress_goes_to_stderr_and_results_to_stdout(project):
    result = run("gate", "-o", "json")
    assert "gate: checking schemas" in result.stderr
    json.loads(result.stdout)  # nothing but the JSON document on stdout
    assert "gate: checking" not in run("gate", "-q").stderr


def test_gate_help_runs_as_a_subprocess_and_documents_exit_codes():
    result = subprocess.run(
        [sys.executable, "-m", "schemacli", "gate", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Exit codes: 0 pass, 1 incompatible" in " ".join(result.stdout.split())


def test_gate_github_output_writes_the_step_summary_in_actions(project, monkeypatch):
    add_version(project, VALUE, BREAKING.read_text())
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run("gate", "-o", "github").exit_code == 1
    text = summary.read_text()
    assert "| taxi-rides-value | BACKWARD | 3 | v2, v3 | incompatible |" in text
    assert "**TYPE_MISMATCH**" in text
    assert not (project / "other.md").exists()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project / "other.md"))
    run("gate", "-o", "text")  # only the github format writes it
    assert not (project / "other.md").exists()


@pytest.mark.parametrize("output", ["text", "json", "junit", "github"])
def test_gate_reports_a_removed_enum_symbol_in_every_format(project, output):
    # MISSING_ENUM_SYMBOLS carries lists (the symbols): every renderer must take them.
    subject = project / "schemas/subjects/payment-value"
    subject.mkdir()
    enum = {"type": "enum", "name": "Payment", "namespace": "t", "symbols": ["CASH", "CARD"]}
    add_version(project, "schemas/subjects/payment-value", enum)
    add_version(project, "schemas/subjects/payment-value", {**enum, "symbols": ["CASH"]})
    result = run("gate", "-o", output)
    assert result.exit_code == 1, result.output
    assert "MISSING_ENUM_SYMBOLS" in result.stdout
    assert "Traceback" not in result.output


# -- named types another subject defines -------------------------------------------------------

POSITION = {
    "type": "record",
    "name": "Position",
    "namespace": "com.acme",
    "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}],
}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme",
    "fields": [{"name": "id", "type": "long"}, {"name": "at", "type": "Position"}],
}


def with_lat(lat: str) -> dict:
    return {**POSITION, "fields": [{"name": "lat", "type": lat}, POSITION["fields"][1]]}


def shared_position_store(project: Path) -> None:
    for subject, schema in (("orders-value", ORDER), ("positions-value", POSITION)):
        (project / "schemas/subjects" / subject).mkdir()
        add_version(project, f"schemas/subjects/{subject}", schema)


def test_gate_resolves_a_type_another_subject_defines(project):
    shared_position_store(project)
    result = run("gate")
    assert result.exit_code == 0, result.output
    assert "gate: passed (4 subjects)" in result.stdout


def test_gate_sees_a_breaking_change_in_a_shared_type_from_the_dependent_subject(project):
    shared_position_store(project)
    embedded = {**ORDER, "fields": [ORDER["fields"][0], {"name": "at", "type": POSITION}]}
    (project / "schemas/subjects/orders-value/v1.avsc").write_text(json.dumps(embedded))
    add_version(project, "schemas/subjects/orders-value", ORDER)  # v2: Position by name
    (project / "schemas/subjects/positions-value/v1.avsc").write_text(
        json.dumps(with_lat("string"))
    )
    result = run("gate", "-o", "json")
    assert result.exit_code == 1, result.output
    orders = next(c for c in json.loads(result.stdout)["cases"] if c["name"] == "orders-value")
    assert [f["kind"] for f in orders["findings"]] == ["TYPE_MISMATCH"]


def test_gate_a_type_two_subjects_define_differently_exits_2_naming_both_files(project):
    shared_position_store(project)
    (project / "schemas/subjects/places-value").mkdir()
    add_version(project, "schemas/subjects/places-value", with_lat("float"))
    result = run("gate")
    assert result.exit_code == 2, result.output
    assert "com.acme.Position is defined differently by 2 subjects" in result.stdout
    assert "schemas/subjects/places-value/v1.avsc:1:1" in result.stdout
    assert "schemas/subjects/positions-value/v1.avsc:1:1" in result.stdout
    assert "schemas/subjects/orders-value/v1.avsc:" in result.stdout
    assert "references" in result.stdout
    assert "Traceback" not in result.output


def test_gate_a_type_no_subject_defines_exits_2_with_the_undefined_name(project):
    (project / "schemas/subjects/orders-value").mkdir()
    add_version(project, "schemas/subjects/orders-value", ORDER)
    result = run("gate")
    assert result.exit_code == 2, result.output
    assert "Undefined name: com.acme.Position" in result.stdout
    assert "schemas/subjects/orders-value/v1.avsc:" in result.stdout


def test_gate_against_a_ref_resolves_shared_types_from_the_tree_at_the_ref(repo):
    (repo / "schemacli.toml").write_text(
        'store = "schemas"\n[subjects."positions-value"]\nlevel = "NONE"\n'
    )
    shared_position_store(repo)
    commit_all(repo, "orders and positions")
    # New since the ref: Position's lat becomes a string (positions-value checks nothing),
    # and orders-value v2 (identical but for a doc) takes the new Position. Checked against
    # v1 as it was at the ref, with the Position committed there: v2 cannot read it.
    add_version(repo, "schemas/subjects/positions-value", with_lat("string"))
    add_version(repo, "schemas/subjects/orders-value", {**ORDER, "doc": "v2"})
    result = run("gate", "--against", "git:HEAD", "-o", "json")
    assert result.exit_code == 1, result.output
    cases = {c["name"]: c for c in json.loads(result.stdout)["cases"]}
    assert cases["orders-value"]["checked"] == [2]
    assert [f["kind"] for f in cases["orders-value"]["findings"]] == ["TYPE_MISMATCH"]
    assert cases["positions-value"]["findings"] == []
