"""The fast road: the exactly-once writer converting each message Avro to Avro in its task.

The SQL road (``pipeline.records.build_records``) decodes every v2 value into a Spark row with
from_avro, runs the mapping's Spark SQL and encodes with to_avro before the JVM writer
(``pipeline.txsink``) sends the result. When every rule of the mapping is one the JVM interprets
(``converters.mapping.recordplan``: copies, promotions, number parses, literals), the writer gets
the Kafka source's rows as they are, with the mapping's plan, and does the whole conversion in
its task with Avro's own datum reader and writer (``dev.schemacli.converters.RecordPlan``): no
row conversion, no generated code. Spark still schedules the partitions, keeps the checkpoint
and retries tasks; the transactions, counts, headers, loop guard and dead letters are the SQL
road's, record for record (``tests/spark/test_fast_road.py`` compares the two roads' bytes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from converters.mapping.model import Mapping
from converters.mapping.recordplan import Road
from converters.pipeline.progress import ProgressFile
from converters.pipeline.records import RegistryPlan
from converters.pipeline.txsink import SinkConfig, Stats, java_options, jvm_writer

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# spark_avro.decode_confluent's reason for an undecodable body when compatibility was not
# checked (the SQL road's convert_side): the fast road says the same
CORRUPT_WHY = ": truncated, not written with it, or not readable as the reader schema"
SOURCE_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "headers")


def plan_json(mapping: Mapping, reg: RegistryPlan, road: Road, *, in_place: bool = True) -> str:
    """The plan the JVM writer interprets: the road's operations, the registry's schemas and the
    topics. ``in_place``: records whose writer schema is the v2 schema are read in place (the
    JVM's ``InPlace``); False reads every record with Avro's datum reader (tests and benches
    compare the two). Raises ValueError for a mapping on the SQL road."""
    if not road.fast:
        raise ValueError(f"the mapping takes the SQL road: {road.why}")
    return json.dumps(
        {
            "target_topic": mapping.target.topic,
            "dead_letter_topic": mapping.dead_letter_topic,
            "target_id": reg.target_id,
            "target_schema": json.dumps(json.loads(reg.target_schema)),
            "reader_schema": json.dumps(mapping.source.schema_json),
            "writers": {
                str(sid): {"schema": text, "version": reg.writer_versions[sid]}
                for sid, text in sorted(reg.writer_schemas.items())
            },
            "corrupt_why": CORRUPT_WHY,
            "fields": list(road.fields),
            "in_place": in_place,
        }
    )


def source_rows(raw: DataFrame) -> DataFrame:
    """The Kafka source's rows as the fast road reads them: as they are (the JVM finds the
    columns of ``SOURCE_COLUMNS`` by name; a projection would copy every row), with null
    headers when the source does not include them."""
    from pyspark.sql import functions as F

    if "headers" not in raw.columns:
        raw = raw.withColumn("headers", F.lit(None).cast("array<struct<key:string,value:binary>>"))
    return raw


def write_fast_batch(batch: DataFrame, cfg: SinkConfig, plan: str) -> list[Stats]:
    """Write a batch of Kafka source rows through the fast road (one transaction per v2
    partition, as ``txsink.write_batch``); the stats of each partition written."""
    spark = batch.sparkSession
    lines = jvm_writer(spark).writeFast(source_rows(batch)._jdf, java_options(spark, cfg), plan)
    return [Stats.parse(str(line)) for line in lines]


def fast_batches(
    sink: SinkConfig, progress: ProgressFile, plan: str
) -> Callable[[DataFrame, int], None]:
    """The ``foreachBatch`` function of the fast road (``stream.transactional_batches``'s twin)."""

    def write(batch: DataFrame, batch_id: int) -> None:
        stats = write_fast_batch(batch, sink, plan)
        progress.committed(batch_id, {s.partition: s.counts for s in stats})

    return write


def convert_one(spark: Any, plan: str, value: bytes) -> tuple[bytes | None, tuple[str, ...]]:
    """One value through the fast road's transform on the driver's JVM (tests): the v1 bytes,
    or None and (stage, reason)."""
    why = spark._jvm.java.util.ArrayList()
    out = jvm_writer(spark).convertOne(plan, bytearray(value), why)
    return (bytes(out) if out is not None else None), tuple(str(w) for w in why)


def reads_in_place(spark: Any, plan: str, value: bytes) -> bool:
    """Whether the fast road reads ``value`` in place under ``plan`` (tests)."""
    return bool(jvm_writer(spark).readsInPlace(plan, bytearray(value)))
