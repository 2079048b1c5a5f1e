"""Decode Confluent-framed Avro in a DataFrame of Kafka records, with Spark SQL and from_avro only.

Assumptions, said out loud:

* every Kafka value is Confluent-framed: magic byte ``0x00``, a 4-byte big-endian schema id, then
  the Avro binary body written with the schema registered under that id;
* each record is decoded with ITS OWN writer schema (looked up by id) into ONE reader schema, with
  Avro schema resolution (``from_avro``'s ``avroSchema`` option), so records written with older or
  newer versions land in the same columns, defaults filled in;
* bad records (null-safe): ``PERMISSIVE`` keeps them, with null data, a ``decode_error`` reason,
  its ``decode_error_kind`` (``not_framed``, ``unknown_id``, ``incompatible``, ``corrupt``) and
  the ``raw_value`` bytes; ``FAILFAST`` makes the query fail naming topic, partition, offset and
  reason. A null value (a tombstone: a delete on a compacted topic) is not an error: it yields
  null data, a null schema id and ``is_tombstone`` true;
* writers the compatibility engine found the reader cannot read (``incompatible``, computed on
  the driver) are not decoded at all: their records are bad records of kind ``incompatible``;
* unions other than ``[null, X]`` become structs whose members are named after the branch's type
  (``member_int``, ``member_Address``: Spark's ``enableStableIdentifiersForUnionType``), unless
  ``stable_union_names=False`` asks for Spark's positional ``member0..N``.

No Python UDF runs in the data path: the header is split with ``substring``/``hex``/``conv`` and the
body is decoded by one ``from_avro`` per known schema id, chosen with ``CASE WHEN`` on the id.

This module is also the body of every reader that ``schemacli spark codegen`` writes (it copies
the part after the ``codegen: begin`` marker), so it imports only pyspark and the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

# --- codegen: begin ---
MODES = ("PERMISSIVE", "FAILFAST")
KAFKA_COLUMNS = ("key", "topic", "partition", "offset", "timestamp")
SCHEMA_ID_COLUMN = "schema_id"
ERROR_COLUMN = "decode_error"
KIND_COLUMN = "decode_error_kind"
TOMBSTONE_COLUMN = "is_tombstone"
# decode_error_kind, in the order they are checked; null for good records and tombstones.
ERROR_KINDS = ("not_framed", "unknown_id", "incompatible", "corrupt")
# from_avro's option (Spark 3.5+): union members named member_<type name>, not member<position>.
STABLE_UNION_OPTION = "enableStableIdentifiersForUnionType"
RAW_COLUMN = "raw_value"
RECORD_COLUMN = "record"
# How a failed decode is told apart from a good one: from_avro in PERMISSIVE mode turns a record
# it cannot decode into a struct of nulls. A good record always has a value in a field whose type
# is not nullable, so the first such reader field is the probe. When every field is nullable, a
# boolean field with default true is added to the reader schema; the writer never has it, so Avro
# resolution fills it in on every successful decode (and only then).
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


def decoded_probe(reader_schema: str) -> str | None:
    """The first top-level reader field that cannot be null (None when all of them can)."""

    def nullable(avro_type: object) -> bool:
        if isinstance(avro_type, list):
            return any(nullable(branch) for branch in avro_type)
        if isinstance(avro_type, dict):
            return avro_type.get("type") == "null"
        return avro_type == "null"

    for field in json.loads(reader_schema)["fields"]:
        if not nullable(field["type"]):
            name: str = field["name"]
            return name
    return None


def with_decoded_marker(reader_schema: str) -> str:
    """``reader_schema`` with the marker field appended (see DECODED_MARKER)."""
    schema = json.loads(reader_schema)
    marker = {"name": DECODED_MARKER, "type": "boolean", "default": True}
    return json.dumps({**schema, "fields": [*schema["fields"], marker]})


def header_schema_id(value: Column, known_ids: tuple[int, ...] = ()) -> Column:
    """The schema id in bytes 2..5 of a Confluent-framed value, as a signed 32-bit int.

    Null when the value is null, shorter than the header or does not start with the magic byte.
    Headers of ``known_ids`` are matched as 5-byte literals (cheap); others go through hex.
    """
    header = F.substring(value, 1, HEADER_SIZE)
    unsigned = F.conv(F.hex(F.substring(value, 2, 4)), 16, 10).cast("bigint")
    # two's complement with the unsigned value written once (a CASE over it wrote the hex
    # conversion three times into the decode's generated method)
    signed = F.pmod(unsigned + 2**31, F.lit(2**32)) - 2**31
    framed = (F.length(header) == HEADER_SIZE) & (
        F.substring(value, 1, 1) == F.lit(bytearray(MAGIC_BYTE))
    )
    generic = F.when(framed, signed.cast("int"))
    fast = None
    for schema_id in known_ids:
        literal = F.lit(bytearray(MAGIC_BYTE + schema_id.to_bytes(4, "big", signed=True)))
        condition = header == literal
        fast = F.when(condition, schema_id) if fast is None else fast.when(condition, schema_id)
    return generic if fast is None else fast.otherwise(generic)


_SQL_TYPES = {
    "boolean": "boolean",
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "string": "string",
    "bytes": "binary",
}


def _full_name(schema: dict[str, Any]) -> str:
    name, namespace = schema.get("name", ""), schema.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _plain(avro_type: object) -> bool:
    """A primitive or a union of primitives: no named type whose meaning could differ."""
    if isinstance(avro_type, list):
        return all(isinstance(branch, str) for branch in avro_type) and all(
            _plain(branch) for branch in avro_type
        )
    return isinstance(avro_type, str) and (avro_type == "null" or avro_type in _SQL_TYPES)


def _default_literal(field: dict[str, Any]) -> Column | None:
    """The reader field's default as a typed literal, or None when not a simple primitive."""
    avro_type, default = field["type"], field["default"]
    if isinstance(avro_type, list):
        non_null = [branch for branch in avro_type if branch != "null"]
        if len(non_null) != 1 or len(avro_type) > 2:
            return None
        if default is None and "null" not in avro_type:
            return None
        if default is not None and avro_type[0] == "null":
            return None  # a union's default belongs to its first branch
        avro_type = non_null[0]
    elif default is None:
        return None
    if not isinstance(avro_type, str) or avro_type not in _SQL_TYPES:
        return None
    if default is not None and avro_type == "bytes":
        default = bytearray(default.encode("latin-1"))  # Avro writes bytes defaults as \u00XX
    elif default is not None and avro_type in ("float", "double"):
        default = float(default)
    return F.lit(default).cast(_SQL_TYPES[avro_type])


def defaults_plan(
    writer: object, reader: dict[str, Any]
) -> tuple[str, list[tuple[str, str | Column]]] | None:
    """How to turn a record decoded as written into the reader's record without Avro resolution.

    Avro's resolving decoder fills defaults record by record and is markedly slower than a plain
    decode. When the reader differs from the writer only by fields the writer lacks, each with a
    primitive default, and every shared field has the very same primitive type, the record is
    decoded with the writer schema alone and the defaults are added as literals - the same values
    Avro resolution gives. Returns (a non-nullable writer field that proves the decode worked,
    [(reader field, writer field name or default literal)]) or None to use Avro resolution.
    """
    if not (isinstance(writer, dict) and writer.get("type") == "record"):
        return None
    if _full_name(writer) != _full_name(reader) or reader.get("aliases"):
        return None
    written = {field["name"]: field for field in writer["fields"]}
    proof = next((f["name"] for f in writer["fields"] if not _nullable(f["type"])), None)
    if proof is None:
        return None
    columns: list[tuple[str, str | Column]] = []
    for field in reader["fields"]:
        if field.get("aliases"):
            return None
        source = written.get(field["name"])
        if source is not None:
            if not (_plain(field["type"]) and source["type"] == field["type"]):
                return None
            columns.append((field["name"], field["name"]))
            continue
        if "default" not in field:
            return None
        literal = _default_literal(field)
        if literal is None:
            return None
        columns.append((field["name"], literal))
    return proof, columns


def resolved_with_defaults(
    written: Column, proof: str, columns: list[tuple[str, str | Column]]
) -> Column:
    """The reader's record built from one decoded as written; null when that decode failed."""
    parts = [
        (written.getField(source) if isinstance(source, str) else source).alias(name)
        for name, source in columns
    ]
    return F.when(written.getField(proof).isNotNull(), F.struct(*parts))


def _nullable(avro_type: object) -> bool:
    if isinstance(avro_type, list):
        return any(_nullable(branch) for branch in avro_type)
    if isinstance(avro_type, dict):
        return avro_type.get("type") == "null"
    return avro_type == "null"


def decode_confluent(
    df: DataFrame,
    *,
    writer_schemas: Mapping[int, str],
    reader_schema: str,
    mode: str = "PERMISSIVE",
    flatten: bool = True,
    passthrough: tuple[str, ...] = (),
    incompatible: Mapping[int, str] | None = None,
    stable_union_names: bool = True,
) -> DataFrame:
    """Decode the Confluent-framed Avro ``value`` column of ``df`` into ``reader_schema``'s fields.

    ``df`` has Kafka's columns (``value`` is required; ``key``, ``topic``, ``partition``,
    ``offset``, ``timestamp`` are passed through when present; so are the ``passthrough``
    columns, e.g. ``headers`` from a Kafka source with ``includeHeaders``). ``writer_schemas``
    maps schema id to the JSON text of the schema registered under it. Returns the reader's
    fields (top-level columns when ``flatten``, else one struct column ``record``), the Kafka and
    passthrough columns, ``schema_id``, ``is_tombstone`` (the value is null) and, in PERMISSIVE
    mode, ``decode_error`` (null when the record decoded), ``decode_error_kind`` (one of
    ERROR_KINDS, null when the record decoded) and ``raw_value`` (the bytes of a bad record).

    ``incompatible`` maps the writer ids the reader cannot read to the compatibility engine's
    finding (computed on the driver, e.g. ``spark_avro.compat.incompatible_writers``): their
    records are not decoded and get kind ``incompatible`` with the finding in the message. When
    it is None, compatibility was not checked and such records count as ``corrupt``.
    ``stable_union_names`` names union members ``member_<type>`` (False: ``member0..N``).
    Raises ValueError on a bad mode, reader schema, name clash, a passthrough column ``df`` does
    not have, or an ``incompatible`` id without a writer schema.
    """
    mode = mode.upper()
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not writer_schemas:
        raise ValueError("no writer schemas given: every record would have an unknown schema id")
    fields = reader_field_names(reader_schema)
    missing = [name for name in passthrough if name not in df.columns]
    if missing:
        raise ValueError(f"passthrough columns {missing} are not in the frame: {df.columns}")
    extra = [name for name in passthrough if name not in KAFKA_COLUMNS]
    added = {SCHEMA_ID_COLUMN, TOMBSTONE_COLUMN, ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN}
    internal = {"value", *added, "_schema_id", "_record", "_kind"}
    clashes = [n for n in extra if n in internal | {"_reason"} or n.startswith("_writer_")]
    if clashes:
        raise ValueError(
            f"passthrough columns {clashes} clash with the columns the reader uses; "
            "rename them first"
        )
    passthrough = tuple(name for name in KAFKA_COLUMNS if name in df.columns)
    passthrough += tuple(name for name in extra if name not in passthrough)
    if flatten:
        reserved = {*passthrough, *added}
        clashes = sorted(reserved.intersection(fields))
        if clashes:
            raise ValueError(
                f"reader fields {clashes} clash with the columns the reader adds; "
                "use flatten=False to get the record as one struct column"
            )

    ids = tuple(sorted(writer_schemas))
    checked_compatibility = incompatible is not None
    unreadable = dict(incompatible or {})
    strays = sorted(set(unreadable) - set(ids))
    if strays:
        raise ValueError(f"incompatible names schema ids {strays} that have no writer schema")
    avro_options = {"mode": "PERMISSIVE"}
    if stable_union_names:
        avro_options[STABLE_UNION_OPTION] = "true"
    probe = decoded_probe(reader_schema)
    target = reader_schema if probe is not None else with_decoded_marker(reader_schema)
    reader_json = json.loads(reader_schema)
    value = F.col("value")
    payload = F.expr("substring(value, 6)")
    # Stage 1: one column per writer id, decoded only for records with that id. Stage 2 picks
    # the record. Two projections, so each from_avro runs once per record however often its
    # result is referenced.
    writer_columns: list[Column] = []
    record: Column | None = None
    for writer_id in ids:
        if writer_id in unreadable:
            continue  # never decoded: its records are reported as incompatible
        writer = writer_schemas[writer_id]
        name = f"_writer_{writer_id}".replace("-", "n")
        # the writer is the reader: decoded as is, and the decoded struct is the record (a
        # failed decode, a struct of nulls, made null), not built again field by field
        same = probe if probe is not None and json.loads(writer) == reader_json else None
        plan = None if probe is None or same else defaults_plan(json.loads(writer), reader_json)
        if same or plan is not None:
            options = avro_options  # no Avro resolution; a plan's defaults are added below
        else:
            options = {**avro_options, "avroSchema": target}
        condition = F.col("_schema_id") == writer_id
        writer_columns.append(F.when(condition, from_avro(payload, writer, options)).alias(name))
        if same:
            branch = F.when(F.col(name).getField(same).isNotNull(), F.col(name))
        elif plan is not None:
            branch = resolved_with_defaults(F.col(name), *plan)
        else:
            branch = F.col(name)
        record = F.when(condition, branch) if record is None else record.when(condition, branch)
    if record is None:  # every writer is incompatible: a null of the reader's type
        record = from_avro(F.lit(None).cast("binary"), target, avro_options)
    staged = (
        df.select(*passthrough, value, header_schema_id(value, ids).alias("_schema_id"))
        .select("*", *writer_columns)
        .select(*passthrough, "value", "_schema_id", record.alias("_record"))
    )

    known = ", ".join(str(schema_id) for schema_id in ids)
    length = F.length(value)
    schema_id = F.col("_schema_id")
    decoded_ok = F.col("_record").getField(probe or DECODED_MARKER).isNotNull()
    short = length < HEADER_SIZE
    wrong_magic = F.substring(value, 1, 1) != F.lit(bytearray(MAGIC_BYTE))
    unknown = ~schema_id.isin(*ids)
    # The good path is checked first: a decoded record costs one null test, not five.
    good = value.isNull() | decoded_ok
    kind = (
        F.when(good, F.lit(None).cast("string"))
        .when(short | wrong_magic, F.lit("not_framed"))
        .when(unknown, F.lit("unknown_id"))
    )
    if unreadable:
        kind = kind.when(schema_id.isin(*sorted(unreadable)), F.lit("incompatible"))
    kind = kind.otherwise(F.lit("corrupt"))
    incompatible_reason = None
    for writer_id, finding in sorted(unreadable.items()):
        text = F.lit(
            f"writer schema id {writer_id} cannot be read as the reader schema "
            f"(records with this id are not decoded): {finding}"
        )
        incompatible_reason = (
            F.when(schema_id == writer_id, text)
            if incompatible_reason is None
            else incompatible_reason.when(schema_id == writer_id, text)
        )
    corrupt_why = (
        ": truncated or not written with it"
        if checked_compatibility
        else ": truncated, not written with it, or not readable as the reader schema"
    )
    # The reason is spelled out only for a bad record: a good one pays one null test of _kind.
    reason = (
        F.when(F.col("_kind").isNull(), F.lit(None).cast("string"))
        .when(
            short,
            F.concat(
                F.lit("too short for the Confluent header: "),
                length.cast("string"),
                F.lit(" bytes; need a magic byte 0x00 and a 4-byte schema id"),
            ),
        )
        .when(
            wrong_magic,
            F.concat(
                F.lit("wrong magic byte 0x"),
                F.hex(F.substring(value, 1, 1)),
                F.lit(" (expected 0x00): not Confluent-framed Avro"),
            ),
        )
        .when(
            unknown,
            F.concat(
                F.lit("unknown schema id "),
                schema_id.cast("string"),
                F.lit(f" (known ids: {known})"),
            ),
        )
    )
    if incompatible_reason is not None:
        reason = reason.when(schema_id.isin(*sorted(unreadable)), incompatible_reason)
    reason = reason.otherwise(
        F.concat(
            F.lit("undecodable Avro body for schema id "),
            schema_id.cast("string"),
            F.lit(corrupt_why),
        ),
    )
    checked = staged.select("*", kind.alias("_kind")).select("*", reason.alias("_reason"))

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
        "_kind",
        record.alias("_record"),
        schema_id.alias(SCHEMA_ID_COLUMN),
    )
    if flatten:
        data = [F.col("_record").getField(name).alias(name) for name in fields]
    elif probe is None:
        data = [F.col("_record").dropFields(DECODED_MARKER).alias(RECORD_COLUMN)]
    else:
        data = [F.col("_record").alias(RECORD_COLUMN)]
    columns: list[Column | str] = [
        *data,
        *passthrough,
        SCHEMA_ID_COLUMN,
        F.col("value").isNull().alias(TOMBSTONE_COLUMN),
    ]
    if mode == "PERMISSIVE":
        columns += [
            F.col("_reason").alias(ERROR_COLUMN),
            F.col("_kind").alias(KIND_COLUMN),
            F.when(F.col("_reason").isNotNull(), F.col("value")).alias(RAW_COLUMN),
        ]
    return final.select(*columns)


def split_bad_records(
    decoded: DataFrame, *, keep_tombstones: bool = False
) -> tuple[DataFrame, DataFrame]:
    """Split a PERMISSIVE result into (good records, bad records) for a dead-letter sink.

    Tombstones (null values: deletes on a compacted topic) are neither: they are left out of
    both frames unless ``keep_tombstones``, which keeps them in the good frame, told apart by
    ``is_tombstone`` (to route them elsewhere, select ``decoded.where("is_tombstone")``). The
    good frame drops ``decode_error``, ``decode_error_kind`` and ``raw_value`` (and
    ``is_tombstone`` unless ``keep_tombstones``); the bad frame keeps the Kafka columns,
    ``schema_id``, ``decode_error``, ``decode_error_kind`` and ``raw_value``.
    """
    if ERROR_COLUMN not in decoded.columns:
        raise ValueError("split_bad_records needs a PERMISSIVE result (with a decode_error column)")
    bad_columns = [
        name
        for name in (*KAFKA_COLUMNS, SCHEMA_ID_COLUMN, ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN)
        if name in decoded.columns
    ]
    good = decoded.where(F.col(ERROR_COLUMN).isNull())
    if not keep_tombstones:
        good = good.where(~F.col(TOMBSTONE_COLUMN)).drop(TOMBSTONE_COLUMN)
    good = good.drop(ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN)
    bad = decoded.where(F.col(ERROR_COLUMN).isNotNull()).select(*bad_columns)
    return good, bad
