"""Migrate on read, decided on the driver: which writer goes which road.

``read_topic(..., migrate=MIGRATION)`` and ``schemacli spark codegen --migrate MAPPING`` take a
:class:`Migration`: the mapping of ``converters.mapping`` compiled by the converter's compiler,
as ``converters.onread.load_migration`` prepares it (spark_avro imports nothing of the
converters: they import it). The topic's writer schemas go two roads:

* the **v1 road**: the writer is the mapping's v1 schema (the same Parsing Canonical Form), or
  one the v1 schema reads and the v2 schema does not (an older v1 version); its records are
  decoded into v1 as written;
* the **v2 road**, every other writer: decoded into the mapping's v2 schema and converted by the
  mapping's SQL, as the converter does; a writer v2 cannot read is reported ``incompatible``.

The Spark side is ``spark_avro.migrate`` (``decode_migrated``). No pyspark here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping as Mapped
from dataclasses import dataclass, field
from typing import Any

from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.parse import parse_schema
from schemacli.errors import InputError, Location, SchemacliError, UsageError
from spark_avro import registry
from spark_avro.compat import incompatible_writers

MIGRATION_HINT = (
    "Read through converters.onread.read_topic / stream_topic (they take the mapping file's "
    "path), or pass migrate=converters.onread.load_migration(PATH, registry_url=...)."
)


@dataclass(frozen=True)
class Migration:
    """A deployable mapping, compiled: what a migrating reader embeds or runs."""

    source_schema: str  # v2, JSON text (self-contained)
    target_schema: str  # v1, JSON text (self-contained)
    columns: tuple[str, ...]  # `<expr> AS `field`` per v1 field, in v1's order
    error_sql: str  # the failure reasons ('' when a record converts)
    source_subject: str | None = None
    target_subject: str | None = None
    origin: str = "<mapping>"  # the mapping file, for messages
    # where a JSON pointer of the mapping sits in its file (line:col), for errors
    location: Callable[[str], Location] = field(default=lambda pointer: Location(), repr=False)

    @property
    def source_json(self) -> Any:
        return json.loads(self.source_schema)

    @property
    def target_json(self) -> Any:
        return json.loads(self.target_schema)


def require_migration(migrate: Any) -> Migration:
    """``migrate`` as a :class:`Migration`; UsageError for anything else (a path, a mapping:
    the converters prepare those)."""
    if isinstance(migrate, Migration):
        return migrate
    raise UsageError(
        f"migrate= takes a prepared Migration, not {type(migrate).__name__}",
        hint=MIGRATION_HINT,
    )


def subjects_to_read(migration: Migration, subject: str | None) -> list[str]:
    """The subjects whose versions are the topic's writers: ``subject`` (default the mapping's
    ``source.subject``) and the mapping's ``target.subject`` when it is another one.

    Raises UsageError when ``subject`` is neither of the mapping's subjects, or none is known."""
    source, target = migration.source_subject, migration.target_subject
    if subject is not None and source is not None and subject not in (source, target):
        raise UsageError(
            f"the mapping converts subject {source!r} (to {target!r}), not {subject!r}",
            location=migration.location("/source/subject"),
            hint="Read the topic of the mapping's v2 subject, or pass the mapping written for "
            f"{subject!r}.",
        )
    first = subject or source
    if first is None:
        raise UsageError(
            "no subject to read writer schemas from: pass subject=..., or give the mapping "
            "`source.subject`",
            location=migration.location("/source"),
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
        location=migration.location("/source"),
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
