"""Fixtures shared by the CLI tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the example store in a fresh directory, as the current directory."""
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL", "SCHEMACLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path
