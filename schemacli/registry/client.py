"""A client for the Confluent Schema Registry REST API v1: one method per endpoint we use.

Every method returns a typed result (``schemacli.registry.models``) or raises RegistryError /
NetworkError (exit code 3) with our message, the HTTP status, the registry's error code and its
message verbatim. Subjects are URL-encoded whole (``quote(subject, safe="")``), so
context-qualified names such as ``:.staging:orders-value`` pass through unchanged.

Retries: connection failures where the request never left us are retried on every call; timeouts,
429 and 5xx only on idempotent calls (GET, config PUT, lookup and compatibility POSTs) — never on
``register`` or deletes, whose second attempt could do the work twice or report a misleading 404.
Waits grow exponentially with full jitter; ``Retry-After`` is honoured (capped).
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import random
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import quote

import requests
import requests.adapters
import requests.auth
import urllib3.exceptions
from urllib3.exceptions import InsecureRequestWarning

from schemacli.errors import RegistryError, UsageError
from schemacli.registry.errors import (
    RegistryErrorCode,
    TransportError,
    error_from_response,
    network_error,
    redact,
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
from schemacli.registry.settings import RegistrySettings, strip_userinfo

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPT = f"{CONTENT_TYPE}, application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5"
LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)

log = logging.getLogger("schemacli.registry")

Version = int | str  # 1, 2, ... or "latest"

# The whole exchange (connect, headers, body) must end within this many times --timeout of
# sending the request; --timeout alone bounds each single wait. See docs/registry.md.
ANSWER_DEADLINE_FACTOR = 2
MAX_ANSWER_BYTES = 64 * 2**20  # no registry answer comes near this; beyond it, stop reading
CHUNK_BYTES = 64 * 2**10


class _TooSlow(Exception):
    """The answer did not arrive in full before the deadline (see ``_read_body``)."""

    def error(self, url: str, method: str, path: str, timeout: float) -> RegistryError:
        return TransportError(
            f"The registry at {url} did not finish answering {method} {path} within "
            f"{ANSWER_DEADLINE_FACTOR * timeout:g} s ({ANSWER_DEADLINE_FACTOR} x --timeout "
            f"{timeout:g} s).",
            kind="timeout",
            hint="The registry or the network is very slow, or the answer never ends; retry "
            "later or raise --timeout.",
        )


def _decode(content: bytes, response: requests.Response) -> str:
    """The body as text: the declared charset, else UTF-8 (JSON's), never failing."""
    encoding = response.encoding if "charset" in response.headers.get("Content-Type", "") else None
    try:
        return content.decode(encoding or "utf-8", "replace")
    except LookupError:  # an unknown charset name
        return content.decode("utf-8", "replace")


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


class RegistryClient:
    """Talks to one registry. Cheap to build; reuses one HTTP session (keep-alive), whose
    connection pool holds ``settings.concurrency`` connections: the client may be called from
    that many threads at once (``schemacli.registry.schemas.RegistrySchemas.map``)."""

    def __init__(
        self,
        settings: RegistrySettings,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        if session is None:
            session = requests.Session()
            # one kept-alive connection per thread in flight; more would be opened and dropped
            pool = requests.adapters.HTTPAdapter(
                pool_connections=1, pool_maxsize=max(1, settings.concurrency), max_retries=0
            )
            session.mount("http://", pool)
            session.mount("https://", pool)
        self._session = session
        # trust_env stays on: HTTPS_PROXY / NO_PROXY and REQUESTS_CA_BUNDLE work as users expect
        # (our explicit auth, when given, always wins over ~/.netrc).
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.retry_count = 0  # total retries made (for tests and --verbose)
        self._count_lock = threading.Lock()
        # per thread: the last request answered 2xx (see _reads_answer)
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"RegistryClient({self.settings!r})"

    @property
    def _answered(self) -> str | None:
        return getattr(self._local, "answered", None)

    @_answered.setter
    def _answered(self, value: str | None) -> None:
        self._local.answered = value

    def close(self) -> None:
        self._session.close()

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

    # ---- transport -------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        context: Mapping[str, Any] | None = None,
        idempotent: bool | None = None,
        raw: bool = False,
        base: str | None = None,
    ) -> Any:
        s = self.settings
        if idempotent is None:
            # GET and the config PUT; the POSTs that only read (lookup, compatibility) say so.
            idempotent = method in ("GET", "PUT")
        url = f"{base or s.url}{path}"  # base: another API of the same server (Apicurio's)
        headers = {"Accept": ACCEPT}
        data = None
        if body is not None:
            headers["Content-Type"] = CONTENT_TYPE
            data = json.dumps(body)
        auth: requests.auth.AuthBase | None = None
        if s.token:
            auth = _Bearer(s.token)  # as an auth object, so ~/.netrc can never replace it
        elif s.username:
            auth = _Basic(s.username, s.password or "")
        verify: bool | str = False if s.insecure else (str(s.ca_bundle) if s.ca_bundle else True)
        cert: str | tuple[str, str] | None = None
        if s.client_cert:
            cert = (str(s.client_cert), str(s.client_key)) if s.client_key else str(s.client_cert)

        attempt = 0
        began = time.monotonic()  # the first attempt: what the user has waited in all
        while True:
            started = time.monotonic()
            try:
                with warnings.catch_warnings():
                    # --insecure is announced once by the CLI, not by urllib3 on every call
                    warnings.simplefilter("ignore", InsecureRequestWarning)
                    response = self._request(method, url, params, data, headers, auth, verify, cert)
                    try:
                        content = self._read_body(response, started, method, path)
                    finally:
                        response.close()
            except (requests.exceptions.RequestException, _TooSlow) as exc:
                kind = "timeout" if isinstance(exc, _TooSlow) else _failure_kind(exc)
                retry = attempt < s.retries and (idempotent or kind == "connect")
                outcome = "retrying" if retry else "giving up"
                log.debug("%s %s -> %s (%s)", method, url, kind, outcome)
                if retry:
                    attempt += 1
                    self._backoff(attempt, None)
                    continue
                if isinstance(exc, _TooSlow):
                    raise exc.error(s.display_url, method, path, s.timeout) from None
                raise network_error(
                    kind,
                    url=s.display_url,
                    detail=_describe(exc),
                    timeout=s.timeout,
                    secrets=self._secrets,
                    attempts=attempt + 1,
                    elapsed=time.monotonic() - began,
                    endpoint=f"{method} {path}",
                ) from None  # the requests exception chain repeats URLs and adapters; not useful
            elapsed = (time.monotonic() - started) * 1000
            log.debug("%s %s -> %d (%.0f ms)", method, url, response.status_code, elapsed)
            status = response.status_code
            if status < 300:
                self._answered = f"{method} {path}"
                text = _decode(content, response)
                if raw:
                    return text
                if not content:
                    return {}
                try:
                    return json.loads(text)
                except (ValueError, RecursionError) as exc:
                    # RecursionError: "[[[[..." nested deeper than Python's parser can follow
                    nested = isinstance(exc, RecursionError)
                    raise RegistryError(
                        f"The registry at {s.display_url} answered {method} {path} with "
                        + (
                            "JSON nested too deeply to read."
                            if nested
                            else "something that is not JSON."
                        ),
                        status=status,
                        server_message=redact(text[:200], self._secrets),
                        hint="Check that the URL points at a Confluent-compatible registry "
                        "(for Apicurio: .../apis/ccompat/v7).",
                    ) from None
            if (status == 429 or status >= 500) and idempotent and attempt < s.retries:
                attempt += 1
                self._backoff(attempt, response.headers.get("Retry-After"))
                continue
            if 300 <= status < 400:
                raise RegistryError(
                    f"The registry at {s.display_url} redirected {method} {path} to "
                    f"{strip_userinfo(response.headers.get('Location', '?'))}; schemacli does "
                    "not follow redirects (credentials would travel along).",
                    status=status,
                    hint="Use the final URL as --registry.",
                )
            raise error_from_response(
                status,
                content,
                url=s.display_url,
                context=context,
                secrets=self._secrets,
                endpoint=f"{method} {path}",
            )

    def _request(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None,
        data: str | None,
        headers: dict[str, str],
        auth: requests.auth.AuthBase | None,
        verify: bool | str,
        cert: str | tuple[str, str] | None,
    ) -> requests.Response:
        timeout = self.settings.timeout
        return self._session.request(
            method,
            url,
            params=params,
            data=data,
            headers=headers,
            auth=auth,
            verify=verify,
            cert=cert,
            timeout=(min(timeout, 10.0), timeout),  # (connect, read): each wait, not the total
            allow_redirects=False,
            stream=True,  # the body is read by _read_body, against a deadline and a size limit
        )

    def _read_body(
        self, response: requests.Response, started: float, method: str, path: str
    ) -> bytes:
        """The whole (decoded) body, read in chunks.

        requests' read timeout bounds each socket read, so a registry trickling a byte every
        second would never be cut off, and an endless answer would fill memory. Here the whole
        exchange must end within ANSWER_DEADLINE_FACTOR x the timeout of sending the request
        (_TooSlow otherwise), and the body must not exceed MAX_ANSWER_BYTES (RegistryError).
        """
        deadline = started + ANSWER_DEADLINE_FACTOR * self.settings.timeout
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            raise self._too_large(method, path, response.status_code)
        chunks: list[bytes] = []
        size = 0
        raw = response.raw
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _TooSlow()
            sock = getattr(getattr(raw, "connection", None), "sock", None)
            if sock is not None:  # no single read may outlast the deadline either
                sock.settimeout(min(self.settings.timeout, max(remaining, 0.01)))
            try:
                chunk = raw.read1(CHUNK_BYTES, decode_content=True)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                if time.monotonic() >= deadline:
                    raise _TooSlow() from None
                if isinstance(exc, urllib3.exceptions.ReadTimeoutError | TimeoutError):
                    raise requests.exceptions.ReadTimeout(exc) from None
                raise requests.exceptions.ConnectionError(exc) from None
            if not chunk:  # read1 returns b"" only at the end of the body
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise self._too_large(method, path, response.status_code)
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self, method: str, path: str, status: int) -> RegistryError:
        return RegistryError(
            f"The registry at {self.settings.display_url} answered {method} {path} with more "
            f"than {MAX_ANSWER_BYTES // 2**20} MiB; schemacli stopped reading.",
            status=status,
            hint="No registry answer should be that large: check that the URL points at a "
            "Confluent-compatible registry, not at a proxy or a file server.",
        )

    @property
    def _secrets(self) -> tuple[str, ...]:
        """The settings' secrets plus the Basic credential as it travels (base64 of user:pass),
        which a server echoing the Authorization header would otherwise show."""
        s = self.settings
        if not s.username:
            return s.secrets
        return (*s.secrets, _Basic(s.username, s.password or "").credential)

    def _backoff(self, attempt: int, retry_after: str | None) -> None:
        s = self.settings
        with self._count_lock:
            self.retry_count += 1
        wait = self._rng.uniform(0, min(s.backoff_max, s.backoff * 2 ** (attempt - 1)))
        if retry_after:
            try:
                wait = max(wait, min(float(retry_after), s.backoff_max))
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        log.debug("retry %d in %.2f s", attempt, wait)
        self._sleep(wait)


class _Basic(requests.auth.AuthBase):
    """``Authorization: Basic base64(user:password)`` with user and password as UTF-8.

    RFC 7617 allows UTF-8 (``charset="UTF-8"``), and registries (Jetty, Go's net/http) decode it
    so; requests' own HTTPBasicAuth encodes Latin-1 and fails on anything beyond it (a €).
    """

    def __init__(self, username: str, password: str) -> None:
        credentials = f"{username}:{password}".encode()
        self.credential = base64.b64encode(credentials).decode("ascii")
        self._header = "Basic " + self.credential

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = self._header
        return request

    def __repr__(self) -> str:
        return "_Basic(***)"


class _Bearer(requests.auth.AuthBase):
    """``Authorization: Bearer <token>``; the token never appears in ``repr``."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self._token}"
        return request

    def __repr__(self) -> str:
        return "_Bearer(***)"


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


def _failure_kind(exc: requests.exceptions.RequestException) -> str:
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connect"  # the connection was never made, so the request was never sent
    if isinstance(exc, requests.exceptions.Timeout):
        return "timeout"
    if isinstance(exc, requests.exceptions.SSLError):
        return "tls"
    if isinstance(exc, requests.exceptions.ConnectionError):
        text = repr(exc)
        if "NewConnectionError" in text or "Connection refused" in text or "NameResolution" in text:
            return "connect"
        return "other"
    return "other"


def _describe(exc: requests.exceptions.RequestException) -> str:
    """The innermost reason of a transport failure ("[Errno 111] Connection refused")."""
    reason: BaseException = exc
    for _ in range(6):  # requests -> urllib3 MaxRetryError -> NewConnectionError -> OSError
        inner = getattr(reason, "reason", None)  # ssl errors have a *str* reason: not followed
        if not isinstance(inner, BaseException):
            inner = None
        if inner is None and reason.args and isinstance(reason.args[0], BaseException):
            inner = reason.args[0]
        if inner is None or inner is reason:
            break
        reason = inner
    text = str(reason)
    if "[Errno" not in text:
        return text
    text = text[text.index("[Errno") :]  # "Failed to resolve 'x' ([Errno -2] ...)": the inner part
    return text[:-1] if text.endswith(")") and text.count(")") > text.count("(") else text
