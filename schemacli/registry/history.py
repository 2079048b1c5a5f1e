"""A subject's history and level as the registry holds them, in the local engine's terms.

``registry_history`` turns the registry's versions into the same ``LoadedSchema`` records the
local store produces (source ``subject:vN``), so
``schemacli.contracts.evolution.check.check_candidate`` runs unchanged against production
history. Schema references are resolved through the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import Names
from schemacli.contracts.evolution.levels import Level
from schemacli.errors import Location, RegistryError, SchemacliError
from schemacli.registry.client import RegistryClient
from schemacli.registry.errors import RegistryErrorCode
from schemacli.registry.models import Reference, SubjectVersion

_NO_SUBJECT = (RegistryErrorCode.SUBJECT_NOT_FOUND, RegistryErrorCode.SUBJECT_SOFT_DELETED)
_NO_SUBJECT_LEVEL = (
    RegistryErrorCode.SUBJECT_LEVEL_COMPATIBILITY_NOT_CONFIGURED,
    RegistryErrorCode.SUBJECT_NOT_FOUND,
)


def is_missing_subject(err: RegistryError) -> bool:
    """True when ``err`` says the subject does not exist (any registry's way of saying it)."""
    return err.error_code in _NO_SUBJECT or (err.status == 404 and err.error_code in (None, 404))


def fetch_versions(client: RegistryClient, subject: str) -> list[SubjectVersion]:
    """Every live version of ``subject``, oldest first; empty when the subject does not exist."""
    try:
        numbers = client.list_versions(subject)
    except RegistryError as err:
        if is_missing_subject(err):
            return []
        raise
    return [client.get_version(subject, n) for n in numbers]


def registry_history(client: RegistryClient, subject: str) -> tuple[LoadedSchema, ...]:
    """The subject's versions as ``LoadedSchema`` (oldest first, source ``subject:vN``).

    Raises RegistryError / NetworkError — also when the registry holds a schema our parser
    refuses: that is a problem with the registry's data (exit 3), not with the user's files.
    """
    return tuple(load_version(client, v) for v in fetch_versions(client, subject))


def load_version(client: RegistryClient, version: SubjectVersion) -> LoadedSchema:
    """Parse one registry version into a ``LoadedSchema``, resolving its references."""
    source = f"{version.subject}:v{version.version}"
    try:
        if not version.references:
            return load_schema_text(version.schema, source, version=version.version)
        names = resolve_references(client, version.references)
        return _load_with_names(version.schema, source, names, version.version)
    except RegistryError:
        raise
    except SchemacliError as err:
        raise unreadable_registry_schema(client, source, err) from err


def unreadable_registry_schema(
    client: RegistryClient, source: str, err: SchemacliError
) -> RegistryError:
    """A RegistryError for a schema the registry holds at ``source`` (``subject:vN``) that is not
    valid Avro: the registry's data is at fault, so exit 3, never the input-error exit 2."""
    where = f" at {err.location}" if err.location is not None else ""
    return RegistryError(
        f"The registry at {client.settings.display_url} holds a schema at {source} that is not "
        f"valid Avro{where}: {err.message}",
        location=Location(source=source),
        hint=f"Inspect it with `schemacli subjects show {source.rsplit(':v', 1)[0]} --version "
        f"{source.rsplit(':v', 1)[-1]}`; the registry's history must be repaired (or that "
        "version deleted) before schemas can be checked against it.",
    )


def load_candidate(
    client: RegistryClient, text: str, source: str, references: Sequence[Reference] = ()
) -> LoadedSchema:
    """Parse a candidate schema whose named-type references live in the registry."""
    if not references:
        return load_schema_text(text, source)
    names = resolve_references(client, references)
    return _load_with_names(text, source, names, None)


def _load_with_names(text: str, source: str, names: Names, version: int | None) -> LoadedSchema:
    return load_schema_text(text, source, version=version, names=names)


def resolve_references(
    client: RegistryClient, references: Sequence[Reference], *, _depth: int = 0
) -> Names:
    """The named types defined by ``references`` (and theirs, recursively) as ``Names``."""
    if _depth > 32:
        raise RegistryError(
            "Schema references nest deeper than 32 levels (a reference cycle?).",
            hint="Check the references of the subjects involved.",
        )
    names = Names()
    for ref in references:
        version = client.get_version(ref.subject, ref.version)
        inner = resolve_references(client, version.references, _depth=_depth + 1)
        names = Names({**inner.types, **names.types})
        try:
            schema = parse_schema(version.schema, names=names)
        except RegistryError:
            raise
        except SchemacliError as err:
            source = f"{ref.subject}:v{version.version}"
            raise unreadable_registry_schema(client, source, err) from err
        names = names.including(schema)
    return names


@dataclass(frozen=True)
class SubjectLevel:
    """A subject's compatibility level and where it comes from (``subject`` or ``global``)."""

    level: Level
    source: str


def registry_level(client: RegistryClient, subject: str | None) -> SubjectLevel:
    """The level the registry applies to ``subject``: its own, else the global one.

    For Apicurio, whose ccompat ``/config`` does not report the level it applies, the level is
    read from its own rules API (see ``schemacli.registry.apicurio``).
    """
    from schemacli.registry import apicurio

    if apicurio.is_apicurio(client):
        found = apicurio.effective_level(client, subject)
        if found is not None:
            return SubjectLevel(_as_level(found[0], client), found[1])
    if subject is not None:
        try:
            own = client.get_config(subject)
        except RegistryError as err:
            if err.error_code not in _NO_SUBJECT_LEVEL and err.status != 404:
                raise
        else:
            if own:
                return SubjectLevel(_as_level(own, client), "subject")
    return SubjectLevel(_as_level(client.get_config(), client), "global")


def _as_level(text: str, client: RegistryClient) -> Level:
    try:
        level = Level(text.upper())
        if not level.in_registry:
            raise ValueError(text)
        return level
    except ValueError:
        raise RegistryError(
            f"The registry at {client.settings.display_url} reports an unknown compatibility "
            f"level {text!r}.",
            hint="Expected one of "
            + ", ".join(level.value for level in Level if level.in_registry)
            + ".",
        ) from None
