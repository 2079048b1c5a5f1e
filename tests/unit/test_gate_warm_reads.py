"""What a warm gate reads, once: the rules' pass after the gate (``rules.store.rules_gate``)
does not read again the contract files of a subject the gate read holding none (a subject
with a contract file is still judged by its rules, and the report is what the rules' pass
gives reading every file); the store is indexed as it is listed, and that index is what the
index of its names gives."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.rules.model import CONTRACT_SUFFIX, RulesPolicy
from schemacli.contracts.rules.store import rules_gate
from schemacli.contracts.store.tree import FileTree, StoreLayoutErrors, index_names
from schemacli.gittree import git_tree
from tests.unit.test_store import levels_for, make_store

RATED = {
    "type": "record",
    "name": "Rated",
    "namespace": "acme",
    "fields": [{"name": "total", "type": "double"}],
}
# a rule its field breaks: the rules' pass has a finding to add
BROKEN_RULE = {"name": "typo", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
               "expr": "message.totl >= 0.0"}  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = make_store(
        tmp_path,
        {"plain-value": [RATED, RATED | {"doc": "v2"}], "rated-value": [RATED]},
    )
    contract = {"metadata": {}, "ruleSet": {"domainRules": [BROKEN_RULE]}}
    (root / "subjects/rated-value/v1.contract.json").write_text(json.dumps(contract))
    return root


def calls_on(monkeypatch, owner: type, method: str) -> list[object]:
    """The objects ``owner.method`` is called on from now on (the method still runs)."""
    seen: list[object] = []
    real = getattr(owner, method)

    def counting(self, *args, **kwargs):
        seen.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, method, counting)
    return seen


@pytest.fixture
def contract_reads(monkeypatch) -> list[str]:
    """Every contract file's path a FileTree is asked to read."""
    asked: list[str] = []
    real = FileTree.read

    def counting(self, paths, *, optional=False):
        asked.extend(p for p in paths if p.endswith(CONTRACT_SUFFIX))
        return real(self, paths, optional=optional)

    monkeypatch.setattr(FileTree, "read", counting)
    return asked


def test_a_subject_without_contract_files_has_them_looked_for_once(store, contract_reads):
    tree = FileTree(store)
    levels = levels_for(store, **{"plain-value": Level.BACKWARD})
    report = rules_gate(gate(tree, levels), tree, RulesPolicy())
    plain = [p for p in contract_reads if p.startswith("subjects/plain-value/")]
    assert sorted(plain) == [f"subjects/plain-value/v{n}{CONTRACT_SUFFIX}" for n in (1, 2)]
    # the subject with a contract is read by the rules' pass too, and judged by its rule
    rated = [p for p in contract_reads if p.startswith("subjects/rated-value/")]
    assert rated.count(f"subjects/rated-value/v1{CONTRACT_SUFFIX}") == 2
    row = next(r for r in report.subjects if r.subject == "rated-value")
    assert [f.kind.name for f in row.findings] == ["RULE_UNKNOWN_FIELD"]


def test_the_rules_pass_gives_the_same_report_whether_or_not_it_trusts_the_gates_reading(
    store,
):
    tree = FileTree(store)
    gated = gate(tree, levels_for(store))
    assert gated.without_contracts == {"plain-value"}
    trusted = rules_gate(gated, tree, RulesPolicy())
    read_all = rules_gate(replace(gated, without_contracts=frozenset()), tree, RulesPolicy())
    assert trusted.subjects == read_all.subjects
    assert trusted.verdict == read_all.verdict


def test_the_rules_pass_over_subjects_without_contract_files_does_not_list_the_store_again(
    tmp_path, monkeypatch
):
    root = make_store(tmp_path, {"plain-value": [RATED], "other-value": [RATED]})
    tree = FileTree(root)
    gated = gate(tree, levels_for(root))
    listed = calls_on(monkeypatch, FileTree, "subjects")
    assert rules_gate(gated, tree, RulesPolicy()).subjects == gated.subjects
    assert listed == []


def test_a_listed_tree_answers_files_it_did_not_list_as_absent_and_reads_the_listed_ones(
    store,
):
    tree = FileTree(store)
    tree.subjects()
    absent = ["subjects/plain-value/v1.contract.json", "subjects/plain-value/contract.json"]
    assert tree.read(absent, optional=True) == dict.fromkeys(absent)
    present = "subjects/rated-value/v1.contract.json"
    texts = tree.read([*absent, present], optional=True)
    assert [texts[p] for p in absent] == [None, None]
    assert texts[present] == (store / present).read_text()


# -- the listing indexes each folder as it lists it ------------------------------------------


def _index_and_problems(listing):
    try:
        index = listing()
        problems: list[str] = []
    except StoreLayoutErrors as err:
        index, problems = err.index, [p.message for p in err.problems]
    return [(s, list(v.items())) for s, v in index.items()], problems


def test_the_store_indexed_as_listed_is_what_the_index_of_its_names_gives(tmp_path):
    root = make_store(tmp_path, {"plain-value": [RATED] * 3, "odd-value": [RATED] * 2})
    odd = root / "subjects/odd-value"
    for name in ("v01.avsc", "v1234567890.avsc", "vx.avsc", "v99999999999.avsc", "README.md"):
        (odd / name).write_text("{}")
    (odd / "v3.avsc").mkdir()  # a folder named as a version
    (root / "subjects/plain-value/v1.references.json").write_text("[]")
    (root / "subjects/loose.avsc").write_text("{}")
    (root / "subjects/empty-value").mkdir()
    names = [
        (p.parent.name if p.parent.name != "subjects" else "", p.name)
        for p in (root / "subjects").rglob("*")
        if p.is_file() or p.name.endswith(".avsc")
    ]
    listed = _index_and_problems(FileTree(root).subjects)
    indexed = _index_and_problems(lambda: index_names(sorted(names), FileTree(root).source))
    assert listed == indexed
    assert listed[1]  # the odd names are problems, each named


def test_the_store_at_a_git_ref_is_indexed_as_the_working_tree_holding_the_same_files(
    tmp_path,
):
    if shutil.which("git") is None:
        pytest.fail("git is needed to read a store at a ref")
    root = make_store(tmp_path / "schemas", {"plain-value": [RATED] * 3, "odd-value": [RATED] * 2})
    odd = root / "subjects/odd-value"
    for name in ("v01.avsc", "v1234567890.avsc", "vx.avsc", "v99999999999.avsc", "README.md"):
        (odd / name).write_text("{}")
    (root / "subjects/plain-value/v1.references.json").write_text("[]")
    (root / "subjects/loose.avsc").write_text("{}")
    (root / "subjects/plain-value.old").mkdir()  # sorts before plain-value/ in git's order
    (root / "subjects/plain-value.old/v1.avsc").write_text("{}")
    for args in (("init", "-q"), ("add", "."), ("commit", "-q", "-m", "store")):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )
    at_ref = git_tree("git:HEAD", root)
    try:
        assert _index_and_problems(at_ref.subjects) == _index_and_problems(FileTree(root).subjects)
    finally:
        at_ref.close()


# -- a store as the last run listed it: the names its rows found are as they were ------------


def test_a_warm_gate_over_the_store_as_the_last_run_listed_it_looks_no_name_up_again(
    tmp_path, monkeypatch
):
    from schemacli.contracts.store.nameindex import StoreNames
    from tests.unit.test_gate_warm import cached_gate, orders_store, uncached_gate
    from tests.unit.test_store import ride

    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    built = calls_on(monkeypatch, StoreNames, "_build")
    first = cached_gate(store, cache)
    assert built  # orders-value found Position by name
    built.clear()
    again = cached_gate(store, cache)
    assert built == []
    assert again.subjects == first.subjects == uncached_gate(store).subjects
    # a subject more: the store is not as that run listed it, its names are looked up
    make_store(store, {"other-value": [ride()]})
    third = cached_gate(store, cache)
    assert built
    assert third.subjects == uncached_gate(store).subjects
