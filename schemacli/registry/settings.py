"""How to reach a registry: URL, credentials, TLS, timeouts, retries — one frozen object.

Built once at the edge (``RegistrySettings.build``) with precedence flag > environment > config
file > default, the one rule of ``schemacli.origin.resolve``; each setting's key, environment
variable and flag are named once, in :data:`SETTINGS` (the registry options read them there).
Secrets (password, token, user info in the URL) are kept out of ``repr``/``str`` and out of
every URL we echo: ``display_url`` is the URL without user info. ``build`` hands every secret it
is given, from every source and before it checks anything, to ``schemacli.redact``, which masks
them in whatever is printed afterwards (a malformed URL's error included).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from schemacli import redact
from schemacli.errors import ConfigError, Location, SchemacliError, UsageError
from schemacli.origin import Kind, Origin, Setting, Sources, resolve
from schemacli.tomlfile import REGISTRY, Table, TomlFile, dotted, settings_path
from schemacli.tomlfile import read as read_settings_file

DEFAULT_URL = "http://localhost:8081"
DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 3
# requests in flight at once where a command asks about many subjects: enough to hide a far
# registry's round trip, few enough not to crowd a registry others share
DEFAULT_CONCURRENCY = 8

# Each registry setting once: its key in the [registry] table (and RegistryFlags' field), its
# environment variable, its flag.
SETTINGS: dict[str, Setting] = {
    setting.key: setting
    for setting in (
        Setting("url", "SCHEMACLI_REGISTRY_URL", "--registry"),
        Setting("user", "SCHEMACLI_REGISTRY_USER", "--user"),
        Setting("password", "SCHEMACLI_REGISTRY_PASSWORD", "--password"),
        Setting("token", "SCHEMACLI_REGISTRY_TOKEN", "--token"),
        Setting("ca", "SCHEMACLI_REGISTRY_CA", "--ca"),
        Setting("cert", "SCHEMACLI_REGISTRY_CERT", "--cert"),
        Setting("key", "SCHEMACLI_REGISTRY_KEY", "--key"),
        Setting("timeout", "SCHEMACLI_REGISTRY_TIMEOUT", "--timeout"),
        Setting("retries", "SCHEMACLI_REGISTRY_RETRIES", "--retries"),
        Setting("concurrency", "SCHEMACLI_REGISTRY_CONCURRENCY", "--concurrency"),
    )
}
ENV_URL = SETTINGS["url"].env
ENV_USER = SETTINGS["user"].env
ENV_PASSWORD = SETTINGS["password"].env
ENV_TOKEN = SETTINGS["token"].env
ENV_BASIC_AUTH = "SCHEMACLI_REGISTRY_BASIC_AUTH"  # "user:password", as Confluent's clients take it
SECRET_FLAGS = (SETTINGS["password"].flag, SETTINGS["token"].flag)  # values never echoed
URL_FLAGS = (SETTINGS["url"].flag, "-r")  # the URL flag and its short form


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` — the only form of a URL we ever print."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # not a valid URL (a bad port, an unclosed [IPv6 literal], a raw '/'
        return redact.mask_userinfo(url)  # in the password): mask all up to the last '@'
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
    concurrency: int = DEFAULT_CONCURRENCY
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
        concurrency: int | None = None,
        env: Mapping[str, str] | None = None,
        file_values: Mapping[str, object] | None = None,
        file_source: Path | None = None,
    ) -> RegistrySettings:
        """Combine flags > environment (``SCHEMACLI_REGISTRY_*``) > config file > defaults.

        ``file_values`` holds the registry keys of the config file (``url``, ``user``,
        ``timeout``, ``retries``, ``ca``...): its [registry] table, a ``tomlfile.Table`` that
        knows each key's line:col, or a plain mapping with ``file_source`` the file it came
        from (read again only to find the lines). Raises UsageError (a flag) or ConfigError
        (environment, config file) naming where the bad value came from; never echoes a secret.
        """
        env = os.environ if env is None else env
        file_values = file_values or {}
        file = None if isinstance(file_values, Table) else _read_quietly(file_source)
        _remember_secrets(url, user, password, token, env, file_values)
        for key, value in file_values.items():
            if key in _FILE_STRINGS and not isinstance(value, str):
                # A secret's value is never echoed, so no key's is: its TOML type says enough.
                raise _error(
                    _file_origin(key, file_values, file),
                    f"must be a string, not {_toml_type(value)}",
                    f'write it in quotes, e.g. {key} = "{_FILE_STRINGS[key]}"',
                )

        sources = Sources(
            flags={
                "url": url,
                "token": token or None,
                "ca": ca_bundle,
                "cert": client_cert,
                "key": client_key,
                "timeout": timeout,
                "retries": retries,
                "concurrency": concurrency,
            },
            env=env,
            file=file_values,
            file_origin=lambda key: _file_origin(key, file_values, file),
        )

        def pick(key: str) -> tuple[object, Origin]:
            return resolve(SETTINGS[key], sources, None)

        # An explicitly empty URL is a mistake (an unset CI variable), not a wish for the default.
        if url is None and env.get(ENV_URL) == "":
            raw_url, url_source = "", Origin.env(ENV_URL)
        else:
            picked, url_source = resolve(SETTINGS["url"], sources, DEFAULT_URL)
            raw_url = str(picked)
        parts = _check_url(raw_url, url_source)
        url_user = unquote(parts.username) if parts.username else None
        url_password = unquote(parts.password) if parts.password else None

        username = user or None
        secret = password or None
        user_source = Origin.flag(SETTINGS["user"].flag) if username else None
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
                if env.get(ENV_USER):
                    user_source = Origin.env(ENV_USER)
                elif not url_user and file_values.get("user"):
                    user_source = _file_origin("user", file_values, file)
        elif secret is None:
            secret = env.get(ENV_PASSWORD) or url_password
        bearer_value, token_source = pick("token")
        bearer = _str(bearer_value) or None
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
        if username and ":" in username and user_source is not None:
            # RFC 7617: the user-id ends at the first colon, so the registry would see another user.
            # Not echoed: "alice:hunter2" is a password typed where the user goes.
            raise _error(
                user_source,
                "the user contains ':', which basic auth cannot carry",
                "give the user without ':' and the password apart (the password may contain one)",
            )
        if bearer:
            _check_token(bearer, token_source)
        redact.remember_basic(username, secret)  # the credential as it travels, base64

        cert = pick("cert")[0]
        key_file = pick("key")[0]
        if key_file and not cert:
            raise UsageError(
                "A client key was given without a client certificate.",
                hint="Give --cert (SCHEMACLI_REGISTRY_CERT) as well.",
            )
        ca = pick("ca")[0]
        for label, value in (
            ("CA bundle", ca),
            ("client certificate", cert),
            ("client key", key_file),
        ):
            if value and not _is_file(Path(str(value))):
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
            client_key=Path(str(key_file)) if key_file else None,
            insecure=bool(insecure),
            timeout=_timeout(*pick("timeout")),
            retries=_retries(*pick("retries")),
            concurrency=_concurrency(*pick("concurrency")),
        )

    def credentials_env(self) -> dict[str, str]:
        """The SCHEMACLI_REGISTRY_* variables that carry these credentials to another process
        (the converter job), which builds the same settings from them: secrets stay off its
        command line."""
        values = {ENV_USER: self.username, ENV_PASSWORD: self.password, ENV_TOKEN: self.token}
        return {name: value for name, value in values.items() if value}

    def connection_env(self) -> dict[str, str]:
        """:meth:`credentials_env` plus the TLS files and the time-out and retries when not the
        defaults: what another process needs to reach the registry as this one does (the URL
        travels separately; --insecure does not travel: the job verifies TLS)."""
        values = {
            "ca": self.ca_bundle,
            "cert": self.client_cert,
            "key": self.client_key,
            "timeout": self.timeout if self.timeout != DEFAULT_TIMEOUT else None,
            "retries": self.retries if self.retries != DEFAULT_RETRIES else None,
            "concurrency": (self.concurrency if self.concurrency != DEFAULT_CONCURRENCY else None),
        }
        extra = {SETTINGS[k].env: str(value) for k, value in values.items() if value is not None}
        return {**self.credentials_env(), **extra}


@dataclass(frozen=True)
class RegistryFlags:
    """What the user said about the registry on a command line, before any default: the one
    input every registry-backed command (and the converter job) turns into settings."""

    url: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    insecure: bool = False
    timeout: float | None = None
    retries: int | None = None
    concurrency: int | None = None
    verbose: bool = False  # log every HTTP call (the CLI's concern; no setting)

    def resolve(
        self,
        file_values: Mapping[str, object] | None = None,
        file_source: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RegistrySettings:
        """The registry settings: these flags over ``env`` (default: os.environ) over the config
        file's [registry] table over the defaults. Raises UsageError (a flag) or ConfigError
        (environment, config file)."""
        return RegistrySettings.build(
            url=self.url,
            user=self.user,
            password=self.password,
            token=self.token,
            ca_bundle=self.ca,
            client_cert=self.cert,
            client_key=self.key,
            insecure=self.insecure,
            timeout=self.timeout,
            retries=self.retries,
            concurrency=self.concurrency,
            env=env,
            file_values=file_values,
            file_source=file_source,
        )


MAX_TIMEOUT = 3600.0  # an hour per request; beyond ~1e9 s the socket layer overflows
MAX_RETRIES = 100
MAX_CONCURRENCY = 64

# Config keys whose value must be a TOML string, with an example for the hint.
_FILE_STRINGS = {
    "url": "http://localhost:8081",
    "user": "ci",
    "password": "...",
    "token": "...",
    "ca": "ca.pem",
    "cert": "client.pem",
    "key": "client-key.pem",
}


def _file_origin(
    key: str, file_values: Mapping[str, object], file: TomlFile | Path | None
) -> Origin:
    """The config file's registry ``key``, at its line:col when the file is known."""
    if isinstance(file_values, Table):
        location = file_values.location(key)
    elif isinstance(file, TomlFile):
        location = file.settings_location(REGISTRY, key)
    else:
        location = Location(source=str(file)) if file is not None else None
    return Origin.file(f"{REGISTRY}.{key}", location)


def _read_quietly(path: Path | None) -> TomlFile | Path | None:
    """``path`` read only to find lines in it; the bare path when it cannot be read."""
    if path is None:
        return None
    try:
        return read_settings_file(path)
    except ConfigError:
        return path


def _example(origin: Origin, value: str, toml: str | None = None) -> str:
    """How to give ``value`` where ``origin`` gave the bad one."""
    if origin.kind in (Kind.FLAG, Kind.DEFAULT):
        return f"{origin.name} {value}"
    if origin.kind is Kind.ENV:
        return f"{origin.name}={value}"
    where = origin.location.source if origin.location and origin.location.source else ""
    table = dotted(settings_path(Path(where), REGISTRY))
    return f"{origin.name.removeprefix(REGISTRY + '.')} = {toml or value} in the [{table}] table"


def _error(origin: Origin, problem: str, hint: str) -> SchemacliError:
    """The error for a bad registry setting: sentences, and the way out of an environment
    variable (unset it) said too."""
    hint = hint[:1].upper() + hint[1:]
    unset = f", or unset {origin.name}" if origin.kind is Kind.ENV else ""
    return origin.error(f"{problem}.", f"{hint}{unset}.")


def _toml_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def _remember_secrets(
    url: str | None,
    user: str | None,
    password: str | None,
    token: str | None,
    env: Mapping[str, str],
    file_values: Mapping[str, object],
) -> None:
    """Hand every secret given to this process, from every source (used or overridden), to the
    one redaction, before anything is checked: an error about any value cannot show one."""
    file_url, file_password, file_token = (file_values.get(k) for k in ("url", "password", "token"))
    for raw_url in (url, env.get(ENV_URL), file_url):
        if isinstance(raw_url, str):
            redact.remember_url(raw_url)
    basic = env.get(ENV_BASIC_AUTH) or ""
    redact.remember(
        password,
        token,
        env.get(ENV_PASSWORD),
        env.get(ENV_TOKEN),
        basic.partition(":")[2] or basic,  # "user:password"; all of it when it has no colon
        file_password if isinstance(file_password, str) else None,
        file_token if isinstance(file_token, str) else None,
    )
    for name in (user, env.get(ENV_USER), file_values.get("user")):
        if isinstance(name, str) and ":" in name:  # "alice:hunter2" typed as the user
            redact.remember(name, name.partition(":")[2])


def _check_url(raw: str, source: Origin) -> SplitResult:
    """The URL's parts, after checking its form: http(s), a valid host, an optional valid port,
    no query or fragment. Malformed is an input error (exit 2), not a network one (exit 3)."""
    shown = repr(redact.redact(strip_userinfo(raw)))  # masks what does not parse as user info
    form = "give it as http://host:8081 or https://host/path (IPv6 in brackets: http://[::1]:8081)"
    if not raw.strip():
        example = _example(source, DEFAULT_URL, repr(DEFAULT_URL))
        raise _error(source, "the registry URL is empty", f"give one, e.g. {example}")
    try:
        parts = urlsplit(raw)
        port = parts.port  # raises ValueError on a bad port
    except ValueError as err:
        reason = _host_part_error(raw) if "@" in raw else str(err)
        if reason is None:
            # The parser's reason would quote a piece of the password ("Port could not be cast
            # to integer value as 'hunt'" for http://alice:hunt/er2@host): say what to do.
            raise _error(
                source,
                f"{shown} is not a valid URL",
                "percent-encode '/', '?', '#', '@' and ':' in its user and password (e.g. %2F "
                "for '/'), or give them apart (user, password); " + form,
            ) from None
        raise _error(
            source, f"{shown} is not a valid URL ({redact.redact(reason)})", form
        ) from None
    if parts.scheme not in ("http", "https"):
        lacks = "" if "://" in raw else " (it has no http:// or https:// in front)"
        raise _error(source, f"{shown} is not an http(s) URL{lacks}", form)
    host = parts.hostname
    if not host:
        raise _error(source, f"{shown} has no host", form)
    if not _valid_host(host):
        raise _error(
            source,
            f"{shown} has an invalid host {redact.redact(host)!r}",
            "a host is a name (letters, digits, '-', '.') or an IP address; " + form,
        )
    if port == 0:
        raise _error(source, f"{shown} has port 0", "give a port from 1 to 65535")
    if parts.query or parts.fragment or raw.rstrip().endswith(("?", "#")):
        raise _error(
            source,
            f"{shown} has a query or fragment",
            "give the registry's base URL only; schemacli appends the API paths",
        )
    return parts


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; False, not an OSError, for a name too long or
    otherwise impossible (``Path.is_file`` raises on ENAMETOOLONG)."""
    try:
        return path.is_file()
    except (OSError, ValueError):  # ValueError: an embedded NUL
        return False


def _host_part_error(raw: str) -> str | None:
    """Why the URL after its last '@' (its scheme kept) does not parse, or None when it does:
    then what the parser tripped on is in the user info, whose pieces are never echoed."""
    head, _, tail = raw.rpartition("@")
    lead = re.match(r"\s*[A-Za-z][A-Za-z0-9+.-]*://", head)
    try:
        urlsplit((lead.group() if lead else "") + tail).port  # noqa: B018  # parses the port
    except ValueError as err:
        return str(err)
    return None


_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?")


def _valid_host(host: str) -> bool:
    if ":" in host:  # urlsplit only lets a colon through inside [brackets]: an IPv6 literal
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return False
        return True
    try:
        ascii_host = host.encode("idna").decode("ascii")  # checks label lengths, too
    except UnicodeError:
        return False
    labels = ascii_host.removesuffix(".").split(".")
    return all(_LABEL.fullmatch(label) for label in labels)


def _check_token(token: str, source: Origin) -> None:
    # An HTTP header carries ASCII only, and RFC 6750 bearer tokens are printable ASCII; the
    # token itself is never echoed, not even the offending character.
    if all("!" <= ch <= "~" for ch in token):
        return
    raise _error(
        source,
        "the bearer token contains a character an HTTP header cannot carry "
        "(non-ASCII, a space or a control character)",
        "copy the token again: bearer tokens are printable ASCII (RFC 6750); look for a "
        "stray newline or a typographic quote or dash",
    )


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _timeout(value: object, source: Origin) -> float:
    if source.kind is Kind.DEFAULT:
        return DEFAULT_TIMEOUT
    example = _example(source, "10")
    shown = value if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else value
    if isinstance(value, str) and source.kind is not Kind.FILE:
        try:
            value = float(value)
        except ValueError:
            raise _error(
                source, f"{value!r} is not a number of seconds", f"give one, e.g. {example}"
            ) from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _error(
            source,
            f"the timeout must be a number of seconds, not {_toml_type(value)}",
            f"give one, e.g. {example}",
        )
    if not 0 < value <= MAX_TIMEOUT:  # also false for nan; inf and huge ints are too big
        raise _error(
            source,
            f"{shown} is not a valid timeout: it must be more than 0 and at most "
            f"{MAX_TIMEOUT:g} seconds",
            f"give e.g. {example} (the default is {DEFAULT_TIMEOUT:g})",
        )
    return float(value)


def _retries(value: object, source: Origin) -> int:
    if source.kind is Kind.DEFAULT:
        return DEFAULT_RETRIES
    example = _example(source, "3")
    if isinstance(value, str) and source.kind is not Kind.FILE:
        if not re.fullmatch(r"-?[0-9]+", value.strip()):
            raise _error(
                source, f"{value!r} is not a whole number of retries", f"give one, e.g. {example}"
            )
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(
            source,
            f"retries must be a whole number, not {_toml_type(value)}",
            f"give one, e.g. {example}",
        )
    if not 0 <= value <= MAX_RETRIES:
        raise _error(
            source,
            f"{value} retries is not between 0 and {MAX_RETRIES}",
            f"give e.g. {example} (the default is {DEFAULT_RETRIES}; 0 turns retries off)",
        )
    return value


def _concurrency(value: object, source: Origin) -> int:
    if source.kind is Kind.DEFAULT:
        return DEFAULT_CONCURRENCY
    example = _example(source, "8")
    if isinstance(value, str) and source.kind is not Kind.FILE:
        if not re.fullmatch(r"-?[0-9]+", value.strip()):
            raise _error(
                source, f"{value!r} is not a whole number of requests", f"give one, e.g. {example}"
            )
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(
            source,
            f"the concurrency must be a whole number, not {_toml_type(value)}",
            f"give one, e.g. {example}",
        )
    if not 1 <= value <= MAX_CONCURRENCY:
        raise _error(
            source,
            f"{value} requests at once is not between 1 and {MAX_CONCURRENCY}",
            f"give e.g. {example} (the default is {DEFAULT_CONCURRENCY}; 1 asks one at a time)",
        )
    return value
