"""The two registry look-ups a Spark reader needs, with requests: a schema by id, a subject version.

Deliberately tiny (spark_avro must not depend on the CLI or its full registry client). Errors are
schemacli's RegistryError / NetworkError, keeping the HTTP status and the registry's error code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

import requests

from schemacli.errors import NetworkError, RegistryError

TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class RegisteredSchema:
    """One schema as the registry knows it: its global id and, under a subject, its version."""

    schema_id: int
    schema: str
    subject: str | None = None
    version: int | None = None


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=host))


def _get(registry_url: str, path: str) -> object:
    url = registry_url.rstrip("/") + path
    try:
        response = requests.get(
            url,
            headers={"Accept": "application/vnd.schemaregistry.v1+json"},
            timeout=TIMEOUT_SECONDS,
        )
    except requests.RequestException as exc:
        raise NetworkError(
            f"cannot reach the schema registry at {_redacted(registry_url)}: "
            f"{exc.__class__.__name__}",
            hint="Check the registry URL and that the registry is running.",
        ) from exc
    if response.status_code != 200:
        try:
            body = response.json()
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        raise RegistryError(
            f"GET {path} failed on {_redacted(registry_url)}",
            status=response.status_code,
            error_code=body.get("error_code"),
            server_message=body.get("message") or response.text[:200],
        )
    return response.json()


def _avro_text(payload: dict, what: str) -> str:
    kind = payload.get("schemaType", "AVRO")
    if kind != "AVRO":
        raise RegistryError(
            f"{what} is a {kind} schema; the Spark reader decodes Avro only",
            hint="Point the reader at an Avro subject.",
        )
    if payload.get("references"):
        raise RegistryError(
            f"{what} uses schema references, which the Spark reader does not resolve yet",
            hint="Register the schema self-contained (named types inlined).",
        )
    schema = payload["schema"]
    try:
        json.loads(schema)  # fail here, with the subject and version, rather than inside Spark
    except json.JSONDecodeError as exc:
        raise RegistryError(
            f"{what} is not an Avro schema (not JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno})",
            hint="Point the reader at an Avro subject.",
        ) from exc
    return schema


def schema_by_id(registry_url: str, schema_id: int) -> RegisteredSchema:
    """GET /schemas/ids/{id}: the writer schema of records framed with ``schema_id``."""
    payload = _get(registry_url, f"/schemas/ids/{schema_id}")
    return RegisteredSchema(schema_id, _avro_text(payload, f"schema id {schema_id}"))


def subject_versions(registry_url: str, subject: str) -> list[int]:
    """GET /subjects/{subject}/versions: the version numbers registered under ``subject``."""
    return list(_get(registry_url, f"/subjects/{quote(subject, safe='')}/versions"))


def subject_version(
    registry_url: str, subject: str, version: int | str = "latest"
) -> RegisteredSchema:
    """GET /subjects/{subject}/versions/{version}: id, version and schema text."""
    path = f"/subjects/{quote(subject, safe='')}/versions/{quote(str(version), safe='')}"
    payload = _get(registry_url, path)
    return RegisteredSchema(
        int(payload["id"]),
        _avro_text(payload, f"{subject} version {version}"),
        subject=subject,
        version=int(payload["version"]),
    )


def subject_schemas(registry_url: str, subject: str) -> list[RegisteredSchema]:
    """Every version of ``subject``, oldest first (the writer schemas a topic can hold)."""
    return [
        subject_version(registry_url, subject, v) for v in subject_versions(registry_url, subject)
    ]
