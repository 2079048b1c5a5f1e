"""Write Confluent-framed Avro from Spark: ``encode_confluent`` and ``write_topic``.

Assumptions, said out loud:

* every value written is Confluent-framed: magic byte ``0x00``, the 4-byte big-endian id of the
  schema the body was written with, then the Avro binary body from Spark's ``to_avro``;
* the schema is a subject's: either the subject's latest version (no ``schema`` given), or the
  ``schema`` given, whose id is looked up under the subject (``POST /subjects/{s}``) and
  registered only when ``register=True``; a schema the subject does not hold is an error
  otherwise, never a silent registration;
* the DataFrame's columns (or the ``value`` struct given) must match the schema's fields by name
  and type, as ``to_avro`` requires; a key column is written as it is (bytes or string).

The converter job frames its v1 values with the same ``confluent_value``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemacli.errors import RegistryError, UsageError
from spark_avro.registry import with_registry

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.streaming.query import StreamingQuery

    from schemacli.registry.schemas import RegistrySchemas

MAGIC_BYTE = 0
MAX_ID = 2**31 - 1


def header(schema_id: int) -> bytes:
    """The 5-byte Confluent header for ``schema_id``."""
    if not 0 <= int(schema_id) <= MAX_ID:
        raise UsageError(
            f"schema id {schema_id} does not fit the Confluent header (0 to {MAX_ID})",
            hint="Use the id the registry gave the schema.",
        )
    return bytes([MAGIC_BYTE]) + int(schema_id).to_bytes(4, "big", signed=True)


def confluent_value(record: Column, schema: str, schema_id: int) -> Column:
    """The Confluent-framed Avro bytes of the struct column ``record``: the header for
    ``schema_id``, then ``to_avro(record, schema)``."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    return F.concat(F.lit(bytearray(header(schema_id))), to_avro(record, schema))


def encode_confluent(
    df: DataFrame,
    schema: str,
    schema_id: int,
    *,
    value: str | None = None,
    key: str | None = None,
) -> DataFrame:
    """``df`` as Kafka rows: ``value`` (Confluent-framed Avro of the struct column named
    ``value``, or of all columns but ``key`` when None) and, when ``key`` names a column, that
    column as ``key``. The pure DataFrame -> DataFrame step of :func:`write_topic`."""
    from pyspark.sql import functions as F

    fields = [c for c in df.columns if c != key]
    record = F.col(value) if value is not None else F.struct(*[F.col(c) for c in fields])
    columns = [confluent_value(record, schema, schema_id).alias("value")]
    if key is not None:
        columns.insert(0, F.col(key).alias("key"))
    return df.select(*columns)


@dataclass(frozen=True)
class SubjectSchema:
    """The schema values are written with, and the id the registry gave it under ``subject``."""

    subject: str
    schema: str
    schema_id: int
    version: int | None
    registered: bool = False  # True when this call registered it


def subject_schema(
    registry_url: str, subject: str, schema: str | None = None, *, register: bool = False
) -> SubjectSchema:
    """The subject's latest schema and id, or ``schema``'s id under ``subject`` (looked up;
    registered only when ``register``). Raises RegistryError (exit 3) naming the subject when
    the registry does not hold it and ``register`` is False."""

    def find(road: RegistrySchemas) -> SubjectSchema:
        client = road.client
        if schema is None:
            latest = road.schema(subject, "latest")
            return SubjectSchema(subject, latest.text, latest.id, latest.number)
        text = json.dumps(json.loads(schema))
        found = client.lookup(subject, text)
        if found is not None:
            return SubjectSchema(subject, text, found.id, found.version)
        if not register:
            raise RegistryError(
                f"the schema is not registered under {subject!r}",
                hint="Register it first (schemacli register), or pass register=True to let "
                "write_topic register it.",
            )
        registered = client.register(subject, text)
        return SubjectSchema(subject, text, registered.id, registered.version, registered=True)

    return with_registry(registry_url, find)


def write_topic(
    df: DataFrame,
    bootstrap: str,
    topic: str,
    *,
    subject: str,
    registry_url: str,
    schema: str | None = None,
    register: bool = False,
    key: str | None = None,
    value: str | None = None,
    checkpoint: str | None = None,
    kafka_options: dict[str, str] | None = None,
) -> StreamingQuery | None:
    """Write ``df`` to ``topic`` as Confluent-framed Avro of ``subject``'s schema (see
    :func:`subject_schema`). A batch frame is written now (returns None); a streaming frame
    starts a query (``checkpoint`` required) and returns it."""
    if df.isStreaming and not checkpoint:
        raise UsageError(
            "a streaming write needs a checkpoint location",
            hint="Pass checkpoint='/path/to/checkpoint' (it is where the query resumes).",
        )
    chosen = subject_schema(registry_url, subject, schema, register=register)
    rows = encode_confluent(df, chosen.schema, chosen.schema_id, value=value, key=key)
    options = {"kafka.bootstrap.servers": bootstrap, "topic": topic, **(kafka_options or {})}
    if not df.isStreaming:
        rows.write.format("kafka").options(**options).save()
        return None
    return (
        rows.writeStream.format("kafka")
        .options(**options)
        .option("checkpointLocation", checkpoint)
        .start()
    )
