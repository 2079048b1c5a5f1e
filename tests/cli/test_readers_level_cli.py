"""The level READERS is schemacli's own: a registry is never told it, nor believed saying it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from schemacli.app import app

RECORD = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}


def test_a_registry_is_never_told_the_level_readers(fake_registry_cli, fake):
    result = fake_registry_cli("config", "set", "orders-value", "READERS")
    assert result.exit_code == 2
    assert "schemacli's own level" in result.stderr
    assert [r.method for r in fake.requests if r.method == "PUT"] == []


def test_a_registry_that_answers_readers_is_not_believed(fake_registry_cli, fake):
    fake.add("orders-value", json.dumps(RECORD))
    fake.configs["orders-value"] = "READERS"
    result = fake_registry_cli("config", "get", "orders-value")
    assert result.exit_code == 3
    assert "unknown compatibility level 'READERS'" in result.stderr


def test_readers_help_documents_the_exit_codes():
    result = CliRunner().invoke(app, ["readers", "list", "--help"])
    assert result.exit_code == 0
    assert "Exit codes" in result.output
