"""No credential ever shows up: stdout, stderr, JSON errors, --verbose logs, exceptions, repr.

Every path a secret could leak through is driven with a known password and token, and the whole
output is grepped for them (and for the base64 of user:password, which is what travels).
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path

import pytest
from registry_fake import FakeRegistry, free_port
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.errors import RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.settings import RegistrySettings

PASSWORD = "Pa55-w0rd-SECRET"
TOKEN = "tok-SECRET-123456"
SECRETS = (PASSWORD, TOKEN, base64.b64encode(f"ci:{PASSWORD}".encode()).decode())
SCHEMA = Path(__file__).resolve().parents[2] / "schemas/subjects/taxi-rides-value/v1.avsc"


@pytest.fixture
def fake():
    registry = FakeRegistry(require_basic=("ci", "right-password")).start()
    yield registry
    registry.stop()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path, clean_registry_env):
    monkeypatch.chdir(tmp_path)


def assert_no_secret(*texts: str | None) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in (text or ""), f"secret leaked: {text!r}"


def run(args, env, caplog):
    with caplog.at_level(logging.DEBUG):
        result = CliRunner().invoke(app, [str(a) for a in args], env=env)
    return result


def auth_variants(url: str) -> list[tuple[list[str], dict[str, str]]]:
    host = url.removeprefix("http://")
    return [
        (["--user", "ci", "--password", PASSWORD], {"SCHEMACLI_REGISTRY_URL": url}),
        (
            [],
            {
                "SCHEMACLI_REGISTRY_URL": url,
                "SCHEMACLI_REGISTRY_USER": "ci",
                "SCHEMACLI_REGISTRY_PASSWORD": PASSWORD,
            },
        ),
        ([], {"SCHEMACLI_REGISTRY_URL": url, "SCHEMACLI_REGISTRY_BASIC_AUTH": f"ci:{PASSWORD}"}),
        ([], {"SCHEMACLI_REGISTRY_URL": f"http://ci:{PASSWORD}@{host}"}),
        (["--token", TOKEN], {"SCHEMACLI_REGISTRY_URL": url}),
    ]


COMMANDS = [
    ["register", SCHEMA, "--subject", "taxi-rides-value"],
    ["subjects", "list"],
    ["subjects", "show", "taxi-rides-value"],
    ["config", "get", "taxi-rides-value"],
    ["pull", "--store", "schemas"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(map(str, c[:2])))
@pytest.mark.parametrize("output", ["text", "json"])
def test_wrong_credentials_fail_with_401_and_leak_nothing(fake, caplog, command, output):
    for flags, env in auth_variants(fake.url):
        caplog.clear()
        result = run([*command, *flags, "--verbose", "--retries", "0", "-o", output], env, caplog)
        assert result.exit_code == 3, result.output
        assert "401" in result.output or "credentials" in result.output
        assert "Traceback" not in result.output
        assert_no_secret(result.stdout, result.stderr, caplog.text, repr(result.exception))


def test_connection_refused_with_credentials_in_the_url_leaks_nothing(caplog):
    url = f"http://ci:{PASSWORD}@127.0.0.1:{free_port()}"
    result = run(
        ["subjects", "list", "--verbose", "--retries", "1", "-o", "json"],
        {"SCHEMACLI_REGISTRY_URL": url},
        caplog,
    )
    assert result.exit_code == 3
    assert "Cannot connect to the registry at http://127.0.0.1:" in result.stderr
    assert_no_secret(result.stdout, result.stderr, caplog.text)


def test_timeout_with_a_token_leaks_nothing(fake, caplog):
    fake.stall = True  # answered only once the client has given up
    result = run(
        ["subjects", "list", "--token", TOKEN, "--timeout", "0.2", "--retries", "0", "--verbose"],
        {"SCHEMACLI_REGISTRY_URL": fake.url},
        caplog,
    )
    assert result.exit_code == 3
    assert "did not answer within 0.2 s" in result.stderr
    assert_no_secret(result.stdout, result.stderr, caplog.text)


def test_a_registry_echoing_the_password_is_redacted(fake):
    fake.require_basic = None
    fake.fail_next(500, {"error_code": 50001, "message": f"bad login ci/{PASSWORD}"})
    settings = RegistrySettings.build(url=fake.url, user="ci", password=PASSWORD, retries=0, env={})
    with pytest.raises(RegistryError) as caught:
        RegistryClient(settings).list_subjects()
    err = caught.value
    assert "***" in (err.server_message or "")
    assert_no_secret(str(err), err.message, err.hint, err.server_message, repr(err))


def test_successful_verbose_run_logs_calls_but_no_secret(fake, caplog):
    fake.require_basic = ("ci", PASSWORD)
    result = run(
        ["subjects", "list", "--verbose"],
        {"SCHEMACLI_REGISTRY_URL": f"http://ci:{PASSWORD}@{fake.url.removeprefix('http://')}"},
        caplog,
    )
    assert result.exit_code == 0, result.output
    assert f"registry: GET {fake.url}/subjects -> 200" in result.stderr
    assert_no_secret(result.stdout, result.stderr, caplog.text)


def test_client_and_settings_repr_hold_no_secret():
    settings = RegistrySettings.build(url="http://h:1", user="ci", password=PASSWORD, env={})
    client = RegistryClient(settings)
    assert_no_secret(repr(settings), str(settings), repr(client))


@pytest.mark.parametrize("command", ["check", "gate"])
def test_check_and_gate_against_the_registry_leak_nothing(fake, caplog, command, tmp_path):
    store = tmp_path / "schemas" / "subjects" / "taxi-rides-value"
    store.mkdir(parents=True)
    (store / "v1.avsc").write_text(SCHEMA.read_text())
    args = (
        ["check", SCHEMA, "--subject", "taxi-rides-value", "--registry", fake.url]
        if command == "check"
        else ["gate", "--registry", fake.url, "--store", tmp_path / "schemas"]
    )
    for env in (
        {"SCHEMACLI_REGISTRY_USER": "ci", "SCHEMACLI_REGISTRY_PASSWORD": PASSWORD},
        {"SCHEMACLI_REGISTRY_TOKEN": TOKEN},
    ):
        for output in ("text", "json"):
            caplog.clear()
            result = run([*args, "-o", output], {**env, "SCHEMACLI_REGISTRY_RETRIES": "0"}, caplog)
            assert result.exit_code == 3, result.output
            assert "401" in result.output
            assert_no_secret(result.stdout, result.stderr, caplog.text, repr(result.exception))
