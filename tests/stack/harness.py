"""How pytest fixtures start stack components: skip when missing, fail when CI=true.

Kept out of conftest.py so that both conftests share one record of what failed (a conftest
imported by name would be a second module with its own state).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import pytest

from .common import SHUTTING_DOWN, ComponentUnavailable, install_stop_handlers

T = TypeVar("T")

# component -> why it could not start (filled by fixtures, printed in the terminal summary)
UNAVAILABLE: dict[str, str] = {}
# component -> its start running in the background (see prestart)
_PENDING: dict[str, Future] = {}
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="stack-start")


def in_ci() -> bool:
    """True when the CI environment variable says so (CI=true, 1 or yes)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def prestart(name: str, start: Callable[[], object]) -> None:
    """Begin starting a component in a background thread; ``obtain(name, ...)`` collects it.

    Kafka and the registry are subprocesses polled until healthy, so starting them while
    pytest still collects, and while Spark starts in the main thread, shortens the wait on a
    2-core machine. Stop handlers are installed here, in the main thread.
    """
    if name in _PENDING or name in UNAVAILABLE:
        return
    install_stop_handlers()
    _PENDING[name] = _POOL.submit(start)


def obtain(name: str, start: Callable[[], T]) -> T:
    """Start a component for a fixture (or collect its prestart); on failure skip, or fail
    when CI=true, with the reason and the component's log tail. A component that failed once
    is not retried in the session.
    """
    if name not in UNAVAILABLE:
        pending = _PENDING.pop(name, None)
        try:
            return pending.result() if pending is not None else start()
        except ComponentUnavailable as exc:
            UNAVAILABLE[name] = str(exc)
    why = UNAVAILABLE[name]
    if in_ci():
        pytest.fail(f"CI=true and a stack component is unavailable: {why}", pytrace=False)
    pytest.skip(f"{name} unavailable: {why.splitlines()[0]}")


def abandon_pending() -> None:
    """At session end: starts nobody collected give up, and their processes are stopped."""
    if not _PENDING:
        return
    SHUTTING_DOWN.set()
    for future in _PENDING.values():
        try:
            component = future.result()
        except ComponentUnavailable:
            continue
        component.stop()
    _PENDING.clear()
