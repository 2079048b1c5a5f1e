"""The Spark dry run of ``migrate validate --spark``: the job's own conversion
(:func:`converters.pipeline.transform.convert`) on sample records, decoded by ``from_avro`` as
the job decodes them, so a rule's SQL is checked by the Spark that will run it."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from converters.mapping.model import Mapping
from converters.mapping.preview import Outcome
from converters.mapping.sql import Compiled
from converters.pipeline.transform import ERROR, V1, convert

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class SparkDryRun:
    """``migrate validate --spark``'s real SQL check (a ``mapping.check.SparkRun``) in a session."""

    spark: SparkSession

    def __call__(
        self, mapping: Mapping, compiled: Compiled, records: list[dict[str, Any]]
    ) -> tuple[list[Outcome] | None, str | None]:
        return spark_dry_run(self.spark, mapping, compiled, records)


def spark_dry_run(
    spark: SparkSession, mapping: Mapping, compiled: Compiled, records: list[dict[str, Any]]
) -> tuple[list[Outcome] | None, str | None]:
    """Run the real conversion (:func:`convert`) on ``records`` in ``spark``.

    The records are Avro-encoded with fastavro and decoded by ``from_avro`` (spark-avro), so the
    input has exactly the Spark types the job sees. Returns (outcomes in input order, None) or
    (None, Spark's error message) when an expression does not parse or analyse.
    """
    import json

    import fastavro
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    parsed = fastavro.parse_schema(mapping.source.schema_json)
    rows = []
    for i, rec in enumerate(records):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, rec)
        rows.append((i, bytearray(buf.getvalue())))
    df = spark.createDataFrame(rows, "i int, body binary")
    decoded = df.select(
        "i", from_avro(F.col("body"), json.dumps(mapping.source.schema_json)).alias("record")
    )
    try:
        good, bad = convert(decoded, mapping, compiled=compiled)
        got = {r["i"]: Outcome(_row_dict(r[V1]), ()) for r in good.collect()}
        got.update({r["i"]: Outcome(None, tuple(r[ERROR].split("; "))) for r in bad.collect()})
    except Exception as exc:  # AnalysisException / ParseException: Spark's words are the message
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, f"Spark refuses the compiled mapping: {first}"
    return [got[i] for i in range(len(records))], None


def _row_dict(row: Any) -> Any:
    from pyspark.sql import Row

    if isinstance(row, Row):
        return {k: _row_dict(v) for k, v in row.asDict(recursive=False).items()}
    if isinstance(row, list):
        return [_row_dict(v) for v in row]
    if isinstance(row, bytearray):
        return bytes(row)
    return row
