"""The gate's warm road: rows that find types in the store's names are cached by what they
consulted; files are keyed by their stat (read only when it changed, racy stats re-read);
``--against`` leaves the subjects unchanged since the ref unjudged and reads the ref's files
through one streamed ``git cat-file``. Every cached answer is compared with an uncached one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from schemacli.contracts.evolution.check import Verdict
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.gate import gate as gate_module
from schemacli.contracts.gate import rowcache
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.store.tree import FileTree, folder_listing, text_key
from schemacli.errors import SchemacliWarning
from schemacli.gittree import git_tree
from tests.unit.test_store import POSITION, make_store, order, position, ride

LEVELS_ALL = Level.FULL_TRANSITIVE
TIP_FIELD = {"name": "tip", "type": "float", "default": 0.0}


def levels(store: Path):
    from tests.unit.test_store import levels_for

    return levels_for(store, **{"orders-value": LEVELS_ALL})


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """The subjects whose rows were computed (not served from the cache)."""
    found: list[str] = []
    real = gate_module._check_subject

    def counting(subject, *args, **kwargs):
        found.append(subject)
        return real(subject, *args, **kwargs)

    monkeypatch.setattr(gate_module, "_check_subject", counting)
    return found


def cached_gate(store: Path, cache: Path, **kwargs):
    return gate(FileTree(store), levels(store), verdicts=VerdictCache(cache, min_cost=0), **kwargs)


def uncached_gate(store: Path, **kwargs):
    return gate(FileTree(store), levels(store), **kwargs)


def orders_store(root: Path) -> Path:
    # orders-value finds Position by name in the store's names (positions-value's latest)
    return make_store(
        root, {"orders-value": [order(), order(TIP_FIELD)], "positions-value": [POSITION]}
    )


# -- rows that find a type in the store's names ----------------------------------------------


def test_a_row_that_finds_a_type_by_name_is_served_warm_while_nothing_it_used_changed(
    tmp_path, checked
):
    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    first = cached_gate(store, cache)
    assert "orders-value" in checked
    checked.clear()
    again = cached_gate(store, cache)
    assert checked == []
    assert again.subjects == first.subjects == uncached_gate(store).subjects


def test_a_change_to_the_defining_subjects_latest_version_checks_the_row_again(tmp_path, checked):
    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    cached_gate(store, cache)
    # a new latest version of the definer: orders-value's versions now mean another Position
    make_store(store, {"positions-value": [POSITION, position(lat="float")]})
    checked.clear()
    again = cached_gate(store, cache)
    assert "orders-value" in checked
    assert again.subjects == uncached_gate(store).subjects
    # the latest version's content changes in place (same file): checked again too
    (store / "subjects" / "positions-value" / "v2.avsc").write_text(
        json.dumps(position(lat="string"))
    )
    checked.clear()
    third = cached_gate(store, cache)
    assert "orders-value" in checked
    assert third.subjects == uncached_gate(store).subjects


def test_a_version_added_to_a_subject_defining_no_name_a_row_used_looks_up_no_name_again(
    tmp_path, checked, monkeypatch
):
    """One subject changed (a version added to rides-value, which defines com.acme.Ride
    only): orders-value's row, which looked up com.acme.Position, is served without the
    store's names built again; the result equals the uncached gate."""
    from schemacli.contracts.store.nameindex import StoreNames

    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    make_store(store, {"rides-value": [ride()]})
    cached_gate(store, cache)
    cached_gate(store, cache)  # the table of a run that saw the store as it is
    make_store(store, {"rides-value": [ride(), ride(TIP_FIELD)]})
    builds: list[int] = []
    real = StoreNames._build
    monkeypatch.setattr(StoreNames, "_build", lambda self: builds.append(1) or real(self))
    checked.clear()
    again = cached_gate(store, cache)
    assert checked == ["rides-value"] and builds == []
    assert again.subjects == uncached_gate(store).subjects


def test_a_changed_subject_whose_new_latest_version_defines_a_name_a_row_used_checks_it_again(
    tmp_path, checked
):
    """rides-value, unchanged until now, gains a version defining com.acme.Position
    otherwise: orders-value's row (which found it in positions-value) is looked up again and
    is ambiguous, as the uncached gate says."""
    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    make_store(store, {"rides-value": [ride()]})
    cached_gate(store, cache)
    cached_gate(store, cache)
    make_store(store, {"rides-value": [ride(), position(lat="float")]})
    checked.clear()
    again = cached_gate(store, cache)
    assert "orders-value" in checked
    row = next(r for r in again.subjects if r.subject == "orders-value")
    assert row.verdict is Verdict.INVALID
    assert again.subjects == uncached_gate(store).subjects


def test_a_new_subject_defining_the_same_name_checks_the_row_again_and_it_is_ambiguous(
    tmp_path, checked
):
    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    assert cached_gate(store, cache).verdict is Verdict.COMPATIBLE
    make_store(store, {"places-value": [position(lat="float")]})
    checked.clear()
    again = cached_gate(store, cache)
    assert "orders-value" in checked
    row = next(r for r in again.subjects if r.subject == "orders-value")
    assert row.verdict is Verdict.INVALID
    assert "com.acme.Position is defined differently by 2 subjects" in row.findings[0].message
    assert again.subjects == uncached_gate(store).subjects


def test_a_new_subject_defining_the_name_identically_after_the_first_leaves_the_row_served(
    tmp_path, checked
):
    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    cached_gate(store, cache)
    make_store(store, {"rides-value": [POSITION]})  # the same body, later by name
    checked.clear()
    again = cached_gate(store, cache)
    assert "orders-value" not in checked
    assert again.subjects == uncached_gate(store).subjects


def test_a_declared_reference_to_latest_follows_a_new_latest_version(tmp_path, checked):
    store, cache = orders_store(tmp_path / "st"), tmp_path / "cache"
    for v in (1, 2):
        refs = [{"name": "com.acme.Position", "subject": "positions-value", "version": "latest"}]
        (store / "subjects" / "orders-value" / f"v{v}.references.json").write_text(json.dumps(refs))
    cached_gate(store, cache)
    make_store(store, {"positions-value": [POSITION, position(lat="string")]})
    checked.clear()
    again = cached_gate(store, cache)
    assert "orders-value" in checked
    assert again.subjects == uncached_gate(store).subjects


# -- files keyed by their stat ---------------------------------------------------------------


def rides_store(root: Path) -> Path:
    return make_store(root, {"rides-value": [ride(), ride(TIP_FIELD)]})


def keyed_tree(store: Path, cache: Path) -> FileTree:
    """The tree the last cached gate saw: run one and return its head."""
    tree = FileTree(store)
    gate(tree, levels(store), verdicts=VerdictCache(cache, min_cost=0))
    return tree


def test_an_edit_of_a_version_file_keeping_its_size_and_mtime_is_seen(tmp_path, checked):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    first = cached_gate(store, cache)
    assert first.verdict is Verdict.COMPATIBLE
    v2 = store / "subjects" / "rides-value" / "v2.avsc"
    before = v2.stat()
    text = v2.read_text()
    edited = text.replace('"float"', '"bytes"', 1)  # total_amount: float -> bytes, same size
    assert len(edited) == len(text) and edited != text
    v2.write_text(edited)
    os.utime(v2, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same size and mtime
    checked.clear()
    again = cached_gate(store, cache)
    assert "rides-value" in checked
    assert again.subjects == uncached_gate(store).subjects
    assert again.verdict is not Verdict.COMPATIBLE


def test_a_touched_but_unchanged_file_is_read_once_then_served_by_its_stat(tmp_path, checked):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    keyed_tree(store, cache)
    v1 = store / "subjects" / "rides-value" / "v1.avsc"
    earlier = v1.stat().st_mtime_ns - 5_000_000_000  # (its ctime becomes now)
    os.utime(v1, ns=(earlier, earlier))
    checked.clear()
    touched = keyed_tree(store, cache)
    assert touched.file_keys.read == 1 and checked == []  # read, same key: the row is served
    settled = keyed_tree(store, cache)
    assert settled.file_keys.read == 0


def folder_table(store: Path, folder: str, keys: dict[str, str]) -> dict:
    """A key table holding ``folder``'s listing as it is now, with ``keys`` by file name."""
    listing, names = folder_listing(store / folder)
    return {"folders": {folder: [listing, " ".join(keys.get(n, "") for n in names)]}}


def damaged(listing: str, field: int, change) -> str:
    """``listing`` with the first entry's ``field`` (0 name, 1 size, 2 mtime, 3 ctime, 4
    inode) changed."""
    first, _, rest = listing.partition("\n")
    parts = first.split("/")
    parts[field] = change(parts[field])
    return "/".join(parts) + ("\n" + rest if rest else "")


def test_a_stat_not_older_than_the_table_is_racy_and_read_again(tmp_path):
    store = rides_store(tmp_path / "st")
    folder, path = "subjects/rides-value", "subjects/rides-value/v1.avsc"
    stat = (store / path).stat()
    newest = max(stat.st_mtime_ns, stat.st_ctime_ns)
    folder_newest = max(
        max(p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in (store / folder).iterdir()
    )
    real = text_key((store / path).read_text())

    def key_with(racy_ns: int) -> str | None:
        tree = FileTree(store)
        tree.use_keys(folder_table(store, folder, {"v1.avsc": "a-stale-key"}), racy_ns)
        tree.subjects()
        return tree.keys([path])[path]

    # older than the table: trusted unread, with its folder or (a newer file beside it) alone
    assert key_with(folder_newest + 1) == "a-stale-key"
    assert key_with(newest + 1) == "a-stale-key"
    assert key_with(newest) == real  # written within the table's tick: racy, read again


def test_a_folder_listed_as_the_table_has_it_gives_every_key_unread(tmp_path):
    store = rides_store(tmp_path / "st")
    folder = "subjects/rides-value"
    names = sorted(p.name for p in (store / folder).iterdir())
    tree = FileTree(store)
    tree.use_keys(folder_table(store, folder, {n: f"key-of-{n}" for n in names}), 2**62)
    tree.subjects()
    paths = [f"{folder}/{n}" for n in names]
    assert tree.keys(paths) == {p: f"key-of-{p.rsplit('/', 1)[1]}" for p in paths}
    assert tree.file_keys.read == 0


@pytest.mark.parametrize(
    ("field", "change"),
    [
        pytest.param(0, lambda v: v + "x", id="name"),
        pytest.param(1, lambda v: str(int(v) + 1), id="size"),
        pytest.param(2, lambda v: str(int(v) - 1), id="mtime"),
        pytest.param(3, lambda v: str(int(v) - 1), id="ctime"),
        pytest.param(4, lambda v: str(int(v) + 1), id="inode"),
    ],
)
def test_a_folder_whose_table_listing_differs_in_any_field_keys_its_files_by_their_own_stat(
    tmp_path, field, change
):
    store = rides_store(tmp_path / "st")
    folder = "subjects/rides-value"
    names = sorted(p.name for p in (store / folder).iterdir())
    table = folder_table(store, folder, {n: f"key-of-{n}" for n in names})
    entry = table["folders"][folder]
    entry[0] = damaged(entry[0], field, change)  # v1.avsc's entry
    tree = FileTree(store)
    tree.use_keys(table, 2**62)
    tree.subjects()
    assert not tree.unchanged(folder)
    v1, v2 = f"{folder}/v1.avsc", f"{folder}/v2.avsc"
    expected_v1 = text_key((store / v1).read_text())  # read again
    assert tree.keys([v1, v2]) == {v1: expected_v1, v2: "key-of-v2.avsc"}  # v2's as it is


def test_a_folder_with_a_file_more_or_less_than_its_table_listing_is_not_trusted_whole(
    tmp_path,
):
    store = rides_store(tmp_path / "st")
    folder = "subjects/rides-value"
    names = sorted(p.name for p in (store / folder).iterdir())
    listing, keys = folder_table(store, folder, {n: f"key-of-{n}" for n in names})["folders"][
        folder
    ]
    shorter = [listing.rpartition("\n")[0], keys.rpartition(" ")[0]]
    longer = [listing + "\nv9.avsc/1/1/1/1", keys + " key-of-v9"]
    for entry in (shorter, longer):
        tree = FileTree(store)
        tree.use_keys({"folders": {folder: entry}}, 2**62)
        tree.subjects()
        assert not tree.unchanged(folder)


def test_a_file_name_with_a_line_break_keeps_its_folder_listing_unambiguous(tmp_path):
    store = rides_store(tmp_path / "st")
    folder = "subjects/rides-value"
    (store / folder / "notes\nv1.txt").write_text("a note, not a version")
    names = sorted(p.name for p in (store / folder).iterdir())
    table = folder_table(store, folder, {n: f"key-of-{n.replace(chr(10), '')}" for n in names})
    tree = FileTree(store)
    tree.use_keys(table, 2**62)
    tree.subjects()
    assert tree.unchanged(folder)
    paths = [f"{folder}/{n}" for n in names]
    keys = tree.keys(paths)
    assert keys[f"{folder}/v1.avsc"] == "key-of-v1.avsc"
    # a table whose listing is not one this code writes trusts nothing of the folder
    table["folders"][folder][0] += "\ntrailing text"
    tree = FileTree(store)
    tree.use_keys(table, 2**62)
    tree.subjects()
    assert not tree.unchanged(folder)
    assert tree.keys([f"{folder}/v1.avsc"])[f"{folder}/v1.avsc"] == text_key(
        (store / folder / "v1.avsc").read_text()
    )


def test_a_folder_with_one_file_changed_reads_that_file_only(tmp_path, checked):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    keyed_tree(store, cache)
    v2 = store / "subjects" / "rides-value" / "v2.avsc"
    v2.write_text(v2.read_text() + "\n")  # a new size and mtime: the folder's listing changed
    checked.clear()
    again = keyed_tree(store, cache)
    assert again.file_keys.read == 1  # v2 alone: the folder's other files keep their keys
    assert checked == ["rides-value"]


def test_a_file_added_to_a_folder_is_seen_and_keyed(tmp_path, checked):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    first = cached_gate(store, cache)
    folder = store / "subjects" / "rides-value"
    newest = max(int(p.stem[1:]) for p in folder.glob("v*.avsc"))
    (folder / f"v{newest + 1}.avsc").write_text((folder / f"v{newest}.avsc").read_text())
    checked.clear()
    again = cached_gate(store, cache)
    assert "rides-value" in checked
    assert again.subjects == uncached_gate(store).subjects != first.subjects


def test_a_subject_whose_folder_is_as_the_last_gate_listed_it_keeps_its_row_key(
    tmp_path, monkeypatch, checked
):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    first = cached_gate(store, cache)
    keyed: list[str] = []
    real = gate_module.row_key

    def counting(subject, *args, **kwargs):
        keyed.append(subject)
        return real(subject, *args, **kwargs)

    monkeypatch.setattr(gate_module, "row_key", counting)
    checked.clear()
    warm = keyed_tree(store, cache)
    assert keyed == [] and checked == [] and warm.file_keys.read == 0
    assert cached_gate(store, cache).subjects == first.subjects
    # shown from elsewhere: the row's sources differ, so its key is computed again
    gate(FileTree(store, display_root="elsewhere"), levels(store), verdicts=VerdictCache(cache))
    assert keyed == ["rides-value"]
    v1 = store / "subjects" / "rides-value" / "v1.avsc"
    v1.write_text(v1.read_text() + "\n")
    keyed.clear()
    cached_gate(store, cache)
    assert keyed == ["rides-value"]


# -- --against: only what a change brings ----------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    if shutil.which("git") is None:
        pytest.fail("git is needed for the --against tests")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    # broken-value's v2 breaks v1 (committed so): an unchanged subject under --against
    make_store(
        tmp_path / "schemas",
        {
            "broken-value": [ride(), ride(total_type="string")],
            "rides-value": [ride()],
            "calm-value": [ride()],
        },
    )
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def test_under_against_an_unchanged_subject_is_not_judged_again_and_a_changed_one_fully(repo):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(), ride({"name": "zone", "type": "string"})]})
    base = git_tree("git:HEAD", store)
    try:
        report = gate(FileTree(store), levels(store), base=base, changed=base.changed_paths())
    finally:
        base.close()
    rows = {r.subject: r for r in report.subjects}
    assert not rows["broken-value"].judged and rows["broken-value"].findings == ()
    assert rows["broken-value"].versions == 2
    assert not rows["calm-value"].judged
    assert rows["rides-value"].judged and rows["rides-value"].checked == (2,)
    assert [f.kind for f in rows["rides-value"].findings] == ["READER_FIELD_MISSING_DEFAULT_VALUE"]
    assert report.not_judged == 2
    # the changed subject's row is the one the whole gate gives
    everything = gate(FileTree(store), levels(store), base=git_tree("git:HEAD", store))
    assert next(r for r in everything.subjects if r.subject == "rides-value") == rows["rides-value"]


def test_under_against_only_the_changed_subjects_folders_take_their_stats(repo, tmp_path):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(), ride({"name": "zone", "type": "string"})]})
    head = FileTree(store)
    base = git_tree("git:HEAD", store)
    try:
        report = gate(
            head,
            levels(store),
            base=base,
            verdicts=VerdictCache(tmp_path / "cache", min_cost=0),
            changed=base.changed_paths(),
        )
    finally:
        base.close()
    assert set(head.file_keys.listings) == {"subjects/rides-value"}
    assert [r.subject for r in report.subjects if not r.judged] == ["broken-value", "calm-value"]


def test_the_changed_paths_are_what_git_sees_changed_added_deleted_and_untracked(repo):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(), ride(TIP_FIELD)]})  # untracked v2
    (store / "subjects" / "calm-value" / "v1.avsc").write_text(json.dumps(ride(TIP_FIELD)))
    (store / "subjects" / "broken-value" / "v2.avsc").unlink()
    base = git_tree("git:HEAD", store)
    assert base.changed_paths() == {
        "subjects/rides-value/v2.avsc",
        "subjects/calm-value/v1.avsc",
        "subjects/broken-value/v2.avsc",
    }


def test_the_ref_read_through_one_streamed_cat_file_gives_every_text_as_it_was(repo):
    store = repo / "schemas"
    base = git_tree("git:HEAD", store)
    try:
        index = base.subjects()
        paths = [p for versions in index.values() for p in versions.values()]
        texts = base.read(paths * 40)  # more than one chunk of requests
        missing = base.read(["subjects/rides-value/v9.avsc"], optional=True)
    finally:
        base.close()
    for path in paths:
        assert texts[path] == (store / path).read_text()
    assert missing == {"subjects/rides-value/v9.avsc": None}


def test_under_against_the_cached_gate_gives_what_the_uncached_one_gives(repo, tmp_path):
    store = repo / "schemas"
    make_store(store, {"rides-value": [ride(), ride({"name": "zone", "type": "string"})]})
    make_store(store, {"orders-value": [order()], "positions-value": [POSITION]})

    def against(cache: VerdictCache):
        base = git_tree("git:HEAD", store)
        try:
            return gate(
                FileTree(store), levels(store), base=base, verdicts=cache,
                changed=base.changed_paths(),
            ).subjects  # fmt: skip
        finally:
            base.close()

    fresh = against(VerdictCache())
    assert against(VerdictCache(tmp_path / "cache", min_cost=0)) == fresh
    assert against(VerdictCache(tmp_path / "cache", min_cost=0)) == fresh


# -- the key table in shards -----------------------------------------------------------------


def table_files(cache: Path) -> dict[str, int]:
    """The key table's shard files under ``cache``, each with its mtime (ns)."""
    return {p.name: p.stat().st_mtime_ns for p in cache.rglob("tables/*.table")}


def test_one_subject_changed_rewrites_only_the_shards_that_hold_its_entries(tmp_path, checked):
    subjects = {f"topic{i}-value": [ride(), ride(TIP_FIELD)] for i in range(48)}
    store, cache = make_store(tmp_path / "st", subjects), tmp_path / "cache"
    cached_gate(store, cache)
    before = table_files(cache)
    assert 1 < len(before) <= rowcache.SHARDS  # (a shard that holds nothing is not written)
    warm = cached_gate(store, cache)
    assert table_files(cache) == before  # nothing changed: nothing written
    assert warm.subjects == uncached_gate(store).subjects
    folder = store / "subjects" / "topic7-value"
    (folder / "v3.avsc").write_text((folder / "v2.avsc").read_text())
    checked.clear()
    changed = cached_gate(store, cache)
    assert checked == ["topic7-value"]
    assert changed.subjects == uncached_gate(store).subjects
    after = table_files(cache)
    rewritten = [name for name in after if after[name] != before.get(name)]  # (or new)
    # its folder and row key (one shard), its new row and its old row's, its latest version's
    # names and the old one's: never the whole table
    assert 1 <= len(rewritten) <= 5
    checked.clear()
    assert cached_gate(store, cache).subjects == changed.subjects and checked == []


def shard_holding(
    tree: FileTree, cache: Path, subject: str, against: str | None = None
) -> tuple[str, Path]:
    """The name and the file of the shard that holds ``subject``'s folder entry."""
    index = rowcache._shard_of("keys", subject)
    name = rowcache._table_name(tree, against, index)
    return name, next(cache.rglob(f"tables/{name}.table"))


def test_a_shard_is_racy_against_its_own_writing_not_the_newest_shards(tmp_path):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    keyed_tree(store, cache)
    folder, path = "subjects/rides-value", "subjects/rides-value/v1.avsc"
    disk = VerdictCache(cache, min_cost=0).disk
    assert disk is not None
    name, shard_file = shard_holding(FileTree(store), cache, "rides-value")
    shard, _ = disk.load_table(name)
    shard["folders"][folder][1] = " ".join(
        "a-stale-key" for _ in shard["folders"][folder][1].split(" ")
    )
    disk.store_table(name, shard)
    newest = max(
        max(p.stat().st_mtime_ns, p.stat().st_ctime_ns) for p in (store / folder).iterdir()
    )
    own = max((store / path).stat().st_mtime_ns, (store / path).stat().st_ctime_ns)
    real = text_key((store / path).read_text())

    def key_with_shard_written_at(written: int) -> str | None:
        os.utime(shard_file, ns=(written, written))
        tree = FileTree(store)
        assert rowcache.use_key_table(tree, VerdictCache(cache, min_cost=0), None) is not None
        tree.subjects()
        return tree.keys([path])[path]

    # the other shards are newer than every file; this one's own time decides
    assert key_with_shard_written_at(newest + 1) == "a-stale-key"  # trusted unread
    assert key_with_shard_written_at(own) == real  # within its tick: racy, read again


def test_a_subjects_entry_found_in_another_shard_than_its_own_is_not_trusted(tmp_path):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    keyed_tree(store, cache)
    folder, path = "subjects/rides-value", "subjects/rides-value/v1.avsc"
    disk = VerdictCache(cache, min_cost=0).disk
    assert disk is not None
    tree = FileTree(store)
    own, _ = shard_holding(tree, cache, "rides-value")
    shard, _ = disk.load_table(own)
    entry = [shard["folders"][folder][0], "a-stale-key a-stale-key"]
    other = next(
        i for i in range(rowcache.SHARDS) if i != rowcache._shard_of("keys", "rides-value")
    )
    stray = {part: {} for part in ("folders", "carried", "files", "names", "rows", "keys")}
    stray["folders"][folder] = entry
    disk.store_table(rowcache._table_name(tree, None, other), stray)
    del shard["folders"][folder]
    disk.store_table(own, shard)
    assert rowcache.use_key_table(tree, VerdictCache(cache, min_cost=0), None) is not None
    tree.subjects()
    assert not tree.unchanged(folder)
    assert tree.keys([path])[path] == text_key((store / path).read_text())


def test_a_table_of_another_engine_is_never_read(tmp_path, checked, monkeypatch):
    store, cache = rides_store(tmp_path / "st"), tmp_path / "cache"
    keyed_tree(store, cache)
    from schemacli.contracts.evolution import diskcache

    (tables,) = {p.parent for p in cache.rglob("tables/*.table")}
    monkeypatch.setattr(diskcache, "engine_id", lambda: "another-engine")
    verdicts = VerdictCache(cache, min_cost=0)
    assert verdicts.disk is not None
    shutil.copytree(tables, verdicts.disk.root / "tables")  # its files, under this engine
    tree = FileTree(store)
    with pytest.warns(SchemacliWarning, match="engine version"):
        table = rowcache.use_key_table(tree, verdicts, None)
    assert table is not None and not any(table.known[part] for part in table.known)


def test_a_folder_entry_carried_over_unlisted_stays_racy_against_its_own_writing(tmp_path):
    # topic90-value's entries live in the shard of rides-value's (rowcache._shard_of)
    assert rowcache._shard_of("keys", "topic90-value") == rowcache._shard_of("keys", "rides-value")
    subjects = {"rides-value": [ride(), ride(TIP_FIELD)], "topic90-value": [ride()]}
    store, cache, against = make_store(tmp_path / "st", subjects), tmp_path / "cache", "git:base"
    rides, other = "subjects/rides-value", "subjects/topic90-value/v1.avsc"
    v1 = f"{rides}/v1.avsc"

    def keyed(*paths: str) -> dict[str, str | None]:
        """A gate --against's table use: only ``paths`` keyed (their folders listed)."""
        verdicts = VerdictCache(cache, min_cost=0)
        tree = FileTree(store)
        table = rowcache.use_key_table(tree, verdicts, against)
        assert table is not None
        tree.subjects()
        found = tree.keys(list(paths))
        rowcache.keep_key_table(tree, verdicts, table, against)
        return found

    keyed(v1, f"{rides}/v2.avsc", other)
    # rides-value's entry, written within its v1's tick (racy), with keys that are stale
    disk = VerdictCache(cache, min_cost=0).disk
    assert disk is not None
    name, shard_file = shard_holding(FileTree(store), cache, "rides-value", against)
    shard, _ = disk.load_table(name)
    shard["folders"][rides][1] = "a-stale-key a-stale-key"
    disk.store_table(name, shard)
    own = max((store / v1).stat().st_mtime_ns, (store / v1).stat().st_ctime_ns)
    os.utime(shard_file, ns=(own, own))
    # a run that keys only the other subject rewrites the shard, carrying rides-value over
    (store / other).write_text((store / other).read_text() + "\n")
    keyed(other)
    assert shard_file.stat().st_mtime_ns > own
    # rides-value's entry is still racy against the writing that took its stats
    assert keyed(v1)[v1] == text_key((store / v1).read_text())
