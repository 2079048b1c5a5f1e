"""How to reach a registry: URL, credentials, TLS, timeouts, retries — one frozen object.

Built once at the edge (``RegistrySettings.build``) with precedence flag > environment > config
file > default. Secrets (password, token, user info in the URL) are kept out of ``repr``/``str``
and out of every URL we echo: ``display_url`` is the URL without user info.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from schemacli.errors import ConfigError, UsageError

DEFAULT_URL = "http://localhost:8081"
DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 3

ENV_URL = "SCHEMACLI_REGISTRY_URL"
ENV_USER = "SCHEMACLI_REGISTRY_USER"
ENV_PASSWORD = "SCHEMACLI_REGISTRY_PASSWORD"
ENV_BASIC_AUTH = "SCHEMACLI_REGISTRY_BASIC_AUTH"  # "user:password", as Confluent's clients take it
ENV_TOKEN = "SCHEMACLI_REGISTRY_TOKEN"
ENV_CA = "SCHEMACLI_REGISTRY_CA"
ENV_CERT = "SCHEMACLI_REGISTRY_CERT"
ENV_KEY = "SCHEMACLI_REGISTRY_KEY"
ENV_TIMEOUT = "SCHEMACLI_REGISTRY_TIMEOUT"
ENV_RETRIES = "SCHEMACLI_REGISTRY_RETRIES"


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` — the only form of a URL we ever print."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # not a valid URL (a bad port, an unclosed [IPv6 literal])
        return re.sub(r"(//)[^/@]*@", r"\1", url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True)
class RegistrySettings:
    """Everything the client needs. ``repr`` shows no secret (fields marked ``repr=False``)."""

    url: str = DEFAULT_URL  # never holds user info: build() moves it into username/password
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    ca_bundle: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None
    insecure: bool = False
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = 0.2  # first retry waits up to this long; doubles each attempt (full jitter)
    backoff_max: float = 5.0

    def __post_init__(self) -> None:
        if strip_userinfo(self.url) != self.url:
            raise ValueError("RegistrySettings.url must not contain user info; use build()")

    def __str__(self) -> str:
        auth = "basic" if self.username else "bearer" if self.token else "none"
        return f"registry {self.display_url} (auth: {auth})"

    @property
    def display_url(self) -> str:
        return self.url.rstrip("/")

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in any output (used to redact as a last defence)."""
        return tuple(s for s in (self.password, self.token) if s)

    @classmethod
    def build(
        cls,
        *,
        url: str | None = None,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        ca_bundle: str | Path | None = None,
        client_cert: str | Path | None = None,
        client_key: str | Path | None = None,
        insecure: bool = False,
        timeout: float | None = None,
        retries: int | None = None,
        env: Mapping[str, str] | None = None,
        file_values: Mapping[str, object] | None = None,
    ) -> RegistrySettings:
        """Combine flags > environment (``SCHEMACLI_REGISTRY_*``) > config file > defaults.

        ``file_values`` holds the registry keys of the config file (``url``, ``user``,
        ``timeout``, ``retries``, ``ca``...). Raises UsageError / ConfigError on bad values.
        """
        env = os.environ if env is None else env
        file_values = file_values or {}

        def pick(flag: object, env_key: str, file_key: str) -> object:
            if flag is not None:
                return flag
            if env.get(env_key):
                return env[env_key]
            return file_values.get(file_key)

        raw_url = str(pick(url, ENV_URL, "url") or DEFAULT_URL)
        try:
            parts = urlsplit(raw_url)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError as err:
            raise UsageError(
                f"Registry URL {strip_userinfo(raw_url)!r} is not a valid URL: {err}.",
                hint="Give it as http://host:8081 or https://host/path "
                "(an IPv6 address in brackets: http://[::1]:8081).",
            ) from err
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"Registry URL {strip_userinfo(raw_url)!r} is not an http(s) URL.",
                hint="Give it as http://host:8081 or https://host/path.",
            )
        url_user = unquote(parts.username) if parts.username else None
        url_password = unquote(parts.password) if parts.password else None

        username = user or None
        secret = password or None
        if username is None and secret is None:
            basic = env.get(ENV_BASIC_AUTH)
            if basic:
                if ":" not in basic:
                    raise ConfigError(
                        f"{ENV_BASIC_AUTH} must be 'user:password'.",
                        hint="Or set SCHEMACLI_REGISTRY_USER and SCHEMACLI_REGISTRY_PASSWORD.",
                    )
                username, secret = basic.split(":", 1)
            else:
                username = env.get(ENV_USER) or url_user or _str(file_values.get("user"))
                secret = env.get(ENV_PASSWORD) or url_password or _str(file_values.get("password"))
        elif secret is None:
            secret = env.get(ENV_PASSWORD) or url_password
        bearer = token or env.get(ENV_TOKEN) or _str(file_values.get("token")) or None
        if username and bearer:
            raise UsageError(
                "Both basic auth (user) and a bearer token are set; the registry takes one.",
                hint="Drop --token / SCHEMACLI_REGISTRY_TOKEN or the user and password.",
            )
        if secret and not username:
            raise UsageError(
                "A registry password was given without a user.",
                hint="Set --user or SCHEMACLI_REGISTRY_USER as well.",
            )

        cert = pick(client_cert, ENV_CERT, "cert")
        key = pick(client_key, ENV_KEY, "key")
        if key and not cert:
            raise UsageError(
                "A client key was given without a client certificate.",
                hint="Give --cert (SCHEMACLI_REGISTRY_CERT) as well.",
            )
        ca = pick(ca_bundle, ENV_CA, "ca")
        for label, value in (("CA bundle", ca), ("client certificate", cert), ("client key", key)):
            if value and not Path(str(value)).is_file():
                raise UsageError(
                    f"The registry {label} {value} does not exist or is not a file.",
                    hint="Give the path of a PEM file.",
                )
        return cls(
            url=strip_userinfo(raw_url).rstrip("/"),
            username=username,
            password=secret,
            token=bearer,
            ca_bundle=Path(str(ca)) if ca else None,
            client_cert=Path(str(cert)) if cert else None,
            client_key=Path(str(key)) if key else None,
            insecure=bool(insecure),
            timeout=_number(pick(timeout, ENV_TIMEOUT, "timeout"), DEFAULT_TIMEOUT, "timeout"),
            retries=int(_number(pick(retries, ENV_RETRIES, "retries"), DEFAULT_RETRIES, "retries")),
        )


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _number(value: object, default: float, name: str) -> float:
    if value is None or value == "":
        return default
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UsageError(
            f"Registry {name} must be a number, got {value!r}.", hint=f"For example {default:g}."
        ) from None
    if number < 0:
        raise UsageError(f"Registry {name} must not be negative, got {value!r}.")
    return number
