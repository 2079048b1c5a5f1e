"""The warm gate's two roads to "which files changed since the key table": every file's stat
taken in Python, or, in a git work tree, git's index proving a subject folder unchanged
(``gittree.index_view``, ``FileTree.use_index``). Fed the same store and the same edits, the
two roads must give every file its true content key, and the gate the report an uncached
gate gives."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from schemacli import gittree
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.store.tree import FileTree, text_key
from tests.unit.test_store import make_store, ride

TIP = {"name": "tip", "type": "float", "default": 0.0}
SUBJECTS = ["alpha-value", "beta-value", "gamma-value"]


@pytest.fixture(autouse=True)
def no_clock_margin(monkeypatch):
    """The stores here are a second old: a folder is recorded with its tree id when nothing in
    it is newer than the moment git was asked (the margin guards a clock a tick behind)."""
    monkeypatch.setattr(gittree, "_CLOCK_MARGIN_NS", 0)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def repo_store(root: Path) -> Path:
    """A git repository whose ``store/`` holds three subjects of two versions, committed."""
    store = make_store(root / "store", {s: [ride(), ride(TIP)] for s in SUBJECTS})
    git(root, "init", "-q")
    git(root, "add", "store")
    git(root, "commit", "-q", "-m", "store")
    return store


def road_tree(store: Path, *, index: bool) -> FileTree:
    tree = FileTree(store)
    if index:
        tree.use_index(gittree.index_view(store))
    return tree


def run(store: Path, cache: Path, *, index: bool):
    tree = road_tree(store, index=index)
    report = gate(tree, _levels(store), verdicts=VerdictCache(cache, min_cost=0))
    return tree, report


def _levels(store: Path):
    from tests.unit.test_store import levels_for

    return levels_for(store)


def true_keys(store: Path) -> dict[str, str]:
    out = {}
    for path in sorted((store / "subjects").glob("*/*")):
        if path.is_file():
            out[path.relative_to(store).as_posix()] = text_key(path.read_text(encoding="utf-8"))
    return out


def keys_by_road(store: Path, cache: Path, *, index: bool) -> dict[str, str | None]:
    """Every regular file's content key as a warm run of that road gives it."""
    tree, _ = run(store, cache, index=index)
    again = road_tree(store, index=index)
    from schemacli.contracts.gate import rowcache

    rowcache.use_key_table(again, VerdictCache(cache, min_cost=0), None)
    again.subjects()
    paths = list(true_keys(store))
    return again.keys(paths)


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` with ``old`` replaced by ``new`` (same length), its mtime put back."""
    stat = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _folder(store: Path, subject: str = "beta-value") -> Path:
    return store / "subjects" / subject


def _assume_unchanged_edit(store: Path) -> None:
    git(store.parent, "update-index", "--assume-unchanged", "store/subjects/beta-value/v2.avsc")
    _edit_in_place(_folder(store) / "v2.avsc", '"float"', '"int"  ')


def _staged_then_restored(store: Path) -> None:
    path = _folder(store) / "v2.avsc"
    before = path.read_text(encoding="utf-8")
    path.write_text(before.replace('"tip"', '"tap"'), encoding="utf-8")
    git(store.parent, "add", "store")
    path.write_text(before, encoding="utf-8")  # the index now differs from HEAD


def _committed(store: Path) -> None:
    _edit_in_place(_folder(store) / "v2.avsc", '"float"', '"int"  ')
    git(store.parent, "commit", "-q", "-am", "edit")


def _linked(store: Path) -> None:
    target = _folder(store, "alpha-value") / "v2.avsc"
    (_folder(store) / "v2.avsc").unlink()
    (_folder(store) / "v2.avsc").symlink_to(os.path.relpath(target, _folder(store)))


def _ignored(store: Path) -> None:
    (store.parent / ".gitignore").write_text("*.bak\n", encoding="utf-8")
    (_folder(store) / "v3.avsc.bak").write_text("{}", encoding="utf-8")


def _attributes(store: Path) -> None:
    (store / ".gitattributes").write_text("*.avsc text eol=crlf\n", encoding="utf-8")
    _edit_in_place(_folder(store) / "v2.avsc", '"float"', '"int"  ')


EDITS: dict[str, Callable[[Path], None]] = {
    "an edit in place keeping size and mtime": lambda store: _edit_in_place(
        _folder(store) / "v2.avsc", '"float"', '"int"  '
    ),
    "a version added (untracked)": lambda store: (_folder(store) / "v3.avsc").write_text(
        json.dumps(ride(TIP, {"name": "x", "type": ["null", "int"], "default": None})),
        encoding="utf-8",
    ),
    "a version deleted": lambda store: (_folder(store) / "v2.avsc").unlink(),
    "a version renamed": lambda store: (_folder(store) / "v2.avsc").rename(
        _folder(store) / "v3.avsc"
    ),
    "a subject renamed": lambda store: _folder(store).rename(_folder(store, "delta-value")),
    "a mode changed": lambda store: (_folder(store) / "v2.avsc").chmod(0o755),
    "a version replaced by a link": _linked,
    "an untracked file beside the versions": lambda store: (
        _folder(store) / "README.md"
    ).write_text("notes", encoding="utf-8"),
    "an ignored file beside the versions": _ignored,
    "an empty folder named like a version": lambda store: (_folder(store) / "v3.avsc").mkdir(),
    "an edit hidden by assume-unchanged": _assume_unchanged_edit,
    "a change staged, then undone in the work tree": _staged_then_restored,
    "a change committed": _committed,
    "an attributes file converting line ends": _attributes,
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_the_index_road_and_the_stat_road_key_every_file_as_its_content(tmp_path, edit):
    store = repo_store(tmp_path / "repo")
    caches = {road: tmp_path / f"cache-{road}" for road in ("stat", "index")}
    for _ in range(2):  # the first run keys every file; the second records the tree ids
        for road, cache in caches.items():
            run(store, cache, index=road == "index")
    proving, _ = run(store, caches["index"], index=True)
    assert proving.file_keys.proven == {f"subjects/{s}" for s in SUBJECTS}
    EDITS[edit](store)
    truth = true_keys(store)
    uncached = gate(FileTree(store), _levels(store)).subjects
    for road, cache in caches.items():
        keys = keys_by_road(store, cache, index=road == "index")
        assert keys == truth, road
        _, report = run(store, cache, index=road == "index")
        assert report.subjects == uncached, road


def test_a_racy_edit_just_after_the_table_is_seen_by_the_index_road(tmp_path):
    """An edit in place keeping size and mtime, made in the tick the table was written in:
    git's index (its own racy check, or the ctime) finds it, as the stat road does."""
    store = repo_store(tmp_path / "repo")
    cache = tmp_path / "cache"
    for _ in range(3):
        run(store, cache, index=True)
    _edit_in_place(_folder(store) / "v2.avsc", '"float"', '"int"  ')
    tree, report = run(store, cache, index=True)
    assert "subjects/beta-value" not in tree.file_keys.proven
    assert report.subjects == gate(FileTree(store), _levels(store)).subjects


def test_outside_a_git_work_tree_there_is_no_index_view(tmp_path):
    store = make_store(tmp_path / "store", {"alpha-value": [ride()]})
    assert gittree.index_view(store) is None


def test_a_repository_without_a_commit_has_no_index_view(tmp_path):
    store = make_store(tmp_path / "store", {"alpha-value": [ride()]})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "store")
    assert gittree.index_view(store) is None


def test_a_folder_git_finds_changed_has_no_tree_id(tmp_path):
    store = repo_store(tmp_path / "repo")
    _edit_in_place(_folder(store) / "v2.avsc", '"float"', '"int"  ')
    view = gittree.index_view(store)
    assert view is not None
    assert set(view.trees) == {"subjects/alpha-value", "subjects/gamma-value"}
