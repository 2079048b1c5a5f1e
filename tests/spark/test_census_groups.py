"""The census's Spark road in a real Spark: its SQL says each key's and value's kind as
``model.classify`` does, and its groups folded on the driver give the Python road's spans for
the same records (rows shaped as the Kafka source's, no broker)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from converters.census import sparkscan
from converters.census.model import HEADER, PartitionTally, classify
from tests.unit.test_census import framed
from tests.unit.test_census_spark import python_road, spans

pytestmark = pytest.mark.spark

EDGES = [
    *(None, b"", b"\x00", b"\x00\x00\x00\x07", b"\x01\x00\x00\x00\x07", b'{"id": 1}'),
    *(framed(0), framed(7), framed(2**31), framed(2**32 - 1), b"\x00\x00\x00\x00\x09"),
]


def source_rows(spark, rows):
    """A DataFrame with the Kafka source's columns the census reads."""
    from pyspark.sql.types import (
        BinaryType,
        IntegerType,
        LongType,
        StructField,
        StructType,
        TimestampType,
    )

    schema = StructType([
        StructField("partition", IntegerType()), StructField("offset", LongType()),
        StructField("timestamp", TimestampType()), StructField("key", BinaryType()),
        StructField("value", BinaryType()),
    ])  # fmt: skip

    def when(ms):  # Kafka's -1 (no timestamp) arrives as an instant before 1970
        return dt.datetime.fromtimestamp((-1 if ms is None else ms) / 1000, tz=dt.UTC)

    data = [(p, o, when(ts), k, v) for p, o, k, v, ts in rows]
    return spark.createDataFrame(data, schema)


def test_the_sql_kind_of_each_key_and_value_is_classify(spark):
    # every pair of edge cases, each record in a partition of its own: one group per record
    pairs = [(key, value) for key in EDGES for value in EDGES]
    rows = [(i, 0, key, value, 1000) for i, (key, value) in enumerate(pairs)]
    got = sparkscan.groups(source_rows(spark, rows)).collect()
    assert sorted(r["partition"] for r in got) == list(range(len(pairs)))
    for r in got:
        key, value = pairs[r["partition"]]
        assert sparkscan.kind_of(r["key_kind"]) == classify(None if key is None else key[:HEADER])
        want = classify(None if value is None else value[:HEADER])
        assert sparkscan.kind_of(r["value_kind"]) == want


@pytest.mark.parametrize("seed", range(3))
def test_spark_groups_give_the_python_roads_spans(spark, seed):
    rng = random.Random(seed)
    per_partition: dict[int, list] = {}
    for partition in range(3):
        records, offset = [], rng.randint(0, 50)
        for _ in range(rng.randint(1, 400)):
            offset += rng.choice((1, 1, 2))
            key = rng.choice(EDGES) if rng.random() < 0.3 or not records else records[-1][1]
            value = rng.choice(EDGES) if rng.random() < 0.3 or not records else records[-1][2]
            # timestamps out of order, and some missing
            records.append((offset, key, value, rng.choice((offset * 7, 5_000, None))))
        per_partition[partition] = records
    rows = [(p, o, k, v, ts) for p, recs in per_partition.items() for o, k, v, ts in recs]
    rng.shuffle(rows)
    frame = source_rows(spark, rows).repartition(4)  # pieces of each partition in several tasks
    tallies = [PartitionTally(p, 0, 0, 0, 0) for p in per_partition]
    folded = sparkscan.fold(tallies, [r.asDict() for r in sparkscan.groups(frame).collect()])
    for tally in folded:
        want = python_road(tally.partition, per_partition[tally.partition])
        assert tally.scanned == want.scanned
        assert spans(tally, "keys") == spans(want, "keys")
        assert spans(tally, "values") == spans(want, "values")
