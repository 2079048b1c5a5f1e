"""Avro -> Spark type mapping without a JVM, against answers recorded from Spark itself.

tests/spark/test_spark_avro_types_vs_spark.py asks Spark's SchemaConverters for these answers
and checks the recording is current.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_avro.types import UnsupportedForSpark, as_nullable, avro_to_spark, to_ddl, type_sql

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "spark"
CASES = json.loads((GOLDEN / "type_cases.avsc.json").read_text())
SPARK_ANSWERS = json.loads((GOLDEN / "type_cases.spark.json").read_text())
STABLE_ANSWERS = json.loads((GOLDEN / "type_cases.spark_stable.json").read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_mapping_matches_what_spark_schema_converters_answered(case):
    spark_type, nullable = avro_to_spark(CASES[case])
    assert spark_type == SPARK_ANSWERS[case]["type"]
    assert nullable == SPARK_ANSWERS[case]["nullable"]
    assert to_ddl(spark_type) == SPARK_ANSWERS[case]["ddl"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_stable_union_names_match_what_spark_answered(case):
    spark_type, nullable = avro_to_spark(CASES[case], stable_union_names=True)
    assert spark_type == STABLE_ANSWERS[case]["type"]
    assert nullable == STABLE_ANSWERS[case]["nullable"]
    assert to_ddl(spark_type) == STABLE_ANSWERS[case]["ddl"]


def test_every_case_has_a_recorded_spark_answer():
    assert set(CASES) == set(SPARK_ANSWERS) == set(STABLE_ANSWERS)


def test_stable_union_names_follow_the_branch_type_not_its_position():
    union = [{"type": "record", "name": "ns.Address", "fields": []}, "int", "string"]
    spark_type, _ = avro_to_spark(union, stable_union_names=True)
    assert [f["name"] for f in spark_type["fields"]] == [
        "member_Address",
        "member_int",
        "member_string",
    ]


def test_schema_json_text_and_parsed_json_map_the_same():
    avro = CASES["unions"]
    assert avro_to_spark(json.dumps(avro)) == avro_to_spark(avro)


def test_union_with_null_maps_to_the_other_branch_nullable():
    assert avro_to_spark(["null", "string"]) == ("string", True)
    assert avro_to_spark(["null", "int", "long"]) == ("long", True)


def test_complex_union_maps_to_struct_of_nullable_members():
    spark_type, nullable = avro_to_spark(["int", "string"])
    assert nullable is False
    assert [(f["name"], f["type"], f["nullable"]) for f in spark_type["fields"]] == [
        ("member0", "integer", True),
        ("member1", "string", True),
    ]


def test_recursive_record_is_refused_with_the_pointer_to_the_cycle():
    linked = {
        "type": "record",
        "name": "Node",
        "fields": [
            {"name": "value", "type": "int"},
            {"name": "next", "type": ["null", "Node"], "default": None},
        ],
    }
    with pytest.raises(UnsupportedForSpark) as caught:
        avro_to_spark(linked, source="node.avsc")
    assert caught.value.location.pointer == "/fields/1/type/1"
    assert caught.value.location.source == "node.avsc"
    assert "recursiveFieldMaxDepth" in caught.value.hint


def test_unknown_type_name_is_reported_with_its_pointer():
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "Missing"}]}
    with pytest.raises(UnsupportedForSpark) as caught:
        avro_to_spark(schema)
    assert caught.value.location.pointer == "/fields/0/type"
    assert "Missing" in caught.value.message


def test_as_nullable_makes_fields_elements_and_values_nullable():
    spark_type, _ = avro_to_spark(CASES["collections"])
    relaxed = as_nullable(spark_type)
    assert all(f["nullable"] for f in relaxed["fields"])
    tags = next(f for f in relaxed["fields"] if f["name"] == "tags")
    counts = next(f for f in relaxed["fields"] if f["name"] == "counts")
    assert tags["type"]["containsNull"] is True
    assert counts["type"]["valueContainsNull"] is True


def test_type_sql_spells_spark_names():
    assert type_sql("integer") == "INT"
    assert type_sql("long") == "BIGINT"
    assert type_sql("decimal(10,2)") == "DECIMAL(10,2)"
    assert type_sql({"type": "map", "keyType": "string", "valueType": "long"}) == (
        "MAP<STRING, BIGINT>"
    )


def test_an_error_type_used_by_name_maps_like_a_record():
    schema = {
        "type": "record",
        "name": "Outer",
        "fields": [
            {"name": "failure", "type": {"type": "error", "name": "Failure", "fields": []}},
            {"name": "again", "type": "Failure"},
        ],
    }
    spark_type, _ = avro_to_spark(schema)
    assert [f["type"] for f in spark_type["fields"]] == [{"type": "struct", "fields": []}] * 2


def test_a_record_that_refers_to_itself_from_inside_a_field_is_refused_as_recursive():
    schema = {
        "type": "record",
        "name": "Outer",
        "fields": [
            {
                "name": "node",
                "type": {
                    "type": "record",
                    "name": "Node",
                    "fields": [{"name": "next", "type": ["null", "Node"]}],
                },
            }
        ],
    }
    with pytest.raises(UnsupportedForSpark, match="refers to itself") as caught:
        avro_to_spark(schema)
    assert caught.value.location.pointer == "/fields/0/type/fields/0/type/1"


def test_the_parsed_model_maps_as_its_json_does():
    from schemacli.contracts.avro.parse import parse_schema

    for case in sorted(CASES):
        assert avro_to_spark(parse_schema(CASES[case])) == avro_to_spark(CASES[case])


def test_a_fixed_decimal_maps_to_decimal_only_when_the_fixed_holds_its_precision():
    def fixed(size: int, precision: int) -> dict:
        return {
            "type": "fixed",
            "name": "D",
            "size": size,
            "logicalType": "decimal",
            "precision": precision,
        }

    assert avro_to_spark(fixed(2, 4)) == ("decimal(4,0)", False)
    assert avro_to_spark(fixed(2, 10)) == ("binary", False)  # Java ignores it, so does Spark
    assert avro_to_spark(fixed(16, 38)) == ("decimal(38,0)", False)
