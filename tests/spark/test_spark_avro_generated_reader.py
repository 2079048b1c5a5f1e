"""The generated reader module (golden file) decodes in Spark exactly as the library does."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.testing import assertDataFrameEqual

from spark_avro.decode import decode_confluent
from tests.spark.framing import (
    V1_ID,
    V1_TEXT,
    V2_ID,
    V2_TEXT,
    WRITERS,
    confluent,
    kafka_frame,
    ride,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "spark" / "taxi_rides_value_reader.py"


@pytest.fixture(scope="module")
def generated():
    spec = importlib.util.spec_from_file_location("taxi_rides_value_reader", GOLDEN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def topic(spark):
    return kafka_frame(
        spark,
        [
            confluent(V1_ID, V1_TEXT, ride(1)),
            confluent(V2_ID, V2_TEXT, ride(2, tip_amount=2.5, store_and_fwd_flag="Y")),
            confluent(42, V1_TEXT, ride(3)),
            None,
        ],
    )


def test_generated_module_embeds_the_same_schemas_the_library_was_given(generated):
    assert set(generated.WRITER_SCHEMAS) == set(WRITERS)
    assert generated.READER_SCHEMA == generated.WRITER_SCHEMAS[V2_ID]


def test_generated_module_decodes_like_the_library(generated, topic):
    ours = generated.decode_confluent(
        topic, writer_schemas=generated.WRITER_SCHEMAS, reader_schema=generated.READER_SCHEMA
    )
    library = decode_confluent(topic, writer_schemas=WRITERS, reader_schema=V2_TEXT)
    assertDataFrameEqual(ours, library)
    rows = {r.offset: r for r in ours.collect()}
    assert (rows[0].tip_amount, rows[0].store_and_fwd_flag) == (0.0, None)
    assert (rows[1].tip_amount, rows[1].store_and_fwd_flag) == (2.5, "Y")
    assert rows[2].decode_error.startswith("unknown schema id 42")


def test_generated_module_failfast_names_the_offset(generated, topic):
    decoded = generated.decode_confluent(
        topic,
        writer_schemas=generated.WRITER_SCHEMAS,
        reader_schema=generated.READER_SCHEMA,
        mode="FAILFAST",
    )
    with pytest.raises(PySparkException, match="offset 2: unknown schema id 42"):
        decoded.collect()
