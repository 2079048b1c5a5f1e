"""The registry's error codes, and how an HTTP answer or a transport failure becomes words.

Confluent's REST API answers errors with ``{"error_code": 40401, "message": "..."}``. Each code
we know gets one message template and one hint here, so every command says the same thing about
the same failure. Other Confluent-API registries deviate (see docs/registry.md): Apicurio's
ccompat layer sometimes answers with its own problem-details body (``title``/``detail``) and with
plain HTTP statuses as codes; ``error_from_response`` reads all those shapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Any

from schemacli import redact as _redact
from schemacli.errors import Location, NetworkError, RegistryError


class TransportError(NetworkError):
    """A NetworkError that knows which kind of transport failure it was.

    ``kind`` is connect (the request never left us), timeout, tls or other. After a timeout or
    an "other" failure the request may have reached the registry and been carried out:
    ``may_have_arrived`` says so, for callers that must tell the user (a registration).
    """

    def __init__(self, message: str, *, kind: str, **details: Any) -> None:
        super().__init__(message, **details)
        self.kind = kind

    @property
    def may_have_arrived(self) -> bool:
        return self.kind in ("timeout", "other")


class RegistryErrorCode(IntEnum):
    """Error codes of the Confluent Schema Registry REST API (``error_code`` in error bodies)."""

    UNAUTHORIZED = 401
    FORBIDDEN = 403
    SUBJECT_NOT_FOUND = 40401
    VERSION_NOT_FOUND = 40402
    SCHEMA_NOT_FOUND = 40403
    SUBJECT_SOFT_DELETED = 40404
    SUBJECT_NOT_SOFT_DELETED = 40405
    VERSION_SOFT_DELETED = 40406
    VERSION_NOT_SOFT_DELETED = 40407
    SUBJECT_LEVEL_COMPATIBILITY_NOT_CONFIGURED = 40408
    SUBJECT_LEVEL_MODE_NOT_CONFIGURED = 40409
    INCOMPATIBLE_SCHEMA = 409
    INVALID_SCHEMA = 42201
    INVALID_VERSION = 42202
    INVALID_COMPATIBILITY_LEVEL = 42203
    INVALID_MODE = 42204
    OPERATION_NOT_PERMITTED = 42205
    REFERENCE_EXISTS = 42206
    BACKEND_STORE_ERROR = 50001
    OPERATION_TIMEOUT = 50002
    FORWARDING_ERROR = 50003


# code -> (message template, hint). Templates may use {subject}, {version}, {schema_id}, {url}.
_CATALOGUE: dict[int, tuple[str, str]] = {
    RegistryErrorCode.UNAUTHORIZED: (
        "The registry at {url} refused the credentials (401 Unauthorized).",
        "Give a user and password (--user/--password or SCHEMACLI_REGISTRY_USER/PASSWORD) "
        "or a token (SCHEMACLI_REGISTRY_TOKEN) that the registry accepts.",
    ),
    RegistryErrorCode.FORBIDDEN: (
        "The registry at {url} does not allow this operation for these credentials "
        "(403 Forbidden).",
        "Ask the registry's administrator for the permission, or use other credentials.",
    ),
    RegistryErrorCode.SUBJECT_NOT_FOUND: (
        "Subject '{subject}' not found in the registry at {url}.",
        "Check the spelling (`schemacli subjects list`); `schemacli register` creates a subject "
        "with its first version.",
    ),
    RegistryErrorCode.VERSION_NOT_FOUND: (
        "Version {version} of subject '{subject}' not found in the registry at {url}.",
        "List the versions with `schemacli subjects show {subject}`.",
    ),
    RegistryErrorCode.SCHEMA_NOT_FOUND: (
        "Schema not found in the registry at {url}{for_subject}.",
        "The schema id or text is not registered there; check the id, or register the schema.",
    ),
    RegistryErrorCode.SUBJECT_SOFT_DELETED: (
        "Subject '{subject}' was soft-deleted in the registry at {url}.",
        "Register a schema to revive it, or delete it permanently with "
        "`schemacli subjects delete {subject} --permanent --yes`.",
    ),
    RegistryErrorCode.SUBJECT_NOT_SOFT_DELETED: (
        "Subject '{subject}' must be soft-deleted before it can be deleted permanently.",
        "Run `schemacli subjects delete {subject} --yes` first, then again with --permanent.",
    ),
    RegistryErrorCode.VERSION_SOFT_DELETED: (
        "Version {version} of subject '{subject}' was soft-deleted.",
        "Pass --permanent to delete it for good, or register the schema again to revive it.",
    ),
    RegistryErrorCode.VERSION_NOT_SOFT_DELETED: (
        "Version {version} of subject '{subject}' must be soft-deleted before a permanent delete.",
        "Delete it without --permanent first.",
    ),
    RegistryErrorCode.SUBJECT_LEVEL_COMPATIBILITY_NOT_CONFIGURED: (
        "Subject '{subject}' has no compatibility level of its own; it uses the global level.",
        "Read the global level with `schemacli config get`, or set one with "
        "`schemacli config set {subject} LEVEL`.",
    ),
    RegistryErrorCode.SUBJECT_LEVEL_MODE_NOT_CONFIGURED: (
        "Subject '{subject}' has no mode of its own; it uses the global mode.",
        "Read the global mode without a subject.",
    ),
    RegistryErrorCode.INCOMPATIBLE_SCHEMA: (
        "The registry at {url} refused the schema for subject '{subject}': it is incompatible "
        "with the subject's history at the subject's compatibility level.",
        "Run `schemacli check SCHEMA --subject {subject} --registry URL` to see why; evolve the "
        "schema compatibly (add fields with defaults), or publish it under a new subject.",
    ),
    RegistryErrorCode.INVALID_SCHEMA: (
        "The registry at {url} says the schema is not valid{for_subject}.",
        "Run `schemacli validate SCHEMA` for the exact place; references to other named types "
        "need --reference name=subject:version.",
    ),
    RegistryErrorCode.INVALID_VERSION: (
        "'{version}' is not a valid version for subject '{subject}'.",
        "Versions are 1, 2, ... or 'latest'.",
    ),
    RegistryErrorCode.INVALID_COMPATIBILITY_LEVEL: (
        "The registry at {url} does not accept that compatibility level.",
        "Use one of NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, "
        "FULL_TRANSITIVE.",
    ),
    RegistryErrorCode.INVALID_MODE: (
        "The registry at {url} does not accept that mode.",
        "Use one of READWRITE, READONLY, IMPORT.",
    ),
    RegistryErrorCode.OPERATION_NOT_PERMITTED: (
        "The registry at {url} does not permit this operation{for_subject}.",
        "The subject may be READONLY or in IMPORT mode; check `schemacli subjects show`.",
    ),
    RegistryErrorCode.REFERENCE_EXISTS: (
        "Other schemas still reference this schema{for_subject}; the registry will not delete it.",
        "Delete the referencing subjects first.",
    ),
    RegistryErrorCode.BACKEND_STORE_ERROR: (
        "The registry at {url} failed to store or read data (its backend store).",
        "This is a registry-side failure; retry later and check the registry's logs.",
    ),
    RegistryErrorCode.OPERATION_TIMEOUT: (
        "The registry at {url} timed out internally.",
        "This is a registry-side failure; retry later and check the registry's logs.",
    ),
    RegistryErrorCode.FORWARDING_ERROR: (
        "The registry at {url} could not forward the request to its primary node.",
        "The registry cluster has no reachable leader; retry later.",
    ),
}


def redact(text: str | None, secrets: Iterable[str | None]) -> str | None:
    """``text`` with every non-empty secret in ``secrets`` (and every secret the process was
    given, and any URL user info) masked as ``***``: ``schemacli.redact.redact``, the one
    redaction, for text that may be None."""
    if text is None:
        return None
    return _redact.redact(text, secrets)


def parse_error_body(body: bytes | str | None) -> tuple[int | None, str | None]:
    """(error_code, message) from an error body in any shape we have seen, else (None, text)."""
    if not body:
        return None, None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than we follow
        snippet = text.strip()
        return None, (snippet[:300] or None)
    if not isinstance(data, Mapping):
        return None, text.strip()[:300]
    code = data.get("error_code", data.get("errorCode"))
    message = data.get("message") or data.get("detail") or data.get("title")
    if type(code) is not int:  # a bool is an int to Python, not an error code
        code = None
    return code, (str(message) if message is not None else None)


def error_from_response(
    status: int,
    body: bytes | str | None,
    *,
    url: str,
    context: Mapping[str, Any] | None = None,
    secrets: Iterable[str | None] = (),
    endpoint: str | None = None,
) -> RegistryError:
    """Turn a non-2xx answer into a RegistryError with our message and hint.

    ``url`` must already be free of user info; ``context`` may hold subject / version / schema_id
    (used in the message and as the error's location); ``endpoint`` ("GET /subjects") names the
    call when the catalogue's message needs a subject or version the call did not have.
    """
    secrets = tuple(secrets)
    code, server_message = parse_error_body(body)
    server_message = redact(server_message, secrets)
    ctx = dict(context or {})
    key = _catalogue_key(status, code)
    subject = ctx.get("subject")
    fields = {
        "url": url,
        "subject": subject if subject is not None else "?",
        "version": ctx.get("version", "?"),
        "schema_id": ctx.get("schema_id", "?"),
        "for_subject": f" for subject '{subject}'" if subject else "",
    }
    if key is not None and _needs_missing(_CATALOGUE[key][0], ctx):
        # e.g. a 404 40401 on a call that has no subject: name the call, never "Subject '?'"
        code_text = f" (error {code})" if code is not None else ""
        call = f" to {endpoint}" if endpoint else ""
        message = f"The registry at {url} answered HTTP {status}{code_text}{call}."
        template_hint = _CATALOGUE[key][1]
        hint = (
            template_hint.format(**fields)
            if not _needs_missing(template_hint, ctx)
            else "Check the request against the registry's API; its own message is below."
        )
    elif key is not None:
        template, hint = _CATALOGUE[key]
        message = template.format(**fields)
        hint = hint.format(**fields)
    else:
        message = f"The registry at {url} answered HTTP {status}."
        hint = (
            "Check that the URL points at a Confluent-compatible schema registry "
            "(for Apicurio: .../apis/ccompat/v7)."
            if status in (404, 405)
            else "Retry later; if it persists, check the registry's logs."
        )
    if key == RegistryErrorCode.SCHEMA_NOT_FOUND and ctx.get("schema_id") is not None:
        message = f"Schema id {ctx['schema_id']} not found in the registry at {url}."
    location = None
    if subject is not None:
        version = ctx.get("version")
        source = f"{subject}:{version}" if version is not None else str(subject)
        location = Location(source=source)
    return RegistryError(
        redact(message, secrets) or message,
        status=status,
        error_code=code,
        server_message=server_message,
        location=location,
        hint=hint,
    )


def _needs_missing(template: str, ctx: Mapping[str, Any]) -> bool:
    """Whether ``template`` names a subject, version or schema id that ``ctx`` lacks."""
    import string

    names = {field for _, field, _, _ in string.Formatter().parse(template) if field}
    return any(ctx.get(name) is None for name in names & {"subject", "version", "schema_id"})


def _catalogue_key(status: int, code: int | None) -> int | None:
    if code is not None and code in _CATALOGUE:
        return code
    if status in (401, 403):
        return status
    if status == 409:
        return RegistryErrorCode.INCOMPATIBLE_SCHEMA
    return None


def network_error(
    kind: str,
    *,
    url: str,
    detail: str | None,
    timeout: float | None = None,
    secrets: Iterable[str | None] = (),
    attempts: int = 1,
    elapsed: float | None = None,
    endpoint: str | None = None,
) -> NetworkError:
    """A NetworkError for a transport failure: ``kind`` is connect, timeout, tls or other.

    ``attempts`` and ``elapsed`` (seconds, all attempts and the waits between them) are said
    when the call was tried more than once, so the time the user waited adds up."""
    detail = redact(detail, tuple(secrets))
    call = f" {endpoint}" if endpoint else ""
    tried = (
        f" ({attempts} attempts over {elapsed:.1f} s)"
        if attempts > 1 and elapsed is not None
        else ""
    )
    if kind == "connect":
        return TransportError(
            f"Cannot connect to the registry at {url}{tried}.",
            kind=kind,
            server_message=detail,
            hint="Is the registry running and the URL right? Set it with --registry URL or "
            "SCHEMACLI_REGISTRY_URL.",
        )
    if kind == "timeout":
        return TransportError(
            f"The registry at {url} did not answer within {timeout or 0:g} s"
            + (f" on any of {attempts} attempts ({elapsed:.1f} s in all)" if tried else "")
            + (f" ({call.strip()})." if call else "."),
            kind=kind,
            server_message=detail,
            hint="The registry is slow or overloaded; retry later or raise --timeout.",
        )
    if kind == "tls":
        return TransportError(
            f"TLS handshake with the registry at {url} failed.",
            kind=kind,
            server_message=detail,
            hint="Give the registry's CA bundle with --ca (SCHEMACLI_REGISTRY_CA), a client "
            "certificate with --cert/--key; --insecure skips verification (never in production).",
        )
    return TransportError(
        f"Talking to the registry at {url} failed{tried}.",
        kind="other",
        server_message=detail,
        hint="Check the URL and the network; retry later.",
    )
