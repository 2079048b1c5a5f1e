"""Tests that need an optional extra (``spark``, ``kafka``) say so.

A plain ``pip install -e '.[dev]'`` runs the unit tests green: a test whose extra is missing is
skipped with the reason and the install command. Under ``CI=true`` a missing extra is an
error, never a skip: CI installs every extra, so a skip there would hide a broken install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from tests.stack.harness import in_ci


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` of the optional ``extra``, or skip the calling test (module-level too)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if in_ci():
            raise
        pytest.skip(
            f"needs the '{extra}' extra ({exc}); pip install -e '.[dev,{extra}]'",
            allow_module_level=True,
        )


def require_jsonata() -> ModuleType:
    """jsonata-python (the ``kafka`` extra), imported without its side effect: its import sets
    the process's recursion limit to 10000 (``Jsonata._static_initializer``), which would change
    what other tests of the session see. The rules it evaluates here are shallow."""
    import sys

    limit = sys.getrecursionlimit()
    try:
        return require("jsonata", "kafka")
    finally:
        sys.setrecursionlimit(limit)
