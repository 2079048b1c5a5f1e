"""The HTTP exchange with one registry, under every endpoint method of ``RegistryClient``: one
kept-alive session, authentication (Basic in UTF-8, Bearer), TLS, a deadline and a size limit
on every answer, errors with secrets redacted.

Retries: connection failures where the request never left us are retried on every call; timeouts,
429 and 5xx only on idempotent calls (GET, config PUT, lookup and compatibility POSTs) — never on
``register`` or deletes, whose second attempt could do the work twice or report a misleading 404.
Waits grow exponentially with full jitter; ``Retry-After`` is honoured (capped).
"""

from __future__ import annotations

import base64
import json
import logging
import random
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import requests
import requests.adapters
import requests.auth
import urllib3.exceptions
from urllib3.exceptions import InsecureRequestWarning

from schemacli.errors import RegistryError
from schemacli.registry.errors import (
    TransportError,
    error_from_response,
    network_error,
    redact,
)
from schemacli.registry.settings import RegistrySettings, strip_userinfo

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPT = f"{CONTENT_TYPE}, application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5"

log = logging.getLogger("schemacli.registry")
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


class RegistryTransport:
    """One registry's HTTP session (keep-alive), whose connection pool holds
    ``settings.concurrency`` connections: it may be called from that many threads at once.
    ``RegistryClient`` puts one method per endpoint on top of it."""

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
        if settings.insecure:
            # --insecure is announced once by the CLI, not by urllib3 on every call. A filter
            # set once: ``warnings.catch_warnings`` around each call is not thread-safe (the
            # pool's threads restore each other's filters and the warning leaks).
            warnings.filterwarnings("ignore", category=InsecureRequestWarning)
        # trust_env stays on: HTTPS_PROXY / NO_PROXY and REQUESTS_CA_BUNDLE work as users expect
        # (our explicit auth, when given, always wins over ~/.netrc).
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.retry_count = 0  # total retries made (for tests and --verbose)
        self._count_lock = threading.Lock()
        # per thread: the last request answered 2xx (see _reads_answer)
        self._local = threading.local()

    @property
    def _answered(self) -> str | None:
        return getattr(self._local, "answered", None)

    @_answered.setter
    def _answered(self, value: str | None) -> None:
        self._local.answered = value

    def close(self) -> None:
        self._session.close()

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
