"""The options every registry-backed command takes, declared once, and the client they build.

``@with_registry`` adds --registry, --user, --password, --token, --ca, --cert, --key, --insecure,
--timeout, --retries and --verbose to a command and hands it a ``Connection`` instead; the
command's own parameters stay a short list. Precedence: flag > SCHEMACLI_REGISTRY_* > the
``[registry]`` table of the config file > http://localhost:8081.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click
import typer

from schemacli.output import OutputFormat
from schemacli.registry.settings import (  # stdlib only: cheap at start-up, unlike the client
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    MAX_RETRIES,
    MAX_TIMEOUT,
)

if TYPE_CHECKING:  # requests costs ~90 ms to import: only when a registry command runs
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings

PANEL = "Registry"

_OPTIONS: list[inspect.Parameter] = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    for name, default, annotation in [
        (
            "registry",
            None,
            Annotated[
                str | None,
                typer.Option(
                    "--registry",
                    "-r",
                    metavar="URL",
                    rich_help_panel=PANEL,
                    help="Schema registry base URL [env SCHEMACLI_REGISTRY_URL; default "
                    "http://localhost:8081]. For Apicurio: http://host:8080/apis/ccompat/v7.",
                ),
            ],
        ),
        (
            "user",
            None,
            Annotated[
                str | None,
                typer.Option(
                    "--user",
                    rich_help_panel=PANEL,
                    help="Basic-auth user [env SCHEMACLI_REGISTRY_USER, or "
                    "SCHEMACLI_REGISTRY_BASIC_AUTH=user:password].",
                ),
            ],
        ),
        (
            "password",
            None,
            Annotated[
                str | None,
                typer.Option(
                    "--password",
                    rich_help_panel=PANEL,
                    show_default=False,
                    help="Basic-auth password; prefer env SCHEMACLI_REGISTRY_PASSWORD "
                    "(flags show up in shell history and ps).",
                ),
            ],
        ),
        (
            "token",
            None,
            Annotated[
                str | None,
                typer.Option(
                    "--token",
                    rich_help_panel=PANEL,
                    show_default=False,
                    help="Bearer token; prefer env SCHEMACLI_REGISTRY_TOKEN.",
                ),
            ],
        ),
        (
            "ca",
            None,
            Annotated[
                Path | None,
                typer.Option(
                    "--ca",
                    rich_help_panel=PANEL,
                    help="CA bundle (PEM) to verify the registry's TLS certificate "
                    "[env SCHEMACLI_REGISTRY_CA].",
                ),
            ],
        ),
        (
            "cert",
            None,
            Annotated[
                Path | None,
                typer.Option(
                    "--cert",
                    rich_help_panel=PANEL,
                    help="Client certificate (PEM) for mutual TLS [env SCHEMACLI_REGISTRY_CERT].",
                ),
            ],
        ),
        (
            "key",
            None,
            Annotated[
                Path | None,
                typer.Option(
                    "--key",
                    rich_help_panel=PANEL,
                    help="Client certificate key (PEM) [env SCHEMACLI_REGISTRY_KEY].",
                ),
            ],
        ),
        (
            "insecure",
            False,
            Annotated[
                bool,
                typer.Option(
                    "--insecure",
                    rich_help_panel=PANEL,
                    help="Do not verify the registry's TLS certificate (never in production).",
                ),
            ],
        ),
        (
            "timeout",
            None,
            Annotated[
                float | None,
                typer.Option(
                    "--timeout",
                    metavar="SECONDS",
                    rich_help_panel=PANEL,
                    help=f"Seconds to wait for an answer, more than 0 and at most "
                    f"{MAX_TIMEOUT:g} [env SCHEMACLI_REGISTRY_TIMEOUT; "
                    f"default {DEFAULT_TIMEOUT:g}].",
                ),
            ],
        ),
        (
            "retries",
            None,
            Annotated[
                int | None,
                typer.Option(
                    "--retries",
                    rich_help_panel=PANEL,
                    help=f"Retries (0 to {MAX_RETRIES}) for idempotent calls on connection "
                    f"errors, 429 and 5xx [env SCHEMACLI_REGISTRY_RETRIES; "
                    f"default {DEFAULT_RETRIES}].",
                ),
            ],
        ),
        (
            "verbose",
            False,
            Annotated[
                bool,
                typer.Option(
                    "--verbose",
                    "-v",
                    rich_help_panel=PANEL,
                    help="Log every HTTP call (method, URL, status, time) to stderr; "
                    "never credentials.",
                ),
            ],
        ),
    ]
]
_NAMES = tuple(p.name for p in _OPTIONS)


@dataclass
class Connection:
    """What a registry command gets: the settings (store, levels) and a lazily built client."""

    registry: RegistrySettings
    store_settings: Any  # schemacli.config.Settings
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


F = TypeVar("F", bound=Callable[..., Any])


def with_registry(func: F) -> F:
    """Give ``func`` the registry options; it receives ``conn: Connection`` instead of them."""
    signature = inspect.signature(func, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "conn"]
    params = own + _OPTIONS
    params.sort(key=lambda p: p.kind)  # positional-or-keyword before keyword-only

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        options = {name: kwargs.pop(name) for name in _NAMES}
        conn = connect(**options, store=kwargs.get("store"))
        try:
            return func(conn=conn, **kwargs)
        finally:
            if conn._client is not None:
                conn._client.close()

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must see the new signature, not the wrapped one
    return wrapper  # type: ignore[return-value]


def connect(*, verbose: bool = False, store: Path | None = None, **options: Any) -> Connection:
    """Build the settings once (flag > env > file > default). Raises UsageError/ConfigError."""
    from schemacli.config import load_settings
    from schemacli.registry.settings import RegistrySettings

    if verbose:
        _log_to_stderr()
    settings = load_settings(flags={"store": store} if store is not None else None)
    registry = RegistrySettings.build(
        url=options.get("registry"),
        user=options.get("user"),
        password=options.get("password"),
        token=options.get("token"),
        ca_bundle=options.get("ca"),
        client_cert=options.get("cert"),
        client_key=options.get("key"),
        insecure=bool(options.get("insecure")),
        timeout=options.get("timeout"),
        retries=options.get("retries"),
        file_values=settings.registry,
        file_source=settings.config_file,
    )
    if registry.insecure:
        click.echo(
            f"warning: TLS verification is OFF for {registry.display_url} (--insecure)", err=True
        )
    return Connection(registry=registry, store_settings=settings)


def _log_to_stderr() -> None:
    logger = logging.getLogger("schemacli.registry")
    handler = next((h for h in logger.handlers if getattr(h, "_schemacli", False)), None)
    if handler is None:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("registry: %(message)s"))
        handler._schemacli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    else:
        handler.setStream(sys.stderr)  # type: ignore[attr-defined]  # stderr may be replaced
    logger.setLevel(logging.DEBUG)


T = TypeVar("T")


def progress(items: Iterable[T], total: int, label: str, *, threshold: int = 5) -> Iterator[T]:
    """Yield ``items``, showing a progress bar on stderr when there are ``threshold`` or more.

    Results go to stdout; the bar goes to stderr, and is drawn only on a terminal.
    """
    if total < threshold:
        yield from items
        return
    with click.progressbar(items, length=total, label=label, file=sys.stderr, show_pos=True) as bar:
        yield from bar


def emit_json(data: Any) -> None:
    """Write ``data`` (dataclasses and tuples allowed) as JSON to stdout."""
    click.echo(json.dumps(data, indent=2, default=_default, ensure_ascii=False))


def _default(value: Any) -> Any:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def is_json(output: OutputFormat | str | None) -> bool:
    """JSON for machines; every other format (text, and junit/github meant for check/gate)
    prints the text form."""
    return output is not None and OutputFormat(output) is OutputFormat.json
