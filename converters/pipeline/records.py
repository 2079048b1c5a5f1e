"""The records road: a Kafka source row through the converter to the row it becomes.

Pure DataFrame -> DataFrame functions over Kafka's source columns, the same on the stream in the
job (``converters.pipeline.stream``), on a batch in ``migrate replay`` and in the benchmarks:

* each value is decoded with its writer schema (by the id in the Confluent header,
  ``spark_avro.decode_confluent``), converted with the mapping's Spark SQL
  (``converters.pipeline.transform``) and encoded with the v1 schema's id (:class:`RegistryPlan`,
  looked up once by :func:`resolve_registry`); with a ``key:`` section the key goes the same way;
* a converted message keeps its key and headers and gains the marker, a failed one becomes a
  dead letter with the raw bytes and the dead-letter headers (``converters.pipeline.headers``);
* a message that already carries the marker is skipped (the loop guard).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from converters.mapping.model import Mapping
from converters.mapping.sql import compiled_or_fail
from converters.pipeline.headers import (
    ERROR_HEADER,
    MARKER_HEADER,
    SOURCE_HEADER,
    STAGE_HEADER,
    TIMESTAMP_HEADER,
    TOMBSTONE,
)
from converters.pipeline.progress import KINDS, METRICS
from converters.pipeline.transform import ERROR, STAGE, V1, convert_rows
from converters.pipeline.v1rules import apply_v1_rules, compile_v1_rules, contract_text
from schemacli.contracts.avro.loader import collapse_primitives
from schemacli.errors import CheckFailed, UsageError
from schemacli.registry.schemas import RegistrySchemas
from spark_avro.encode import confluent_value

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from schemacli.registry.client import RegistryClient

SOURCE_VALUE = "source_value"  # the v2 message's bytes, carried to the dead letter
SKIP = "already_converted"  # the message carries MARKER_HEADER: skip it (the loop guard)
KEY_OUT = "v1_key"  # the key written to v1: converted when the mapping has `key:`, else copied
KEY_ERROR = "key_error"  # why the key could not be decoded or converted (the record is dead)
KEY_STAGE = "key_error_stage"  # key-decode | key-convert
VALUE_SIDE = "value_side"  # the value's columns, riding along while the key is decoded


@dataclass(frozen=True)
class RegistryPlan:
    """What the job needs from the registry, fetched once at start."""

    target_id: int
    target_schema: str
    writer_schemas: dict[int, str]  # v2 schema id -> schema text
    writer_versions: dict[int, str]  # v2 schema id -> "subject/version" (the marker header)
    key: RegistryPlan | None = None  # the same for the key, when the mapping converts keys
    # v1's rule set (contract JSON) when it has domain rules: pipeline.v1rules applies them
    target_rules: str | None = None


def resolve_registry(mapping: Mapping, client: RegistryClient) -> RegistryPlan:
    """Look up the v1 schema id and every v2 writer schema (of the key too, when the mapping has
    a ``key`` section). Raises CheckFailed when v1 is not registered under the target subject
    (the job must not invent an id), RegistryError when the registry cannot answer."""
    plan = _resolve_side(mapping, client)
    if mapping.key is not None:
        plan = replace(plan, key=_resolve_side(mapping.key, client))
    return plan


def _resolve_side(mapping: Mapping, client: RegistryClient) -> RegistryPlan:
    target, source = mapping.target, mapping.source
    what = "key " if mapping.prefix == "/key" else ""
    if not target.subject or not source.subject:
        raise UsageError(
            f"the job needs registry subjects for both sides of the {what or 'value '}"
            "(source.subject, target.subject)",
            location=mapping.location("/target" if not target.subject else "/source"),
            hint="Add `subject:` to the mapping; the ids in the Confluent header come from there.",
        )
    target_text = json.dumps(target.schema_json)
    road = RegistrySchemas(client)
    found = _registered_as(road, target.subject, target.schema_json)
    if found is None:
        raise CheckFailed(
            f"the v1 {what}schema is not registered under subject {target.subject!r}",
            location=mapping.location("/target/subject"),
            hint=f"Register it first: `schemacli register {target.subject} <v1.avsc>`; the "
            "converter writes that schema's id into every message it produces.",
        )
    if target.version not in (None, "latest") and found[1] != target.version:
        raise CheckFailed(
            f"the v1 {what}schema is version {found[1]} of {target.subject!r}, "
            f"the mapping says version {target.version}",
            location=mapping.location("/target/version"),
            hint="Fix `target.version`, or point `target.schema` at the registered version.",
        )
    # the writers as Spark and the JVM writer decode them: self-contained (references inlined)
    found_writers = road.writers(source.subject)
    writers = {i: w.text for i, w in found_writers.items()}
    versions = {i: f"{source.subject}/{w.number}" for i, w in found_writers.items()}
    if not writers:
        raise CheckFailed(
            f"subject {source.subject!r} has no versions",
            location=mapping.location("/source/subject"),
            hint=f"Register the v2 {what}schema under it before starting the converter.",
        )
    # v1 is written with the mapping's own v1 schema (self-contained), which the lookup found
    # registered under that id; v1's domain rules come with the version the lookup found
    rules = contract_text(getattr(found[2], "metadata", None), getattr(found[2], "rule_set", None))
    return RegistryPlan(found[0], target_text, writers, versions, None, rules)


def _registered_as(
    road: RegistrySchemas, subject: str, schema: Any
) -> tuple[int, int | None, object] | None:
    """(id, version, the registry's answer for that version) of ``schema`` (the mapping's v1,
    self-contained) under ``subject``; None when it is not registered there. The registry's
    lookup first; a v1 registered with references is another text than its self-contained form,
    so then the subject's versions, self-contained, are compared with it."""
    found = road.client.lookup(subject, json.dumps(schema))
    if found is not None:
        return found.id, found.version, found
    if not road.version_numbers(subject):
        return None
    wanted = collapse_primitives(schema)  # the same JSON, as the registry's lookup compares
    match = next(
        (
            (i, w.number)
            for i, w in road.writers(subject).items()
            if collapse_primitives(w.value) == wanted
        ),
        None,
    )
    if match is None:
        return None
    number = match[1] if match[1] is not None else "latest"
    return match[0], match[1], road.version(subject, number)  # asked once per run


def _header(name: str, value: Any) -> Any:
    from pyspark.sql import functions as F

    return F.struct(F.lit(name).alias("key"), value.cast("binary").alias("value"))


def _with_headers(headers: Any, *extra: Any) -> Any:
    from pyspark.sql import functions as F

    # One concat over the headers or an empty array, not when(isNull, added, concat(..., added)):
    # the stage's code holds each written expression once, and HotSpot compiles no method over
    # 8,000 bytes (SQL_DEFAULTS). With this and the marker built once: taxi stage 7.7 -> 6.0 KB.
    none = F.array().cast("array<struct<key:string,value:binary>>")
    return F.concat(F.coalesce(headers, none), F.array(*extra))


def build_output(raw: DataFrame, mapping: Mapping, reg: RegistryPlan) -> DataFrame:
    """Kafka source rows -> Kafka sink rows (``topic``, ``key``, ``value``, ``headers``), observed,
    skipped rows left out: what Spark's own (at-least-once) Kafka sink writes.

    ``raw`` has Kafka's source columns (``key``, ``value``, ``topic``, ``partition``, ``offset``,
    ``timestamp``, ``headers``). Pure: works on a batch frame in tests and on the stream in the job.
    """
    from pyspark.sql import functions as F

    out = build_records(raw, mapping, reg).observe(
        METRICS,
        F.count(F.lit(1)).alias("in"),
        *[F.sum(F.when(F.col("kind") == name, 1).otherwise(0)).alias(name) for name in KINDS],
    )
    # Skipped: already converted by a converter (our own output read back, or a chain): not again.
    return out.where(F.col("kind") != "skipped").select("topic", "key", "value", "headers")


def build_records(raw: DataFrame, mapping: Mapping, reg: RegistryPlan) -> DataFrame:
    """Kafka source rows -> every row's result (``pipeline.txsink.ROW_COLUMNS``): where it goes
    (``topic``, ``key``, ``value``, ``headers``), its ``kind`` (converted, dead_letter, skipped,
    tombstone) and the v2 position it came from (``source_partition``, ``source_offset``), in the
    source's partitioning and order. The exactly-once writer takes these as they are."""
    from pyspark.sql import functions as F

    if "headers" not in raw.columns:
        raw = raw.withColumn("headers", F.lit(None).cast("array<struct<key:string,value:binary>>"))
    # array_contains over the header keys, not exists(lambda): a higher-order function has no
    # generated code and would take its projection out of whole-stage codegen.
    marked = F.coalesce(F.array_contains(F.col("headers.key"), MARKER_HEADER), F.lit(False))
    # What the sinks need besides the decoded record: the raw bytes (a dead letter's value), the
    # headers, and whether the message already carries the loop marker. decode_confluent passes
    # Kafka's columns through and, asked to, these too.
    source = raw.select(
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "headers",
        F.col("value").alias(SOURCE_VALUE),
        marked.alias(SKIP),
    )
    rows, v1_value = convert_side(source, mapping, reg, passthrough=("headers", SOURCE_VALUE, SKIP))
    if mapping.key is not None and reg.key is not None:
        rows = _convert_keys(rows, mapping.key, reg.key)
    else:  # keys are copied byte for byte
        rows = rows.select(
            "*",
            F.col("key").alias(KEY_OUT),
            F.lit(None).cast("string").alias(KEY_ERROR),
            F.lit(None).cast("string").alias(KEY_STAGE),
        )
    version = F.lit(None).cast("string")
    for sid, text in sorted(reg.writer_versions.items()):
        version = F.when(F.col("schema_id") == sid, F.lit(text)).otherwise(version)
    # One pass, each row routed by its kind (a union of filtered frames would decode twice). A
    # tombstone (null value: a delete on a compacted topic) is forwarded as a tombstone with the
    # same key, so deletes reach v1 consumers too.
    kind = (
        F.when(F.col(SKIP), F.lit("skipped"))
        .when(F.col(KEY_ERROR).isNotNull(), F.lit("dead_letter"))
        .when(F.col(SOURCE_VALUE).isNull(), F.lit("tombstone"))
        .when(F.col(ERROR).isNull(), F.lit("converted"))
        .otherwise(F.lit("dead_letter"))
    )
    staged = rows.select("*", kind.alias("kind"))
    k = F.col("kind")
    headers = F.col("headers")
    position = F.concat_ws(
        "/", F.col("topic"), F.col("partition").cast("string"), F.col("offset").cast("string")
    )
    ts = F.unix_millis(F.col("timestamp")).cast("string")
    # The marker: one header (pipeline.headers); a forwarded delete's origin is "tombstone".
    # Built once for converted rows and tombstones alike: every expression written twice is
    # generated twice in the stage's one method (see _with_headers).
    origin = F.when(k == "tombstone", F.lit(TOMBSTONE)).otherwise(F.coalesce(version, F.lit("?")))
    marker = _with_headers(headers, _header(MARKER_HEADER, F.concat_ws(" ", origin, position, ts)))
    out = staged.select(
        F.when(k == "dead_letter", F.lit(mapping.dead_letter_topic))
        .otherwise(F.lit(mapping.target.topic))
        .alias("topic"),
        F.when(k == "dead_letter", F.col("key")).otherwise(F.col(KEY_OUT)).alias("key"),
        F.when(k == "converted", v1_value)
        .when(k == "dead_letter", F.col(SOURCE_VALUE))
        .alias("value"),
        F.when(
            k == "dead_letter",
            _with_headers(
                headers,
                _header(ERROR_HEADER, F.coalesce(F.col(ERROR), F.col(KEY_ERROR))),
                _header(STAGE_HEADER, F.coalesce(F.col(STAGE), F.col(KEY_STAGE))),
                _header(SOURCE_HEADER, position),
                _header(TIMESTAMP_HEADER, ts),
            ),
        )
        .otherwise(marker)
        .alias("headers"),
        k,
        F.col("partition").alias("source_partition"),
        F.col("offset").alias("source_offset"),
    )
    return out


def convert_side(
    rows: DataFrame, mapping: Mapping, reg: RegistryPlan, *, passthrough: tuple[str, ...]
) -> tuple[DataFrame, Column]:
    """One side of a message (its ``value`` column) through the converter: decoded with its
    writer schema by the id in the Confluent header, converted by ``mapping``'s Spark SQL. The
    value and the key both go this way, each with its own mapping and registry plan.

    Returns ``rows`` (its Kafka columns and ``passthrough`` carried) with ``schema_id``, ``V1``,
    ``ERROR`` and ``STAGE`` (``pipeline.transform.convert_rows``), and the expression of the
    Confluent-framed v1 bytes of ``V1`` (evaluated where the caller uses it)."""
    from pyspark.sql import functions as F

    from spark_avro.decode import RAW_COLUMN, decode_confluent

    compiled = compiled_or_fail(mapping)
    decoded = decode_confluent(
        rows,
        writer_schemas=reg.writer_schemas,
        reader_schema=json.dumps(mapping.source.schema_json),
        mode="PERMISSIVE",
        flatten=False,
        passthrough=passthrough,
        stable_union_names=False,  # the mappings name union members positionally
    ).drop(RAW_COLUMN)
    converted = convert_rows(decoded, mapping, compiled=compiled)
    # a stage of its own: v1's WRITE rules on what is written (pipeline.v1rules)
    v1_rules = compile_v1_rules(reg.target_rules, reg.target_schema, mapping.target.subject or "v1")
    converted = apply_v1_rules(converted, v1_rules)
    encoded = confluent_value(F.col(V1), json.dumps(json.loads(reg.target_schema)), reg.target_id)
    return converted, encoded


def _convert_keys(rows: DataFrame, key: Mapping, reg: RegistryPlan) -> DataFrame:
    """``rows`` plus the converted key (``KEY_OUT``: Confluent-framed v1 key bytes), and
    ``KEY_ERROR``/``KEY_STAGE`` (why the key failed, prefixed ``key``; null when it converted). A
    null key stays null. The key goes through :func:`convert_side` as the value did, its bytes in
    the ``value`` column and the value's columns riding along in one struct."""
    from pyspark.sql import functions as F

    others = [c for c in rows.columns if c != "key"]
    framed = rows.select(F.col("key").alias("value"), "key", F.struct(*others).alias(VALUE_SIDE))
    converted, v1_key = convert_side(framed, key, reg, passthrough=(VALUE_SIDE,))
    has_key = F.col("key").isNotNull()
    return converted.select(
        F.col(f"{VALUE_SIDE}.*"),
        "key",
        F.when(has_key, v1_key).alias(KEY_OUT),
        F.when(has_key, F.concat(F.lit("key: "), F.col(ERROR))).alias(KEY_ERROR),
        F.when(has_key & F.col(ERROR).isNotNull(), F.concat(F.lit("key-"), F.col(STAGE))).alias(
            KEY_STAGE
        ),
    )
