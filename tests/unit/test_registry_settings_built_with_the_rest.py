"""The registry settings are built in the same pass as the rest of the settings: by the one
``load_settings`` call of a registry command; never for an offline command."""

from __future__ import annotations

from pathlib import Path

import pytest

import schemacli.config
from schemacli.commands.registry_options import connect
from schemacli.config import load_settings
from schemacli.errors import ConfigError, UsageError
from schemacli.registry.settings import RegistryFlags


def write_config(folder: Path, text: str) -> Path:
    path = folder / "schemacli.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_registry_commands_settings_come_from_one_load_settings_call(tmp_path, monkeypatch):
    write_config(tmp_path, '[registry]\nuser = "alice"\ntimeout = 7\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCHEMACLI_REGISTRY_RETRIES", "1")
    monkeypatch.setenv("SCHEMACLI_REGISTRY_TIMEOUT", "9")
    calls = []
    real = schemacli.config.load_settings

    def counted(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(schemacli.config, "load_settings", counted)
    flags = RegistryFlags(url="http://registry:8081", timeout=3.0)
    with connect(flags) as conn:
        assert len(calls) == 1 and calls[0]["registry"] is flags
        assert conn.registry is conn.settings.registry
        assert conn.registry.url == "http://registry:8081"  # flag
        assert conn.registry.timeout == 3.0  # flag over env over file
        assert conn.registry.retries == 1  # env
        assert conn.registry.username == "alice"  # file
        assert conn.settings.store == tmp_path.resolve() / "schemas"


def test_an_offline_commands_settings_have_no_registry_with_a_broken_registry_env(tmp_path):
    broken = {"SCHEMACLI_REGISTRY_TIMEOUT": "soon", "SCHEMACLI_REGISTRY_CA": str(tmp_path / "no")}
    settings = load_settings(cwd=tmp_path, env=broken)
    assert settings.registry is None
    with pytest.raises((ConfigError, UsageError)):  # a registry command: the same env fails
        load_settings(cwd=tmp_path, env=broken, registry=RegistryFlags())


def test_the_registry_settings_errors_name_the_flag_or_the_files_line(tmp_path):
    write_config(tmp_path, 'store = "schemas"\n\n[registry]\nretries = "many"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, env={}, registry=RegistryFlags())
    assert caught.value.location is not None and caught.value.location.line == 4
    with pytest.raises(UsageError, match="--timeout"):
        load_settings(cwd=tmp_path, env={}, registry=RegistryFlags(timeout=-1.0))
