"""The gate's row cache: a subject's row is served from the verdict cache while every file it
read, every name it looked up in the store's names and every reference it followed is as it
was (the row's key and what it consulted); one table per store and base keeps the files' keys
by stat and the last run's rows, so a warm gate reads the table, not a file per subject; the
table is kept in shards, so one subject changed rewrites a few of them
(docs/store.md#the-verdict-cache)."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.evolution.verdicts import VerdictCache, decode_finding, digest
from schemacli.contracts.gate.rows import SubjectReport
from schemacli.contracts.readers.judge import ReaderText
from schemacli.contracts.store.references import Consulted, References
from schemacli.contracts.store.tree import SUBJECTS_DIR, FileTree, Tree, sidecar_path
from schemacli.errors import SchemacliError


@dataclass
class KeyTable:
    """What the last gate of a working tree left for the next one, in a few files of the
    disk cache (SHARDS; reading them beats reading a file per subject): the files' keys by stat,
    compared a subject's folder at a time (``FileKeys``), what each latest version defines
    by content key (``StoreNames``), and the rows by key (each with what it consulted).
    ``rows`` and ``refs``: this run's."""

    known: dict[str, Any]
    rows: dict[str, Any] = field(default_factory=dict)
    refs: list[References] = field(default_factory=list)
    # this run's row keys by subject, each with its context (see ``known_key``)
    keys: dict[str, Any] = field(default_factory=dict)
    # the shards as read (see SHARDS), to write only those that changed
    shards: list[dict[str, Any]] = field(default_factory=list)
    # every subject's folder is as this table has it (``FileTree.unchanged_store``): the
    # store's names are those its rows were served or computed against, not looked up again
    store_as_before: bool = False
    # else, where known: the names the subjects whose folders changed since the table defined
    # then or define now (their latest versions'): a row from the table that looked up none of
    # them finds what it found then (``gate._touched_names``)
    touched: set[str] | None = None

    def row(self, key: str) -> Any:
        rows = self.known.get("rows")
        return rows.get(key) if isinstance(rows, dict) else None

    def known_key(self, subject: str, context: list[Any]) -> str | None:
        """The row key the last gate computed for ``subject`` in the same ``context``. The
        caller asks only when the subject's folder is as that gate listed it (every file's
        stat, ``FileTree.unchanged``): the key is then a function of the context alone."""
        found = self.known["keys"].get(subject)
        if isinstance(found, list) and len(found) == 2 and found[0] == context:
            key = found[1]
            return key if isinstance(key, str) else None
        return None


_PARTS = ("folders", "carried", "files", "names", "rows", "keys")

# The table is kept in shards, each one file of the disk cache: a run that changes one
# subject rewrites the shard that holds it (and those of its new row and names), not the
# whole table (27 MB at 10,000 subjects x 20 versions). A subject's folder listing and its
# row key live in the shard of its name, so the two are always of one writing; rows and
# names are content-keyed (any shard's copy is as good) and files are keyed by their own
# stat. Each shard's entries are racy against that shard's own writing. The count is part
# of the shards' names: a table of another format is never read.
SHARDS = 32
_SUBJECT_PREFIX = f"{SUBJECTS_DIR}/"


def _shard_of(part: str, key: str) -> int:
    """The shard an entry of ``part`` lives in (see SHARDS)."""
    if part in ("folders", "carried") and key.startswith(_SUBJECT_PREFIX):
        key = key[len(_SUBJECT_PREFIX) :]  # with the subject's row key ("keys")
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % SHARDS


def _table_name(tree: FileTree, against: str | None, shard: int) -> str:
    """One table per store and base (a gate with --against keeps rows of its own), in
    SHARDS shards."""
    return digest("gate-table", os.path.abspath(tree.root), against, f"{shard}/{SHARDS}")


def _split(table: dict[str, Any]) -> list[dict[str, Any]]:
    """``table``'s entries by shard."""
    shards: list[dict[str, Any]] = [{part: {} for part in _PARTS} for _ in range(SHARDS)]
    for part in _PARTS:
        for key, value in table[part].items():
            shards[_shard_of(part, key)][part][key] = value
    return shards


def use_key_table(head: Tree, verdicts: VerdictCache, against: str | None) -> KeyTable | None:
    """With a disk cache, the working tree keys its files by stat from the table the last
    gate of this store left (see KeyTable); None without a disk cache or a working tree."""
    if verdicts.disk is None or not isinstance(head, FileTree):
        return None
    known: dict[str, Any] = {part: {} for part in _PARTS}
    racy: dict[str, int] = {}
    shards: list[dict[str, Any]] = []
    for shard in range(SHARDS):
        found = verdicts.disk.load_table(_table_name(head, against, shard))
        value, written = found if found is not None else ({}, 0)
        if not isinstance(value, dict) or not all(
            isinstance(value.get(part), dict) for part in _PARTS
        ):
            value, written = {part: {} for part in _PARTS}, 0
        # a subject's entries are trusted from its own shard only (see SHARDS)
        for part in ("folders", "carried", "keys"):
            if any(_shard_of(part, key) != shard for key in value[part]):
                value[part] = {k: v for k, v in value[part].items() if _shard_of(part, k) == shard}
        shards.append(value)
        for part in _PARTS:
            known[part].update(value[part])
        racy.update(dict.fromkeys(value["folders"], written))
        racy.update(dict.fromkeys(value["files"], written))
        for folder, at in value["carried"].items():  # (FileKeys.table)
            racy[folder] = min(at, written) if isinstance(at, int) else 0
    # a gate --against keys only the subjects git says changed: their folders' stats are
    # taken when they are keyed, not with the listing of the whole store
    head.use_keys(known, 0, racy=racy, stat_all=against is None)
    return KeyTable(known, shards=shards)


def keep_key_table(
    head: Tree, verdicts: VerdictCache, table: KeyTable, against: str | None
) -> None:
    """Write this run's table for the next gate: the shards that differ from those read."""
    if verdicts.disk is None or not isinstance(head, FileTree):
        return
    names = table.known["names"]
    built = [refs.store_names for refs in table.refs if refs.store_names.built]
    if built:  # what this run's latest versions define (at the base too, by blob id)
        names = {key: scan for found in built for key, scan in found.seen.items()}
    new = {**head.file_keys.table(), "names": names, "rows": table.rows, "keys": table.keys}
    if new == table.known:
        return
    for shard, (value, old) in enumerate(zip(_split(new), table.shards, strict=True)):
        if value != old:
            verdicts.disk.store_table(_table_name(head, against, shard), value)


@contextmanager
def consulting(refs: References | None) -> Iterator[Consulted]:
    if refs is None:
        yield Consulted()
        return
    with refs.consulting() as seen:
        yield seen


def row_key(
    subject: str,
    level: Level,
    head: References,
    head_paths: Sequence[tuple[int, str]],
    base: References | None,
    base_paths: Sequence[tuple[int, str]],
    readers: Sequence[ReaderText] = (),
) -> str | None:
    """The primary key of a subject's row: its own files (each version and its references
    file, by content key, and where each is shown), the level, the base, the declared readers
    (who they are and their schemas' texts); None when a file cannot be keyed (reading it
    reports it). What the versions consulted besides their own files (types another file
    defines) is kept in the entry and checked when it is read (``decode_row``)."""
    files: list[list[Any]] = []
    for side, refs, numbered in (("head", head, head_paths), ("base", base, base_paths)):
        if refs is None:
            continue
        paths = [p for _, p in numbered]
        try:
            keys = refs.tree.keys([*paths, *(sidecar_path(p) for p in paths)])
        except SchemacliError:
            return None
        for n, path in numbered:
            if keys[path] is None:
                return None
            files.append([side, n, refs.tree.source(path), keys[path], keys[sidecar_path(path)]])
    who = [
        [
            r.declared.consumer,
            r.declared.owner,
            r.declared.contact,
            list(r.declared.groups),
            str(r.declared.schema_path),
            None if r.text is None else len(r.text),
        ]
        for r in readers
    ]
    return digest(
        "gate-row",
        subject,
        level.value,
        base.tree.label if base is not None else None,
        files,
        who,
        texts=[r.text for r in readers if r.text is not None],
    )


def encode_consulted(
    head: References, head_seen: Consulted, base: References | None, base_seen: Consulted
) -> dict[str, Any] | None:
    """What a row's versions consulted besides their own files, as JSON: per side, each file
    read with its content key, each store name looked up with the definers found, each
    declared reference to a subject's version with the file it named. None when a file
    cannot be keyed."""
    out: dict[str, Any] = {}
    for side, refs, seen in (("head", head, head_seen), ("base", base, base_seen)):
        if refs is None:
            continue
        paths = sorted(seen.files)
        try:
            keys = refs.tree.keys(paths)
        except SchemacliError:
            return None
        out[side] = {
            "files": [[p, keys[p]] for p in paths],
            "names": [[n, b, list(found)] for (n, b), found in sorted(seen.names.items())],
            "targets": [[s, v, p] for (s, v), p in seen.targets.items()],
        }
    return out


def _still_consulted(
    refs: References | None,
    data: Any,
    names_as_before: bool = False,
    touched: set[str] | None = None,
) -> bool:
    """Whether what a cached row consulted on one side (``encode_consulted``) is as it was
    (``names_as_before``: the store's names are those the row was last checked against;
    ``touched``: only these names may find other definitions than then)."""
    if refs is None:
        return data is None
    if not isinstance(data, dict):
        return False
    try:
        files = [(str(p), k) for p, k in data["files"]]
        if files:
            keys = refs.tree.keys([p for p, _ in files])
            if any(keys[p] != k for p, k in files):
                return False
        names = [] if names_as_before else data["names"]
        if touched is not None:
            names = [entry for entry in names if entry[0] in touched]
        return refs.still(names, data["targets"])
    except (SchemacliError, TypeError, ValueError, KeyError):
        return False


def decode_row(
    subject: str,
    level: Level,
    data: Any,
    head: References | None = None,
    base: References | None = None,
    *,
    names_as_before: bool = False,
    touched: set[str] | None = None,
) -> SubjectReport | None:
    """A cached row, when it is one and what it consulted is as it was (else None).
    ``names_as_before``: the row comes from the table of the last run, and every subject's
    folder is as that run listed it (``KeyTable.store_as_before``): the store's names it
    looked up are not looked up again (the files and references it followed still are).
    ``touched`` (a row from that table too): only the names it holds are looked up again."""
    if not isinstance(data, dict):
        return None
    consulted = data.get("consulted")
    if not isinstance(consulted, dict):
        return None
    if not _still_consulted(head, consulted.get("head"), names_as_before, touched):
        return None
    if not _still_consulted(base, consulted.get("base")):
        return None
    try:
        findings = tuple(decode_finding(f) for f in data["findings"])
        checked = tuple(int(n) for n in data["checked"])
        return SubjectReport(subject, level, int(data["versions"]), checked, findings)
    except (TypeError, ValueError, KeyError):
        return None
