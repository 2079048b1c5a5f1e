"""`gate --register` while the REAL registry dies between two registrations of one run.

Between the CLI and the stack's registry (Apicurio, or whichever ``--registry-impl`` names) sits
a forwarding TCP proxy (``tests.stack.cutproxy``): every answer comes from the real registry.
The event of seeing the run's first registration request (``POST .../subjects/S/versions``)
makes the registry "die": its port refuses connections from then on, and a kept-alive
connection is cut. Either it dies right after answering that registration, or after doing it
but before answering. Then it comes back on the same port.

What must hold: the gate exits 3; either nothing of the run is registered, or its message names
exactly what may remain - and the registry, back, holds exactly that. Run again, the gate then
registers the rest (exit 0), finding what the broken run left as already registered.
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.registry.client import RegistryClient
from schemacli.registry.settings import RegistrySettings
from tests.stack.cutproxy import CutProxy

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
KEY = ROOT / "schemas/subjects/taxi-rides-key/v1.avsc"
# POST .../subjects/S/versions registers; .../compatibility/subjects/S/versions only asks
REGISTRATION = re.compile(
    r"^POST (?!\S*/compatibility/)\S*/subjects/[^/?\s]+/versions(\?\S*)? HTTP/"
)


def _store(tmp_path: Path, tag: str) -> dict[str, list[Path]]:
    """Three new versions for the gate to register, in its order: a v1, a v2, b v1."""
    layout = {f"a{tag}-value": [V1, V2], f"b{tag}-key": [KEY]}
    for subject, files in layout.items():
        folder = tmp_path / "schemas" / "subjects" / subject
        folder.mkdir(parents=True)
        for n, source in enumerate(files, start=1):
            shutil.copy(source, folder / f"v{n}.avsc")
    return layout


def _held(client: RegistryClient, subjects) -> dict[str, list[tuple[int, int]]]:
    """subject -> [(version, id)] the registry holds (live versions)."""
    held = {}
    for subject in subjects:
        if subject not in client.list_subjects():
            continue
        held[subject] = [
            (v, client.get_version(subject, v).id) for v in client.list_versions(subject)
        ]
    return held


def _named_as_remaining(message: str) -> str:
    """The part of the gate's message that names what the run may have left registered: after
    "not deleted ..." and "MAY hold ..." (empty when it says the registry is as it was)."""
    parts = [p for p in message.split("; ") if "not deleted" in p or "MAY hold" in p]
    return "; ".join(parts)


@pytest.mark.parametrize("dies", ["after-answer", "before-answer"])
def test_a_registry_dying_mid_gate_register_leaves_only_what_the_gate_names(
    registry, tmp_path, monkeypatch, dies
):
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_CONFIG", "SCHEMACLI_STORE", "SCHEMACLI_REGISTRY_URL"):
        monkeypatch.delenv(name, raising=False)
    tag = uuid.uuid4().hex[:8]
    layout = _store(tmp_path, tag)
    real = urlsplit(registry)
    proxy = CutProxy(
        (real.hostname, real.port), lambda line: REGISTRATION.match(line) is not None, dies
    )
    via_proxy = f"{proxy.url_base}{real.path}"
    gate = ["gate", "--store", str(tmp_path / "schemas"), "--registry", via_proxy, "--register"]
    try:
        broken = CliRunner().invoke(app, gate)
        assert proxy.triggered.is_set(), "the gate never sent a registration"
        assert broken.exit_code == 3, broken.output
        assert "Traceback" not in broken.output
        registrations = [line for line in proxy.forwarded if REGISTRATION.match(line)]
        assert len(registrations) == 1, proxy.forwarded  # the registry died at the first
        proxy.revive()

        with RegistryClient(RegistrySettings(url=registry, retries=1)) as client:
            held = _held(client, layout)
        message = " ".join(broken.stderr.split())  # as one line: the renderer wraps text
        named = _named_as_remaining(message)
        print(f"\n{dies}: registry holds {held}; the gate said: {message}")
        if not held:
            assert "the registry is as it was" in message or "may not be as it was" in message
        else:
            assert "the registry is as it was" not in message, message
        for subject in layout:
            versions = held.get(subject, [])
            if not versions:  # nothing of it remains: the gate must not claim something does
                assert subject not in named, (subject, message)
            for version, schema_id in versions:
                assert f"{subject} v{version}" in named or f"{subject} id {schema_id}" in named, (
                    f"{subject} v{version} (id {schema_id}) is registered, and the gate's "
                    f"message does not name it: {message}"
                )

        again = CliRunner().invoke(app, gate)  # the registry is back: the run completes
        assert again.exit_code == 0, again.output
        with RegistryClient(RegistrySettings(url=registry, retries=1)) as client:
            assert client.list_versions(f"a{tag}-value") == [1, 2]
            assert client.list_versions(f"b{tag}-key") == [1]
    finally:
        proxy.close()
