"""`schemacli check`: one schema against its subject's history, driven through the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
VALUE_V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def write(path: Path, schema: dict | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(schema if isinstance(schema, str) else json.dumps(schema, indent=2))
    return path


def v2_plus(field: dict) -> dict:
    schema = json.loads(VALUE_V2.read_text())
    schema["fields"].append(field)
    return schema


def test_check_exit_code_is_0_for_a_compatible_next_version(project):
    candidate = write(project / "v3.avsc", v2_plus({"name": "zone", "type": "int", "default": 0}))
    result = run("check", str(candidate), "--subject", "taxi-rides-value")
    assert result.exit_code == 0, result.output
    assert "compatible" in result.stdout
    assert "check: compatible" in result.stdout


def test_check_exit_code_is_1_when_total_amount_becomes_string(project):
    result = run("check", str(BREAKING), "--subject", "taxi-rides-value")
    assert result.exit_code == 1
    assert "TYPE_MISMATCH" in result.stdout
    assert f"{BREAKING}:11:38 (at /fields/4/type)" in result.stdout
    assert "Traceback" not in result.output


def test_check_identical_schema_is_not_a_new_version(project):
    result = run("check", str(VALUE_V2), "--subject", "taxi-rides-value", "--level", "FULL")
    assert result.exit_code == 0
    assert "identical to taxi-rides-value v2" in result.stdout


def test_check_level_flag_overrides_the_configured_level(project):
    no_default = write(project / "v3.avsc", v2_plus({"name": "zone", "type": "int"}))
    assert run("check", str(no_default), "-s", "taxi-rides-value").exit_code == 1
    assert run("check", str(no_default), "-s", "taxi-rides-value", "-l", "forward").exit_code == 0


def test_an_empty_level_flag_is_refused_not_taken_for_the_configured_level(project):
    result = run("check", "schemas/subjects/taxi-rides-value/v2.avsc", "-s", "taxi-rides-value",
                 "--level", "")  # fmt: skip
    assert result.exit_code == 2
    assert "--level: '' is not valid" in result.stderr


def test_check_uses_the_subjects_level_from_the_config_file(project):
    (project / "schemacli.toml").write_text(
        'store = "schemas"\n[subjects."taxi-rides-value"]\nlevel = "NONE"\n'
    )
    assert run("check", str(BREAKING), "-s", "taxi-rides-value").exit_code == 0


def test_check_derives_the_subject_from_a_topic_named_file(project):
    candidate = write(project / "new" / "taxi-rides-value.avsc", json.loads(BREAKING.read_text()))
    result = run("check", str(candidate), "-o", "json")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["cases"][0]["name"] == "taxi-rides-value"
    assert payload["cases"][0]["findings"][0]["kind"] == "TYPE_MISMATCH"


def test_check_without_subject_on_an_unmappable_file_is_a_usage_error(project):
    result = run("check", str(BREAKING))
    assert result.exit_code == 2
    assert "--subject" in result.stderr


def test_check_invalid_schema_exits_2_with_file_line_and_column(project):
    bad = write(project / "bad.avsc", '{\n  "type": "record",\n  "name": "R",\n  "fields": [,]\n}')
    result = run("check", str(bad), "-s", "taxi-rides-value")
    assert result.exit_code == 2
    assert f"{bad}:4:" in result.stderr
    assert "Traceback" not in result.output


def test_check_unknown_level_is_a_usage_error(project):
    result = run("check", str(BREAKING), "-s", "taxi-rides-value", "--level", "SIDEWAYS")
    assert result.exit_code == 2
    assert "FULL_TRANSITIVE" in result.stderr


def test_check_missing_file_exits_2(project):
    result = run("check", "nope.avsc", "-s", "taxi-rides-value")
    assert result.exit_code == 2
    assert "nope.avsc" in result.stderr and "no such file" in result.stderr


def test_check_against_git_ref_uses_history_at_that_ref(project):
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    git("add", "schemas")
    git("commit", "-q", "-m", "v1 and v2")
    git("tag", "before-v3")
    # In the working tree, not committed: a v3 where total_amount is a string...
    write(project / "schemas/subjects/taxi-rides-value/v3.avsc", json.loads(BREAKING.read_text()))
    fine_v4 = write(
        project / "v4.avsc",
        json.loads((project / "schemas/subjects/taxi-rides-value/v3.avsc").read_text()),
    )
    # ...against the working tree the candidate is identical to v3 (exit 0);
    assert run("check", str(fine_v4), "-s", "taxi-rides-value").exit_code == 0
    # at the ref, the history ends at v2, where total_amount is a float: incompatible.
    result = run("check", str(fine_v4), "-s", "taxi-rides-value", "--against", "git:before-v3")
    assert result.exit_code == 1, result.output
    assert "taxi-rides-value v2" in result.stdout


def test_check_against_unknown_ref_exits_2_with_a_hint(project):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    result = run("check", str(BREAKING), "-s", "taxi-rides-value", "--against", "git:nope")
    assert result.exit_code == 2
    assert "unknown git ref 'nope'" in result.stderr
    assert "hint:" in result.stderr


def test_check_json_error_is_rendered_as_json_too(project):
    result = run("check", "nope.avsc", "-s", "x-value", "-o", "json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["exit_code"] == 2


def test_check_help_documents_the_exit_codes():
    result = run("check", "--help")
    assert result.exit_code == 0
    assert "Exit codes: 0 compatible" in " ".join(result.stdout.split())


# -- a candidate using a type another subject of the store defines ----------------------------

POSITION = {
    "type": "record",
    "name": "Position",
    "namespace": "com.acme",
    "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}],
}


def order(*extra: dict) -> dict:
    fields = [{"name": "id", "type": "long"}, {"name": "at", "type": "Position"}, *extra]
    return {"type": "record", "name": "Order", "namespace": "com.acme", "fields": fields}


def test_check_finds_a_type_the_candidate_uses_in_another_subject_of_the_store(project):
    write(project / "schemas/subjects/positions-value/v1.avsc", POSITION)
    write(project / "schemas/subjects/orders-value/v1.avsc", order())
    write(project / "drafts/orders-value.avsc", order({"name": "zone", "type": "string"}))
    result = run("check", "drafts/orders-value.avsc", "-o", "json")
    assert result.exit_code == 1, result.output  # a field without a default: BACKWARD breaks
    (case,) = json.loads(result.stdout)["cases"]
    assert case["name"] == "orders-value"
    assert [f["kind"] for f in case["findings"]] == ["READER_FIELD_MISSING_DEFAULT_VALUE"]
    write(
        project / "drafts/orders-value.avsc", order({"name": "zone", "type": "int", "default": 0})
    )
    assert run("check", "drafts/orders-value.avsc").exit_code == 0


def test_check_a_candidate_does_not_take_types_from_its_own_subject(project):
    embedded = {
        **order(),
        "fields": [{"name": "id", "type": "long"}, {"name": "at", "type": POSITION}],
    }
    write(project / "schemas/subjects/orders-value/v1.avsc", embedded)
    write(project / "drafts/orders-value.avsc", order())
    result = run("check", "drafts/orders-value.avsc")
    assert result.exit_code == 2, result.output
    assert "Undefined name: com.acme.Position" in result.output
