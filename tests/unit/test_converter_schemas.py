"""A mapping's schemas are checked as Avro, and as records the converter supports, when loaded:
a bad schema is an input error at its file's line:col (or the mapping's, for schema_json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from converters.mapping.reader import load
from schemacli.app import app
from schemacli.errors import ExitCode, InputError, SchemaParseError

ROOT = Path(__file__).resolve().parents[2]
V2 = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
RULES = """fields:
  vendorId: {from: vendorId}
  passenger_count: {from: passenger_count}
  trip_distance: {from: trip_distance}
  payment_type: {from: payment_type}
  total_amount: {from: total_amount, convert: parse_number}
"""


def mapping(tmp_path: Path, source: str, target: str = "{schema: v1.avsc, topic: t1}") -> Path:
    (tmp_path / "v2.avsc").write_text(V2.read_text())
    (tmp_path / "v1.avsc").write_text(V1.read_text())
    path = tmp_path / "m.yaml"
    path.write_text(f"version: 1\nsource: {source}\ntarget: {target}\n{RULES}")
    return path


@pytest.mark.parametrize(
    ("schema", "message", "at"),
    [
        ('{"type": "fixed", "name": "F", "size": -1}', "negative size", "-1"),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a", "type": ["int", "int"]}]}',
            "Duplicate in union",
            '"int"]',
        ),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "integer"}]}',
            "Undefined name",
            '"integer"',
        ),
        (
            '{"type": "record", "name": "R",\n "fields": [{"name": "a", "type": "double", '
            '"default": NaN}]}',
            "NaN",
            "NaN",
        ),
    ],
)
def test_a_schema_file_that_is_not_valid_avro_is_refused_at_its_line_and_column(
    tmp_path: Path, schema, message, at
):
    path = mapping(tmp_path, "{schema: bad.avsc, topic: t2}")
    (tmp_path / "bad.avsc").write_text(schema)
    with pytest.raises(InputError) as caught:
        load(path)
    err = caught.value
    assert message in err.message and err.message.startswith("v2 schema")
    assert err.location.source == str(tmp_path / "bad.avsc")
    line = schema[: schema.index(at)].count("\n") + 1
    column = schema.index(at) - (schema.rfind("\n", 0, schema.index(at)) + 1) + 1
    assert (err.location.line, err.location.column) == (line, column)
    assert err.exit_code == ExitCode.INPUT_ERROR


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_schema_that_is_not_a_record_is_refused_naming_the_side(tmp_path: Path, side):
    (tmp_path / "int.avsc").write_text('"int"')
    args = {"source": "{schema: v2.avsc, topic: t2}", "target": "{schema: v1.avsc, topic: t1}"}
    args[side] = "{schema: int.avsc, topic: tx}"
    with pytest.raises(InputError) as caught:
        load(mapping(tmp_path, args["source"], args["target"]))
    label = "v2" if side == "source" else "v1"
    assert caught.value.message == f"{label} schema is an int, not a record"
    assert caught.value.location.source == str(tmp_path / "int.avsc")


def test_a_recursive_schema_is_refused_naming_its_file(tmp_path: Path):
    (tmp_path / "node.avsc").write_text(
        '{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}'
    )
    with pytest.raises(InputError, match="recursive type 'Node'") as caught:
        load(mapping(tmp_path, "{schema: node.avsc, topic: t2}"))
    assert caught.value.location.source == str(tmp_path / "node.avsc")
    assert caught.value.location.line == 1


def test_invalid_inline_schema_json_is_refused_at_its_place_in_the_mapping(tmp_path: Path):
    path = mapping(
        tmp_path,
        "\n  topic: t2\n  schema_json:\n    type: record\n    name: R\n    fields:\n"
        "    - {name: a, type: integer}",
    )
    with pytest.raises(SchemaParseError) as caught:
        load(path)
    loc = caught.value.location
    assert loc.source == str(path) and loc.pointer == "/source/schema_json/fields/0/type"
    assert loc.line == 8


@pytest.mark.parametrize("text", ["'\"int\"'", "'{\"type\":'"])
def test_schema_json_holding_json_text_in_a_string_is_refused(tmp_path: Path, text):
    path = mapping(tmp_path, f"{{schema_json: {text}, topic: t2}}")
    with pytest.raises(InputError, match="JSON text in a string") as caught:
        load(path)
    assert caught.value.location.pointer == "/source/schema_json"


def test_inline_schema_json_that_is_not_a_record_is_refused(tmp_path: Path):
    with pytest.raises(InputError, match="v2 schema is an int, not a record"):
        load(mapping(tmp_path, "{schema_json: int, topic: t2}"))


def test_a_side_naming_only_a_subject_takes_its_schema_from_the_registry(fake, tmp_path: Path):
    fake.add("taxi-rides-v2-value", V2.read_text())
    path = mapping(tmp_path, "{subject: taxi-rides-v2-value, topic: t2}")
    r = CliRunner().invoke(app, ["migrate", "validate", str(path), "--registry", fake.url])
    assert r.exit_code == 0, r.output
    assert "ok: the mapping is deployable" in r.output


def test_a_subject_only_side_without_a_reachable_registry_says_where_the_schema_comes_from(
    tmp_path: Path,
):
    path = mapping(tmp_path, "{subject: taxi-rides-v2-value, topic: t2}")
    r = CliRunner().invoke(
        app,
        ["migrate", "validate", str(path), "--registry", "http://127.0.0.1:1", "--retries", "0"],
    )
    assert r.exit_code == 3 and "Traceback" not in r.output
    assert "names only subject 'taxi-rides-v2-value'" in r.output and "schema:" in r.output


def test_an_invalid_registry_schema_is_refused_naming_subject_and_version(fake, tmp_path: Path):
    fake.add("taxi-rides-v2-value", json.dumps("int"))
    path = mapping(tmp_path, "{subject: taxi-rides-v2-value, topic: t2}")
    r = CliRunner().invoke(app, ["migrate", "validate", str(path), "--registry", fake.url])
    assert r.exit_code == 2 and "v2 schema is an int, not a record" in r.output
    assert "taxi-rides-v2-value:v1" in r.output
