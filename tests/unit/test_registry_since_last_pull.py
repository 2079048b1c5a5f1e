"""`pull` and `gate --registry` ask only for what is new since the last pull: a store file whose
place, registry version and fingerprint the pull's snapshot (registry.json) still vouches for is
not asked for again; anything else (an edited file, a lost sidecar, another registry's snapshot,
a version registered since) is. Registry answers come from the in-process fake; the counts on
the real registry are in tests/integration/test_registry_requests.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.config import load_settings
from schemacli.contracts.store.tree import FileTree
from schemacli.registry.client import RegistryClient
from schemacli.registry.gate import gate_against_registry
from schemacli.registry.settings import RegistrySettings
from schemacli.registry.snapshot import pull

ROOT = Path(__file__).resolve().parents[2]
V1 = (ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
V2 = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()
SUBJECT = "taxi-rides-value"
VERSIONS = f"/subjects/{SUBJECT}/versions/"


@pytest.fixture
def client(fake):
    with RegistryClient(RegistrySettings(url=fake.url, retries=0)) as c:
        yield c


@pytest.fixture
def store(tmp_path, monkeypatch, fake, client) -> Path:
    """A store pulled from the fake: the subject's two versions and their snapshot."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEMACLI_CONFIG", raising=False)
    fake.add(SUBJECT, V1)
    fake.add(SUBJECT, V2)
    pull(client, [SUBJECT], tmp_path / "schemas")
    fake.requests.clear()
    return tmp_path / "schemas"


def versions_asked(fake) -> list[str]:
    return [r.path for r in fake.requests if r.method == "GET" and r.path.startswith(VERSIONS)]


def test_the_snapshot_records_each_versions_registry_and_fingerprint(store, fake):
    snapshot = json.loads((store / "subjects" / SUBJECT / "registry.json").read_text())
    assert snapshot["registry"] == fake.url
    assert [len(row["fingerprint"]) for row in snapshot["versions"]] == [64, 64]


def test_a_second_pull_asks_for_no_version(store, fake, client):
    pulled = pull(client, [SUBJECT], store)
    assert versions_asked(fake) == []
    assert [row["registry_version"] for row in pulled[0].versions] == [1, 2]
    assert not pulled[0].written and not pulled[0].conflicts


def test_a_pull_asks_again_for_an_edited_file_and_keeps_it_as_a_conflict(store, fake, client):
    edited = json.loads(V1) | {"doc": "edited here"}
    (store / "subjects" / SUBJECT / "v1.avsc").write_text(json.dumps(edited))
    pulled = pull(client, [SUBJECT], store)
    assert versions_asked(fake) == [f"{VERSIONS}1"]
    assert pulled[0].conflicts == (str(store / "subjects" / SUBJECT / "v1.avsc"),)


def test_a_snapshot_of_another_registry_vouches_for_nothing(store, fake, client):
    record = store / "subjects" / SUBJECT / "registry.json"
    data = json.loads(record.read_text())
    record.write_text(json.dumps(data | {"registry": "http://elsewhere:8081"}))
    pull(client, [SUBJECT], store)
    assert versions_asked(fake) == [f"{VERSIONS}1", f"{VERSIONS}2"]


def test_a_version_registered_since_the_pull_is_the_only_one_asked(store, fake, client):
    v3 = json.loads(V2)
    v3["fields"].append({"name": "tip", "type": "float", "default": 0.0})
    fake.add(SUBJECT, json.dumps(v3))
    pulled = pull(client, [SUBJECT], store)
    assert versions_asked(fake) == [f"{VERSIONS}3"]
    assert (store / "subjects" / SUBJECT / "v3.avsc").exists()
    assert [row["registry_version"] for row in pulled[0].versions] == [1, 2, 3]


def gate(client, store: Path):
    settings = load_settings(cwd=store.parent, flags={"store": store})
    return gate_against_registry(client, FileTree(store), settings)


def test_the_gate_after_a_pull_asks_each_subject_only_for_its_version_list(store, fake, client):
    done = gate(client, store)
    assert done.passed and versions_asked(fake) == []
    assert [r.path for r in fake.requests] == [f"/subjects/{SUBJECT}/versions"]


def test_the_gate_asks_for_an_edited_file_and_reports_the_divergence(store, fake, client):
    edited = json.loads(V1) | {"doc": "edited here"}
    (store / "subjects" / SUBJECT / "v1.avsc").write_text(json.dumps(edited))
    done = gate(client, store)
    assert versions_asked(fake) == [f"{VERSIONS}1"]
    assert [f.kind for f in done.report.findings] == ["REGISTRY_HISTORY_DIVERGES"]


def test_the_gate_without_a_snapshot_asks_for_every_version(store, fake, client):
    (store / "subjects" / SUBJECT / "registry.json").unlink()
    assert gate(client, store).passed
    assert versions_asked(fake) == [f"{VERSIONS}1", f"{VERSIONS}2"]


def test_the_global_level_is_asked_once_however_many_subjects_ask_together(
    fake, client, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "many"
    for n in range(12):  # every subject new: each asks its level, all at once
        folder = store / "subjects" / f"s{n}-value"
        folder.mkdir(parents=True)
        (folder / "v1.avsc").write_text(V1)
    assert gate(client, store).passed
    asked = [r.path for r in fake.requests if r.method == "GET" and r.path.startswith("/config")]
    assert asked.count("/config") == 1
    assert sorted(p for p in asked if p != "/config") == sorted(
        f"/config/s{n}-value" for n in range(12)
    )
