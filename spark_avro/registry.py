"""The registry look-ups a Spark reader needs: a schema by id, a subject's versions.

Through the one registry client (``schemacli.registry.client.RegistryClient``, its settings built
from the URL and the ``SCHEMACLI_REGISTRY_*`` environment: credentials, TLS, time-out, retries),
as every schemacli command reaches a registry. A schema that uses Confluent schema references
comes back self-contained: its referenced named types (recursively, at the versions the
references name) are defined inline at their first use (``schemacli.contracts.avro.inline``),
because Spark's ``from_avro`` takes one schema text. Errors are schemacli's RegistryError /
NetworkError, keeping the HTTP status and the registry's error code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from schemacli.contracts.avro.inline import self_contained
from schemacli.errors import InputError, NetworkError, RegistryError
from schemacli.registry.settings import RegistryFlags

if TYPE_CHECKING:
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.models import Reference

T = TypeVar("T")

MAX_REFERENCE_DEPTH = 32  # as schemacli.registry.history: deeper is a cycle or a mistake


@dataclass(frozen=True)
class RegisteredSchema:
    """One schema as the registry knows it: its global id and, under a subject, its version.
    ``schema`` is self-contained (references inlined)."""

    schema_id: int
    schema: str
    subject: str | None = None
    version: int | None = None


@lru_cache(maxsize=8)
def _client(registry_url: str) -> RegistryClient:
    # one client (one HTTP session) per registry for the life of the process: a streaming
    # reader asks again in every micro-batch that brings an unseen id
    from schemacli.registry.client import RegistryClient

    return RegistryClient(RegistryFlags(url=registry_url).resolve())


def with_client(registry_url: str, fetch: Callable[[RegistryClient], T]) -> T:
    """``fetch(client)`` with the registry's client; a network failure says it is the registry."""
    try:
        return fetch(_client(registry_url))
    except NetworkError as err:
        raise NetworkError(
            f"cannot reach the schema registry: {err.message}",
            server_message=err.server_message,
            hint=err.hint,
        ) from err


def _avro_text(text: str, schema_type: str, what: str) -> str:
    if schema_type != "AVRO":
        raise RegistryError(
            f"{what} is not an Avro schema (it is {schema_type}); the Spark reader decodes "
            "Avro only",
            hint="Point the reader at an Avro subject.",
        )
    try:
        json.loads(text)  # fail here, with the subject and version, rather than inside Spark
    except json.JSONDecodeError as exc:
        raise RegistryError(
            f"{what} is not an Avro schema (not JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno})",
            hint="Point the reader at an Avro subject.",
        ) from exc
    return text


def self_contained_text(
    client: RegistryClient,
    text: str,
    references: Sequence[Reference],
    what: str,
    depth: int = 0,
) -> str:
    """``text`` with the named types of ``references`` (and theirs) defined inline."""
    if not references:
        return text
    if depth >= MAX_REFERENCE_DEPTH:
        raise RegistryError(
            f"the references of {what} nest deeper than {MAX_REFERENCE_DEPTH} levels "
            "(a reference cycle?)",
            hint="Check the references of the subjects involved.",
        )
    referenced = []
    for ref in references:
        where = f"{ref.subject} version {ref.version}"
        try:
            version = client.get_version(ref.subject, ref.version)
        except RegistryError as err:
            if err.status != 404:
                raise
            raise RegistryError(
                f"{what} references {ref.name} in {where}, which the registry does not have",
                status=err.status,
                error_code=err.error_code,
                server_message=err.server_message,
                hint="Register that version, or fix the reference (name, subject, version).",
            ) from err
        inner = self_contained_text(client, version.schema, version.references, where, depth + 1)
        referenced.append(json.loads(_avro_text(inner, version.schema_type, where)))
    try:
        value = self_contained(json.loads(text), referenced, source=what)
    except InputError as err:
        raise RegistryError(f"{what}: {err.message}", hint=err.hint) from err
    return json.dumps(value)


def schema_by_id(registry_url: str, schema_id: int) -> RegisteredSchema:
    """GET /schemas/ids/{id}: the writer schema of records framed with ``schema_id``."""
    what = f"schema id {schema_id}"

    def fetch(client: RegistryClient) -> RegisteredSchema:
        found = client.get_schema(schema_id)
        text = _avro_text(found.schema, found.schema_type, what)
        return RegisteredSchema(
            schema_id, self_contained_text(client, text, found.references, what)
        )

    return with_client(registry_url, fetch)


def subject_versions(registry_url: str, subject: str) -> list[int]:
    """GET /subjects/{subject}/versions: the version numbers registered under ``subject``."""
    return with_client(registry_url, lambda client: client.list_versions(subject))


def subject_version(
    registry_url: str, subject: str, version: int | str = "latest"
) -> RegisteredSchema:
    """GET /subjects/{subject}/versions/{version}: id, version and (self-contained) schema."""
    what = f"{subject} version {version}"

    def fetch(client: RegistryClient) -> RegisteredSchema:
        found = client.get_version(subject, version)
        text = _avro_text(found.schema, found.schema_type, what)
        return RegisteredSchema(
            found.id,
            self_contained_text(client, text, found.references, what),
            subject=subject,
            version=found.version,
        )

    return with_client(registry_url, fetch)


def subject_schemas(registry_url: str, subject: str) -> list[RegisteredSchema]:
    """Every version of ``subject``, oldest first (the writer schemas a topic can hold)."""
    return [
        subject_version(registry_url, subject, v) for v in subject_versions(registry_url, subject)
    ]
