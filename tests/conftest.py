"""Shared test configuration. Integration fixtures live in tests/integration/conftest.py."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    return ROOT
