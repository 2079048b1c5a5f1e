"""The pure conversion: DataFrame -> DataFrame, no I/O. The job wires it to Kafka.

Assumptions, said out loud:

* the input is what ``spark_avro.decode_confluent(..., mode="PERMISSIVE", flatten=False)`` returns:
  the v2 record as one struct column ``record``, ``decode_error`` (null when it decoded) and any
  other columns, which are carried through untouched (Kafka metadata, raw bytes, headers);
* every v1 field is computed by the Spark SQL the mapping compiles to
  (``converters.mapping.sql``), over the v2 record's fields; nothing runs in Python;
* a record that failed to decode, or whose conversion failed for a field with ``on_error: fail``,
  goes to the dead-letter frame with its reason; no record is dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from converters.mapping.model import Mapping
from converters.mapping.sql import Compiled, compile_mapping, ident, select_sql
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


def convert_rows(df: DataFrame, mapping: Mapping, *, compiled: Compiled | None = None) -> DataFrame:
    """Apply ``mapping`` to decoded v2 records, one output row per input row.

    Returns the carried columns plus ``v1`` (a struct with v1's fields, in v1's order and Spark
    types; null for a failed record), ``error`` (the reasons, ``; ``-joined; null when the
    record converted) and ``error_stage`` (decode or convert; null when it converted). One pass:
    the job chooses each row's topic and value from these columns without splitting the frame
    (a union of two filtered frames would decode every batch twice). Raises CheckFailed if the
    mapping is not deployable (unresolved fields, type mismatches).
    """
    from pyspark.sql import functions as F

    compiled = compiled or compiled_or_fail(mapping)
    carried = [c for c in df.columns if c not in (RECORD, DECODE_ERROR)]
    has_decode_error = DECODE_ERROR in df.columns
    # Expressions name v2 fields directly (``total_amount``), so evaluate them over the record's
    # fields; the carried columns ride along under prefixed names that cannot clash with a field
    # (a struct holding them would be built and taken apart again for every record).
    carry = "__schemacli_carry_"
    flat = df.select(
        *[F.col(ident(c)).alias(carry + c) for c in carried],
        (F.col(DECODE_ERROR) if has_decode_error else F.lit(None).cast("string")).alias(
            DECODE_ERROR
        ),
        F.col(f"{RECORD}.*"),
    )
    target = F.struct(*[F.expr(s) for s in select_sql(compiled)])
    decoded = F.col(DECODE_ERROR).isNull()
    staged = flat.select(
        *[F.col(ident(carry + c)) for c in carried],
        F.col(DECODE_ERROR),
        F.when(decoded, F.expr(compiled.error_sql)).alias("_convert_error"),
        F.when(decoded, target).alias("_v1"),
    )
    bad = F.col(DECODE_ERROR).isNotNull() | (F.col("_convert_error") != "")
    return staged.select(
        *[F.col(ident(carry + c)).alias(c) for c in carried],
        F.when(~bad, F.col("_v1")).alias(V1),
        F.when(bad, F.coalesce(F.col(DECODE_ERROR), F.col("_convert_error"))).alias(ERROR),
        F.when(F.col(DECODE_ERROR).isNotNull(), F.lit("decode"))
        .when(bad, F.lit("convert"))
        .alias(STAGE),
    )


def convert(
    df: DataFrame, mapping: Mapping, *, compiled: Compiled | None = None
) -> tuple[DataFrame, DataFrame]:
    """Apply ``mapping`` to decoded v2 records; split into ``(converted, dead_letter)``.

    ``converted`` has the carried columns plus ``v1``; ``dead_letter`` the carried columns plus
    ``error`` and ``error_stage`` (see :func:`convert_rows`). Every input row is in exactly one
    of the two. Raises CheckFailed if the mapping is not deployable.
    """
    from pyspark.sql import functions as F

    rows = convert_rows(df, mapping, compiled=compiled)
    carried = [c for c in rows.columns if c not in (V1, ERROR, STAGE)]
    converted = rows.where(F.col(ERROR).isNull()).select(*carried, V1)
    dead = rows.where(F.col(ERROR).isNotNull()).select(*carried, ERROR, STAGE)
    return converted, dead
