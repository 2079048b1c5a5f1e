"""Read a Kafka topic of Confluent-framed Avro into a DataFrame: batch, streaming, or per batch.

Where the writer schemas come from is the caller's choice, said at the call:

* ``registry_url=...``: every version of ``subject`` is fetched once when the reader is built
  (``read_topic``), or again in each micro-batch that holds an id not seen yet (``stream_topic``);
* ``schemas={id: schema_json}``: offline, nothing fetched.

The reader schema is one version of ``subject`` (``reader_version``, default the latest), or with
offline schemas the ``reader_schema`` given (default: the schema with the highest id).

Each writer schema is checked against the reader schema with schemacli's compatibility engine
when the reader is built: records of a writer the reader cannot read are reported with
``decode_error_kind = 'incompatible'`` and the engine's finding, without being decoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from schemacli.contracts.avro.loader import load_schema_text
from schemacli.errors import InputError, RegistryError, UsageError
from spark_avro import onread, registry
from spark_avro import rules as data_rules
from spark_avro.compat import incompatible_writers
from spark_avro.decode import MODES, decode_confluent, header_schema_id, reader_field_names
from spark_avro.migrate import decode_migrated
from spark_avro.rulestage import decode_with_rules

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery


@dataclass(frozen=True)
class ReaderSchemas:
    """The writer schemas by id and the one reader schema every record is decoded into."""

    writer_schemas: Mapping[int, str]
    reader_schema: str
    reader_schema_id: int | None = None


def resolve_schemas(
    *,
    subject: str | None,
    reader_version: int | str = "latest",
    registry_url: str | None = None,
    schemas: Mapping[int, str] | None = None,
    reader_schema: str | None = None,
) -> ReaderSchemas:
    """Writer and reader schemas from the registry (one fetch per version) or the given mapping.

    Raises UsageError when neither or both sources are given, InputError for a schema that is not
    JSON or not a record, RegistryError / NetworkError from the registry.
    """
    if (registry_url is None) == (schemas is None):
        raise UsageError(
            "give exactly one source of writer schemas: registry_url=... or schemas={id: json}",
            hint="Offline, pass schemas={schema_id: schema_json, ...}.",
        )
    if schemas is not None:
        if not schemas:
            raise UsageError("schemas is empty: every record would have an unknown schema id")
        writers = {int(k): _schema_text(v, f"schema id {k}") for k, v in schemas.items()}
        if reader_schema is None:
            newest = max(writers)
            result = ReaderSchemas(writers, writers[newest], newest)
        else:
            result = ReaderSchemas(writers, _schema_text(reader_schema, "reader schema"))
    else:
        assert registry_url is not None  # exactly one source, checked above
        if subject is None:
            raise UsageError("subject is required to fetch schemas from the registry")
        versions = registry.subject_schemas(registry_url, subject)
        writers = {v.schema_id: v.schema for v in versions}
        if reader_schema is not None:
            result = ReaderSchemas(writers, _schema_text(reader_schema, "reader schema"))
        else:
            chosen = registry.subject_version(registry_url, subject, reader_version)
            result = ReaderSchemas(writers, chosen.schema, chosen.schema_id)
    try:
        reader_field_names(result.reader_schema)
    except ValueError as exc:
        raise InputError(str(exc), hint="Read a subject whose schema is an Avro record.") from exc
    return result


def _schema_text(schema: object, what: str) -> str:
    if not isinstance(schema, str):
        return json.dumps(schema)
    try:
        json.loads(schema)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            hint="Pass the schema's JSON text as the registry returns it.",
        ) from exc
    return schema


def _check_mode(mode: str) -> str:
    if mode.upper() not in MODES:
        raise UsageError(
            f"unknown bad-record mode {mode!r}", hint=f"Use one of {', '.join(MODES)}."
        )
    return mode.upper()


def kafka_source(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    streaming: bool = False,
    kafka_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """The raw Kafka DataFrame (key, value, topic, partition, offset, timestamp, ...).

    Reads from the earliest offset unless ``kafka_options`` says otherwise.
    """
    options = {
        "kafka.bootstrap.servers": bootstrap_servers,
        "subscribe": topic,
        "startingOffsets": "earliest",
        **(kafka_options or {}),
    }
    source = spark.readStream if streaming else spark.read
    return source.format("kafka").options(**options).load()


def read_topic(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    subject: str | None = None,
    reader_version: int | str = "latest",
    registry_url: str | None = None,
    schemas: Mapping[int, str] | None = None,
    reader_schema: str | None = None,
    mode: str = "PERMISSIVE",
    streaming: bool = False,
    flatten: bool = True,
    kafka_options: Mapping[str, str] | None = None,
    stable_union_names: bool = True,
    migrate: Any = None,
    rules: Any = None,
    rules_mode: str = "READ",
) -> DataFrame:
    """``topic`` decoded into one reader schema (batch or, with ``streaming``, a streaming frame).

    Writer schemas are fetched once, here: a streaming query started from this frame reports
    records with ids registered later as ``unknown schema id`` (use ``stream_topic`` to refetch).
    Columns: see ``spark_avro.decode.decode_confluent``. For a dead-letter sink, pass the result
    to ``split_bad_records``. ``stable_union_names=False`` keeps Spark's positional union members
    (``member0..N``) instead of ``member_<type>``.

    ``migrate=MIGRATION`` (a mapping prepared by ``converters.onread.load_migration``; its
    ``read_topic`` takes the mapping file's path and calls this one) reads a topic of v2
    records, or of v1 and v2 records, as v1 rows: v2 records go through the mapping's compiled
    Spark SQL as the converter runs it, v1 records are read as written (see
    ``spark_avro.onread`` for which writer goes which road); the reader schema is the mapping's
    v1 schema, so ``reader_version``/``reader_schema`` do not apply. With the registry, the
    writers are the versions of ``subject`` (default the mapping's ``source.subject``) and of
    its ``target.subject``. A record the converter would dead-letter is a bad record, its
    ``decode_error_kind`` ``convert`` and its ``decode_error`` the rule's reason. Union members
    are named ``member0..N``, as the mapping names them. Raises CheckFailed for a mapping
    ``migrate deploy`` would refuse, InputError / UsageError for a bad one.

    ``rules=True`` (the reader version's rule set in the registry) or ``rules=PATH`` (a
    contract file) applies the contract's CEL and CEL_FIELD CONDITIONs that run in
    ``rules_mode`` (``READ``: what a deserializer runs; ``WRITE``: what a producer's serializer
    runs), compiled to Spark SQL: a record a rule refuses is a bad record of kind ``rule``
    naming the rule, with ``rule_dlq_topic`` set when the rule's action is DLQ
    (docs/spark.md#data-quality-rules).
    ``spark_avro.rules.RulesNotCompiled`` names a rule with no SQL form here.
    """
    mode = _check_mode(mode)
    if rules is not None and rules is not False:
        if migrate is not None or mode != "PERMISSIVE":
            raise UsageError(
                "rules= applies to a PERMISSIVE read without migrate=",
                hint="Read with mode='PERMISSIVE' (a refused record is a bad record).",
            )
        return _read_with_rules(
            spark, bootstrap_servers, topic, rules=rules, rules_mode=rules_mode,
            subject=subject, reader_version=reader_version, registry_url=registry_url,
            schemas=schemas, reader_schema=reader_schema, streaming=streaming,
            flatten=flatten, kafka_options=kafka_options,
            stable_union_names=stable_union_names,
        )  # fmt: skip
    if migrate is not None:
        return _read_migrated(
            spark,
            bootstrap_servers,
            topic,
            migrate=migrate,
            subject=subject,
            registry_url=registry_url,
            schemas=schemas,
            reader_changed=reader_schema is not None or reader_version != "latest",
            mode=mode,
            streaming=streaming,
            flatten=flatten,
            kafka_options=kafka_options,
        )
    resolved = resolve_schemas(
        subject=subject,
        reader_version=reader_version,
        registry_url=registry_url,
        schemas=schemas,
        reader_schema=reader_schema,
    )
    raw = kafka_source(
        spark, bootstrap_servers, topic, streaming=streaming, kafka_options=kafka_options
    )
    return decode_confluent(
        raw,
        writer_schemas=resolved.writer_schemas,
        reader_schema=resolved.reader_schema,
        mode=mode,
        flatten=flatten,
        incompatible=incompatible_writers(resolved.writer_schemas, resolved.reader_schema),
        stable_union_names=stable_union_names,
    )


def _read_with_rules(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    rules: Any,
    rules_mode: str,
    subject: str | None,
    reader_version: int | str,
    registry_url: str | None,
    schemas: Mapping[int, str] | None,
    reader_schema: str | None,
    streaming: bool,
    flatten: bool,
    kafka_options: Mapping[str, str] | None,
    stable_union_names: bool,
) -> DataFrame:
    resolved = resolve_schemas(
        subject=subject,
        reader_version=reader_version,
        registry_url=registry_url,
        schemas=schemas,
        reader_schema=reader_schema,
    )
    contract = data_rules.load_contract(
        rules, registry_url=registry_url, subject=subject, version=reader_version
    )
    schema = load_schema_text(resolved.reader_schema, "the reader schema").schema
    compiled = data_rules.compile_rules(
        contract, schema, rules_mode.upper(), root="" if flatten else "`record`", transforms=True
    )
    raw = kafka_source(
        spark, bootstrap_servers, topic, streaming=streaming, kafka_options=kafka_options
    )
    return decode_with_rules(
        raw,
        lambda frame, carried: decode_confluent(
            frame,
            writer_schemas=resolved.writer_schemas,
            reader_schema=resolved.reader_schema,
            mode="PERMISSIVE",
            flatten=flatten,
            incompatible=incompatible_writers(resolved.writer_schemas, resolved.reader_schema),
            stable_union_names=stable_union_names,
            passthrough=carried,
        ),
        data_rules.rule_table(compiled),
    )


def _read_migrated(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    migrate: Any,
    subject: str | None,
    registry_url: str | None,
    schemas: Mapping[int, str] | None,
    reader_changed: bool,
    mode: str,
    streaming: bool,
    flatten: bool,
    kafka_options: Mapping[str, str] | None,
) -> DataFrame:
    """read_topic(..., migrate=...): everything checked on the driver before Spark reads."""
    if reader_changed:
        raise UsageError(
            "migrate= reads into the mapping's v1 schema: reader_version and reader_schema "
            "do not apply",
            hint="Drop reader_version/reader_schema, or read without migrate=.",
        )
    if (registry_url is None) == (schemas is None):
        raise UsageError(
            "give exactly one source of writer schemas: registry_url=... or schemas={id: json}",
            hint="Offline, pass schemas={schema_id: schema_json, ...}.",
        )
    migration = onread.require_migration(migrate)
    if registry_url is not None:
        writers = onread.registry_writers(migration, registry_url, subject)
    else:
        assert schemas is not None  # exactly one source, checked above
        if not schemas:
            raise UsageError("schemas is empty: every record would have an unknown schema id")
        writers = {int(k): _schema_text(v, f"schema id {k}") for k, v in schemas.items()}
    raw = kafka_source(
        spark, bootstrap_servers, topic, streaming=streaming, kafka_options=kafka_options
    )
    return _migrated(raw, migration, writers, mode=mode, flatten=flatten)


def _migrated(
    raw: DataFrame,
    migration: onread.Migration,
    writers: Mapping[int, str],
    *,
    mode: str,
    flatten: bool,
) -> DataFrame:
    """Kafka rows decoded by the roads ``onread`` gives ``writers`` (v1 as written, v2 through
    the mapping's SQL): the one decoding of read_topic and stream_topic with migrate=."""
    try:
        return decode_migrated(
            raw,
            writer_schemas=writers,
            v1_ids=onread.v1_writer_ids(migration, writers),
            source_schema=migration.source_schema,
            target_schema=migration.target_schema,
            columns=migration.columns,
            error_sql=migration.error_sql,
            mode=mode,
            flatten=flatten,
            incompatible=onread.v2_incompatible(migration, writers),
        )
    except ValueError as exc:
        raise InputError(
            str(exc),
            location=migration.location("/target"),
            hint="Read with flatten=False to get the v1 record as one struct column.",
        ) from exc


class SchemaCache:
    """Writer schemas by id, fetched from the registry the first time an id is met."""

    def __init__(self, registry_url: str, initial: Mapping[int, str]) -> None:
        self.registry_url = registry_url
        self.schemas: dict[int, str] = dict(initial)
        self.fetches = 0

    def ensure(self, schema_ids: list[int]) -> Mapping[int, str]:
        """All known schemas, after fetching the ones in ``schema_ids`` not seen yet.

        An id the registry does not know (40403) is left out, so its records are reported
        as ``unknown schema id`` instead of failing the batch.
        """
        for schema_id in schema_ids:
            if schema_id in self.schemas:
                continue
            try:
                self.schemas[schema_id] = registry.schema_by_id(self.registry_url, schema_id).schema
                self.fetches += 1
            except RegistryError as exc:
                if exc.status != 404:
                    raise
        return self.schemas


def stream_topic(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    subject: str | None = None,
    registry_url: str,
    process_batch: Callable[[DataFrame, int], None],
    reader_version: int | str = "latest",
    mode: str = "PERMISSIVE",
    flatten: bool = True,
    kafka_options: Mapping[str, str] | None = None,
    checkpoint_location: str | None = None,
    available_now: bool = False,
    stable_union_names: bool = True,
    migrate: Any = None,
    rules: Any = None,
    rules_mode: str = "READ",
) -> StreamingQuery:
    """Start a streaming query that decodes each micro-batch and hands it to ``process_batch``.

    Before decoding a micro-batch, the distinct schema ids in it are collected and any id not
    seen yet is fetched from the registry (``foreachBatch``), so versions registered while the
    query runs are decoded too; each writer is checked against the reader schema once (the
    verdicts are memoised). Returns the started query.

    ``migrate=MIGRATION`` reads as ``read_topic(..., migrate=MIGRATION)`` does (v1 rows; v2 records
    through the mapping's SQL, a record the converter would dead-letter a bad record), with the
    writers of ``subject`` (default the mapping's ``source.subject``) and of its
    ``target.subject``, and each id first seen in a micro-batch put on its road then.

    ``rules=`` / ``rules_mode=`` apply a contract's CEL and CEL_FIELD CONDITIONs to each
    micro-batch as ``read_topic`` does (compiled once, here).
    """
    mode = _check_mode(mode)
    with_rules = rules is not None and rules is not False
    if with_rules and (migrate is not None or mode != "PERMISSIVE"):
        raise UsageError(
            "rules= applies to a PERMISSIVE read without migrate=",
            hint="Read with mode='PERMISSIVE' (a refused record is a bad record).",
        )
    if migrate is not None:
        if reader_version != "latest":
            raise UsageError(
                "migrate= reads into the mapping's v1 schema: reader_version does not apply",
                hint="Drop reader_version, or stream without migrate=.",
            )
        migration = onread.require_migration(migrate)
        cache = SchemaCache(registry_url, onread.registry_writers(migration, registry_url, subject))

        def decode(batch: DataFrame, writers: Mapping[int, str]) -> DataFrame:
            return _migrated(batch, migration, writers, mode=mode, flatten=flatten)

    else:
        if subject is None:
            raise UsageError(
                "stream_topic needs subject=... (the subject whose versions it decodes)",
                hint="Pass subject=..., or read through a mapping "
                "(converters.onread.stream_topic(..., migrate=MAPPING)).",
            )
        resolved = resolve_schemas(
            subject=subject, reader_version=reader_version, registry_url=registry_url
        )
        cache = SchemaCache(registry_url, resolved.writer_schemas)
        compiled = (
            _stream_rules(
                rules,
                rules_mode,
                resolved.reader_schema,
                registry_url,
                subject,
                reader_version,
                flatten,
            )  # fmt: skip
            if with_rules
            else None
        )

        def decode(batch: DataFrame, writers: Mapping[int, str]) -> DataFrame:
            def plain(frame: Any, carried: tuple[str, ...] = ()) -> DataFrame:
                return decode_confluent(
                    frame,
                    writer_schemas=writers,
                    reader_schema=resolved.reader_schema,
                    mode=mode,
                    flatten=flatten,
                    incompatible=incompatible_writers(writers, resolved.reader_schema),
                    stable_union_names=stable_union_names,
                    passthrough=carried,
                )

            if compiled is None:
                return plain(batch)
            return decode_with_rules(batch, plain, data_rules.rule_table(compiled))

    raw = kafka_source(spark, bootstrap_servers, topic, streaming=True, kafka_options=kafka_options)

    def decode_batch(batch: DataFrame, batch_id: int) -> None:
        process_batch(decode(batch, cache.ensure(_schema_ids(batch))), batch_id)

    writer = raw.writeStream.foreachBatch(decode_batch)
    if checkpoint_location is not None:
        writer = writer.option("checkpointLocation", checkpoint_location)
    if available_now:
        writer = writer.trigger(availableNow=True)
    return writer.start()


def _stream_rules(
    rules: Any,
    rules_mode: str,
    reader_schema: str,
    registry_url: str,
    subject: str,
    reader_version: int | str,
    flatten: bool,
) -> Any:
    contract = data_rules.load_contract(
        rules, registry_url=registry_url, subject=subject, version=reader_version
    )
    schema = load_schema_text(reader_schema, "the reader schema").schema
    return data_rules.compile_rules(
        contract, schema, rules_mode.upper(), root="" if flatten else "`record`", transforms=True
    )


def _schema_ids(batch: DataFrame) -> list[int]:
    """The distinct schema ids of a micro-batch's framed values."""
    from pyspark.sql import functions as F

    return [
        row[0]
        for row in batch.select(header_schema_id(F.col("value")).alias("id"))
        .where(F.col("id").isNotNull())
        .distinct()
        .collect()
    ]
