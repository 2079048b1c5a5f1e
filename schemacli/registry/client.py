"""A client for the Confluent Schema Registry REST API v1: one method per endpoint we use.

Every method returns a typed result (``schemacli.registry.models``) or raises RegistryError /
NetworkError (exit code 3) with our message, the HTTP status, the registry's error code and its
message verbatim. Subjects are URL-encoded whole (``quote(subject, safe="")``), so
context-qualified names such as ``:.staging:orders-value`` pass through unchanged.

Retries, deadlines and authentication: ``schemacli.registry.transport``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import quote

from schemacli.errors import RegistryError, UsageError
from schemacli.registry.errors import (
    RegistryErrorCode,
)
from schemacli.registry.models import (
    BadAnswer,
    CompatibilityAnswer,
    Reference,
    Registered,
    SchemaById,
    SubjectVersion,
    SubjectVersionRef,
    answer_number,
    answer_object,
    answer_references,
    answer_schema_type,
    answer_text,
)
from schemacli.registry.transport import RegistryTransport

LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)

Version = int | str  # 1, 2, ... or "latest"


def _subject(subject: str) -> str:
    if not subject.strip():
        # /subjects//versions would reach another endpoint, or a confusing 404
        raise UsageError(
            f"The subject name {subject!r} is empty.",
            hint="Give a subject name, e.g. taxi-rides-value (<topic>-value or <topic>-key).",
        )
    try:
        return quote(subject, safe="")
    except UnicodeEncodeError:
        # bytes that are not UTF-8 on the command line reach us as lone surrogates (PEP 383):
        # no registry can hold such a name, and it cannot go into a URL
        raise UsageError(
            f"The subject name {subject!r} is not valid UTF-8 text.",
            hint="Check the terminal's encoding; subject names are Unicode text "
            "(e.g. taxi-rides-value).",
        ) from None


P = ParamSpec("P")
R = TypeVar("R")


def _reads_answer(
    method: Callable[Concatenate[RegistryClient, P], R],
) -> Callable[Concatenate[RegistryClient, P], R]:
    """Mark a public method that interprets the registry's JSON: an answer it cannot read (a
    proxy's page, another API, a broken registry) becomes a RegistryError naming the request,
    never a KeyError or TypeError. Errors raised before any answer came are left alone."""

    @functools.wraps(method)
    def wrapper(self: RegistryClient, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self._answered = None
        try:
            return method(self, *args, **kwargs)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            if self._answered is None:
                raise
            what = str(exc) if isinstance(exc, BadAnswer) else f"{type(exc).__name__}: {exc}"
            if isinstance(exc, KeyError):
                what = f"no {exc} in it"
            raise RegistryError(
                f"The registry at {self.settings.display_url} answered {self._answered} with "
                f"JSON that is not what a Confluent-compatible registry answers ({what}).",
                hint="Check that the URL points at a Confluent-compatible registry "
                "(for Apicurio: .../apis/ccompat/v7), not at a proxy or another API.",
            ) from None

    return wrapper


def _null_is_empty(data: Any) -> Any:
    """A list answer as given; JSON ``null`` (AxonOps' empty list) as ``[]``. Nothing else
    falsy counts as empty: an empty body or ``{}`` from a broken proxy is not "no subjects"."""
    return [] if data is None else data


def _names(data: Any) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise TypeError(f"expected a JSON array of names, got {_short_json(data)}")
    return data


def _numbers(data: Any, what: str) -> list[int]:
    """A JSON array of ids or versions, each checked (see ``answer_number``)."""
    if not isinstance(data, list):
        raise BadAnswer(f"the answer is {_short_json(data)}, not a JSON array of numbers")
    return [answer_number(v, what) for v in data]


def _short_json(data: Any) -> str:
    text = json.dumps(data)
    return text if len(text) <= 60 else text[:57] + "..."


class RegistryClient(RegistryTransport):
    """Talks to one registry. Cheap to build; reuses one HTTP session (keep-alive), whose
    connection pool holds ``settings.concurrency`` connections: the client may be called from
    that many threads at once (``schemacli.registry.schemas.RegistrySchemas.map``)."""

    def __repr__(self) -> str:
        return f"RegistryClient({self.settings!r})"

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- subjects and versions -------------------------------------------------------------

    @_reads_answer
    def list_subjects(self, *, prefix: str | None = None, deleted: bool = False) -> list[str]:
        """``GET /subjects``: subject names (soft-deleted ones too with ``deleted``); with
        ``prefix``, those starting with it (also where the registry ignores ``subjectPrefix``,
        as Apicurio 3.0.9 does)."""
        params: dict[str, Any] = {}
        if prefix is not None:
            params["subjectPrefix"] = prefix
        if deleted:
            params["deleted"] = "true"
        names = _names(_null_is_empty(self._call("GET", "/subjects", params=params)))
        return [name for name in names if prefix is None or name.startswith(prefix)]

    @_reads_answer
    def list_versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        """``GET /subjects/{s}/versions``: version numbers, ascending."""
        params = {"deleted": "true"} if deleted else None
        data = self._call(
            "GET",
            f"/subjects/{_subject(subject)}/versions",
            params=params,
            context={"subject": subject},
        )
        return sorted(_numbers(_null_is_empty(data), "a version"))

    @_reads_answer
    def get_version(
        self, subject: str, version: Version = "latest", *, deleted: bool = False
    ) -> SubjectVersion:
        """``GET /subjects/{s}/versions/{v}``."""
        params = {"deleted": "true"} if deleted else None
        data = self._call(
            "GET",
            f"/subjects/{_subject(subject)}/versions/{quote(str(version), safe='')}",
            params=params,
            context={"subject": subject, "version": version},
        )
        answer_object(data, "the answer").setdefault("subject", subject)
        return SubjectVersion.from_json(data)

    @_reads_answer
    def get_version_schema(self, subject: str, version: Version = "latest") -> str:
        """``GET /subjects/{s}/versions/{v}/schema``: the schema text only."""
        data = self._call(
            "GET",
            f"/subjects/{_subject(subject)}/versions/{quote(str(version), safe='')}/schema",
            context={"subject": subject, "version": version},
            raw=True,
        )
        return str(data)

    @_reads_answer
    def register(
        self,
        subject: str,
        schema: str,
        *,
        references: Sequence[Reference] = (),
        normalize: bool = False,
        schema_type: str = "AVRO",
        metadata: Mapping[str, Any] | None = None,
        rule_set: Mapping[str, Any] | None = None,
    ) -> Registered:
        """``POST /subjects/{s}/versions``: register (or find, if identical) ``schema``, with
        its data-contract ``metadata`` and ``ruleSet`` when given.

        Not retried on 5xx or timeouts: the registry may have registered it already.
        """
        body = _schema_body(schema, references, schema_type)
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if rule_set is not None:
            body["ruleSet"] = dict(rule_set)
        data = self._call(
            "POST",
            f"/subjects/{_subject(subject)}/versions",
            params={"normalize": "true"} if normalize else None,
            body=body,
            context={"subject": subject},
            idempotent=False,
        )
        data = answer_object(data, "the answer")
        version = data.get("version")  # only newer Confluent versions say it
        return Registered(
            subject=subject,
            id=answer_number(data["id"], "the id"),
            version=None if version is None else answer_number(version, "the version"),
        )

    @_reads_answer
    def lookup(
        self,
        subject: str,
        schema: str,
        *,
        references: Sequence[Reference] = (),
        normalize: bool = False,
        deleted: bool = False,
        schema_type: str = "AVRO",
    ) -> SubjectVersion | None:
        """``POST /subjects/{s}``: the version holding ``schema``.

        None when the subject or the schema is unknown there (a normal answer, not an error).
        """
        params: dict[str, str] = {}
        if normalize:
            params["normalize"] = "true"
        if deleted:
            params["deleted"] = "true"
        try:
            data = self._call(
                "POST",
                f"/subjects/{_subject(subject)}",
                params=params or None,
                body=_schema_body(schema, references, schema_type),
                context={"subject": subject},
                idempotent=True,
            )
        except RegistryError as err:
            if err.error_code in (
                RegistryErrorCode.SUBJECT_NOT_FOUND,
                RegistryErrorCode.SCHEMA_NOT_FOUND,
            ) or (err.status == 404 and err.error_code in (None, 404)):
                return None
            raise
        answer_object(data, "the answer").setdefault("subject", subject)
        return SubjectVersion.from_json(data)

    @_reads_answer
    def delete_version(self, subject: str, version: Version, *, permanent: bool = False) -> int:
        """``DELETE /subjects/{s}/versions/{v}`` (``permanent=true`` for a hard delete)."""
        data = self._call(
            "DELETE",
            f"/subjects/{_subject(subject)}/versions/{quote(str(version), safe='')}",
            params={"permanent": "true"} if permanent else None,
            context={"subject": subject, "version": version},
            idempotent=False,
        )
        return answer_number(data, "the deleted version")

    @_reads_answer
    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        """``DELETE /subjects/{s}``: the versions deleted (hard with ``permanent``)."""
        data = self._call(
            "DELETE",
            f"/subjects/{_subject(subject)}",
            params={"permanent": "true"} if permanent else None,
            context={"subject": subject},
            idempotent=False,
        )
        deleted = _numbers(data, "a deleted version")
        if not deleted:
            # Confluent answers 40401 for a subject without versions; "deleted nothing" with
            # 200 OK would leave the user guessing what happened.
            raise BadAnswer("an empty list: it names no deleted version")
        return sorted(deleted)

    # ---- schemas by id ---------------------------------------------------------------------

    @_reads_answer
    def get_schema(self, schema_id: int, *, subject: str | None = None) -> SchemaById:
        """``GET /schemas/ids/{id}`` (``subject`` narrows the lookup within a context)."""
        data = self._call(
            "GET",
            f"/schemas/ids/{int(schema_id)}",
            params={"subject": subject} if subject else None,
            context={"schema_id": schema_id},
        )
        data = answer_object(data, "the answer")
        return SchemaById(
            id=int(schema_id),
            schema=answer_text(data["schema"], "the schema"),
            schema_type=answer_schema_type(data.get("schemaType")),
            references=answer_references(data.get("references")),
        )

    @_reads_answer
    def get_schema_subjects(self, schema_id: int) -> list[str]:
        """``GET /schemas/ids/{id}/subjects``."""
        data = self._call(
            "GET", f"/schemas/ids/{int(schema_id)}/subjects", context={"schema_id": schema_id}
        )
        return list(_names(_null_is_empty(data)))

    @_reads_answer
    def get_schema_versions(self, schema_id: int) -> list[SubjectVersionRef]:
        """``GET /schemas/ids/{id}/versions``: every (subject, version) using the schema."""
        data = self._call(
            "GET", f"/schemas/ids/{int(schema_id)}/versions", context={"schema_id": schema_id}
        )
        if not isinstance(data, list):
            raise BadAnswer(f"the answer is {_short_json(data)}, not a JSON array")
        return [
            SubjectVersionRef(
                answer_text(answer_object(d, "an entry")["subject"], "the subject"),
                answer_number(d["version"], "the version"),
            )
            for d in data
        ]

    # ---- compatibility ---------------------------------------------------------------------

    @_reads_answer
    def test_compatibility(
        self,
        subject: str,
        schema: str,
        *,
        version: Version = "latest",
        references: Sequence[Reference] = (),
        normalize: bool = False,
        schema_type: str = "AVRO",
    ) -> CompatibilityAnswer:
        """``POST /compatibility/subjects/{s}/versions/{v}?verbose=true``."""
        return self._compat(
            f"/compatibility/subjects/{_subject(subject)}/versions/{quote(str(version), safe='')}",
            subject,
            schema,
            references,
            normalize,
            schema_type,
            version,
        )

    @_reads_answer
    def test_compatibility_all(
        self,
        subject: str,
        schema: str,
        *,
        references: Sequence[Reference] = (),
        normalize: bool = False,
        schema_type: str = "AVRO",
    ) -> CompatibilityAnswer:
        """``POST /compatibility/subjects/{s}/versions?verbose=true``: against every version the
        subject's level asks for (all of them when transitive)."""
        return self._compat(
            f"/compatibility/subjects/{_subject(subject)}/versions",
            subject,
            schema,
            references,
            normalize,
            schema_type,
            None,
        )

    def _compat(
        self,
        path: str,
        subject: str,
        schema: str,
        references: Sequence[Reference],
        normalize: bool,
        schema_type: str,
        version: Version | None,
    ) -> CompatibilityAnswer:
        params = {"verbose": "true"}
        if normalize:
            params["normalize"] = "true"
        context: dict[str, Any] = {"subject": subject}
        if version is not None:
            context["version"] = version
        data = self._call(
            "POST",
            path,
            params=params,
            body=_schema_body(schema, references, schema_type),
            context=context,
            idempotent=True,
        )
        data = answer_object(data, "the answer")
        verdict = data.get("is_compatible")
        if not isinstance(verdict, bool):
            # bool("false") is True: reading a string as the verdict would pass an incompatible
            # schema
            raise BadAnswer(f"is_compatible is {_short_json(verdict)}, not true or false")
        messages = data.get("messages") or ()
        if isinstance(messages, str):
            messages = (messages,)
        if not isinstance(messages, list | tuple):
            raise BadAnswer(f"messages is {_short_json(messages)}, not a JSON array")
        return CompatibilityAnswer(compatible=verdict, messages=tuple(str(m) for m in messages))

    # ---- config and mode -------------------------------------------------------------------

    @_reads_answer
    def get_config(self, subject: str | None = None, *, default_to_global: bool = False) -> str:
        """``GET /config`` or ``GET /config/{s}``: the compatibility level."""
        path = "/config" if subject is None else f"/config/{_subject(subject)}"
        params = {"defaultToGlobal": "true"} if subject is not None and default_to_global else None
        data = self._call("GET", path, params=params, context=_ctx(subject))
        return _level(data)

    @_reads_answer
    def set_config(self, level: str, subject: str | None = None) -> str:
        """``PUT /config`` or ``PUT /config/{s}``: set the level; returns the level now set."""
        path = "/config" if subject is None else f"/config/{_subject(subject)}"
        data = self._call("PUT", path, body={"compatibility": level.upper()}, context=_ctx(subject))
        return _level(data) or level.upper()

    @_reads_answer
    def set_compatibility_group(self, subject: str, level: str, group: str) -> dict[str, Any]:
        """``PUT /config/{s}`` with ``compatibilityGroup`` (Confluent 7.4+): versions whose
        ``metadata.properties[group]`` differ are not checked against each other. Returns the
        registry's answer as it is (a registry that ignores the key leaves it out)."""
        data = self._call(
            "PUT",
            f"/config/{_subject(subject)}",
            body={"compatibility": level.upper(), "compatibilityGroup": group},
            context=_ctx(subject),
        )
        return dict(answer_object(data, "the answer"))

    @_reads_answer
    def get_config_document(self, subject: str) -> dict[str, Any]:
        """``GET /config/{s}`` as the registry answers it (level, compatibilityGroup, ...)."""
        data = self._call("GET", f"/config/{_subject(subject)}", context=_ctx(subject))
        return dict(answer_object(data, "the answer"))

    @_reads_answer
    def delete_config(self, subject: str | None = None) -> str:
        """``DELETE /config[/{s}]``: drop the subject's own level; returns the level it had."""
        path = "/config" if subject is None else f"/config/{_subject(subject)}"
        data = self._call("DELETE", path, context=_ctx(subject), idempotent=False)
        return _level(data)

    @_reads_answer
    def get_mode(self, subject: str | None = None) -> str:
        """``GET /mode`` or ``GET /mode/{s}``: READWRITE, READONLY or IMPORT."""
        path = "/mode" if subject is None else f"/mode/{_subject(subject)}"
        data = answer_object(self._call("GET", path, context=_ctx(subject)), "the answer")
        return answer_text(data.get("mode", ""), "the mode")


def _schema_body(
    schema: str | Mapping[str, Any], references: Iterable[Reference], schema_type: str
) -> dict[str, Any]:
    text = schema if isinstance(schema, str) else json.dumps(schema)
    body: dict[str, Any] = {"schema": text}
    if schema_type and schema_type != "AVRO":
        body["schemaType"] = schema_type
    refs = [r.to_json() for r in references]
    if refs:
        body["references"] = refs
    return body


def _ctx(subject: str | None) -> dict[str, Any]:
    return {"subject": subject} if subject is not None else {}


def _level(data: Any) -> str:
    if not isinstance(data, Mapping):
        raise TypeError(f"expected a JSON object with compatibilityLevel, got {_short_json(data)}")
    if data:
        for key in ("compatibilityLevel", "compatibility"):
            if data.get(key):
                return answer_text(data[key], key)
    return ""
