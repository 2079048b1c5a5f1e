"""Migrate on read, decided on the driver: which mapping, which writer goes which road.

``read_topic(..., migrate=MAPPING)`` and ``schemacli spark codegen --migrate MAPPING`` take a
mapping of ``converters.mapping`` (the file ``migrate plan`` writes, or a loaded ``Mapping``),
compile it with the converter's compiler (``converters.mapping.sql``, refused as ``migrate
deploy`` refuses it) and split the topic's writer schemas into two roads:

* the **v1 road**: the writer is the mapping's v1 schema (the same Parsing Canonical Form), or
  one the v1 schema reads and the v2 schema does not (an older v1 version); its records are
  decoded into v1 as written;
* the **v2 road**, every other writer: decoded into the mapping's v2 schema and converted by the
  mapping's SQL, as the converter does; a writer v2 cannot read is reported ``incompatible``.

The Spark side is ``spark_avro.migrate`` (``decode_migrated``). No pyspark here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping as Mapped
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converters.mapping.model import Mapping
from converters.mapping.reader import load
from converters.mapping.schemas import missing_schemas, with_registry_schemas
from converters.mapping.sql import compiled_or_fail, select_sql
from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.parse import parse_schema
from schemacli.errors import InputError, SchemacliError, UsageError
from spark_avro import registry
from spark_avro.compat import incompatible_writers

MAPPING_HINT = (
    "Pass the path of a mapping `schemacli migrate plan --out` wrote, or a Mapping loaded with "
    "converters.mapping.reader.load."
)


@dataclass(frozen=True)
class Migration:
    """A deployable mapping, compiled: what a migrating reader embeds or runs."""

    mapping: Mapping
    source_schema: str  # v2, JSON text
    target_schema: str  # v1, JSON text
    columns: tuple[str, ...]  # `<expr> AS `field`` per v1 field, in v1's order
    error_sql: str  # the failure reasons ('' when a record converts)

    @property
    def origin(self) -> str:
        return self.mapping.origin or "<mapping>"


def load_migration(migrate: Any, *, registry_url: str | None = None) -> Migration:
    """The mapping ``migrate`` names (a path, or a loaded ``Mapping``), with both schemas and
    compiled. A side naming only a ``subject`` takes its schema from ``registry_url``.

    Raises InputError for a file that cannot be read or is not a valid mapping (file:line:col),
    UsageError for something that is no mapping or a side without a schema and no registry,
    CheckFailed for a mapping ``migrate deploy`` would refuse (its first problem, located)."""
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
        if registry_url is None:
            sides = ", ".join(missing_schemas(mapping))
            raise UsageError(
                f"the mapping has no schema for {sides} and no registry was given to fetch it",
                location=mapping.location(missing_schemas(mapping)[0]),
                hint="Give registry_url=..., or `schema:` for that side in the mapping.",
            )

        def fetch(subject: str, version: int | str) -> tuple[str, str]:
            found = registry.subject_version(registry_url, subject, version)
            return found.schema, f"{subject}:{found.version}"

        mapping = with_registry_schemas(mapping, fetch)
    compiled = compiled_or_fail(mapping)
    return Migration(
        mapping=mapping,
        source_schema=json.dumps(mapping.source.schema_json),
        target_schema=json.dumps(mapping.target.schema_json),
        columns=tuple(select_sql(compiled)),
        error_sql=compiled.error_sql,
    )


def subjects_to_read(migration: Migration, subject: str | None) -> list[str]:
    """The subjects whose versions are the topic's writers: ``subject`` (default the mapping's
    ``source.subject``) and the mapping's ``target.subject`` when it is another one.

    Raises UsageError when ``subject`` is neither of the mapping's subjects, or none is known."""
    source, target = migration.mapping.source.subject, migration.mapping.target.subject
    if subject is not None and source is not None and subject not in (source, target):
        raise UsageError(
            f"the mapping converts subject {source!r} (to {target!r}), not {subject!r}",
            location=migration.mapping.location("/source/subject"),
            hint="Read the topic of the mapping's v2 subject, or pass the mapping written for "
            f"{subject!r}.",
        )
    first = subject or source
    if first is None:
        raise UsageError(
            "no subject to read writer schemas from: pass subject=..., or give the mapping "
            "`source.subject`",
            location=migration.mapping.location("/source"),
        )
    return [first] + ([target] if target is not None and target != first else [])


def registry_writers(
    migration: Migration, registry_url: str, subject: str | None
) -> dict[int, str]:
    """Every version of the subjects :func:`subjects_to_read` names, by schema id; checked to
    hold the mapping's v2 schema (else the mapping was written for other schemas)."""
    writers: dict[int, str] = {}
    for name in subjects_to_read(migration, subject):
        writers.update(
            {v.schema_id: v.schema for v in registry.subject_schemas(registry_url, name)}
        )
    require_source_among(migration, writers, " and ".join(subjects_to_read(migration, subject)))
    return writers


def require_source_among(migration: Migration, writers: Mapped[int, str], where: str) -> None:
    """Raise UsageError when no writer is the mapping's v2 schema: the mapping was written for
    schemas other than the subject's."""
    wanted = _canonical(migration.source_schema, "the mapping's v2 schema")
    if any(_canonical(text, f"schema id {i}") == wanted for i, text in writers.items()):
        return
    raise UsageError(
        f"the mapping's v2 schema is not a version of {where}: the mapping was written for "
        "other schemas than the topic's",
        location=migration.mapping.location("/source"),
        hint="Plan the mapping from the registered v2 schema (`schemacli migrate plan --from "
        "SUBJECT:VERSION`), or read the subject the mapping was written for.",
    )


def v1_writer_ids(migration: Migration, writers: Mapped[int, str]) -> tuple[int, ...]:
    """The writer ids on the v1 road (see the module's docstring), sorted."""
    v1 = _canonical(migration.target_schema, "the mapping's v1 schema")
    v1_cannot = incompatible_writers(writers, migration.target_schema)
    v2_cannot = incompatible_writers(writers, migration.source_schema)
    return tuple(
        sorted(
            i
            for i, text in writers.items()
            if _canonical(text, f"schema id {i}") == v1 or (i not in v1_cannot and i in v2_cannot)
        )
    )


def v2_incompatible(migration: Migration, writers: Mapped[int, str]) -> dict[int, str]:
    """The v2-road writers the mapping's v2 schema cannot read, with the engine's finding."""
    v1 = set(v1_writer_ids(migration, writers))
    rest = {i: text for i, text in writers.items() if i not in v1}
    return incompatible_writers(rest, migration.source_schema)


def _canonical(text: str, what: str) -> str:
    try:
        return canonical_form(parse_schema(json.loads(text)))
    except (ValueError, SchemacliError) as err:
        raise InputError(f"{what} is not a valid Avro schema: {err}") from err
