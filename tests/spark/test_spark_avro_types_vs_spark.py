"""The pure Avro -> Spark type mapping agrees with Spark's own SchemaConverters, case for case.

Spark is the oracle: each case is parsed by Avro Java and converted by
``org.apache.spark.sql.avro.SchemaConverters.toSqlType`` inside the session's JVM; its JSON and
``toDDL`` are compared with ``spark_avro.types``. The answers are kept in
tests/golden/spark/type_cases.spark.json (regenerate with SCHEMACLI_UPDATE_GOLDEN=1) so the unit
tests can check the mapping without a JVM.
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


def spark_answer(spark, avro: dict) -> dict:
    jvm = spark._jvm
    schema = jvm.org.apache.avro.Schema.Parser().parse(json.dumps(avro))
    converted = jvm.org.apache.spark.sql.avro.SchemaConverters.toSqlType(schema)
    type_json = converted.dataType().json()
    ddl = jvm.org.apache.spark.sql.types.DataType.fromJson(type_json).toDDL()
    return {"type": json.loads(type_json), "nullable": converted.nullable(), "ddl": ddl}


@pytest.fixture(scope="module")
def answers(spark) -> dict:
    computed = {name: spark_answer(spark, avro) for name, avro in CASES.items()}
    if os.environ.get("SCHEMACLI_UPDATE_GOLDEN"):
        ANSWERS.write_text(json.dumps(computed, indent=2) + "\n")
    return computed


@pytest.mark.parametrize("case", sorted(CASES))
def test_type_mapping_agrees_with_spark_schema_converters(answers, case):
    ours, nullable = avro_to_spark(CASES[case])
    assert ours == answers[case]["type"]
    assert nullable == answers[case]["nullable"]
    assert to_ddl(ours) == answers[case]["ddl"]


def test_recorded_spark_answers_are_current(answers):
    assert json.loads(ANSWERS.read_text()) == answers


def test_from_avro_permissive_gives_the_mapping_with_every_field_nullable(spark):
    from pyspark.sql.avro.functions import from_avro
    from pyspark.sql.types import StructType

    avro = CASES["collections"]
    df = spark.createDataFrame([(bytearray(b""),)], "value binary")
    decoded = df.select(from_avro("value", json.dumps(avro), {"mode": "PERMISSIVE"}).alias("r"))
    expected, _ = avro_to_spark(avro)
    assert decoded.schema["r"].dataType == StructType.fromJson(as_nullable(expected))
