"""How many HTTP requests the registry-backed commands make, against the real registry.

The registry holds SUBJECTS subjects x VERSIONS versions (tests/stack/registryload.py: every
tenth uses a shared record by reference, which uses a shared enum: two levels) and the two shared
subjects; every command runs in-process against it through a counting proxy
(tests/stack/countproxy.py). Asserted, run by run: the exact number of requests (what
docs/registry.md, "gate --registry and pull: what they ask", says), that no request is sent
twice, and that the requests share at most --concurrency kept-alive connections. Counts, never
times: the times at 1,000 subjects are in bench/README.md (bench/bench_registry.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.stack.countproxy import CountProxy
from tests.stack.registryload import (
    COMMON,
    add_new_versions,
    load,
    subject,
    write_readers,
)

pytestmark = [pytest.mark.integration]

SUBJECTS = 40  # every tenth (4) references the shared Money
VERSIONS = 3
NEW = 5  # new versions registered by the gate (subject 0, one of them, has references)
CONCURRENCY = 8  # the default


@pytest.fixture(scope="module")
def loaded(registry, registry_impl) -> str:
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings

    if registry_impl != "apicurio":
        pytest.fail("the counts below are Apicurio's (its levels come from its rules API)")
    with RegistryClient(RegistrySettings.build(url=registry, env={})) as client:
        if client.list_subjects(prefix="scale-"):  # (filtered here where the registry won't)
            pytest.fail("the registry already holds scale-* subjects (another run's)")
        load(client, SUBJECTS, VERSIONS)
    return registry


@pytest.fixture
def proxy(loaded):
    with CountProxy(loaded) as counting:
        yield counting


NAMES = [*COMMON, *(subject(i) for i in range(SUBJECTS))]
N = len(NAMES)
STORED = SUBJECTS * VERSIONS + len(COMMON)  # versions in the registry


def run(proxy: CountProxy, *args: str, cwd: Path) -> tuple[list[str], str]:
    """Run ``schemacli ARGS --registry PROXY`` in-process; (the request lines, stdout)."""
    from schemacli.app import app

    proxy.take()
    result = CliRunner().invoke(app, [*args, "--registry", proxy.url], catch_exceptions=False)
    connections = proxy.connections
    seen = proxy.take()
    assert result.exit_code == 0, result.output
    assert not proxy.repeated(seen), proxy.repeated(seen)  # nothing asked twice in a run
    assert connections <= CONCURRENCY, f"{connections} connections for {len(seen)} requests"
    return seen, result.stdout


def asked(seen: list[str], start: str) -> int:
    return sum(1 for line in seen if line.startswith(start))


def test_pull_then_gate_ask_once_per_subject_and_for_what_is_new(proxy, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    # cold: per subject its version list, each version, its level (Apicurio's rule: 404 here),
    # and the global rule once; nothing about references (pull stores them as they are)
    seen, _ = run(proxy, "pull", *NAMES, "--store", str(store), "--no-levels", cwd=tmp_path)
    assert len(seen) == N + STORED + N + 1
    assert asked(seen, "GET /apis/registry/v3/admin/rules/COMPATIBILITY") == 1
    snapshot = json.loads((store / "subjects" / subject(0) / "registry.json").read_text())
    assert all(row["fingerprint"] for row in snapshot["versions"])

    # again, nothing new: the store and its snapshot vouch for every version
    seen, _ = run(proxy, "pull", *NAMES, "--store", str(store), "--no-levels", cwd=tmp_path)
    assert len(seen) == N + N + 1
    assert not asked(seen, "GET /apis/ccompat/v7/subjects/scale-0000-value/versions/")

    # the gate after a pull: one request per subject (its version list), nothing new to judge
    seen, _ = run(proxy, "gate", "-q", "--store", str(store), cwd=tmp_path)
    assert len(seen) == N

    # without the pull's snapshot every registry version is asked for, each once; the
    # referenced ones are versions of subjects the store holds: asked once, as those
    bare = tmp_path / "bare"
    shutil.copytree(store, bare)
    for record in bare.glob("subjects/*/registry.json"):
        record.unlink()
    seen, _ = run(proxy, "gate", "-q", "--store", str(bare), cwd=tmp_path)
    assert len(seen) == N + STORED

    # NEW new versions, registered: per such subject its level, the registry's verdict, the
    # lookup, the registration and where the new id is (Apicurio answers the id alone); the
    # global rule once
    touched = add_new_versions(store, NEW, VERSIONS)
    seen, _ = run(proxy, "gate", "-q", "--store", str(store), "--register", cwd=tmp_path)
    assert len(seen) == N + NEW * 5 + 1
    assert asked(seen, "POST /apis/ccompat/v7/compatibility/subjects/") == NEW
    assert asked(seen, "POST /apis/ccompat/v7/subjects/scale-0000-value/versions") == 1

    # the gate again without pulling: the NEW versions registered since the last pull are asked
    # for (the store holds them, its snapshot does not vouch for them), and what the one with
    # references (subject 0's) references, two levels: once each
    seen, _ = run(proxy, "gate", "-q", "--store", str(store), cwd=tmp_path)
    assert len(seen) == N + NEW + 2
    fetched = sorted(line.split()[1].rsplit("/", 3)[1] for line in seen if "/versions/" in line)
    assert fetched == sorted([*touched, *COMMON])


def test_readers_list_asks_each_latest_once_and_each_reference_once(proxy, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    (store / "subjects").mkdir(parents=True)
    names = [subject(i) for i in range(SUBJECTS)]
    write_readers(store, names)
    seen, out = run(proxy, "readers", "list", "--store", str(store), "-o", "json", cwd=tmp_path)
    # the latest of each subject, then the shared Money (4 subjects reference it) and the
    # Currency it references: once each
    assert len(seen) == SUBJECTS + 2
    assert asked(seen, "GET /apis/ccompat/v7/subjects/scale-common-money/versions/1") == 1
    assert asked(seen, "GET /apis/ccompat/v7/subjects/scale-common-currency/versions/1") == 1
    assert json.loads(out)["verdict"] == "compatible"
