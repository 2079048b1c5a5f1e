"""Decode Confluent-framed Avro in a DataFrame of Kafka records, with Spark SQL and from_avro only.

Assumptions, said out loud:

* every Kafka value is Confluent-framed: magic byte ``0x00``, a 4-byte big-endian schema id, then
  the Avro binary body written with the schema registered under that id;
* each record is decoded with ITS OWN writer schema (looked up by id) into ONE reader schema, with
  Avro schema resolution (``from_avro``'s ``avroSchema`` option), so records written with older or
  newer versions land in the same columns, defaults filled in;
* bad records (null-safe): ``PERMISSIVE`` keeps them, with null data, a ``decode_error`` reason and
  the ``raw_value`` bytes; ``FAILFAST`` makes the query fail naming topic, partition, offset and
  reason. A null value (a tombstone) is not an error: it yields null data and a null schema id.

No Python UDF runs in the data path: the header is split with ``substring``/``hex``/``conv`` and the
body is decoded by one ``from_avro`` per known schema id, chosen with ``CASE WHEN`` on the id.

This module is also the body of every reader that ``schemacli spark codegen`` writes (it copies
the part after the ``codegen: begin`` marker), so it imports only pyspark and the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

# --- codegen: begin ---
MODES = ("PERMISSIVE", "FAILFAST")
KAFKA_COLUMNS = ("key", "topic", "partition", "offset", "timestamp")
SCHEMA_ID_COLUMN = "schema_id"
ERROR_COLUMN = "decode_error"
RAW_COLUMN = "raw_value"
RECORD_COLUMN = "record"
# A boolean field added to the reader schema with default true. The writer never has it, so Avro
# resolution fills it in on every successful decode; from_avro in PERMISSIVE mode turns a record it
# cannot decode into a struct of nulls, which this field tells apart from a record of null fields.
DECODED_MARKER = "_schemacli_decoded"
HEADER_SIZE = 5
MAGIC_BYTE = b"\x00"


def reader_field_names(reader_schema: str) -> list[str]:
    """The top-level field names of ``reader_schema`` (a JSON record schema), in order."""
    schema = json.loads(reader_schema)
    if not (isinstance(schema, dict) and schema.get("type") == "record"):
        raise ValueError(
            "the reader schema must be an Avro record (its fields become columns); "
            f"got {json.dumps(schema)[:80]}"
        )
    names = [field["name"] for field in schema["fields"]]
    if DECODED_MARKER in names:
        raise ValueError(f"the reader schema must not have a field named {DECODED_MARKER!r}")
    return names


def with_decoded_marker(reader_schema: str) -> str:
    """``reader_schema`` with the marker field appended (see DECODED_MARKER)."""
    schema = json.loads(reader_schema)
    marker = {"name": DECODED_MARKER, "type": "boolean", "default": True}
    return json.dumps({**schema, "fields": [*schema["fields"], marker]})


def header_schema_id(value: Column) -> Column:
    """The schema id in bytes 2..5 of a Confluent-framed value, as a signed 32-bit int.

    Null when the value is null, shorter than the header or does not start with the magic byte.
    """
    unsigned = F.conv(F.hex(F.substring(value, 2, 4)), 16, 10).cast("bigint")
    signed = F.when(unsigned >= 2**31, unsigned - 2**32).otherwise(unsigned)
    framed = (F.length(value) >= HEADER_SIZE) & (
        F.substring(value, 1, 1) == F.lit(bytearray(MAGIC_BYTE))
    )
    return F.when(framed, signed.cast("int"))


def decode_confluent(
    df: DataFrame,
    *,
    writer_schemas: Mapping[int, str],
    reader_schema: str,
    mode: str = "PERMISSIVE",
    flatten: bool = True,
) -> DataFrame:
    """Decode the Confluent-framed Avro ``value`` column of ``df`` into ``reader_schema``'s fields.

    ``df`` has Kafka's columns (``value`` is required; ``key``, ``topic``, ``partition``,
    ``offset``, ``timestamp`` are passed through when present). ``writer_schemas`` maps schema id
    to the JSON text of the schema registered under it. Returns the reader's fields (top-level
    columns when ``flatten``, else one struct column ``record``), the Kafka columns, ``schema_id``
    and, in PERMISSIVE mode, ``decode_error`` (null when the record decoded) and ``raw_value``
    (the bytes of a bad record). Raises ValueError on a bad mode, reader schema or name clash.
    """
    mode = mode.upper()
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not writer_schemas:
        raise ValueError("no writer schemas given: every record would have an unknown schema id")
    fields = reader_field_names(reader_schema)
    passthrough = [name for name in KAFKA_COLUMNS if name in df.columns]
    if flatten:
        reserved = {*passthrough, SCHEMA_ID_COLUMN, ERROR_COLUMN, RAW_COLUMN}
        clashes = sorted(reserved.intersection(fields))
        if clashes:
            raise ValueError(
                f"reader fields {clashes} clash with the columns the reader adds; "
                "use flatten=False to get the record as one struct column"
            )

    value = F.col("value")
    options = {"avroSchema": with_decoded_marker(reader_schema), "mode": "PERMISSIVE"}
    decoded = None
    for schema_id in sorted(writer_schemas):
        branch = from_avro(F.expr("substring(value, 6)"), writer_schemas[schema_id], options)
        condition = F.col("_schema_id") == schema_id
        decoded = F.when(condition, branch) if decoded is None else decoded.when(condition, branch)
    staged = df.select(
        *passthrough,
        value,
        header_schema_id(value).alias("_schema_id"),
    ).select("*", decoded.alias("_record"))

    known = ", ".join(str(schema_id) for schema_id in sorted(writer_schemas))
    length = F.length(value)
    schema_id = F.col("_schema_id")
    record = F.col("_record")
    reason = (
        F.when(value.isNull(), F.lit(None).cast("string"))
        .when(
            length < HEADER_SIZE,
            F.concat(
                F.lit("too short for the Confluent header: "),
                length.cast("string"),
                F.lit(" bytes; need a magic byte 0x00 and a 4-byte schema id"),
            ),
        )
        .when(
            F.substring(value, 1, 1) != F.lit(bytearray(MAGIC_BYTE)),
            F.concat(
                F.lit("wrong magic byte 0x"),
                F.hex(F.substring(value, 1, 1)),
                F.lit(" (expected 0x00): not Confluent-framed Avro"),
            ),
        )
        .when(
            ~schema_id.isin(*sorted(writer_schemas)),
            F.concat(
                F.lit("unknown schema id "),
                schema_id.cast("string"),
                F.lit(f" (known ids: {known})"),
            ),
        )
        .when(
            record.getField(DECODED_MARKER).isNull(),
            F.concat(
                F.lit("undecodable Avro body for schema id "),
                schema_id.cast("string"),
                F.lit(": truncated, or not written with that schema"),
            ),
        )
    )
    checked = staged.select("*", reason.alias("_reason"))

    record = F.col("_record")
    schema_id = F.col("_schema_id")
    if mode == "FAILFAST":
        where = [F.lit("FAILFAST: malformed record")]
        for name in ("topic", "partition", "offset"):
            if name in passthrough:
                where += [F.lit(f" {name} "), F.col(name).cast("string")]
        failure = F.raise_error(F.concat(*where, F.lit(": "), F.col("_reason")))
        bad = F.col("_reason").isNotNull()
        # raise_error sits in the columns that are always computed: the record and its schema id.
        record = F.when(bad, failure).otherwise(record)
        schema_id = F.when(bad, failure).otherwise(schema_id)
    final = checked.select(
        *passthrough,
        "value",
        "_reason",
        record.alias("_record"),
        schema_id.alias(SCHEMA_ID_COLUMN),
    )
    if flatten:
        data = [F.col("_record").getField(name).alias(name) for name in fields]
    else:
        data = [F.col("_record").dropFields(DECODED_MARKER).alias(RECORD_COLUMN)]
    columns = [*data, *passthrough, SCHEMA_ID_COLUMN]
    if mode == "PERMISSIVE":
        columns += [
            F.col("_reason").alias(ERROR_COLUMN),
            F.when(F.col("_reason").isNotNull(), F.col("value")).alias(RAW_COLUMN),
        ]
    return final.select(*columns)


def split_bad_records(decoded: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Split a PERMISSIVE result into (good records, bad records) for a dead-letter sink.

    The good frame drops ``decode_error`` and ``raw_value``; the bad frame keeps the Kafka
    columns, ``schema_id``, ``decode_error`` and ``raw_value``.
    """
    if ERROR_COLUMN not in decoded.columns:
        raise ValueError("split_bad_records needs a PERMISSIVE result (with a decode_error column)")
    bad_columns = [
        name
        for name in (*KAFKA_COLUMNS, SCHEMA_ID_COLUMN, ERROR_COLUMN, RAW_COLUMN)
        if name in decoded.columns
    ]
    good = decoded.where(F.col(ERROR_COLUMN).isNull()).drop(ERROR_COLUMN, RAW_COLUMN)
    bad = decoded.where(F.col(ERROR_COLUMN).isNotNull()).select(*bad_columns)
    return good, bad
