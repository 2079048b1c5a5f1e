"""The optional ``key:`` section: the Kafka key's own v2 -> v1 mapping (format, plan, validate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.check import validate
from converters.mapping.dump import dumps
from converters.mapping.model import Conversion
from converters.mapping.plan import plan, plan_key
from converters.mapping.reader import load, loads
from schemacli.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
V1_KEY = json.loads((ROOT / "schemas/subjects/taxi-rides-key/v1.avsc").read_text())
# v2 producers key rides by a string vendor id; v1 consumers expect an int.
V2_KEY = {**V1_KEY, "fields": [{"name": "vendorId", "type": "string"}]}

KEYED = """\
version: 1
source: {subject: taxi-rides-v2-value, schema_json: V2, topic: taxi-rides-v2}
target: {subject: taxi-rides-value, schema_json: V1, topic: taxi-rides}
fields:
  total_amount: {from: total_amount, convert: parse_number}
key:
  source: {subject: taxi-rides-v2-key, schema_json: KEY2}
  target: {subject: taxi-rides-key, version: 1, schema_json: KEY1}
  fields:
    vendorId: {from: vendorId, convert: parse_number}
"""
for _name, _schema in (("KEY2", V2_KEY), ("KEY1", V1_KEY), ("V2", V2), ("V1", V1)):
    KEYED = KEYED.replace(f"schema_json: {_name}", f"schema_json: {json.dumps(_schema)}")


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        loads(text, source="m.yaml")
    return info.value


def test_a_key_section_is_a_mapping_of_its_own_with_pointers_under_key():
    m = loads(KEYED, source="m.yaml")
    assert m.key is not None and m.key.source.subject == "taxi-rides-v2-key"
    assert m.key.target.version == 1
    assert m.key.rule("vendorId").convert is Conversion.PARSE_NUMBER
    where = m.key.location("/fields/vendorId")
    assert (where.pointer, where.line) == ("/key/fields/vendorId", 10)


def test_without_a_key_section_keys_are_copied():
    text = KEYED.split("key:\n")[0]
    assert loads(text).key is None


def test_a_key_section_with_a_topic_is_refused_at_that_key():
    err = _error(KEYED.replace("{subject: taxi-rides-v2-key,", "{topic: t, subject: x,"))
    assert err.location.pointer == "/key/source/topic" and err.location.line == 7
    assert "Remove" in err.hint


def test_a_key_section_without_fields_or_with_an_unknown_key_names_the_path():
    err = _error(KEYED.replace("  fields:\n    vendorId", "  rules:\n    vendorId"))
    assert err.location.pointer == "/key/rules"
    err = _error(
        KEYED.replace("convert: parse_number}\n", "convert: parse_numbr}\n").replace(
            "total_amount, convert: parse_numbr", "total_amount, convert: parse_number"
        )
    )
    assert err.location.pointer == "/key/fields/vendorId/convert"


def test_a_key_section_round_trips_through_the_file_format(tmp_path):
    m = plan_key(plan(V2, V1), V2_KEY, V1_KEY)
    path = tmp_path / "m.yaml"
    path.write_text(dumps(m, inline=(True, True), key_inline=(True, True)))
    again = load(path)
    assert again.key is not None and again.key.rules == m.key.rules
    assert again.key.source.schema_json == V2_KEY and again.key.target.schema_json == V1_KEY


def test_a_key_schema_file_is_read_relative_to_the_mapping(tmp_path):
    (tmp_path / "k1.avsc").write_text(json.dumps(V1_KEY))
    text = KEYED.replace(f"version: 1, schema_json: {json.dumps(V1_KEY)}", "schema: k1.avsc")
    (tmp_path / "m.yaml").write_text(text)
    assert load(tmp_path / "m.yaml").key.target.schema_json == V1_KEY
    (tmp_path / "m.yaml").write_text(text.replace("k1.avsc", "missing.avsc"))
    with pytest.raises(InputError) as info:
        load(tmp_path / "m.yaml")
    assert info.value.location.pointer == "/key/target/schema"
    assert "key target schema" in info.value.message


def test_planning_the_key_uses_the_value_rules_and_has_no_topic():
    m = plan_key(plan(V2, V1), V2_KEY, V1_KEY)
    rule = m.key.rule("vendorId")
    assert rule.convert is Conversion.PARSE_NUMBER and rule.source == "vendorId"
    assert m.key.source.topic is None and m.key.dead_letter_topic is None
    assert "\nkey:\n  source:" in dumps(m)


def _planned() -> str:
    return dumps(
        plan_key(plan(V2, V1), V2_KEY, V1_KEY), inline=(True, True), key_inline=(True, True)
    )


def test_validate_dry_runs_the_key_and_reports_it_apart():
    report = validate(loads(_planned()), sample_count=20, seed=1)
    assert report.ok and report.key is not None and report.key.ok
    assert [f.target for f in report.key.fields] == ["vendorId"]
    dry = report.key.dry_run
    assert dry.total == 20 and dry.converted + dry.dead_lettered == 20
    assert dry.converted > 0 and dry.dead_lettered > 0  # numeric and non-numeric ids both shown


def test_an_unresolved_key_rule_makes_the_mapping_not_deployable():
    head, last = _planned().rstrip("\n").rsplit("\n", 1)
    assert last.startswith("    vendorId: {from: vendorId, convert: parse_number")
    report = validate(loads(head + "\n    vendorId: {unresolved: why}\n"))
    assert not report.ok and not report.findings and report.key is not None and not report.key.ok
    assert report.key.findings[0].location.pointer.startswith("/key/fields/vendorId")


class FakeRegistry:
    """lookup/list_versions/get_version over {subject: [schema dict, ...]}; ids from 1 up."""

    def __init__(self, subjects: dict[str, list[dict]]) -> None:
        self.versions = {}
        next_id = 1
        for subject, schemas in subjects.items():
            for n, schema in enumerate(schemas, 1):
                self.versions[(subject, n)] = (next_id, json.dumps(schema))
                next_id += 1

    def _sv(self, subject, version):
        from schemacli.registry.models import SubjectVersion

        schema_id, text = self.versions[(subject, version)]
        return SubjectVersion(subject=subject, version=version, id=schema_id, schema=text)

    def lookup(self, subject, text):
        for (s, n), (_, t) in self.versions.items():
            if s == subject and json.loads(t) == json.loads(text):
                return self._sv(s, n)
        return None

    def list_versions(self, subject):
        return [n for (s, n) in self.versions if s == subject]

    def get_version(self, subject, version):
        return self._sv(subject, version)


def test_the_job_looks_up_the_v1_key_id_and_every_v2_key_writer():
    from converters.pipeline.records import resolve_registry

    registry = FakeRegistry(
        {
            "taxi-rides-value": [V1],
            "taxi-rides-v2-value": [V2],
            "taxi-rides-key": [V1_KEY],
            "taxi-rides-v2-key": [V2_KEY],
        }
    )
    reg = resolve_registry(loads(KEYED), registry)
    assert reg.key is not None and reg.key.target_id == 3
    assert reg.key.writer_schemas == {4: json.dumps(V2_KEY)}
    assert reg.key.writer_versions == {4: "taxi-rides-v2-key/1"}


def test_the_job_refuses_to_start_when_the_v1_key_schema_is_not_registered():
    from converters.pipeline.records import resolve_registry
    from schemacli.errors import CheckFailed

    registry = FakeRegistry(
        {"taxi-rides-value": [V1], "taxi-rides-v2-value": [V2], "taxi-rides-v2-key": [V2_KEY]}
    )
    with pytest.raises(CheckFailed) as info:
        resolve_registry(loads(KEYED, source="m.yaml"), registry)
    assert "v1 key schema is not registered under subject 'taxi-rides-key'" in str(info.value)
    assert info.value.location.pointer == "/key/target/subject"
    assert "schemacli register taxi-rides-key" in info.value.hint
