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
from converters.mapping.sql import Compiled, compiled_or_fail, select_sql
from spark_avro.migrate import REASON_COLUMN, STAGE_COLUMN, V1_COLUMN, convert_decoded

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

V1 = V1_COLUMN  # the converted record, a struct in v1's shape
ERROR = REASON_COLUMN  # why a record is dead-lettered
STAGE = STAGE_COLUMN  # decode | convert


def convert_rows(df: DataFrame, mapping: Mapping, *, compiled: Compiled | None = None) -> DataFrame:
    """Apply ``mapping`` to decoded v2 records, one output row per input row.

    Returns the carried columns plus ``v1`` (a struct with v1's fields, in v1's order and Spark
    types; null for a failed record), ``error`` (the reasons, ``; ``-joined; null when the
    record converted) and ``error_stage`` (decode or convert; null when it converted). One pass:
    the job chooses each row's topic and value from these columns without splitting the frame
    (a union of two filtered frames would decode every batch twice). The SQL runs through
    ``spark_avro.migrate.convert_decoded``, which the migrate-on-read readers use too. Raises
    CheckFailed if the mapping is not deployable (unresolved fields, type mismatches).
    """
    compiled = compiled or compiled_or_fail(mapping)
    return convert_decoded(df, columns=select_sql(compiled), error_sql=compiled.error_sql)


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
