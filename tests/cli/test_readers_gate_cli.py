"""gate and check judge every new writer version against the consumers' declared readers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.output_documents import parse

VALUE = "schemas/subjects/taxi-rides-value"
FORMATS = ("text", "json", "junit", "github", "sarif", "gitlab")


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def v2(project: Path) -> dict:
    return json.loads((project / VALUE / "v2.avsc").read_text())


def reader_needing(field: dict) -> dict:
    """A reader of taxi-rides-value that needs one more field than the writer has."""
    schema = json.loads((Path(__file__).resolve().parents[2] / VALUE / "v2.avsc").read_text())
    schema["fields"].append(field)
    return schema


def declare(
    project: Path,
    consumer: str,
    schema: dict,
    subject: str = "taxi-rides-value",
    manifest: dict | None = None,
) -> Path:
    folder = project / "schemas" / "readers" / consumer
    folder.mkdir(parents=True, exist_ok=True)
    manifest = manifest or {
        "owner": f"team-{consumer}",
        "contact": f"{consumer}@example.com",
        "groups": [f"{consumer}-group"],
    }
    (folder / "reader.json").write_text(json.dumps(manifest))
    path = folder / f"{subject}.avsc"
    path.write_text(json.dumps(schema, indent=2))
    return path


def add_version(project: Path, schema: dict) -> Path:
    directory = project / VALUE
    n = len(list(directory.glob("v*.avsc"))) + 1
    path = directory / f"v{n}.avsc"
    path.write_text(json.dumps(schema, indent=2))
    return path


def without(schema: dict, name: str) -> dict:
    return {**schema, "fields": [f for f in schema["fields"] if f["name"] != name]}


# -- the "done when" -------------------------------------------------------------------


def test_a_declared_reader_a_new_writer_version_would_break_fails_the_gate_naming_it(project):
    # The billing consumer reads total_amount, which has no default; v3 drops it. BACKWARD (the new
    # schema reads the old) is fine with a dropped field: only the declared reader catches it.
    declare(project, "billing", v2(project))
    add_version(project, without(v2(project), "total_amount"))
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 1, result.output
    assert "Consumer billing (owner team-billing; group(s) billing-group)" in result.output
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in result.output
    assert "billing@example.com" in result.output


def test_the_same_version_without_declared_readers_passes(project):
    add_version(project, without(v2(project), "total_amount"))
    assert run("gate", "--no-cache", "-q").exit_code == 0


def test_a_reader_that_can_read_the_new_version_passes(project):
    declare(project, "billing", without(v2(project), "total_amount"))
    add_version(project, without(v2(project), "total_amount"))
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 0, result.output


def test_a_reader_of_the_latest_version_is_judged_even_with_no_new_version(project):
    declare(project, "billing", reader_needing({"name": "zone", "type": "string"}))
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 1
    assert "cannot read taxi-rides-value v2" in result.output


def test_the_finding_sits_at_line_col_in_the_writer_and_names_the_readers(project):
    reader = without(v2(project), "store_and_fwd_flag")
    reader["fields"][0] = {"name": "vendorId", "type": "string"}  # int -> string: no promotion
    declare(project, "billing", reader)
    result = run("gate", "--no-cache", "-q", "-o", "json")
    finding = json.loads(result.output)["cases"][1]["findings"][0]
    assert finding["kind"] == "TYPE_MISMATCH"
    # in the writer (v2.avsc): the vendorId field's type, line 6
    assert finding["location"]["source"].endswith("taxi-rides-value/v2.avsc")
    assert finding["location"]["pointer"] == "/fields/0/type"
    assert finding["location"]["line"] == 6
    # in the reader: its own file, its own line
    ref = finding["reader"]
    assert ref["consumer"] == "billing" and ref["owner"] == "team-billing"
    assert ref["groups"] == ["billing-group"] and ref["contact"] == "billing@example.com"
    assert ref["location"]["source"].endswith("readers/billing/taxi-rides-value.avsc")
    assert ref["location"]["pointer"] == "/fields/0/type"
    assert ref["location"]["line"] == 8  # indent=2: the field's "type" line
    assert f"{ref['location']['source']}:8:" in finding["message"]
    assert f"{finding['location']['source']}:6:" in finding["message"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_names_the_consumer_and_is_a_valid_document(project, fmt):
    declare(project, "billing", reader_needing({"name": "zone", "type": "string"}))
    result = run("gate", "--no-cache", "-q", "-o", fmt)
    assert result.exit_code == 1
    assert "Consumer billing" in result.output
    if fmt != "text":
        parse(fmt, result.output)


def test_sarif_relates_the_readers_place_to_the_writers(project):
    declare(project, "billing", reader_needing({"name": "zone", "type": "string"}))
    log = parse("sarif", run("gate", "--no-cache", "-q", "-o", "sarif").output)
    result = log["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "taxi-rides-value/v2.avsc"
    )
    related = result["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"].endswith("readers/billing/taxi-rides-value.avsc")
    assert related["region"]["startLine"] > 1
    assert result["properties"]["consumer"] == "billing"
    assert result["properties"]["owner"] == "team-billing"


def test_a_warm_gate_gives_the_same_report_from_the_cache(project, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEMACLI_CACHE_DIR", str(tmp_path / "cache"))
    declare(project, "billing", v2(project))
    add_version(project, without(v2(project), "total_amount"))
    cold = run("gate", "-q", "-o", "json")
    warm = run("gate", "-q", "-o", "json")
    assert cold.exit_code == warm.exit_code == 1
    assert cold.output == warm.output
    # a changed declaration is a changed key: judged again
    declare(project, "billing", without(v2(project), "total_amount"))
    assert run("gate", "-q").exit_code == 0


def test_a_new_owner_in_the_manifest_is_not_served_stale_from_the_cache(
    project, tmp_path, monkeypatch
):
    monkeypatch.setenv("SCHEMACLI_CACHE_DIR", str(tmp_path / "cache"))
    declare(project, "billing", reader_needing({"name": "zone", "type": "string"}))
    run("gate", "-q")
    declare(
        project,
        "billing",
        reader_needing({"name": "zone", "type": "string"}),
        manifest={"owner": "team-new", "groups": ["g"]},
    )
    assert "owner team-new" in run("gate", "-q").output


# -- with --against: every new version --------------------------------------------------------


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_gate_against_a_ref_judges_every_new_version(project):
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "t@example.com")
    git(project, "config", "user.name", "t")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "store")
    declare(project, "billing", v2(project))
    add_version(project, without(v2(project), "total_amount"))  # v3: billing cannot read it
    add_version(project, v2(project))  # v4: billing can
    result = run("gate", "--no-cache", "-q", "--against", "git:main", "-o", "json")
    assert result.exit_code == 1
    messages = [f["message"] for c in json.loads(result.output)["cases"] for f in c["findings"]]
    assert any("cannot read taxi-rides-value v3" in m for m in messages)
    assert not any("cannot read taxi-rides-value v4" in m for m in messages)


# -- the level READERS and --readers-only -------------------------------------------------------


def breaking_backward(project: Path) -> dict:
    """v3 adds a field without default: BACKWARD fails; a reader without the field is fine."""
    schema = v2(project)
    return {**schema, "fields": [*schema["fields"], {"name": "zone", "type": "string"}]}


def test_readers_only_gates_on_the_declared_readers_alone(project):
    declare(project, "billing", v2(project))
    add_version(project, breaking_backward(project))
    assert run("gate", "--no-cache", "-q").exit_code == 1  # at BACKWARD
    result = run("gate", "--no-cache", "-q", "--readers-only", "-o", "json")
    assert result.exit_code == 0, result.output
    levels = {c["level"] for c in json.loads(result.output)["cases"]}
    assert levels == {"READERS"}


def test_readers_only_still_fails_on_a_broken_reader(project):
    declare(project, "billing", v2(project))
    add_version(project, without(v2(project), "total_amount"))
    assert run("gate", "--no-cache", "-q", "--readers-only").exit_code == 1


def test_the_level_readers_can_be_configured_per_subject(project):
    (project / "schemacli.toml").write_text(
        'store = "schemas"\n[subjects."taxi-rides-value"]\nlevel = "READERS"\n'
    )
    declare(project, "billing", v2(project))
    add_version(project, breaking_backward(project))
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 0, result.output
    assert "READERS" in result.output


def test_check_judges_the_candidate_against_the_declared_readers(project, tmp_path):
    declare(project, "billing", v2(project))
    candidate = tmp_path / "next.avsc"
    candidate.write_text(json.dumps(without(v2(project), "total_amount"), indent=2))
    result = run("check", str(candidate), "-s", "taxi-rides-value", "--no-cache", "-o", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["cases"][0]["readers"] == ["billing"]
    finding = report["cases"][0]["findings"][0]
    assert finding["reader"]["consumer"] == "billing"
    assert finding["location"]["source"] == str(candidate)


def test_check_level_readers_and_readers_only_are_the_same(project, tmp_path):
    declare(project, "billing", v2(project))
    candidate = tmp_path / "next.avsc"
    candidate.write_text(json.dumps(breaking_backward(project)))
    assert run("check", str(candidate), "-s", "taxi-rides-value", "--no-cache").exit_code == 1
    for flags in (["--level", "readers"], ["--readers-only"]):
        result = run("check", str(candidate), "-s", "taxi-rides-value", "--no-cache", *flags)
        assert result.exit_code == 0, result.output


def test_check_readers_only_with_another_level_is_a_usage_error(project, tmp_path):
    candidate = tmp_path / "next.avsc"
    candidate.write_text(json.dumps(v2(project)))
    result = run("check", str(candidate), "-s", "taxi-rides-value", "--readers-only", "-l", "FULL")
    assert result.exit_code == 2
    assert "--readers-only and --level" in result.output
    assert "Traceback" not in result.output


# -- bad declarations ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_bad_manifest_stops_the_gate_with_its_line_in_every_format(project, fmt):
    path = declare(project, "billing", v2(project))
    (path.parent / "reader.json").write_text('{\n  "groups": ["a"],\n  "team": "x"\n}\n')
    result = run("gate", "--no-cache", "-q", "-o", fmt)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    if fmt == "text":
        assert "schemas/readers/billing/reader.json:3:" in result.output
    else:
        parse(fmt, result.stdout)


def test_an_invalid_reader_schema_is_an_input_finding_at_its_line(project):
    path = declare(project, "billing", v2(project))
    path.write_text('{"type": "record", "name": "R",\n "fields": [{"name": "a", "type": "nope"}]}')
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 2
    assert "readers/billing/taxi-rides-value.avsc:2:" in result.output
    assert "INVALID_SCHEMA" in result.output or "UNDEFINED_NAME" in result.output


def test_a_reader_of_a_subject_the_store_lacks_is_a_warning(project):
    declare(project, "billing", v2(project), subject="taxi-ride-value")
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 0
    assert "READER_OF_UNKNOWN_SUBJECT" in result.output
    assert "did you mean 'taxi-rides-value'" in result.output


def test_a_huge_reader_schema_is_refused_not_read(project):
    path = declare(project, "billing", v2(project))
    with open(path, "wb") as handle:
        handle.truncate(65 * 1024 * 1024)
    result = run("gate", "--no-cache", "-q")
    assert result.exit_code == 2
    assert "taxi-rides-value.avsc" in result.output
