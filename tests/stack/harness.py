"""How pytest fixtures start stack components: skip when missing, fail when CI=true.

Kept out of conftest.py so that both conftests share one record of what failed (a conftest
imported by name would be a second module with its own state).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import pytest

from .common import ComponentUnavailable

T = TypeVar("T")

# component -> why it could not start (filled by fixtures, printed in the terminal summary)
UNAVAILABLE: dict[str, str] = {}


def in_ci() -> bool:
    """True when the CI environment variable says so (CI=true, 1 or yes)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def obtain(name: str, start: Callable[[], T]) -> T:
    """Start a component for a fixture; on failure skip, or fail when CI=true, with the reason
    and the component's log tail. A component that failed once is not retried in the session.
    """
    if name not in UNAVAILABLE:
        try:
            return start()
        except ComponentUnavailable as exc:
            UNAVAILABLE[name] = str(exc)
    why = UNAVAILABLE[name]
    if in_ci():
        pytest.fail(f"CI=true and a stack component is unavailable: {why}", pytrace=False)
    pytest.skip(f"{name} unavailable: {why.splitlines()[0]}")
