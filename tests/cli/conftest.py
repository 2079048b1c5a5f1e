"""Fixtures shared by the CLI tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The environment that configures the registry commands: cleared by the registry CLI tests, so a
# developer's own settings never leak into them.
REGISTRY_ENV = (
    "SCHEMACLI_CONFIG",
    "SCHEMACLI_REGISTRY_URL",
    "SCHEMACLI_REGISTRY_USER",
    "SCHEMACLI_REGISTRY_PASSWORD",
    "SCHEMACLI_REGISTRY_TOKEN",
    "SCHEMACLI_REGISTRY_BASIC_AUTH",
    "SCHEMACLI_REGISTRY_TIMEOUT",
    "SCHEMACLI_REGISTRY_RETRIES",
)


@pytest.fixture
def clean_registry_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """None of the developer's SCHEMACLI_REGISTRY_* settings (or SCHEMACLI_CONFIG)."""
    for name in REGISTRY_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the example store in a fresh directory, as the current directory."""
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL", "SCHEMACLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def fake_registry_cli(fake, tmp_path, monkeypatch, clean_registry_env):
    """Run schemacli in an empty project directory against the fake registry:
    ``run(*args, env={...})`` returns click's Result."""
    from typer.testing import CliRunner

    from schemacli.app import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEMACLI_STORE", raising=False)
    runner = CliRunner()

    def run(*args: object, env: dict[str, str] | None = None):
        env = {"SCHEMACLI_REGISTRY_URL": fake.url, **(env or {})}
        return runner.invoke(app, [str(a) for a in args], env=env)

    return run
