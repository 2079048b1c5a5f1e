"""`schemacli migrate rules`: the register body on stdout (or --out), its summary on stderr, and
every bad input refused with exit 2, a located message, no traceback and nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def test_rules_prints_the_register_body_for_the_taxi_example():
    r = run("migrate", "rules", EXAMPLE)
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["schemaType"] == "AVRO" and json.loads(body["schema"])["name"] == "TaxiRide"
    assert body["metadata"] == {"properties": {"major_version": "2"}}
    (rule,) = body["ruleSet"]["migrationRules"]  # parse_number to float has no exact inverse
    assert (rule["mode"], rule["type"], rule["onFailure"]) == ("DOWNGRADE", "JSONATA", "ERROR")
    assert "compiled DOWNGRADE (no UPGRADE" in r.stderr


def test_rules_json_output_is_one_document_and_out_writes_the_body(tmp_path):
    out = tmp_path / "rules.json"
    r = run("migrate", "rules", EXAMPLE, "-o", "json", "--out", out, "--major-version", "7",
            "--property", "application.major.version")  # fmt: skip
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["register"] is None and doc["out"] == str(out) and doc["upgrade"] is False
    written = json.loads(out.read_text())
    assert written["metadata"]["properties"] == {"application.major.version": "7"}


def test_client_java_writes_unions_as_avro_json_encoding_and_no_upgrade():
    r = run("migrate", "rules", EXAMPLE, "--client", "java", "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["client"] == "java" and doc["upgrade"] is False
    assert "python client only" in doc["no_upgrade"]
    (rule,) = doc["register"]["ruleSet"]["migrationRules"]
    assert rule["mode"] == "DOWNGRADE"


def test_an_existing_out_is_kept_without_force(tmp_path):
    out = tmp_path / "rules.json"
    out.write_text("mine")
    r = run("migrate", "rules", EXAMPLE, "--out", out)
    assert r.exit_code == 2 and out.read_text() == "mine"
    assert run("migrate", "rules", EXAMPLE, "--out", out, "--force").exit_code == 0
    assert json.loads(out.read_text())["schemaType"] == "AVRO"


def _copy_example(tmp_path: Path, edit: str = "") -> Path:
    for name in ("schemas/migration/taxi-ride-v2-breaking.avsc",
                 "schemas/subjects/taxi-rides-value/v1.avsc"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    m = tmp_path / "examples/mappings/m.yaml"
    m.parent.mkdir(parents=True)
    text = EXAMPLE.read_text()
    if edit:
        text = text.replace("total_amount: {from: total_amount, convert: parse_number", edit)
    m.write_text(text)
    return m


def test_a_conversion_jsonata_cannot_express_is_refused_naming_its_line(tmp_path):
    m = _copy_example(
        tmp_path, "total_amount: {convert: sql, expr: 'try_cast(total_amount AS FLOAT)'"
    )
    out = tmp_path / "rules.json"
    r = run("migrate", "rules", m, "--out", out)
    assert r.exit_code == 2, r.output
    assert "convert: sql of v1 field 'total_amount' has no JSONata form" in r.stderr
    line = next(i for i, t in enumerate(m.read_text().splitlines(), 1) if "convert: sql" in t)
    assert f"m.yaml:{line}:" in r.stderr and "Traceback" not in r.output
    assert not out.exists()


def test_side_key_without_a_key_section_is_a_usage_error():
    r = run("migrate", "rules", EXAMPLE, "--side", "key")
    assert r.exit_code == 2 and "has no `key:` section" in r.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--major-version", "0"], "--major-version"),
        (["--major-version", "abc"], "--major-version"),
        (["--major-version", "99999999999"], "--major-version"),
        (["--property", " "], "no property name"),
        (["--side", "both"], "--side"),
        (["--client", "go"], "--client"),
        (["--client"], "--client"),
    ],
)
def test_bad_flags_are_refused(args, words, tmp_path):
    out = tmp_path / "rules.json"
    r = run("migrate", "rules", EXAMPLE, "--out", out, *args)
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output
    assert not out.exists()


@pytest.mark.parametrize("kind", ["missing", "directory", "binary", "bad-yaml", "wrong-types"])
def test_a_bad_mapping_file_is_refused_with_its_location(tmp_path, kind):
    m = tmp_path / "m.yaml"
    if kind == "directory":
        m.mkdir()
    elif kind == "binary":
        m.write_bytes(b"\x00\xff\xfe" * 100)
    elif kind == "bad-yaml":
        m.write_text("version: 1\nfields: [\n")
    elif kind == "wrong-types":
        m.write_text("version: one\nsource: 3\ntarget: {}\nfields: 7\n")
    r = run("migrate", "rules", m, "-o", "json")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "m.yaml" in r.output
    json.loads(r.stdout)  # the error is a JSON document too


def test_side_key_compiles_the_key_section(tmp_path):
    m = _copy_example(tmp_path)
    key_v1 = json.loads((ROOT / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
    key_v2 = {**key_v1, "fields": [{"name": "vendorId", "type": "string"}]}
    (tmp_path / "k1.avsc").write_text(json.dumps(key_v1))
    (tmp_path / "k2.avsc").write_text(json.dumps(key_v2))
    m.write_text(
        m.read_text() + "key:\n  source: {subject: taxi-rides-v2-key, schema: ../../k2.avsc}\n"
        "  target: {subject: taxi-rides-key, schema: ../../k1.avsc}\n  fields:\n"
        "    vendorId: {from: vendorId, convert: parse_number, on_error: fail}\n"
    )
    r = run("migrate", "rules", m, "--side", "key")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert json.loads(body["schema"]) == key_v2
    names = [(x["mode"], x["name"]) for x in body["ruleSet"]["migrationRules"]]
    assert names == [("DOWNGRADE", "taxi-rides-v2-key-downgrade"),
                     ("UPGRADE", "taxi-rides-v2-key-upgrade")]  # fmt: skip
