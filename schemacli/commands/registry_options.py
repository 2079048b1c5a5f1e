"""The options every registry-backed command takes, declared once, and the client they build.

Each flag is an ``Annotated`` alias. A command decorated with :func:`registry_flags` gets all
of them, packed into one ``flags: RegistryFlags`` parameter, and calls ``connect(flags)``,
which takes the settings ``load_settings(registry=flags)`` builds in one pass (flag >
SCHEMACLI_REGISTRY_* > the ``[registry]`` table of the config file > http://localhost:8081)
and hands back a ``Connection`` whose client the core
receives.

The modules whose commands take these aliases do without ``from __future__ import annotations``:
typer would otherwise ``eval`` each option's annotation string when it builds the CLI, which
costs ``schemacli --help`` ~10 ms over the eleven options of nine commands.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click
import typer

from schemacli import redact
from schemacli.registry.settings import (  # stdlib only: cheap at start-up, unlike the client
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_URL,
    ENV_BASIC_AUTH,
    MAX_CONCURRENCY,
    MAX_RETRIES,
    MAX_TIMEOUT,
    SETTINGS,
    URL_FLAGS,
)
from schemacli.registry.settings import (
    RegistryFlags as RegistryFlags,  # re-exported: the type of every registry command's flags
)

if TYPE_CHECKING:  # requests costs ~90 ms to import: only when a registry command runs
    from schemacli.config import Settings  # ~30 ms (contracts.naming): only when one runs
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings

PANEL = "Registry"

# Each flag's name and environment variable are the registry settings' (registry.settings).
URL, USER, PASSWORD, TOKEN = (SETTINGS[k] for k in ("url", "user", "password", "token"))
CA, CERT, KEY, TIMEOUT, RETRIES = (SETTINGS[k] for k in ("ca", "cert", "key", "timeout", "retries"))
CONCURRENCY = SETTINGS["concurrency"]

RegistryUrl = Annotated[
    str | None,
    typer.Option(
        *URL_FLAGS,
        metavar="URL",
        rich_help_panel=PANEL,
        help=f"Schema registry base URL [env {URL.env}; default {DEFAULT_URL}]. For Apicurio: "
        "http://host:8080/apis/ccompat/v7.",
    ),
]
# `check` and `gate` stay offline unless --registry is given: there the flag switches the mode.
RegistryMode = Annotated[
    str | None,
    typer.Option(
        URL.flag,
        metavar="URL",
        help="Check against the subject's history in this schema registry instead of the local "
        "store (credentials, TLS, time-out: the registry options below, else "
        "SCHEMACLI_REGISTRY_* or the config's [registry] table).",
    ),
]
User = Annotated[
    str | None,
    typer.Option(
        USER.flag,
        rich_help_panel=PANEL,
        help=f"Basic-auth user [env {USER.env}, or {ENV_BASIC_AUTH}=user:password].",
    ),
]
Password = Annotated[
    str | None,
    typer.Option(
        PASSWORD.flag,
        rich_help_panel=PANEL,
        show_default=False,
        help=f"Basic-auth password; prefer env {PASSWORD.env} (flags show up in shell history "
        "and ps).",
    ),
]
Token = Annotated[
    str | None,
    typer.Option(
        TOKEN.flag,
        rich_help_panel=PANEL,
        show_default=False,
        help=f"Bearer token; prefer env {TOKEN.env}.",
    ),
]
Ca = Annotated[
    Path | None,
    typer.Option(
        CA.flag,
        rich_help_panel=PANEL,
        help=f"CA bundle (PEM) to verify the registry's TLS certificate [env {CA.env}].",
    ),
]
Cert = Annotated[
    Path | None,
    typer.Option(
        CERT.flag,
        rich_help_panel=PANEL,
        help=f"Client certificate (PEM) for mutual TLS [env {CERT.env}].",
    ),
]
Key = Annotated[
    Path | None,
    typer.Option(
        KEY.flag,
        rich_help_panel=PANEL,
        help=f"Client certificate key (PEM) [env {KEY.env}].",
    ),
]
Insecure = Annotated[
    bool,
    typer.Option(
        "--insecure",
        rich_help_panel=PANEL,
        help="Do not verify the registry's TLS certificate (never in production).",
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        TIMEOUT.flag,
        metavar="SECONDS",
        rich_help_panel=PANEL,
        help=f"Seconds to wait for an answer, more than 0 and at most {MAX_TIMEOUT:g} "
        f"[env {TIMEOUT.env}; default {DEFAULT_TIMEOUT:g}].",
    ),
]
Retries = Annotated[
    int | None,
    typer.Option(
        RETRIES.flag,
        rich_help_panel=PANEL,
        help=f"Retries (0 to {MAX_RETRIES}) for idempotent calls on connection errors, 429 and "
        f"5xx [env {RETRIES.env}; default {DEFAULT_RETRIES}].",
    ),
]
Concurrency = Annotated[
    int | None,
    typer.Option(
        CONCURRENCY.flag,
        metavar="N",
        rich_help_panel=PANEL,
        help=f"Requests in flight at once (1 to {MAX_CONCURRENCY}) where a command asks about "
        f"many subjects [env {CONCURRENCY.env}; default {DEFAULT_CONCURRENCY}].",
    ),
]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        rich_help_panel=PANEL,
        help="Log every HTTP call (method, URL, status, time) to stderr; never credentials.",
    ),
]

# RegistryFlags' fields, in order, as a command's parameters: (name, option, default)
_FLAG_PARAMETERS: tuple[tuple[str, Any, Any], ...] = (
    ("user", User, None),
    ("password", Password, None),
    ("token", Token, None),
    ("ca", Ca, None),
    ("cert", Cert, None),
    ("key", Key, None),
    ("insecure", Insecure, False),
    ("timeout", Timeout, None),
    ("retries", Retries, None),
    ("concurrency", Concurrency, None),
    ("verbose", Verbose, False),
)
Command = TypeVar("Command", bound=Callable[..., Any])
NO_FLAGS = RegistryFlags()  # a command called with none (typer always passes them)


def registry_flags(url: Any = RegistryUrl) -> Callable[[Command], Command]:
    """Give a command the registry options, declared here once: they join its signature after
    its own parameters (typer reads the signature), and the command receives them as one
    ``flags: RegistryFlags`` parameter. ``url`` is the --registry option: :data:`RegistryUrl`,
    or :data:`RegistryMode` where the flag takes ``check`` and ``gate`` online."""
    added = (("registry", url, None), *_FLAG_PARAMETERS)

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)  # a module may defer annotations
        own = [p for p in signature.parameters.values() if p.name != "flags"]
        if len(own) == len(signature.parameters):
            raise TypeError(f"{command.__name__} takes no `flags` parameter")
        options = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=a)
            for name, a, default in added
        ]

        @functools.wraps(command)
        def with_flags(*args: Any, **kwargs: Any) -> Any:
            values = [kwargs.pop(name) for name, _, _ in added]
            return command(*args, flags=RegistryFlags(*values), **kwargs)

        with_flags.__signature__ = signature.replace(parameters=[*own, *options])  # type: ignore[attr-defined]
        with_flags.__annotations__ = {
            **{p.name: p.annotation for p in own if p.annotation is not p.empty},
            **{name: a for name, a, _ in added},
            "return": signature.return_annotation,
        }
        return with_flags  # type: ignore[return-value]

    return decorate


@dataclass
class Connection:
    """What a registry command gets: the settings (store, levels, the registry's) and a lazily
    built client.

    A context manager: leaving it closes the client, if one was built.
    """

    registry: RegistrySettings
    settings: Settings
    _client: RegistryClient | None = field(default=None, repr=False)

    @property
    def client(self) -> RegistryClient:
        if self._client is None:
            from schemacli.registry.client import RegistryClient

            self._client = RegistryClient(self.registry)
        return self._client

    @property
    def url(self) -> str:
        return self.registry.display_url

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def connect(
    flags: RegistryFlags, *, store: Path | None = None, settings: Settings | None = None
) -> Connection:
    """The command's connection. Raises UsageError/ConfigError.

    ``settings`` is the already loaded config (``schemacli.config.Settings``), loaded with these
    flags (``load_settings(registry=flags)``), whose ``registry`` is the built registry
    settings; else it is loaded here (with ``store`` as the --store flag).
    """
    if flags.verbose:
        _log_to_stderr()
    if settings is None:
        from schemacli.config import load_settings

        settings = load_settings(
            flags={"store": store} if store is not None else None, registry=flags
        )
    registry = settings.registry
    if registry is None:
        raise ValueError("connect() needs settings loaded with the registry flags")
    if registry.insecure:
        click.echo(
            f"warning: TLS verification is OFF for {registry.display_url} (--insecure)", err=True
        )
    return Connection(registry=registry, settings=settings)


def _log_to_stderr() -> None:
    logger = logging.getLogger("schemacli.registry")
    handler = next((h for h in logger.handlers if getattr(h, "_schemacli", False)), None)
    if handler is None:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(redact.formatter("registry: %(message)s"))
        handler._schemacli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    else:
        handler.setStream(sys.stderr)  # type: ignore[attr-defined]  # stderr may be replaced
    logger.setLevel(logging.DEBUG)
