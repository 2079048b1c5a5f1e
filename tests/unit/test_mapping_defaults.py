"""A mapping rule's `default` must be a value of the v1 field's type: one that is not is a
BAD_DEFAULT finding at the default's line:col saying what type it must be (validate exits 1,
as for every other rule problem), never a crash while the rule is compiled to Spark SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from converters.mapping.check import validate
from converters.mapping.reader import loads
from converters.mapping.schemaview import view
from converters.mapping.sql import fits
from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
RULE = "total_amount: {from: total_amount, convert: parse_number, on_error: fail"


def taxi_mapping_with(rule: str):
    """The example mapping with total_amount's rule (line 19) replaced by ``rule``."""
    text = EXAMPLE.read_text()
    start = text.index(RULE)
    end = text.index("\n", start)
    return loads(text[:start] + rule + text[end:], source="m.yaml").with_schemas(V2, V1)


@pytest.mark.parametrize("default", ['"abc"', "true", "[1]", "{a: 1}", "null"])
def test_an_on_error_default_of_the_wrong_type_is_a_finding_at_its_line(default):
    rule = (
        f"total_amount: {{from: total_amount, convert: parse_number, on_error: default, "
        f"default: {default}}}"
    )
    report = validate(taxi_mapping_with(rule))
    (finding,) = [f for f in report.findings if f.kind == "BAD_DEFAULT"]
    assert not report.ok and report.dry_run is None
    assert (finding.location.source, finding.location.line) == ("m.yaml", 19)
    assert finding.location.column == rule.index("default:") + 3  # indented by two
    assert finding.location.pointer == "/fields/total_amount/default"
    assert "it must be a float" in finding.message and "total_amount" in finding.message


def test_a_convert_default_of_the_wrong_type_is_a_finding_not_a_crash():
    report = validate(taxi_mapping_with("total_amount: {convert: default, default: 'twelve'}"))
    (finding,) = [f for f in report.findings if f.kind == "BAD_DEFAULT"]
    assert "must be a float" in finding.message and "from:" in (finding.hint or "")


def test_a_default_of_the_right_type_compiles_and_dry_runs():
    rule = (
        "total_amount: {from: total_amount, convert: parse_number, on_error: default, default: 0}"
    )
    report = validate(taxi_mapping_with(rule), sample_count=4)
    assert report.ok and report.dry_run is not None and report.dry_run.dead_lettered == 0


@pytest.mark.parametrize(
    ("avro", "good", "bad"),
    [
        ("int", [0, -(2**31), 2**31 - 1], [2**31, 1.5, True, "1", None]),
        ("long", [2**63 - 1], [2**63, "1"]),
        ("double", [1, 1.5], ["1.5", False]),
        ("boolean", [True], [1, "true"]),
        ("string", ["", "x"], [1, None]),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, ["A"], ["C", 0]),
        ({"type": "array", "items": "int"}, [[], [1, 2]], [[1, "2"], {}]),
        ({"type": "map", "values": "int"}, [{}, {"k": 1}], [{"k": "v"}, []]),
        (["null", "string"], [None, "x"], [1]),
    ],
)
def test_fits_follows_avro_defaults(avro, good, bad):
    record = {"type": "record", "name": "R", "fields": [{"name": "f", "type": avro}]}
    t = view(record).fields[0].type
    assert all(fits(v, t) for v in good), good
    assert not any(fits(v, t) for v in bad), bad


def test_migrate_validate_of_a_mistyped_default_exits_1_naming_file_line_and_type(tmp_path):
    text = (
        EXAMPLE.read_text()
        .replace(
            RULE,
            "total_amount: {from: total_amount, convert: parse_number, on_error: default, "
            "default: abc, note: x}\n  #",
        )
        .replace("../../schemas/", f"{ROOT}/schemas/")
    )
    mapping = tmp_path / "m.yaml"
    mapping.write_text(text)
    result = CliRunner().invoke(app, ["migrate", "validate", str(mapping)])
    assert result.exit_code == 1, result.output
    assert f"{mapping}:19:" in result.output and "BAD_DEFAULT" in result.output
    assert "must be a float" in result.output and "Traceback" not in result.output
