"""Migrate on read: a mapping of the converter read in Spark, v2 records as v1 rows.

``read_topic(..., migrate=MAPPING)`` and ``stream_topic(..., migrate=MAPPING)`` here take the
mapping `schemacli migrate plan` wrote (its path, or a loaded ``converters.mapping`` Mapping),
prepare it (:func:`load_migration`: its schemas read, from the registry when a side names only
a subject; compiled by the converter's own compiler, refused as ``migrate deploy`` refuses it)
and hand the prepared ``spark_avro.onread.Migration`` to spark_avro's readers, which decide on
the driver which writer goes which road (``spark_avro.onread``) and decode
(``spark_avro.migrate``). The converters import spark_avro, never the other way round.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping as Mapped
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converters.mapping.model import Mapping
from converters.mapping.reader import load
from converters.mapping.schemas import missing_schemas, with_registry_schemas
from converters.mapping.sql import compiled_or_fail, select_sql
from schemacli.errors import UsageError
from spark_avro import reader
from spark_avro.onread import Migration
from spark_avro.registry import with_registry

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

    from schemacli.registry.schemas import RegistrySchemas

MAPPING_HINT = (
    "Pass the path of a mapping `schemacli migrate plan --out` wrote, or a Mapping loaded with "
    "converters.mapping.reader.load."
)


def load_migration(
    migrate: Any,
    *,
    registry_url: str | None = None,
    road: RegistrySchemas | None = None,
) -> Migration:
    """The mapping ``migrate`` names (a path, or a loaded ``Mapping``; a prepared Migration as
    it is), with both schemas and compiled. A side naming only a ``subject`` takes its schema
    from the registry: ``road`` (a command's), else the one of ``registry_url``.

    Raises InputError for a file that cannot be read or is not a valid mapping (file:line:col),
    UsageError for something that is no mapping or a side without a schema and no registry,
    CheckFailed for a mapping ``migrate deploy`` would refuse (its first problem, located)."""
    if isinstance(migrate, Migration):
        return migrate
    if isinstance(migrate, Mapping):
        mapping = migrate
    elif isinstance(migrate, (str, os.PathLike)) and str(migrate):
        mapping = load(Path(migrate))
    else:
        raise UsageError(
            f"migrate= takes a mapping file's path or a Mapping, not {type(migrate).__name__}",
            hint=MAPPING_HINT,
        )
    if missing_schemas(mapping):
        if road is not None:
            mapping = with_registry_schemas(mapping, road)
        elif registry_url is not None:
            known = mapping
            mapping = with_registry(registry_url, lambda r: with_registry_schemas(known, r))
        else:
            sides = ", ".join(missing_schemas(mapping))
            raise UsageError(
                f"the mapping has no schema for {sides} and no registry was given to fetch it",
                location=mapping.location(missing_schemas(mapping)[0]),
                hint="Give registry_url=..., or `schema:` for that side in the mapping.",
            )
    compiled = compiled_or_fail(mapping)
    return Migration(
        source_schema=json.dumps(mapping.source.schema_json),
        target_schema=json.dumps(mapping.target.schema_json),
        columns=tuple(select_sql(compiled)),
        error_sql=compiled.error_sql,
        source_subject=mapping.source.subject,
        target_subject=mapping.target.subject,
        origin=mapping.origin or "<mapping>",
        location=mapping.location,
    )


def read_topic(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    migrate: Any,
    registry_url: str | None = None,
    schemas: Mapped[int, str] | None = None,
    **options: Any,
) -> DataFrame:
    """``spark_avro.read_topic`` through the mapping ``migrate`` (its path or a Mapping): v2
    records converted by the mapping's SQL as the converter converts them, v1 records read as
    written, one v1 row per Kafka record (docs/migration.md, "Migrate on read"). ``options``
    are ``read_topic``'s (``subject``, ``mode``, ``streaming``, ``flatten``, ...)."""
    migration = load_migration(migrate, registry_url=registry_url)
    return reader.read_topic(
        spark,
        bootstrap_servers,
        topic,
        registry_url=registry_url,
        schemas=schemas,
        migrate=migration,
        **options,
    )


def stream_topic(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    *,
    migrate: Any,
    registry_url: str,
    **options: Any,
) -> StreamingQuery:
    """``spark_avro.stream_topic`` through the mapping ``migrate``, as :func:`read_topic`;
    an id first seen in a micro-batch is put on its road then."""
    migration = load_migration(migrate, registry_url=registry_url)
    return reader.stream_topic(
        spark, bootstrap_servers, topic, registry_url=registry_url, migrate=migration, **options
    )
