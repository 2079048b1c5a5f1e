"""TLS to the registry: verification on by default, a CA bundle, client certificates, --insecure.

Certificates are made with openssl for the test run: a CA, a server certificate for 127.0.0.1
and a client certificate, both signed by the CA.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from registry_fake import FakeRegistry
from typer.testing import CliRunner
from urllib3.exceptions import InsecureRequestWarning

from schemacli.app import app
from schemacli.errors import NetworkError
from schemacli.registry.client import RegistryClient
from schemacli.registry.settings import RegistrySettings

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-subj",
        "/CN=schemacli test CA",
        "-days",
        "2",
        cwd=d,
    )
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    for name in ("server", "client"):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            cwd=d,
        )
    return d


def _server(pki: Path, *, require_client_cert: bool = False) -> FakeRegistry:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    if require_client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki / "ca.pem")
    return FakeRegistry(ssl_context=context).start()


@pytest.fixture
def https(pki):
    fake = _server(pki)
    yield fake
    fake.stop()


@pytest.fixture
def mtls(pki):
    fake = _server(pki, require_client_cert=True)
    yield fake
    fake.stop()


def test_an_unknown_ca_fails_verification_with_a_hint(https):
    client = RegistryClient(RegistrySettings(url=https.url, retries=0))
    with pytest.raises(NetworkError) as caught:
        client.list_subjects()
    assert "TLS handshake" in caught.value.message
    assert "--ca" in (caught.value.hint or "")


def test_the_ca_bundle_makes_it_trusted(https, pki):
    client = RegistryClient(RegistrySettings(url=https.url, ca_bundle=pki / "ca.pem"))
    assert client.list_subjects() == []


def test_insecure_skips_verification_and_says_so_loudly(https, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["subjects", "list", "--registry", https.url, "--insecure"])
    assert result.exit_code == 0, result.output
    assert "TLS verification is OFF" in result.stderr


def test_insecure_calls_from_many_threads_never_let_urllib3s_warning_through(https):
    """--insecure is said once by the CLI; urllib3's InsecureRequestWarning on each call is
    silenced for every thread of the pool (a per-call ``catch_warnings`` is not thread-safe:
    threads restored each other's filters and the warning leaked)."""
    settings = RegistrySettings(url=https.url, insecure=True, concurrency=8, retries=0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # every warning seen, but for what the client silences
        client = RegistryClient(settings)
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: client.list_subjects(), range(64)))
    assert answers == [[]] * 64
    assert not [w for w in seen if issubclass(w.category, InsecureRequestWarning)]


def test_client_certificate_for_mutual_tls(mtls, pki):
    without = RegistryClient(RegistrySettings(url=mtls.url, ca_bundle=pki / "ca.pem", retries=0))
    with pytest.raises(NetworkError):
        without.list_subjects()
    settings = RegistrySettings.build(
        url=mtls.url,
        ca_bundle=pki / "ca.pem",
        client_cert=pki / "client.pem",
        client_key=pki / "client.key",
        env={},
    )
    assert RegistryClient(settings).list_subjects() == []


def test_ca_from_the_environment(https, pki, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app,
        ["subjects", "list"],
        env={"SCHEMACLI_REGISTRY_URL": https.url, "SCHEMACLI_REGISTRY_CA": str(pki / "ca.pem")},
    )
    assert result.exit_code == 0, result.output


# -- `check --registry` and `gate --registry` take the same TLS options ---------------------

ROOT = Path(__file__).resolve().parents[2]
TAXI_V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A copy of the example store as the current project; no registry settings around."""
    shutil.copytree(ROOT / "schemas" / "subjects", tmp_path / "schemas" / "subjects")
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_CONFIG", "SCHEMACLI_STORE", "SCHEMACLI_REGISTRY_CA"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _registry_run(command: str, url: str, *options: str):
    args = {
        "check": ["check", str(TAXI_V2), "--subject", "taxi-rides-value"],
        "gate": ["gate", "--quiet"],
    }[command]
    return CliRunner().invoke(app, [*args, "--registry", url, "--retries", "0", *options])


@pytest.mark.parametrize("command", ["check", "gate"])
def test_check_and_gate_verify_tls_and_trust_a_ca_bundle(https, pki, store, command):
    untrusted = _registry_run(command, https.url)
    assert untrusted.exit_code == 3, untrusted.output
    assert "TLS handshake" in untrusted.stderr
    trusted = _registry_run(command, https.url, "--ca", str(pki / "ca.pem"))
    assert trusted.exit_code == 0, trusted.output


@pytest.mark.parametrize("command", ["check", "gate"])
def test_check_and_gate_insecure_skips_verification_and_says_so(https, store, command):
    result = _registry_run(command, https.url, "--insecure")
    assert result.exit_code == 0, result.output
    assert "TLS verification is OFF" in result.stderr


@pytest.mark.parametrize("command", ["check", "gate"])
def test_check_and_gate_present_a_client_certificate(mtls, pki, store, command):
    ca = ("--ca", str(pki / "ca.pem"))
    assert _registry_run(command, mtls.url, *ca).exit_code == 3
    cert = ("--cert", str(pki / "client.pem"), "--key", str(pki / "client.key"))
    result = _registry_run(command, mtls.url, *ca, *cert)
    assert result.exit_code == 0, result.output
