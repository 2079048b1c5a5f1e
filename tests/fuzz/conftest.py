"""The fuzz harness's marker: every test here is ``fuzz`` (``-m "not fuzz"`` leaves it out).
Its settings (a small derandomized run for CI, SCHEMACLI_FUZZ_EXAMPLES for a long one) are in
fuzzkit.fuzz_settings; see test_fuzz_cli.py."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.fuzz)
