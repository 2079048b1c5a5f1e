"""The options every store-backed command takes, declared once, and what they open.

``--store``, ``--against``, ``--no-cache`` and ``--readers-only`` as ``Annotated`` aliases; and
the plumbing from the flags to the settings (:func:`settings_from_flags`) and from the
settings to the core's objects: the working tree of the store named as the user sees it
(:func:`store_tree`), the declared readers (:func:`declared_readers`), the verdict cache
(:func:`verdict_cache`). Commands import these from here, never from each other.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from schemacli.commands.options import count
from schemacli.config import MAX_JOBS, Settings, load_settings
from schemacli.contracts.evolution.cachedir import default_cache_dir
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.readers.declared import DeclaredReader, load_readers
from schemacli.contracts.store.tree import FileTree
from schemacli.registry.settings import RegistryFlags

Store = Annotated[
    Path | None,
    typer.Option("--store", help="The store directory (default: from config, else ./schemas)."),
]
Against = Annotated[
    str | None,
    typer.Option(
        "--against",
        metavar="git:REF",
        help="Use the store as it was at a git ref (e.g. git:origin/main) instead of the "
        "working tree.",
    ),
]
ReadersOnly = Annotated[
    bool,
    typer.Option(
        "--readers-only",
        help="Judge only against the readers consumers declared in the store (readers/), "
        "not against earlier versions: the level READERS for every subject.",
    ),
]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Neither read nor write the verdict cache (cache-dir in the config, "
        "SCHEMACLI_CACHE_DIR, else the user cache directory).",
    ),
]


Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N",
        click_type=count(1, MAX_JOBS),
        help="Processes to check subjects in at once on a large store without a cache "
        "(--no-cache) or base (jobs in the config, SCHEMACLI_JOBS; default: the CPUs this "
        "process may use). The report is the same for any N.",
    ),
]


def settings_from_flags(
    store: Path | None, registry: RegistryFlags | None = None, *, jobs: int | None = None
) -> Settings:
    """The settings, with ``--store`` (and ``--jobs``) when given; the registry's settings too
    when the registry flags name a URL (offline, no registry setting is read, so none can
    fail)."""
    online = registry is not None and registry.url is not None
    return load_settings(
        flags={"store": store, "jobs": jobs}, registry=registry if online else None
    )


def shown_store(store: Path) -> Path:
    """``store`` relative to the current directory when it is below it (so files found in it,
    such as the declared readers, are named that way in messages), else as it is."""
    try:
        shown = os.path.relpath(store)
    except ValueError:  # another drive on Windows
        return store
    return store if shown.startswith("..") else Path(shown)


def store_tree(store: Path) -> FileTree:
    """The working-tree store, named as :func:`shown_store` names it in messages."""
    return FileTree(store, display_root=str(shown_store(store)))


def declared_readers(store: Path, subject: str | None = None) -> list[DeclaredReader]:
    """The readers consumers declared in the store's working tree (of ``subject``, or all),
    named relative to the current directory."""
    return load_readers(shown_store(store), subject)


def verdict_cache(settings: Settings, no_cache: bool) -> VerdictCache:
    """The verdict cache in the configured directory (else the user cache directory), or in
    memory only with --no-cache."""
    if no_cache:
        return VerdictCache()
    return VerdictCache(settings.cache_dir or default_cache_dir())
