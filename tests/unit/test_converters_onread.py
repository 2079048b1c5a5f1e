"""``converters.onread.read_topic(..., migrate=MAPPING)``: the mapping prepared by the converters
(``converters.onread.load_migration``), decided on the driver by spark_avro (``spark_avro.onread``:
which writer goes which road), and every bad ``migrate=`` refused before Spark reads anything (the
``spark`` argument is never touched: these tests pass None). Registry answers come from the
in-process fake; the real stack runs in tests/integration/test_spark_reader_migrate.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converters.mapping.reader import load
from converters.onread import load_migration, read_topic, stream_topic
from schemacli.errors import CheckFailed, InputError, RegistryError, UsageError
from spark_avro import reader
from spark_avro.onread import v1_writer_ids, v2_incompatible

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())
V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())


def read(**kwargs):
    return read_topic(None, "127.0.0.1:9", "taxi-rides-v2", **kwargs)


def test_a_path_and_a_loaded_mapping_give_the_same_compiled_sql():
    by_path, loaded = load_migration(EXAMPLE), load_migration(load(EXAMPLE))
    assert by_path.columns == loaded.columns and by_path.error_sql == loaded.error_sql
    assert (
        by_path.columns[-1]
        == "try_cast(`total_amount` AS FLOAT) + CAST(0 AS FLOAT) AS `total_amount`"
    )


def test_writers_split_into_the_v1_road_and_the_v2_road():
    migration = load_migration(EXAMPLE)
    older_v1 = {**V1, "fields": V1["fields"][:4]}  # v1 reads it (no: total_amount lacks a default)
    with_default = {
        **V1,
        "fields": [*V1["fields"][:4], {"name": "total_amount", "type": "float", "default": 0}],
    }
    v1_with_doc = {**V1, "doc": "same canonical form as v1"}
    writers = {
        1: json.dumps(V1),
        2: json.dumps(V2),
        3: json.dumps(v1_with_doc),
        4: json.dumps(older_v1),
        5: json.dumps(with_default),
    }
    # 1 and 3 are v1; 5 is another v1 version (v1 reads it, v2 cannot); 4 neither can read
    assert v1_writer_ids(migration, writers) == (1, 3, 5)
    assert sorted(v2_incompatible(migration, writers)) == [4]
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in v2_incompatible(migration, writers)[4]


@pytest.mark.parametrize("bad", [42, "", None.__class__, b"m.yaml"])
def test_migrate_takes_a_path_or_a_mapping_and_nothing_else(bad):
    with pytest.raises(UsageError, match="migrate= takes a mapping file's path or a Mapping"):
        read(schemas={1: json.dumps(V1)}, migrate=bad)


@pytest.mark.parametrize("unprepared", [EXAMPLE, str(EXAMPLE), "load"])
def test_spark_avro_takes_only_a_prepared_migration(unprepared):
    # spark_avro imports nothing of the converters: the mapping reaches it prepared
    migrate = load(EXAMPLE) if unprepared == "load" else unprepared
    with pytest.raises(UsageError, match="takes a prepared Migration") as caught:
        reader.read_topic(
            None, "127.0.0.1:9", "taxi-rides-v2", schemas={1: json.dumps(V1)}, migrate=migrate
        )
    assert "converters.onread" in caught.value.hint


def test_a_prepared_migration_passes_through_as_it_is():
    migration = load_migration(EXAMPLE)
    assert load_migration(migration) is migration


def test_a_missing_mapping_file_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(InputError) as caught:
        read(schemas={1: json.dumps(V1)}, migrate=tmp_path / "gone.yaml")
    assert "gone.yaml" in str(caught.value.location)


def test_a_mapping_the_converter_would_refuse_is_check_failed_at_its_rule(tmp_path):
    text = EXAMPLE.read_text().replace("../../schemas", str(ROOT / "schemas"))
    path = tmp_path / "m.yaml"
    path.write_text(
        text.replace(
            "total_amount: {from: total_amount, convert: parse_number",
            "total_amount: {from: total_amount, convert: copy",
        )
    )
    with pytest.raises(CheckFailed, match="cannot turn v2 string into v1 float") as caught:
        read(schemas={1: json.dumps(V1)}, migrate=path)
    assert (caught.value.location.source, caught.value.location.line) == (str(path), 19)


def test_the_reader_schema_cannot_be_chosen_with_migrate():
    with pytest.raises(UsageError, match="reader_version and reader_schema do not apply"):
        read(schemas={1: json.dumps(V1)}, migrate=EXAMPLE, reader_version=1)
    with pytest.raises(UsageError, match="do not apply"):
        read(schemas={1: json.dumps(V1)}, migrate=EXAMPLE, reader_schema=json.dumps(V1))


def test_stream_topic_needs_a_subject_or_a_mapping_and_takes_no_reader_version_with_one():
    def stream(**kwargs):
        through = stream_topic if "migrate" in kwargs else reader.stream_topic
        return through(
            None, "127.0.0.1:9", "taxi-rides-v2", registry_url="http://127.0.0.1:9",
            process_batch=lambda batch, batch_id: None, **kwargs,
        )  # fmt: skip

    with pytest.raises(UsageError, match="needs subject=") as caught:
        stream()
    assert "migrate=MAPPING" in caught.value.hint
    with pytest.raises(UsageError, match="reader_version does not apply"):
        stream(migrate=EXAMPLE, reader_version=1)


def test_exactly_one_source_of_writer_schemas_with_migrate_too():
    with pytest.raises(UsageError, match="exactly one source"):
        read(migrate=EXAMPLE)
    with pytest.raises(UsageError, match="schemas is empty"):
        read(schemas={}, migrate=EXAMPLE)


def test_a_mapping_side_without_schema_needs_a_registry(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\nsource: {subject: taxi-rides-v2-value}\ntarget: {subject: taxi-rides-value}\n"
        "fields:\n  vendorId: {from: vendorId}\n"
    )
    with pytest.raises(UsageError, match="no schema for /source, /target") as caught:
        read(schemas={1: json.dumps(V1)}, migrate=path)
    assert caught.value.location.line == 2


def test_a_subject_the_mapping_does_not_convert_is_refused(fake):
    fake.add("taxi-rides-value", V1)
    fake.add("taxi-rides-v2-value", V2)
    with pytest.raises(UsageError, match="converts subject 'taxi-rides-v2-value'.*not 'orders'"):
        read(registry_url=fake.url, subject="orders", migrate=EXAMPLE)


def test_a_subject_without_the_mappings_v2_schema_is_refused(fake):
    fake.add("taxi-rides-value", V1)
    fake.add("taxi-rides-v2-value", {**V2, "fields": V2["fields"][:4]})
    with pytest.raises(UsageError, match="v2 schema is not a version of taxi-rides-v2-value"):
        read(registry_url=fake.url, migrate=EXAMPLE)


def test_an_unknown_target_subject_is_a_registry_error(fake):
    fake.add("taxi-rides-v2-value", V2)
    with pytest.raises(RegistryError) as caught:
        read(registry_url=fake.url, migrate=EXAMPLE)
    assert caught.value.status == 404
