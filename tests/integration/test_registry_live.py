"""Every registry command against the REAL registry the stack starts (fixture ``registry``).

Each test uses fresh subject names, so tests are independent of each other and of order.
Where the registry deviates from Confluent's documented API, the deviation is handled in the
client and written down in docs/registry.md; these tests assert what a user sees.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from registry_fake import free_port
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.errors import NetworkError, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.settings import RegistrySettings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
KEY = ROOT / "schemas/subjects/taxi-rides-key/v1.avsc"
BREAKING = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"


def registry_url(request: pytest.FixtureRequest) -> str:
    """The base URL from the stack's ``registry`` fixture (a str, or an object with ``.url``).

    SCHEMACLI_TEST_REGISTRY_URL points the tests at a registry that is already running instead
    (e.g. one started with scripts/devstack, or a real Confluent Schema Registry).
    """
    if os.environ.get("SCHEMACLI_TEST_REGISTRY_URL"):
        return os.environ["SCHEMACLI_TEST_REGISTRY_URL"].rstrip("/")
    try:
        registry = request.getfixturevalue("registry")
    except pytest.FixtureLookupError:
        pytest.fail("the stack's `registry` fixture (tests/integration/conftest.py) is missing")
    return (registry if isinstance(registry, str) else registry.url).rstrip("/")


@pytest.fixture
def url(request) -> str:
    return registry_url(request)


@pytest.fixture
def subject() -> str:
    return f"it-{uuid.uuid4().hex[:10]}-value"


@pytest.fixture
def client(url):
    with RegistryClient(RegistrySettings(url=url, retries=1)) as c:
        yield c


@pytest.fixture
def cli(url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in (
        "SCHEMACLI_CONFIG",
        "SCHEMACLI_REGISTRY_USER",
        "SCHEMACLI_REGISTRY_PASSWORD",
        "SCHEMACLI_REGISTRY_TOKEN",
        "SCHEMACLI_REGISTRY_BASIC_AUTH",
        "SCHEMACLI_STORE",
    ):
        monkeypatch.delenv(name, raising=False)

    def run(*args, env=None):
        return CliRunner().invoke(
            app, [str(a) for a in args], env={"SCHEMACLI_REGISTRY_URL": url, **(env or {})}
        )

    return run


# ---- register ------------------------------------------------------------------------------


def test_first_registration_then_idempotent_then_v2(cli, subject):
    first = cli("register", V1, "--subject", subject, "-o", "json")
    assert first.exit_code == 0, first.output
    registered = json.loads(first.stdout)
    assert registered["outcome"] == "registered" and registered["version"] == 1
    again = cli("register", V1, "--subject", subject, "-o", "json")
    assert json.loads(again.stdout)["outcome"] == "already-registered"
    assert json.loads(again.stdout)["id"] == registered["id"]
    second = cli("register", V2, "--subject", subject)
    assert second.exit_code == 0, second.output
    assert f"{subject}: registered as version 2" in second.stdout


def test_incompatible_registration_is_refused_with_409_and_exit_1(cli, client, subject):
    assert cli("register", V1, "--subject", subject).exit_code == 0
    result = cli("register", BREAKING, "--subject", subject)
    assert result.exit_code == 1, result.output
    assert "incompatible" in result.stderr
    assert client.list_versions(subject) == [1]
    with pytest.raises(RegistryError) as caught:  # the raw answer underneath
        client.register(subject, BREAKING.read_text())
    assert caught.value.status == 409


def test_dry_run_says_what_the_registry_would_do(cli, client, subject):
    cli("register", V1, "--subject", subject)
    ok = cli("register", V2, "--subject", subject, "--dry-run")
    assert ok.exit_code == 0 and "would be registered" in ok.stdout
    refused = cli("register", BREAKING, "--subject", subject, "--dry-run")
    assert refused.exit_code == 1
    assert client.list_versions(subject) == [1]


def test_register_with_a_schema_reference(cli, client, subject, tmp_path):
    money = tmp_path / "Money.avsc"
    money.write_text(
        json.dumps(
            {
                "type": "record",
                "name": "Money",
                "namespace": "com.acme",
                "fields": [
                    {"name": "cents", "type": "long"},
                    {"name": "currency", "type": "string"},
                ],
            }
        )
    )
    ride = tmp_path / "ride.avsc"
    ride.write_text(
        json.dumps(
            {
                "type": "record",
                "name": "Ride",
                "namespace": "com.acme",
                "fields": [
                    {"name": "id", "type": "int"},
                    {"name": "fare", "type": "com.acme.Money"},
                ],
            }
        )
    )
    money_subject = subject.replace("-value", "-money")
    assert cli("register", money, "--subject", money_subject).exit_code == 0
    without = cli("register", ride, "--subject", subject)
    assert without.exit_code == 2  # refused locally: the named type is unknown
    assert "com.acme.Money" in without.stderr
    ref = f"com.acme.Money={money_subject}:1"
    result = cli("register", ride, "--subject", subject, "--reference", ref, "-o", "json")
    assert result.exit_code == 0, result.output
    stored = client.get_version(subject, 1)
    assert [(r.name, r.subject, r.version) for r in stored.references] == [
        ("com.acme.Money", money_subject, 1)
    ]
    again = cli("register", ride, "--subject", subject, "--reference", ref)
    assert "already registered as version 1" in again.stdout, again.output
    shown = cli("subjects", "show", subject)
    assert f"reference com.acme.Money = {money_subject}:1" in shown.stdout


def test_invalid_schema_is_a_422_invalid_schema(client, subject):
    bad = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]})
    with pytest.raises(RegistryError) as caught:
        client.register(subject, bad)
    assert caught.value.status == 422
    assert caught.value.exit_code == 3
    assert "not valid" in caught.value.message


def test_unknown_subject_is_a_clear_40401(cli, subject):
    result = cli("subjects", "show", subject)
    assert result.exit_code == 3
    assert f"Subject '{subject}' not found" in result.stderr


# ---- subjects, config, pull ----------------------------------------------------------------


def test_subjects_list_show_delete(cli, client, subject):
    cli("register", V1, "--subject", subject)
    cli("register", V2, "--subject", subject)
    assert subject in cli("subjects", "list").stdout.split()
    shown = json.loads(cli("subjects", "show", subject, "-o", "json").stdout)
    assert [v["version"] for v in shown["versions"]] == [1, 2]
    assert json.loads(shown["schema"]["text"])["fields"][-1]["name"] == "store_and_fwd_flag"
    assert cli("subjects", "delete", subject).exit_code == 2  # no --yes
    deleted = cli("subjects", "delete", subject, "--yes", "--permanent")
    assert deleted.exit_code == 0, deleted.output
    assert subject not in client.list_subjects(deleted=True)


def test_config_set_get_delete_per_subject(cli, subject):
    cli("register", V1, "--subject", subject)
    assert cli("config", "set", subject, "FULL").exit_code == 0
    got = json.loads(cli("config", "get", subject, "-o", "json").stdout)
    assert (got["level"], got["source"]) == ("FULL", "subject")
    deleted = cli("config", "delete", subject)
    assert deleted.exit_code == 0, deleted.output
    after = json.loads(cli("config", "get", subject, "-o", "json").stdout)
    assert after["source"] == "global"


def test_config_get_global(cli):
    result = cli("config", "get")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("global: ")


def test_pull_snapshots_versions_and_level(cli, subject, tmp_path):
    cli("register", V1, "--subject", subject)
    cli("register", V2, "--subject", subject)
    cli("config", "set", subject, "FULL")
    result = cli("pull", subject, "--store", tmp_path / "schemas")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "schemas/subjects" / subject
    assert json.loads((folder / "v2.avsc").read_text()) == json.loads(V2.read_text())
    assert 'level = "FULL"' in (tmp_path / "schemacli.toml").read_text()
    gate = cli("gate", "--store", tmp_path / "schemas")  # offline, against production history
    assert gate.exit_code == 0, gate.output


# ---- check and gate against the registry ---------------------------------------------------


def test_check_registry_compatible_and_incompatible(cli, url, subject):
    cli("register", V1, "--subject", subject)
    ok = cli("check", V2, "--subject", subject, "--registry", url)
    assert ok.exit_code == 0, ok.output
    assert "-> agree" in ok.stderr
    bad = cli("check", BREAKING, "--subject", subject, "--registry", url, "-o", "json")
    assert bad.exit_code == 1
    assert "-> agree" in bad.stderr, bad.stderr
    kinds = {f["kind"] for c in json.loads(bad.stdout)["cases"] for f in c["findings"]}
    assert "REGISTRY_INCOMPATIBLE" in kinds and "REGISTRY_DISAGREEMENT" not in kinds


def test_gate_register_is_all_or_nothing(cli, client, url, tmp_path):
    tag = uuid.uuid4().hex[:8]
    store = tmp_path / "schemas" / "subjects"
    for name, files in {f"a{tag}-value": [V1, V2], f"b{tag}-value": [V1, BREAKING]}.items():
        (store / name).mkdir(parents=True)
        for n, f in enumerate(files, start=1):
            shutil.copy(f, store / name / f"v{n}.avsc")
    failed = cli("gate", "--store", tmp_path / "schemas", "--registry", url, "--register")
    assert failed.exit_code == 1, failed.output
    assert not [s for s in client.list_subjects() if tag in s]  # nothing registered
    shutil.copy(V2, store / f"b{tag}-value" / "v2.avsc")
    passed = cli("gate", "--store", tmp_path / "schemas", "--registry", url, "--register")
    assert passed.exit_code == 0, passed.output
    assert client.list_versions(f"a{tag}-value") == [1, 2]
    assert client.list_versions(f"b{tag}-value") == [1, 2]


# ---- transport failures --------------------------------------------------------------------


def test_registry_down_is_connection_refused_exit_3(cli):
    url = f"http://127.0.0.1:{free_port()}"
    result = cli("subjects", "list", "--retries", "0", env={"SCHEMACLI_REGISTRY_URL": url})
    assert result.exit_code == 3
    assert "Cannot connect" in result.stderr and "refused" in result.stderr.lower()


class SlowProxy:
    """A TCP proxy to the real registry that waits ``delay`` seconds before forwarding."""

    def __init__(self, target: str, delay: float) -> None:
        parts = urlsplit(target)
        self.target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delay = delay
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}{parts.path.rstrip('/')}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        time.sleep(self.delay)
        try:
            upstream = socket.create_connection(self.target)
        except OSError:
            conn.close()
            return
        for a, b in ((conn, upstream), (upstream, conn)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()


def test_slow_registry_times_out_with_exit_3_and_works_with_patience(cli, url):
    proxy = SlowProxy(url, delay=1.5)
    try:
        slow = cli(
            "subjects",
            "list",
            "--timeout",
            "0.5",
            "--retries",
            "0",
            env={"SCHEMACLI_REGISTRY_URL": proxy.url},
        )
        assert slow.exit_code == 3
        assert "did not answer within 0.5 s" in slow.stderr
        patient = cli(
            "subjects", "list", "--timeout", "60", env={"SCHEMACLI_REGISTRY_URL": proxy.url}
        )
        assert patient.exit_code == 0, patient.output
    finally:
        proxy.close()


def test_slow_registry_client_raises_network_error(url):
    proxy = SlowProxy(url, delay=1.0)
    try:
        client = RegistryClient(RegistrySettings(url=proxy.url, timeout=0.3, retries=0))
        with pytest.raises(NetworkError):
            client.list_subjects()
    finally:
        proxy.close()
