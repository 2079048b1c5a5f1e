"""The pure Avro -> Spark type mapping agrees with Spark's own SchemaConverters, case for case.

Spark is the oracle: each case is parsed by Avro Java and converted by
``org.apache.spark.sql.avro.SchemaConverters.toSqlType`` inside the session's JVM; its JSON and
``toDDL`` are compared with ``spark_avro.types``, once as plain from_avro maps unions
(``member0..N``) and once with stable union identifiers (``member_<type>``, from_avro's
``enableStableIdentifiersForUnionType``, the readers' default). The answers are kept in
tests/golden/spark/type_cases.spark.json and type_cases.spark_stable.json (regenerate with
SCHEMACLI_UPDATE_GOLDEN=1) so the unit tests can check the mapping without a JVM.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from spark_avro.types import as_nullable, avro_to_spark, to_ddl

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "spark"
CASES = json.loads((GOLDEN / "type_cases.avsc.json").read_text())
ANSWERS = GOLDEN / "type_cases.spark.json"
STABLE_ANSWERS = GOLDEN / "type_cases.spark_stable.json"


def spark_answer(spark, avro: dict, *, stable: bool = False) -> dict:
    jvm = spark._jvm
    schema = jvm.org.apache.avro.Schema.Parser().parse(json.dumps(avro))
    converters = jvm.org.apache.spark.sql.avro.SchemaConverters
    if stable:  # toSqlType(schema, useStableIdForUnionType, stableIdPrefix, recursiveFieldMaxDepth)
        converted = converters.toSqlType(schema, True, "member_", -1)
    else:
        converted = converters.toSqlType(schema)
    type_json = converted.dataType().json()
    ddl = jvm.org.apache.spark.sql.types.DataType.fromJson(type_json).toDDL()
    return {"type": json.loads(type_json), "nullable": converted.nullable(), "ddl": ddl}


@pytest.fixture(scope="module")
def answers(spark) -> dict:
    computed = {name: spark_answer(spark, avro) for name, avro in CASES.items()}
    if os.environ.get("SCHEMACLI_UPDATE_GOLDEN"):
        ANSWERS.write_text(json.dumps(computed, indent=2) + "\n")
    return computed


@pytest.fixture(scope="module")
def stable_answers(spark) -> dict:
    computed = {name: spark_answer(spark, avro, stable=True) for name, avro in CASES.items()}
    if os.environ.get("SCHEMACLI_UPDATE_GOLDEN"):
        STABLE_ANSWERS.write_text(json.dumps(computed, indent=2) + "\n")
    return computed


@pytest.mark.parametrize("case", sorted(CASES))
def test_type_mapping_agrees_with_spark_schema_converters(answers, case):
    ours, nullable = avro_to_spark(CASES[case])
    assert ours == answers[case]["type"]
    assert nullable == answers[case]["nullable"]
    assert to_ddl(ours) == answers[case]["ddl"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_stable_union_names_agree_with_spark_schema_converters(stable_answers, case):
    ours, nullable = avro_to_spark(CASES[case], stable_union_names=True)
    assert ours == stable_answers[case]["type"]
    assert nullable == stable_answers[case]["nullable"]
    assert to_ddl(ours) == stable_answers[case]["ddl"]


def test_recorded_spark_answers_are_current(answers, stable_answers):
    assert json.loads(ANSWERS.read_text()) == answers
    assert json.loads(STABLE_ANSWERS.read_text()) == stable_answers


def test_branches_whose_stable_names_clash_are_refused_like_spark_refuses_them(spark):
    from spark_avro.types import UnsupportedForSpark

    clash = {
        "type": "record",
        "name": "R",
        "fields": [
            {
                "name": "either",
                "type": [
                    {"type": "record", "name": "a.Same", "fields": []},
                    {"type": "record", "name": "b.SAME", "fields": []},
                ],
            }
        ],
    }
    with pytest.raises(Exception, match="name conflict"):
        spark_answer(spark, clash, stable=True)
    with pytest.raises(UnsupportedForSpark, match="member_SAME") as caught:
        avro_to_spark(clash, stable_union_names=True)
    assert caught.value.location.pointer == "/fields/0/type/1"
    assert avro_to_spark(clash)[0]["fields"][0]["type"]["fields"][1]["name"] == "member1"


def test_from_avro_with_stable_identifiers_gives_the_stable_mapping(spark):
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.types import StructType

    avro = CASES["union_branches"]
    df = spark.createDataFrame([(bytearray(b""),)], "value binary")
    options = {"mode": "PERMISSIVE", "enableStableIdentifiersForUnionType": "true"}
    decoded = df.select(from_avro("value", json.dumps(avro), options).alias("r"))
    expected, _ = avro_to_spark(avro, stable_union_names=True)
    assert decoded.schema["r"].dataType == StructType.fromJson(as_nullable(expected))


def test_from_avro_permissive_gives_the_mapping_with_every_field_nullable(spark):
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.types import StructType

    avro = CASES["collections"]
    df = spark.createDataFrame([(bytearray(b""),)], "value binary")
    decoded = df.select(from_avro("value", json.dumps(avro), {"mode": "PERMISSIVE"}).alias("r"))
    expected, _ = avro_to_spark(avro)
    assert decoded.schema["r"].dataType == StructType.fromJson(as_nullable(expected))
