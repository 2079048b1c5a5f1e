"""check/gate against a registry (in-process fake): both verdicts, disagreement, all-or-nothing."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from schemacli.config import Level, load_settings
from schemacli.contracts.avro.loader import load_schema_file
from schemacli.contracts.evolution.check import Verdict
from schemacli.contracts.store.tree import FileTree
from schemacli.errors import RegistryError, SchemacliError
from schemacli.kinds import Kind
from schemacli.registry.client import RegistryClient
from schemacli.registry.compare import check_against_registry, merged_report
from schemacli.registry.gate import gate_against_registry, register_candidates
from schemacli.registry.settings import RegistrySettings

ROOT = Path(__file__).resolve().parents[2]
SUBJECTS = ROOT / "schemas" / "subjects"
V1 = SUBJECTS / "taxi-rides-value" / "v1.avsc"
V2 = SUBJECTS / "taxi-rides-value" / "v2.avsc"
KEY = SUBJECTS / "taxi-rides-key" / "v1.avsc"
BREAKING = ROOT / "schemas" / "migration" / "taxi-ride-v2-breaking.avsc"


@pytest.fixture
def client(fake):
    with RegistryClient(RegistrySettings(url=fake.url, retries=0)) as c:
        yield c


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A copy of the example store in an empty project (default level BACKWARD)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEMACLI_CONFIG", raising=False)
    shutil.copytree(ROOT / "schemas" / "subjects", tmp_path / "schemas" / "subjects")
    return tmp_path / "schemas"


def settings_for(store: Path):
    return load_settings(cwd=store.parent, flags={"store": store})


# ---- check ---------------------------------------------------------------------------------


def test_check_reports_both_verdicts_when_they_agree(fake, client):
    fake.add("taxi-rides-value", V1.read_text())
    check = check_against_registry(client, load_schema_file(V2), "taxi-rides-value")
    assert check.level is Level.BACKWARD and check.level_source == "global"
    assert check.local.compatible and check.registry.compatible and check.agree
    assert fake.requests[-1].query["verbose"] == ["true"]


def test_check_incompatible_on_both_sides_carries_the_registry_reasons(fake, client):
    fake.add("taxi-rides-value", V1.read_text())
    fake.compat_answer = {"is_compatible": False, "messages": ["TYPE_MISMATCH /fields/4/type"]}
    report = merged_report(
        check_against_registry(client, load_schema_file(BREAKING), "taxi-rides-value")
    )
    assert report.verdict is Verdict.INCOMPATIBLE
    kinds = [f.kind for f in report.findings]
    assert "TYPE_MISMATCH" in kinds and Kind.REGISTRY_INCOMPATIBLE in kinds
    assert Kind.REGISTRY_DISAGREEMENT not in kinds


def test_disagreement_between_registry_and_engine_fails_loudly(fake, client):
    fake.add("taxi-rides-value", V1.read_text())
    fake.compat_answer = {"is_compatible": True}  # the registry is wrong here
    check = check_against_registry(client, load_schema_file(BREAKING), "taxi-rides-value")
    assert check.agree is False and not check.compatible
    report = merged_report(check)
    disagreement = [f for f in report.findings if f.kind == Kind.REGISTRY_DISAGREEMENT]
    assert disagreement and "registry says compatible" in disagreement[0].message


def test_check_first_version_of_a_new_subject_is_compatible(client):
    check = check_against_registry(client, load_schema_file(V1), "brand-new-value")
    assert check.compatible and check.agree


def test_check_uses_the_subject_level_of_the_registry(fake, client):
    fake.add("taxi-rides-value", V1.read_text())
    fake.configs["taxi-rides-value"] = "FULL"
    check = check_against_registry(client, load_schema_file(V2), "taxi-rides-value")
    assert (check.level, check.level_source) == (Level.FULL, "subject")


def test_check_at_another_level_than_the_registry_does_not_ask_it(fake, client):
    fake.add("taxi-rides-value", V1.read_text())
    check = check_against_registry(
        client, load_schema_file(V2), "taxi-rides-value", level=Level.FORWARD
    )
    assert check.registry is None and "only the local engine" in check.registry_note
    assert not any(r.path.startswith("/compatibility") for r in fake.requests)


def _cannot_judge(fake) -> None:
    """The compatibility test answers 42201, as Apicurio 3.0.9's does for every subject whose
    versions use references (docs/registry.md)."""
    real_handle = fake.handle

    def handle(method, path, query, body):
        if path.startswith("/compatibility/"):
            return 422, {"error_code": 42201, "message": "Could not execute compatibility rule"}
        return real_handle(method, path, query, body)

    fake.handle = handle


def test_a_registry_that_cannot_judge_leaves_the_local_verdict_with_a_warning(fake, client):
    fake.add("taxi-rides-value", V1.read_text())
    _cannot_judge(fake)
    check = check_against_registry(client, load_schema_file(V2), "taxi-rides-value")
    assert check.registry is None and check.compatible
    assert "could not judge" in check.registry_note
    assert "Could not execute compatibility rule" in check.registry_note
    report = merged_report(check)
    assert report.verdict is Verdict.COMPATIBLE
    assert [f.kind for f in report.findings] == [Kind.REGISTRY_NOT_ASKED]
    # an incompatible candidate still fails: the local engine says so
    assert not check_against_registry(
        client, load_schema_file(BREAKING), "taxi-rides-value"
    ).compatible


def test_a_gate_whose_registry_cannot_judge_passes_on_the_local_verdict(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    _cannot_judge(fake)
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    assert gate.passed
    row = {r.subject: r for r in gate.report.subjects}["taxi-rides-value"]
    assert [f.kind for f in row.findings] == [Kind.REGISTRY_NOT_ASKED]


# ---- gate ----------------------------------------------------------------------------------


def test_gate_skips_what_the_registry_holds_and_checks_the_rest(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    assert gate.passed
    assert [(c.subject, c.version) for c in gate.candidates] == [
        ("taxi-rides-key", 1),
        ("taxi-rides-value", 2),
    ]
    rows = {r.subject: r for r in gate.report.subjects}
    assert rows["taxi-rides-value"].checked == (2,)


def test_gate_registers_every_candidate_in_order_when_all_pass(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    done = register_candidates(client, gate)
    assert [(r.subject, r.version) for r in done] == [
        ("taxi-rides-key", 1),
        ("taxi-rides-value", 2),
    ]
    assert len(fake.subjects["taxi-rides-value"]) == 2
    again = gate_against_registry(client, FileTree(store), settings_for(store))
    assert again.passed and again.candidates == ()


def test_gate_registers_nothing_when_one_subject_fails(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    shutil.copy(BREAKING, store / "subjects" / "taxi-rides-value" / "v3.avsc")
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    assert not gate.passed
    row = {r.subject: r for r in gate.report.subjects}["taxi-rides-value"]
    assert row.verdict is Verdict.INCOMPATIBLE and row.checked == (2, 3)
    posts_before = [
        r
        for r in fake.requests
        if r.path.startswith("/subjects/") and r.path.endswith("/versions") and r.method == "POST"
    ]
    with pytest.raises(Exception, match="nothing was registered"):
        register_candidates(client, gate)
    posts = [
        r
        for r in fake.requests
        if r.path.startswith("/subjects/") and r.path.endswith("/versions") and r.method == "POST"
    ]
    assert posts == posts_before == []
    assert "taxi-rides-key" not in fake.subjects


def test_a_registration_failing_half_way_is_rolled_back(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    real_handle = fake.handle
    calls = {"n": 0}

    def flaky(method, path, query, body):
        if method == "POST" and path == "/subjects/taxi-rides-value/versions":
            calls["n"] += 1
            return 500, {"error_code": 50001, "message": "store failed"}
        return real_handle(method, path, query, body)

    fake.handle = flaky
    with pytest.raises(RegistryError) as caught:
        register_candidates(client, gate)
    assert "deleted again" in caught.value.message
    assert "taxi-rides-key" not in fake.subjects  # its fresh registration was undone
    assert calls["n"] == 1


def test_an_edited_registered_version_is_a_violation_not_a_new_version(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    edited = json.loads(V1.read_text())
    edited["doc"] = "edited in place"
    (store / "subjects" / "taxi-rides-value" / "v1.avsc").write_text(json.dumps(edited))
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    row = {r.subject: r for r in gate.report.subjects}["taxi-rides-value"]
    assert [f.kind for f in row.findings] == ["REGISTRY_HISTORY_DIVERGES"]
    assert row.findings[0].location.source.endswith("taxi-rides-value/v1.avsc")
    assert not gate.passed
    assert ("taxi-rides-value", 1) not in [(c.subject, c.version) for c in gate.candidates]


def test_gate_warns_when_config_and_registry_levels_differ(fake, client, store):
    fake.configs["taxi-rides-value"] = "FULL"
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    row = {r.subject: r for r in gate.report.subjects}["taxi-rides-value"]
    assert row.level is Level.FULL
    assert any(f.kind == "LEVEL_DIFFERS" for f in row.findings)


def test_gate_reports_an_invalid_local_file_as_input_error(client, store):
    (store / "subjects" / "taxi-rides-value" / "v3.avsc").write_text('{"type": "record"')
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    assert gate.report.verdict is Verdict.INVALID
    assert json.dumps([f.kind for f in gate.report.findings]).count("INVALID_SCHEMA") == 1


# ---- rollback truthfulness -----------------------------------------------------------------


REGISTER = ("POST", "/subjects/taxi-rides-value/versions")
LOOKUP = ("POST", "/subjects/taxi-rides-value")


def _slow_value_registration(fake, *, then=None):
    """The registry stores taxi-rides-value's new version but answers only once the client has
    given up (its time-out fired, on any machine)."""
    real_handle = fake.handle

    def slow(method, path, query, body):
        if then is not None:
            answer = then(method, path, query, body)
            if answer is not None:
                return answer
        return real_handle(method, path, query, body)

    fake.handle = slow
    fake.stall = lambda method, path: (method, path) == REGISTER


def test_a_registration_stored_despite_a_timeout_is_rolled_back_too(fake, store):
    fake.add("taxi-rides-value", V1.read_text())
    with RegistryClient(RegistrySettings(url=fake.url, retries=0, timeout=0.2)) as client:
        gate = gate_against_registry(client, FileTree(store), settings_for(store))
        _slow_value_registration(fake)
        with pytest.raises(RegistryError) as caught:
            register_candidates(client, gate)
    assert "the registry is as it was" in caught.value.message
    assert "taxi-rides-value v2" in caught.value.message  # found by the lookup, deleted
    assert [v["version"] for v in fake.subjects["taxi-rides-value"]] == [1]
    assert "taxi-rides-key" not in fake.subjects


def test_a_failed_lookup_after_a_timeout_says_the_registry_may_hold_it(fake, store):
    fake.add("taxi-rides-value", V1.read_text())
    registered = {"value": False}

    def lookup_fails(method, path, query, body):
        if method == "POST" and path == "/subjects/taxi-rides-value/versions":
            registered["value"] = True
        elif method == "POST" and path == "/subjects/taxi-rides-value" and registered["value"]:
            return 500, {"error_code": 50001, "message": "store failed"}
        return None

    with RegistryClient(RegistrySettings(url=fake.url, retries=0, timeout=0.2)) as client:
        gate = gate_against_registry(client, FileTree(store), settings_for(store))
        _slow_value_registration(fake, then=lookup_fails)
        with pytest.raises(RegistryError) as caught:
            register_candidates(client, gate)
    message = caught.value.message
    assert "the registry may not be as it was" in message and "is as it was" not in message
    assert "MAY hold taxi-rides-value v2" in message
    assert "schemacli subjects show taxi-rides-value" in caught.value.hint
    assert "--version latest --permanent --yes" in caught.value.hint


def test_a_registration_stored_after_the_lookup_is_never_reported_as_rolled_back(fake, store):
    fake.add("taxi-rides-value", V1.read_text())
    real_handle = fake.handle
    registering, looked_up = threading.Event(), threading.Event()

    def stores_late(method, path, query, body):  # the answer and the storing both come late
        if (method, path) == REGISTER:
            registering.set()
            # stored only after the client's time-out and its lookup: an event, not a sleep
            assert looked_up.wait(120), "the gate never looked the registration up"
        answer = real_handle(method, path, query, body)
        if (method, path) == LOOKUP and registering.is_set():
            looked_up.set()
        return answer

    with RegistryClient(RegistrySettings(url=fake.url, retries=0, timeout=0.2)) as client:
        gate = gate_against_registry(client, FileTree(store), settings_for(store))
        fake.handle = stores_late
        with pytest.raises(RegistryError) as caught:
            register_candidates(client, gate)
    message = caught.value.message
    assert "the registry may not be as it was" in message and "is as it was" not in message
    assert "MAY hold taxi-rides-value v2" in message and "not there when looked up" in message
    assert "schemacli subjects show taxi-rides-value" in caught.value.hint


def test_a_cleanup_delete_that_fails_says_what_remains_and_how_to_delete_it(fake, client, store):
    fake.add("taxi-rides-value", V1.read_text())
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    real_handle = fake.handle

    def refuse(method, path, query, body):
        if method == "POST" and path == "/subjects/taxi-rides-value/versions":
            return 409, {"error_code": 409, "message": "incompatible (concurrent change)"}
        if method == "DELETE":
            return 500, {"error_code": 50001, "message": "store failed"}
        return real_handle(method, path, query, body)

    fake.handle = refuse
    with pytest.raises(SchemacliError) as caught:
        register_candidates(client, gate)
    message = caught.value.message
    assert "the registry is NOT as it was" in message and "is as it was" not in message
    assert "taxi-rides-key v1" in message
    assert (
        "schemacli subjects delete taxi-rides-key --version 1 --permanent --yes"
        in caught.value.hint
    )


def test_a_type_found_among_other_subjects_must_be_declared_for_the_registry(client, store):
    position = {
        "type": "record",
        "name": "Position",
        "namespace": "com.acme",
        "fields": [{"name": "lat", "type": "double"}],
    }
    order = {
        "type": "record",
        "name": "Order",
        "namespace": "com.acme",
        "fields": [{"name": "at", "type": "Position"}],
    }
    for subject, schema in (("positions-value", position), ("orders-value", order)):
        (store / "subjects" / subject).mkdir()
        (store / "subjects" / subject / "v1.avsc").write_text(json.dumps(schema))
    gate = gate_against_registry(client, FileTree(store), settings_for(store))
    assert not gate.passed
    (finding,) = [f for f in gate.report.findings if f.subject == "orders-value"]
    assert finding.kind == "REFERENCE_NOT_IN_REGISTRY"
    assert "positions-value/v1.avsc" in finding.message
    assert "v1.references.json" in finding.hint
