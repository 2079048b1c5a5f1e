"""`schemacli check` of a file in the store: the subject comes from its folder
(`.../subjects/<subject>/v<N>.avsc`, no --subject needed), and the store's own vN is checked
against the versions before it, as gate checks it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from schemacli.app import app


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_store_version_needs_no_subject_and_is_checked_against_the_versions_before_it(project):
    result = run("check", "schemas/subjects/taxi-rides-value/v2.avsc", "-o", "json")
    assert result.exit_code == 0, result.output
    (case,) = json.loads(result.stdout)["cases"]
    assert case["name"] == "taxi-rides-value" and case["versions"] == 1
    assert "identical" not in result.stdout


def test_a_new_version_added_to_the_store_is_checked_before_gate_runs(project):
    folder = project / "schemas/subjects/taxi-rides-value"
    v2 = json.loads((folder / "v2.avsc").read_text())
    v2["fields"].append({"name": "zone", "type": "int"})  # no default: breaks BACKWARD
    (folder / "v3.avsc").write_text(json.dumps(v2, indent=2))
    result = run("check", "schemas/subjects/taxi-rides-value/v3.avsc")
    assert result.exit_code == 1, result.output
    assert "taxi-rides-value" in result.stdout and "zone" in result.stdout


def test_a_version_file_of_a_subject_folder_outside_the_store_takes_the_folder_name(project):
    copy = project / "elsewhere/subjects/taxi-rides-value/v9.avsc"
    copy.parent.mkdir(parents=True)
    copy.write_text((project / "schemas/subjects/taxi-rides-value/v2.avsc").read_text())
    result = run("check", str(copy))
    assert result.exit_code == 0, result.output
    assert "as the next version of taxi-rides-value" in result.stdout
    assert "identical to taxi-rides-value v2" in result.stdout  # its whole history counts


def test_a_loose_file_still_follows_the_naming_strategy(project):
    loose = project / "ride.avsc"
    loose.write_text((project / "schemas/subjects/taxi-rides-value/v2.avsc").read_text())
    result = run("check", str(loose))
    assert result.exit_code == 2
    assert "<topic>-value.avsc" in result.stderr
