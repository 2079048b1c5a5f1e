"""401 with wrong credentials, against a real registry with basic auth switched on.

Apicurio needs an OIDC server (Keycloak) for authentication, so this uses AxonOps Schema
Registry, which has built-in basic auth: the stack's binary, started here with auth enabled and
a bootstrap admin (its launcher in tests/stack starts it without auth).
"""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from typer.testing import CliRunner

from schemacli.app import app

pytestmark = pytest.mark.integration

USER, PASSWORD = "ci", "right-Pa55-word"
CONFIG = """\
security:
  auth:
    enabled: true
    methods: [basic]
    rbac:
      enabled: true
      default_role: readonly
      super_admins: [ci]
"""


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/subjects", timeout=2)
    except urllib.error.HTTPError as err:
        return err.code == 401  # up, and asking for credentials
    return False


@pytest.fixture(scope="module")
def auth_registry(tmp_path_factory):
    from tests.stack.common import ComponentUnavailable, free_port, spawn, wait_until
    from tests.stack.registry import axonops_binary

    try:
        binary = axonops_binary()
    except ComponentUnavailable as exc:
        from tests.stack.harness import in_ci

        if in_ci():  # CI must run it: fail loudly, as every stack fixture does
            pytest.fail(f"CI=true and the AxonOps registry is unavailable: {exc}", pytrace=False)
        pytest.skip(f"AxonOps registry not available: {exc}")
    workdir = tmp_path_factory.mktemp("axonops-auth")
    (workdir / "config.yaml").write_text(CONFIG)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "SCHEMA_REGISTRY_HOST": "127.0.0.1",
        "SCHEMA_REGISTRY_PORT": str(port),
        "SCHEMA_REGISTRY_STORAGE_TYPE": "memory",
        "SCHEMA_REGISTRY_BOOTSTRAP_ENABLED": "true",
        "SCHEMA_REGISTRY_BOOTSTRAP_USERNAME": USER,
        "SCHEMA_REGISTRY_BOOTSTRAP_PASSWORD": PASSWORD,
    }
    process = spawn(
        "axonops-auth",
        [str(binary), "-config", str(workdir / "config.yaml")],
        log=workdir / "axonops.log",
        cwd=workdir,
        env=env,
    )
    try:
        wait_until(
            "registry",
            lambda: _answers(url),
            process=process,
            timeout=60,
            what=f"answering 401 on {url}/subjects",
        )
        yield url
    finally:
        process.stop()


def run(url: str, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        app, [*args, "--retries", "0"], env={"SCHEMACLI_REGISTRY_URL": url, **(env or {})}
    )


def test_wrong_password_is_a_401_exit_3_without_the_password(auth_registry):
    wrong = "wrong-Pa55-word"
    result = run(
        auth_registry,
        "subjects",
        "list",
        env={"SCHEMACLI_REGISTRY_USER": USER, "SCHEMACLI_REGISTRY_PASSWORD": wrong},
    )
    assert result.exit_code == 3
    assert "refused the credentials (401 Unauthorized)" in result.stderr
    assert "hint:" in result.stderr
    assert wrong not in result.output and PASSWORD not in result.output


def test_no_credentials_is_a_401(auth_registry):
    result = run(auth_registry, "config", "get")
    assert result.exit_code == 3
    assert "401" in result.stderr


def test_right_credentials_work_for_every_command(auth_registry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from pathlib import Path

    schema = Path(__file__).resolve().parents[2] / "schemas/subjects/taxi-rides-value/v1.avsc"
    env = {"SCHEMACLI_REGISTRY_BASIC_AUTH": f"{USER}:{PASSWORD}"}
    registered = run(auth_registry, "register", str(schema), "--subject", "auth-value", env=env)
    assert registered.exit_code == 0, registered.output
    listed = run(auth_registry, "subjects", "list", env=env)
    assert listed.stdout.split() == ["auth-value"]
    in_url = auth_registry.replace("http://", f"http://{USER}:{PASSWORD}@")
    shown = run(in_url, "subjects", "show", "auth-value", "--verbose")
    assert shown.exit_code == 0, shown.output
    assert PASSWORD not in shown.output
