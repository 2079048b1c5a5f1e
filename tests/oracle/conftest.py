"""Fixtures for the differential tests: one Java oracle process for the whole session.

If javac, java or the avro jar is missing, every oracle test FAILS (never skips) with the reason.
"""

from collections.abc import Iterator

import pytest

from .oracle import Oracle, OracleUnavailable


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    try:
        running = Oracle()
    except OracleUnavailable as exc:
        pytest.fail(f"The Java oracle cannot run: {exc}", pytrace=False)
    with running:
        yield running
