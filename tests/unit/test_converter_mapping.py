"""The mapping file format: versioned YAML, loaded with file:line:col errors and key paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.dump import dumps
from converters.mapping.model import Conversion, Endpoint, Policy
from converters.mapping.plan import plan
from converters.mapping.reader import load, loads
from schemacli.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
V2 = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"

GOOD = """\
version: 1
source: {subject: taxi-rides-v2-value, schema: v2.avsc, topic: taxi-rides-v2}
target: {subject: taxi-rides-value, version: 1, schema: v1.avsc, topic: taxi-rides}
dead_letter_topic: dlq
fields:
  total_amount: {from: total_amount, convert: parse_number, on_error: default, default: 0.0}
  tip: {convert: default, default: 1.5}
  flag: {unresolved: "v2 has no flag"}
"""


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        loads(text, source="m.yaml")
    return info.value


def test_loading_a_mapping_reads_every_rule_with_its_policy():
    m = loads(GOOD, source="m.yaml")
    assert m.source.topic == "taxi-rides-v2" and m.target.version == 1
    total = m.rule("total_amount")
    assert total.convert is Conversion.PARSE_NUMBER and total.on_error is Policy.DEFAULT
    assert total.default == 0.0
    assert m.rule("tip").convert is Conversion.DEFAULT
    assert [r.target for r in m.unresolved] == ["flag"]


def test_unknown_conversion_is_reported_at_its_line_and_column_with_the_choices():
    err = _error(GOOD.replace("parse_number", "parse_numbr"))
    assert (err.location.source, err.location.line) == ("m.yaml", 6)
    assert err.location.pointer == "/fields/total_amount/convert"
    assert "parse_numbr" in err.message and "parse_number" in err.hint


def test_unknown_key_names_the_key_path():
    err = _error(GOOD.replace("dead_letter_topic: dlq", "dead_letter: dlq"))
    assert err.location.pointer == "/dead_letter" and err.location.line == 4
    assert "dead_letter_topic" in err.hint


def test_duplicate_field_rule_is_refused_at_the_second_key():
    err = _error(GOOD + "  tip: {convert: default}\n")
    assert "duplicate key 'tip'" in err.message and err.location.line == 9


def test_yaml_syntax_error_has_line_and_column():
    err = _error("version: 1\nfields: {a: [\n")
    assert err.location.line is not None and err.location.column is not None
    assert "not valid YAML" in err.message


def test_unsupported_format_version_is_refused():
    err = _error(GOOD.replace("version: 1\n", "version: 2\n", 1))
    assert err.location.pointer == "/version" and "version: 1" in err.hint


def test_bad_on_error_policy_names_the_allowed_ones():
    err = _error(GOOD.replace("on_error: default", "on_error: ignore"))
    assert err.location.pointer == "/fields/total_amount/on_error"
    assert "fail" in err.hint and "default" in err.hint


def test_conversion_without_a_source_field_is_refused():
    err = _error(GOOD.replace("from: total_amount, ", ""))
    assert "needs `from`" in err.message


def test_missing_schema_file_names_the_mapping_key(tmp_path: Path):
    (tmp_path / "m.yaml").write_text(GOOD)
    with pytest.raises(InputError) as info:
        load(tmp_path / "m.yaml")
    assert info.value.location.pointer == "/source/schema"


def test_planned_mapping_survives_a_round_trip_through_yaml(tmp_path: Path):
    planned = plan(
        json.loads(V2.read_text()),
        json.loads(V1.read_text()),
        source=Endpoint(schema="v2.avsc"),
        target=Endpoint(schema="v1.avsc"),
    )
    again = loads(dumps(planned))
    assert again.rules == planned.rules


def test_example_mapping_loads_with_its_schemas():
    m = load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
    assert m.source.schema_json["name"] == "TaxiRide"
    assert m.rule("total_amount").convert is Conversion.PARSE_NUMBER


def test_a_mapping_that_is_not_utf8_is_an_input_error_at_the_bad_byte(tmp_path: Path):
    (tmp_path / "m.yaml").write_bytes(b"version: 1\nsource: \xff\n")
    with pytest.raises(InputError) as info:
        load(tmp_path / "m.yaml")
    loc = info.value.location
    assert (loc.source, loc.line, loc.column) == (str(tmp_path / "m.yaml"), 2, 9)
    assert "UTF-8" in info.value.message


def test_a_schema_file_that_is_not_utf8_is_named_with_the_bad_byte(tmp_path: Path):
    (tmp_path / "m.yaml").write_text(GOOD)
    schema = tmp_path / "v2.avsc"
    schema.write_bytes(b'{"type": "\xfe"}')
    with pytest.raises(InputError) as info:
        load(tmp_path / "m.yaml")
    assert info.value.location.source == str(schema) and info.value.location.column == 11
