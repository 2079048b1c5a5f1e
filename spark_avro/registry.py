"""The registry look-ups a Spark reader needs, by URL: a schema by id, a subject's versions.

Through the one road (``schemacli.registry.schemas.RegistrySchemas``) over the one registry
client, its settings built from the URL and the ``SCHEMACLI_REGISTRY_*`` environment
(credentials, TLS, time-out, retries), as every schemacli command reaches a registry. One
client and one road per registry for the life of the process: a streaming reader asks again in
every micro-batch that brings an unseen id, and a schema id or a subject's version, once
fetched, is not asked for again. A schema comes back self-contained (its references' named
types defined inline), because Spark's ``from_avro`` takes one schema text. Errors are
schemacli's RegistryError / NetworkError, keeping the HTTP status and the registry's error code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from schemacli.errors import NetworkError
from schemacli.registry.settings import RegistryFlags

if TYPE_CHECKING:
    from schemacli.registry.schemas import RegistrySchema, RegistrySchemas

T = TypeVar("T")


@dataclass(frozen=True)
class RegisteredSchema:
    """One schema as the registry knows it: its global id and, under a subject, its version.
    ``schema`` is self-contained (references inlined)."""

    schema_id: int
    schema: str
    subject: str | None = None
    version: int | None = None

    @classmethod
    def of(cls, found: RegistrySchema) -> RegisteredSchema:
        return cls(found.id, found.text, subject=found.subject, version=found.number)


@lru_cache(maxsize=8)
def _road(registry_url: str) -> RegistrySchemas:
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.schemas import RegistrySchemas

    return RegistrySchemas(RegistryClient(RegistryFlags(url=registry_url).resolve()))


def with_registry(registry_url: str, fetch: Callable[[RegistrySchemas], T]) -> T:
    """``fetch(road)`` over the registry's road; a network failure says it is the registry."""
    try:
        return fetch(_road(registry_url))
    except NetworkError as err:
        raise NetworkError(
            f"cannot reach the schema registry: {err.message}",
            server_message=err.server_message,
            hint=err.hint,
        ) from err


def schema_by_id(registry_url: str, schema_id: int) -> RegisteredSchema:
    """GET /schemas/ids/{id}: the writer schema of records framed with ``schema_id``."""
    return with_registry(
        registry_url, lambda road: RegisteredSchema.of(road.schema_by_id(schema_id))
    )


def subject_versions(registry_url: str, subject: str) -> list[int]:
    """GET /subjects/{subject}/versions: the version numbers registered under ``subject``."""
    return with_registry(registry_url, lambda road: road.client.list_versions(subject))


def subject_version(
    registry_url: str, subject: str, version: int | str = "latest"
) -> RegisteredSchema:
    """GET /subjects/{subject}/versions/{version}: id, version and (self-contained) schema."""
    return with_registry(
        registry_url, lambda road: RegisteredSchema.of(road.schema(subject, version))
    )


def subject_schemas(registry_url: str, subject: str) -> list[RegisteredSchema]:
    """Every version of ``subject``, oldest first (the writer schemas a topic can hold)."""
    return with_registry(
        registry_url,
        lambda road: [RegisteredSchema.of(s) for s in road.writers(subject).values()],
    )
