"""Migrate on read: v2 records converted to v1 by a mapping's Spark SQL, v1 records as written.

The converter (``converters.pipeline``) and the readers (``spark_avro.read_topic(...,
migrate=MAPPING)`` and the modules ``schemacli spark codegen --migrate`` writes) apply a mapping
with these functions, so a v1 row read here is the row the converter would publish:

* ``convert_decoded``: the mapping's compiled Spark SQL (``converters.mapping.sql``: one
  ``<expr> AS `field``` per v1 field, one expression giving the failure reasons) over decoded v2
  records; nothing runs in Python;
* ``decode_migrated``: a topic of v1 and v2 records into v1 rows. Each record is decoded with its
  own writer schema; a writer of the v1 line (``v1_ids``) into the v1 schema, every other writer
  into the v2 schema and then converted, exactly as the converter decodes and converts it. A
  record the converter would dead-letter is a bad record here: ``decode_error`` holds the rule's
  reason, ``decode_error_kind`` is ``convert`` and ``raw_value`` its bytes.

Like ``decode.py``, the part after the ``codegen: begin`` marker is copied into generated
readers, so it uses only pyspark, the standard library and ``decode_confluent``.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_avro.decode import (
    ERROR_COLUMN,
    KAFKA_COLUMNS,
    KIND_COLUMN,
    MODES,
    RAW_COLUMN,
    RECORD_COLUMN,
    SCHEMA_ID_COLUMN,
    TOMBSTONE_COLUMN,
    decode_confluent,
    header_schema_id,
    reader_field_names,
)

# --- codegen: begin ---
V1_COLUMN = "v1"  # the converted record, a struct in v1's shape
REASON_COLUMN = "error"  # why a record failed (decode or convert)
STAGE_COLUMN = "error_stage"  # decode | convert
CONVERT_KIND = "convert"  # decode_error_kind of a record the mapping could not convert
_CARRY = "__schemacli_carry_"
_SOURCE = "_migrate_value"  # the record's bytes, carried for a bad record's raw_value
_V2_ROAD = "_migrate_v2"  # the v2 road's columns, riding along while v1 records are decoded


def ident(name: str) -> str:
    """``name`` quoted for Spark SQL (backticks doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


def convert_decoded(
    df: DataFrame, *, columns: list[str] | tuple[str, ...], error_sql: str
) -> DataFrame:
    """Apply a compiled mapping to decoded v2 records, one output row per input row.

    ``df`` is what ``decode_confluent(..., flatten=False)`` returns: the v2 record as the struct
    column ``record``, ``decode_error`` (optional; null when it decoded) and any other columns,
    carried through untouched. ``columns`` are the SQL of each v1 field (``<expr> AS `name```, in
    v1's order), ``error_sql`` the SQL of the reasons a record fails ('' when it converts).
    Returns the carried columns plus ``v1`` (the v1 record; null for a failed one), ``error``
    (the reasons; null when it converted) and ``error_stage`` (decode or convert). One pass: no
    frame is split and united again (that would decode every batch twice).
    """
    carried = [c for c in df.columns if c not in (RECORD_COLUMN, ERROR_COLUMN)]
    has_decode_error = ERROR_COLUMN in df.columns
    # Expressions name v2 fields directly (``total_amount``), so evaluate them over the record's
    # fields; the carried columns ride along under prefixed names that cannot clash with a field
    # (a struct holding them would be built and taken apart again for every record).
    flat = df.select(
        *[F.col(ident(c)).alias(_CARRY + c) for c in carried],
        (F.col(ERROR_COLUMN) if has_decode_error else F.lit(None).cast("string")).alias(
            ERROR_COLUMN
        ),
        F.col(f"{RECORD_COLUMN}.*"),
    )
    target = F.struct(*[F.expr(s) for s in columns])
    decoded = F.col(ERROR_COLUMN).isNull()
    staged = flat.select(
        *[F.col(ident(_CARRY + c)) for c in carried],
        F.col(ERROR_COLUMN),
        F.when(decoded, F.expr(error_sql)).alias("_convert_error"),
        F.when(decoded, target).alias("_v1"),
    )
    bad = F.col(ERROR_COLUMN).isNotNull() | (F.col("_convert_error") != "")
    return staged.select(
        *[F.col(ident(_CARRY + c)).alias(c) for c in carried],
        F.when(~bad, F.col("_v1")).alias(V1_COLUMN),
        F.when(bad, F.coalesce(F.col(ERROR_COLUMN), F.col("_convert_error"))).alias(REASON_COLUMN),
        F.when(F.col(ERROR_COLUMN).isNotNull(), F.lit("decode"))
        .when(bad, F.lit("convert"))
        .alias(STAGE_COLUMN),
    )


def decode_migrated(
    df: DataFrame,
    *,
    writer_schemas: Mapping[int, str],
    v1_ids: list[int] | tuple[int, ...],
    source_schema: str,
    target_schema: str,
    columns: list[str] | tuple[str, ...],
    error_sql: str,
    mode: str = "PERMISSIVE",
    flatten: bool = True,
    incompatible: Mapping[int, str] | None = None,
) -> DataFrame:
    """Decode the Confluent-framed ``value`` column of ``df`` into v1 rows.

    ``writer_schemas`` maps every schema id to its schema text; the ids in ``v1_ids`` are read
    into ``target_schema`` (v1) as they were written, every other id into ``source_schema`` (v2)
    and converted by the compiled mapping (``columns``, ``error_sql``; see
    :func:`convert_decoded`). ``incompatible`` maps the v2-road writers the v2 schema cannot read
    to the compatibility engine's finding. Union members are named positionally
    (``member0..N``), as the mapping names them.

    Returns the columns ``decode_confluent`` returns, the record in v1's shape: the v1 fields
    (top-level when ``flatten``, else the struct ``record``), the Kafka columns, ``schema_id``,
    ``is_tombstone`` and, in PERMISSIVE mode, ``decode_error``, ``decode_error_kind`` (one of
    decode_confluent's kinds, or ``convert`` for a record the mapping failed, with the rule's
    reason) and ``raw_value``. FAILFAST fails the query on the first bad record, naming topic,
    partition, offset and reason. Raises ValueError on a bad mode, an id in ``v1_ids`` without
    a writer schema, or a v1 field that clashes with the added columns.
    """
    mode = mode.upper()
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not writer_schemas:
        raise ValueError("no writer schemas given: every record would have an unknown schema id")
    strays = sorted(set(v1_ids) - set(writer_schemas))
    if strays:
        raise ValueError(f"v1_ids names schema ids {strays} that have no writer schema")
    fields = reader_field_names(target_schema)
    kafka = [name for name in KAFKA_COLUMNS if name in df.columns]
    added = {SCHEMA_ID_COLUMN, TOMBSTONE_COLUMN, ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN}
    clashes = sorted({*kafka, *added}.intersection(fields)) if flatten else []
    if clashes:
        raise ValueError(
            f"v1 fields {clashes} clash with the columns the reader adds; "
            "use flatten=False to get the record as one struct column"
        )
    v1_writers = {i: s for i, s in writer_schemas.items() if i in set(v1_ids)}
    v2_writers = {i: s for i, s in writer_schemas.items() if i not in set(v1_ids)}
    if not v2_writers:  # nothing to convert: a plain read into v1
        return decode_confluent(
            df.select(*kafka, "value"),
            writer_schemas=v1_writers,
            reader_schema=target_schema,
            mode=mode,
            flatten=flatten,
            stable_union_names=False,
        )
    source = df.select(*kafka, "value", F.col("value").alias(_SOURCE))
    # The v2 road, the converter's: decoded into v2 (v1 records come out as unknown ids here,
    # and are decoded below), then converted by the mapping's SQL.
    decoded = decode_confluent(
        source,
        writer_schemas=v2_writers,
        reader_schema=source_schema,
        flatten=False,
        passthrough=(_SOURCE,),
        incompatible={i: t for i, t in (incompatible or {}).items() if i in v2_writers},
        stable_union_names=False,
    ).drop(RAW_COLUMN)
    v2_road = convert_decoded(decoded, columns=columns, error_sql=error_sql)
    # The v1 road: records of a v1 writer, decoded into v1 as written (their raw bytes were
    # carried through the v2 road; every other row gives this decode a null value).
    road_columns = [c for c in v2_road.columns if c not in kafka]
    if v1_writers:
        v1_id = header_schema_id(F.col(_SOURCE)).isin(*sorted(v1_writers))
        is_v1 = F.coalesce(v1_id, F.lit(False))
        staged = v2_road.select(
            *kafka,
            F.when(is_v1, F.col(_SOURCE)).alias("value"),
            is_v1.alias("_is_v1"),
            F.struct(*[F.col(ident(c)) for c in road_columns]).alias(_V2_ROAD),
        )
        both = decode_confluent(
            staged,
            writer_schemas=v1_writers,
            reader_schema=target_schema,
            flatten=False,
            passthrough=("_is_v1", _V2_ROAD),
            stable_union_names=False,
        )

        def road(name: str) -> Column:
            return F.col(_V2_ROAD).getField(name)

    else:  # no v1 writer: the v2 road's columns as they are (no struct to pack and unpack)
        both = v2_road.select(
            "*",
            F.lit(False).alias("_is_v1"),
            F.lit(None).alias(RECORD_COLUMN),
            F.lit(None).cast("string").alias(ERROR_COLUMN),
        )

        def road(name: str) -> Column:
            return F.col(ident(name))

    v1 = F.col("_is_v1")
    # an id neither road knows: name every known id, not only the v2 road's
    known = ", ".join(str(i) for i in sorted(writer_schemas))
    unknown = F.concat(
        F.lit("unknown schema id "),
        road(SCHEMA_ID_COLUMN).cast("string"),
        F.lit(f" (known ids: {known})"),
    )
    reason = (
        F.when(v1, F.col(ERROR_COLUMN))
        .when(road(KIND_COLUMN) == "unknown_id", unknown)
        .otherwise(road(REASON_COLUMN))
    )
    kind = (
        F.when(v1, F.col(KIND_COLUMN))
        .when(road(STAGE_COLUMN) == "convert", F.lit(CONVERT_KIND))
        .otherwise(road(KIND_COLUMN))
    )
    record = F.when(v1, F.col(RECORD_COLUMN)).otherwise(road(V1_COLUMN))
    schema_id = road(SCHEMA_ID_COLUMN)
    value = road(_SOURCE)
    final = both.select(
        *kafka,
        record.alias("_record"),
        schema_id.alias("_schema_id"),
        value.alias("_value"),
        reason.alias("_reason"),
        kind.alias("_kind"),
    )
    record, schema_id = F.col("_record"), F.col("_schema_id")
    if mode == "FAILFAST":
        where = [F.lit("FAILFAST: malformed record")]
        for name in ("topic", "partition", "offset"):
            if name in kafka:
                where += [F.lit(f" {name} "), F.col(name).cast("string")]
        failure = F.raise_error(F.concat(*where, F.lit(": "), F.col("_reason")))
        bad = F.col("_reason").isNotNull()
        record = F.when(bad, failure).otherwise(record)
        schema_id = F.when(bad, failure).otherwise(schema_id)
    if flatten:
        data = [record.getField(name).alias(name) for name in fields]
    else:
        data = [record.alias(RECORD_COLUMN)]
    out: list[Column | str] = [
        *data,
        *kafka,
        schema_id.alias(SCHEMA_ID_COLUMN),
        F.col("_value").isNull().alias(TOMBSTONE_COLUMN),
    ]
    if mode == "PERMISSIVE":
        out += [
            F.col("_reason").alias(ERROR_COLUMN),
            F.col("_kind").alias(KIND_COLUMN),
            F.when(F.col("_reason").isNotNull(), F.col("_value")).alias(RAW_COLUMN),
        ]
    return final.select(*out)
