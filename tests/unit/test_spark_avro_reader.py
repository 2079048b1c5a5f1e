"""Where the reader's schemas come from: the registry (a fake one here) or an offline mapping.

No Spark session is started: these are the choices made before any DataFrame exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.errors import InputError, NetworkError, RegistryError, UsageError
from tests.extras import require

require("pyspark", "spark")  # spark_avro is the spark extra's package

from spark_avro.reader import SchemaCache, resolve_schemas  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
V1 = (ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
V2 = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()


def test_registry_gives_every_version_as_writers_and_the_latest_as_reader(fake):
    fake.add("other", {"type": "string"})
    v1_id, v2_id = fake.add("rides-value", V1), fake.add("rides-value", V2)
    resolved = resolve_schemas(subject="rides-value", registry_url=fake.url)
    assert sorted(resolved.writer_schemas) == [v1_id, v2_id]
    assert json.loads(resolved.writer_schemas[v1_id]) == json.loads(V1)
    assert json.loads(resolved.reader_schema) == json.loads(V2)
    assert resolved.reader_schema_id == v2_id


def test_reader_version_picks_an_older_reader(fake):
    v1_id = fake.add("rides-value", V1)
    fake.add("rides-value", V2)
    resolved = resolve_schemas(subject="rides-value", registry_url=fake.url, reader_version=1)
    assert resolved.reader_schema_id == v1_id
    assert json.loads(resolved.reader_schema) == json.loads(V1)


def test_offline_mapping_reads_into_the_highest_id_unless_told(fake):
    resolved = resolve_schemas(subject=None, schemas={3: V1, 9: V2})
    assert resolved.reader_schema_id == 9
    told = resolve_schemas(subject=None, schemas={3: V1, 9: V2}, reader_schema=V1)
    assert told.reader_schema == V1 and told.reader_schema_id is None


def test_parsed_json_schemas_are_accepted_offline():
    resolved = resolve_schemas(subject=None, schemas={1: json.loads(V1)})
    assert json.loads(resolved.writer_schemas[1]) == json.loads(V1)


@pytest.mark.parametrize(
    "sources",
    [{}, {"registry_url": "http://127.0.0.1:9", "schemas": {1: "{}"}}],
    ids=["neither", "both"],
)
def test_exactly_one_source_of_writer_schemas_is_required(sources):
    with pytest.raises(UsageError, match="exactly one source"):
        resolve_schemas(subject="s", **sources)


def test_a_schema_that_is_not_json_is_an_input_error_with_its_position():
    with pytest.raises(InputError, match="schema id 4 is not JSON: .* line 1 column 2"):
        resolve_schemas(subject=None, schemas={4: "{oops"})


def test_a_reader_schema_that_is_not_a_record_is_refused():
    with pytest.raises(InputError, match="must be an Avro record"):
        resolve_schemas(subject=None, schemas={1: '"string"'})


def test_an_unknown_subject_is_a_registry_error_with_status_and_code(fake):
    with pytest.raises(RegistryError) as caught:
        resolve_schemas(subject="missing", registry_url=fake.url)
    assert (caught.value.status, caught.value.error_code) == (404, 40401)


def test_an_unreachable_registry_is_a_network_error():
    with pytest.raises(NetworkError, match="cannot reach the schema registry"):
        resolve_schemas(subject="s", registry_url="http://127.0.0.1:9")


def test_a_subject_whose_schema_is_not_json_is_refused_by_name(fake):
    fake.subjects["proto-value"] = [
        {"subject": "proto-value", "version": 1, "id": 77, "schema": "syntax = 'proto3';",
         "schemaType": "PROTOBUF"}
    ]  # fmt: skip
    with pytest.raises(RegistryError, match="schema at proto-value:v1 that is not valid Avro"):
        resolve_schemas(subject="proto-value", registry_url=fake.url)


def test_schema_cache_fetches_an_unseen_id_once_and_skips_unknown_ids(fake):
    v1_id = fake.add("rides-value", V1)
    cache = SchemaCache(fake.url, {})
    assert json.loads(cache.ensure([v1_id])[v1_id]) == json.loads(V1)
    cache.ensure([v1_id, 4242])
    assert cache.fetches == 1
    assert 4242 not in cache.schemas


def test_a_subject_with_references_comes_back_self_contained(fake):
    country = {"type": "enum", "name": "Country", "namespace": "geo", "symbols": ["NL"]}
    address = {"type": "record", "name": "Address", "namespace": "geo",
               "fields": [{"name": "country", "type": "Country"}]}  # fmt: skip
    fake.subjects["country"] = [
        {"subject": "country", "version": 1, "id": 501, "schema": json.dumps(country)}
    ]
    fake.subjects["address"] = [
        {"subject": "address", "version": 1, "id": 502, "schema": json.dumps(address),
         "references": [{"name": "geo.Country", "subject": "country", "version": 1}]}
    ]  # fmt: skip
    from spark_avro.registry import subject_schemas

    (only,) = subject_schemas(fake.url, "address")
    assert json.loads(only.schema)["fields"][0]["type"]["symbols"] == ["NL"]


def test_a_reference_the_registry_lacks_is_an_error_naming_subject_and_version(fake):
    address = {"type": "record", "name": "Address", "namespace": "geo",
               "fields": [{"name": "country", "type": "Country"}]}  # fmt: skip
    fake.subjects["address"] = [
        {"subject": "address", "version": 1, "id": 502, "schema": json.dumps(address),
         "references": [{"name": "geo.Country", "subject": "country", "version": 3}]}
    ]  # fmt: skip
    from spark_avro.registry import subject_schemas

    with pytest.raises(RegistryError) as caught:
        subject_schemas(fake.url, "address")
    message = caught.value.message
    assert "references geo.Country in country version 3" in message
    assert "does not have" in message and caught.value.status == 404
