"""gate --register when the registry fails right after a registration it answered with only the
id (as Apicurio does): the version is asked for (where the id is registered), which fails. The
registration happened; the gate must neither forget it nor claim the registry is as it was.

(The same against the real registry, dying behind a proxy: tests/integration/
test_gate_registry_loss.py.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemacli.config import load_settings
from schemacli.contracts.store.tree import FileTree
from schemacli.errors import RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.gate import gate_against_registry, register_candidates
from schemacli.registry.publish import Outcome, register_schema
from schemacli.registry.settings import RegistrySettings

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas" / "subjects" / "taxi-rides-value" / "v1.avsc"
KEY = ROOT / "schemas" / "subjects" / "taxi-rides-key" / "v1.avsc"


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEMACLI_CONFIG", raising=False)
    shutil.copytree(ROOT / "schemas" / "subjects", tmp_path / "schemas" / "subjects")
    return tmp_path / "schemas"


def _dies_after_first_registration(fake) -> None:
    """Every request after the first registration POST gets 503: the registry is going away."""
    real_handle = fake.handle
    state = {"registered": False}

    def handle(method, path, query, body):
        if state["registered"]:
            return 503, {"error_code": 50301, "message": "shutting down"}
        if method == "POST" and path.startswith("/subjects/") and path.endswith("/versions"):
            state["registered"] = True
        return real_handle(method, path, query, body)

    fake.handle = handle


def test_a_registration_whose_version_lookup_fails_is_still_reported_registered(fake):
    _dies_after_first_registration(fake)
    with RegistryClient(RegistrySettings(url=fake.url, retries=0)) as client:
        result = register_schema(client, "taxi-rides-key", KEY.read_text())
    stored = fake.subjects["taxi-rides-key"][0]
    assert (result.outcome, result.id, result.version) == (Outcome.REGISTERED, stored["id"], None)
    assert result.describe() == f"taxi-rides-key: registered as id {stored['id']}"


def test_a_registry_failing_after_the_first_registration_names_it_as_left_behind(fake, store):
    fake.add("taxi-rides-value", V1.read_text())  # candidates: taxi-rides-key v1, value v2
    with RegistryClient(RegistrySettings(url=fake.url, retries=0)) as client:
        gate = gate_against_registry(
            client, FileTree(store), load_settings(cwd=store.parent, flags={"store": store})
        )
        assert [(c.subject, c.version) for c in gate.candidates] == [
            ("taxi-rides-key", 1),
            ("taxi-rides-value", 2),
        ]
        _dies_after_first_registration(fake)
        with pytest.raises(RegistryError) as caught:
            register_candidates(client, gate)
    key_id = fake.subjects["taxi-rides-key"][0]["id"]  # registered, and could not be deleted
    message = caught.value.message
    assert "is as it was" not in message and "nothing had been registered" not in message
    assert "the registry is NOT as it was" in message
    assert (
        f"not deleted (still registered, or only soft-deleted): taxi-rides-key id {key_id}"
        in message
    )
    assert (
        f"schemacli subjects show taxi-rides-key (find the version with id {key_id})"
        in caught.value.hint
    )
