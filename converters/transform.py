"""The pure conversion: DataFrame -> DataFrame, no I/O. The job wires it to Kafka.

Assumptions, said out loud:

* the input is what ``spark_avro.decode_confluent(..., mode="PERMISSIVE", flatten=False)`` returns:
  the v2 record as one struct column ``record``, ``decode_error`` (null when it decoded) and any
  other columns, which are carried through untouched (Kafka metadata, raw bytes, headers);
* every v1 field is computed by the Spark SQL the mapping compiles to (``converters.sql``), over
  the v2 record's fields; nothing runs in Python;
* a record that failed to decode, or whose conversion failed for a field with ``on_error: fail``,
  goes to the dead-letter frame with its reason; no record is dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from converters.mapping import Mapping
from converters.sql import Compiled, compile_mapping, ident, select_sql
from schemacli.errors import CheckFailed

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

RECORD = "record"
DECODE_ERROR = "decode_error"
V1 = "v1"  # the converted record, a struct in v1's shape
ERROR = "error"  # why a record is dead-lettered
STAGE = "error_stage"  # decode | convert


def compiled_or_fail(mapping: Mapping) -> Compiled:
    """Compile ``mapping``; raise CheckFailed naming the first problem when it is not deployable."""
    compiled = compile_mapping(mapping)
    errors = [f for f in compiled.findings if f.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CheckFailed(
            first.message + more,
            location=first.location,
            hint="Run `schemacli migrate validate` to see every problem.",
        )
    return compiled


def convert(
    df: DataFrame, mapping: Mapping, *, compiled: Compiled | None = None
) -> tuple[DataFrame, DataFrame]:
    """Apply ``mapping`` to decoded v2 records.

    Returns ``(converted, dead_letter)``: ``converted`` has the carried columns plus ``v1`` (a
    struct with v1's fields, in v1's order and Spark types); ``dead_letter`` has the carried
    columns plus ``error`` (the reasons, ``; ``-joined) and ``error_stage`` (decode or convert).
    Every input row is in exactly one of the two. Raises CheckFailed if the mapping is not
    deployable (unresolved fields, type mismatches).
    """
    from pyspark.sql import functions as F

    compiled = compiled or compiled_or_fail(mapping)
    carried = [c for c in df.columns if c not in (RECORD, DECODE_ERROR)]
    has_decode_error = DECODE_ERROR in df.columns
    # Expressions name v2 fields directly (``total_amount``), so evaluate them over the record's
    # fields; the carried columns ride along in one struct whose name cannot clash with a field.
    carry = "__schemacli_carry"
    flat = df.select(
        F.struct(*[F.col(ident(c)) for c in carried]).alias(carry)
        if carried
        else F.lit(None).alias(carry),
        (F.col(DECODE_ERROR) if has_decode_error else F.lit(None).cast("string")).alias(
            DECODE_ERROR
        ),
        F.col(f"{RECORD}.*"),
    )
    target = F.struct(*[F.expr(s) for s in select_sql(compiled)])
    staged = flat.select(
        F.col(carry),
        F.col(DECODE_ERROR),
        F.when(F.col(DECODE_ERROR).isNull(), F.expr(compiled.error_sql)).alias("_convert_error"),
        F.when(F.col(DECODE_ERROR).isNull(), target).alias(V1),
    )
    is_bad = F.col(DECODE_ERROR).isNotNull() | (F.col("_convert_error") != "")
    unpack = [F.col(f"{carry}.{ident(c)}").alias(c) for c in carried]
    converted = staged.where(~is_bad).select(*unpack, F.col(V1))
    dead = staged.where(is_bad).select(
        *unpack,
        F.coalesce(F.col(DECODE_ERROR), F.col("_convert_error")).alias(ERROR),
        F.when(F.col(DECODE_ERROR).isNotNull(), F.lit("decode"))
        .otherwise(F.lit("convert"))
        .alias(STAGE),
    )
    return converted, dead


def encode_confluent(converted: DataFrame, target_schema: str, schema_id: int) -> DataFrame:
    """``converted`` with ``value``: the ``v1`` struct as Confluent-framed Avro (magic byte 0,
    4-byte big-endian ``schema_id``, then ``to_avro`` with ``target_schema``); ``v1`` dropped."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    header = bytes([0]) + int(schema_id).to_bytes(4, "big", signed=True)
    body = to_avro(F.col(V1), target_schema)
    return converted.withColumn("value", F.concat(F.lit(bytearray(header)), body)).drop(V1)
