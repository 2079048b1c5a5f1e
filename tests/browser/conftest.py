"""The headless browser for the tests of ``schemacli report --html``: Debian's Chromium, a stack
component like Kafka (skipped when missing; with CI=true a missing browser fails the run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stack.browser import Browser
from tests.stack.harness import obtain

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "report"  # screenshots kept after the run (.gitignore)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    chromium = obtain("browser", Browser)
    yield chromium
    chromium.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
