"""The store's files, wherever they are read from: its layout, and the ``Tree`` every reader of
it takes.

Layout (see docs/store.md)::

    <store>/subjects/<subject>/v1.avsc, v2.avsc, ...   versions 1..N, oldest first, no gaps
    <store>/subjects/<subject>/v<N>.references.json    the named types a version takes elsewhere
    <store>/migration/...                              examples and converters' schemas: not gated

A :class:`Tree` is a read-only view of those files: ``FileTree`` reads the working tree; a
tree as it was at a git ref (``--against git:REF``) is ``schemacli.gittree.GitTree``, which the
commands build and hand in (nothing in the contract core runs git).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from schemacli.contracts.avro.loader import SIDECAR_SUFFIX
from schemacli.contracts.jsontext.source import read_text
from schemacli.errors import InputError, Location
from schemacli.textfile import Root

SUBJECTS_DIR = "subjects"
VERSION_FILE = re.compile(r"v([1-9][0-9]*)\.avsc")
# A registry numbers versions with a Java int (Confluent's and Karapace's API): a file named
# past it is no version any registry can hold, and the gap before it must not cost its size.
MAX_VERSION = 2**31 - 1


class StoreLayoutError(InputError):
    """The store's files are not laid out as documented (bad file name, gap in versions)."""

    subject: str | None = None  # the subject whose folder holds the problem, if any


class StoreLayoutErrors(StoreLayoutError):
    """Several badly named files: ``problems`` lists each, ``index`` the well-named versions
    (what ``Tree.subjects`` would return), so a caller may report them all and go on."""

    def __init__(self, problems: list[StoreLayoutError], index: dict[str, dict[int, str]]):
        more = len(problems) - 1
        first = problems[0]
        message = first.message + (f" (and {more} more layout problem(s))" if more else "")
        super().__init__(message, location=first.location, hint=first.hint)
        self.problems = problems
        self.index = index


# -- where histories come from ---------------------------------------------------------------


@dataclass(frozen=True)
class VersionFile:
    """One stored version before parsing: its subject, number, display source and text."""

    subject: str
    version: int
    source: str
    text: str
    references: str | None = None  # the text of v<N>.references.json, when there is one


class Tree(Protocol):
    """A read-only view of the store's files (the working tree, or a git commit)."""

    @property
    def label(self) -> str:
        """ "working tree" or "git:REF"."""
        ...

    def subjects(self) -> dict[str, dict[int, str]]:
        """subject -> {version: relative path}; raises InputError for a badly named file."""
        ...

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        """The text of each relative path (None for a missing one if ``optional``)."""
        ...

    def source(self, path: str) -> str:
        """How to name ``path`` in messages."""
        ...

    def keys(self, paths: Sequence[str]) -> dict[str, str | None]:
        """A content key of each relative path (None for a missing file): equal keys, equal
        texts. May read the files; raises InputError as ``read`` does."""
        ...


def text_key(text: str) -> str:
    """A file's content key from its text (see ``Tree.keys``)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# A file's stat as the key table trusts it: [size, mtime_ns, ctime_ns, inode] (a list, as the
# table's JSON gives it back, so the two compare as they are).
Stat = list[int]


def _stat_of(result: os.stat_result) -> Stat:
    return [result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino]


@dataclass
class FileKeys:
    """The content keys of a working tree's files by their stat, as git's index and ruff's
    cache trust them: a file whose size, mtime, ctime and inode are what an earlier run saw
    keeps the key that run computed, unread. A file changed within the clock's granularity of
    the table's writing keeps its stat ("racy"): an entry whose mtime or ctime is not older
    than the table (``racy_ns``, the table file's own mtime) is never trusted, read again.

    ``known``: path -> [size, mtime_ns, ctime_ns, inode, key] from the table; ``seen``: the
    same for what this run listed and keyed (the table to write); ``stats``: this run's
    listing."""

    known: dict[str, list[Any]] = field(default_factory=dict)
    racy_ns: int = 0
    seen: dict[str, list[Any]] = field(default_factory=dict)
    stats: dict[str, Stat] = field(default_factory=dict)
    on: bool = False  # whether the listing takes each file's stat
    index: dict[str, dict[int, str]] | None = None  # the listing's index, when on
    read: int = 0  # files read to key them (for the tests)

    def trusted(self, path: str) -> str | None:
        stat = self.stats.get(path)
        entry = self.known.get(path)
        if stat is None or entry is None or entry[:4] != stat:
            return None
        if stat[1] >= self.racy_ns or stat[2] >= self.racy_ns:
            return None
        key = entry[4] if len(entry) == 5 else None
        return key if isinstance(key, str) else None

    def table(self) -> dict[str, list[Any]]:
        """What to write: this run's keys, and the table's entries for files listed now with
        the stat they had (a subject not keyed this run keeps its files' keys)."""
        out = {
            path: entry
            for path, entry in self.known.items()
            if path in self.stats and entry[:4] == self.stats[path]
        }
        out.update(self.seen)
        return out


def index_names(
    names: Iterable[tuple[str, str]], where: Callable[[str], str]
) -> dict[str, dict[int, str]]:
    """Group (subject, file name) pairs into subject -> {version: relative path}.

    Raises StoreLayoutErrors listing every badly named file (with the index of the rest).
    """
    found: dict[str, dict[int, str]] = {}
    problems: list[StoreLayoutError] = []
    fullmatch = VERSION_FILE.fullmatch
    for subject, name in names:
        if not name.endswith(".avsc"):
            continue  # READMEs and the like may live next to the versions
        match = fullmatch(name) if subject else None
        if match is not None and len(match.group(1)) < 10:  # the usual case, at once
            found.setdefault(subject, {})[int(match.group(1))] = f"{SUBJECTS_DIR}/{subject}/{name}"
            continue
        problem = _name_problem(subject, name, where)
        if problem is not None:
            problem.subject = subject or None
            problems.append(problem)
            continue
        if name.endswith(".avsc"):
            number = int(name[1:-5])  # vN.avsc, checked by _name_problem
            found.setdefault(subject, {})[number] = f"{SUBJECTS_DIR}/{subject}/{name}"
    if problems:
        raise StoreLayoutErrors(problems, found)
    return found


def _name_problem(subject: str, name: str, where: Callable[[str], str]) -> StoreLayoutError | None:
    """What is wrong with the file ``name`` in ``subject``'s folder ("" for subjects/ itself)."""
    if not subject and name.endswith(".avsc"):
        return StoreLayoutError(
            f"{name!r} sits directly in {SUBJECTS_DIR}/, outside any subject",
            location=Location(source=where(f"{SUBJECTS_DIR}/{name}")),
            hint=f"move it to {SUBJECTS_DIR}/<subject>/v<N>.avsc (e.g. "
            f"{SUBJECTS_DIR}/{name.removesuffix('.avsc')}/v1.avsc)",
        )
    rel = f"{SUBJECTS_DIR}/{subject}/{name}"
    if not name.endswith(".avsc"):
        return None  # READMEs and the like may live next to the versions
    match = VERSION_FILE.fullmatch(name)
    if match is None:
        return StoreLayoutError(
            f"{name!r} is not a version file name",
            location=Location(source=where(rel)),
            hint="name the versions of a subject v1.avsc, v2.avsc, ... (no leading zeros); "
            "keep other schemas outside subjects/",
        )
    digits = match.group(1)
    if len(digits) > len(str(MAX_VERSION)) or int(digits) > MAX_VERSION:
        shown = digits if len(digits) <= 20 else f"{digits[:12]}...({len(digits)} digits)"
        return StoreLayoutError(
            f"version {shown} is past the largest version a schema registry can hold "
            f"({MAX_VERSION}, a Java int)",
            location=Location(source=where(rel)),
            hint="number the versions of a subject v1.avsc, v2.avsc, ... in the order they "
            "were registered",
        )
    return None


def _is(entry: os.DirEntry[str], *, dir: bool) -> bool:
    """``entry.is_dir()`` / ``entry.is_file()``, False where the answer is an error (a link
    loop: ELOOP; no permission): reading the file then says what it is, naming it."""
    try:
        return entry.is_dir() if dir else entry.is_file()
    except OSError:
        return False


def _stat(entry: os.DirEntry[str], stats: dict[str, Stat] | None) -> Stat | None:
    """The stat of a listed file when the tree keys files by stat (``stats``), else None."""
    if stats is None:
        return None
    try:
        return _stat_of(entry.stat())
    except OSError:
        return None


_LISTED = "\0listed"  # a key no path can be: marks that subjects/ was listed


@dataclass(frozen=True)
class FileTree:
    """The store in the working tree."""

    root: Path
    display_root: str | None = None
    label: str = "working tree"
    # The regular files under subjects/ when subjects() listed them.
    _files: set[str] = field(default_factory=set, repr=False, compare=False)
    # Content keys by stat (see FileKeys): the table of an earlier run, this run's stats.
    file_keys: FileKeys = field(default_factory=FileKeys, repr=False, compare=False)

    def use_keys(self, known: dict[str, list[Any]], racy_ns: int) -> None:
        """Key files by their stat from now on, trusting ``known`` (a table an earlier run
        wrote at ``racy_ns``, see FileKeys); call before ``subjects``."""
        keys = self.file_keys
        keys.known, keys.racy_ns, keys.on = known, racy_ns, True

    def keys(self, paths: Sequence[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        keys = self.file_keys
        seen, files, stats = keys.seen, self._files, keys.stats
        listed = _LISTED in files
        prefix = f"{SUBJECTS_DIR}/"
        for p in paths:
            entry = seen.get(p)
            if entry is not None:
                out[p] = entry[4]
                continue
            if listed and p not in files and p.startswith(prefix):
                out[p] = None  # not listed: not there
                continue
            if keys.on and p not in stats:
                try:
                    stats[p] = _stat_of(os.stat(self.root / p))
                except OSError:
                    pass  # reading it says what it is
            trusted = keys.trusted(p) if keys.on else None
            if trusted is not None:
                seen[p] = keys.known[p]  # the same entry: nothing new to write
            else:
                text = self.read([p], optional=True)[p]
                keys.read += 1
                trusted = None if text is None else text_key(text)
                if trusted is not None and p in stats:
                    seen[p] = [*stats[p], trusted]
            out[p] = trusted
        return out

    def source(self, path: str) -> str:
        base = self.display_root if self.display_root is not None else str(self.root)
        return f"{base.rstrip('/')}/{path}" if base else path

    @cached_property
    def confined(self) -> Root:
        """The root every file of the store must resolve inside (docs/store.md)."""
        return Root(self.root, f"the store {self.source('').rstrip('/') or '.'}")

    def subjects(self) -> dict[str, dict[int, str]]:
        base = self.root / SUBJECTS_DIR
        if not self.root.is_dir():
            raise StoreLayoutError(
                "the store is a file, not a directory"
                if self.root.exists()
                else "the store directory does not exist",
                location=Location(source=self.source("").rstrip("/") or str(self.root)),
                hint='pass --store DIR, or set store = "..." in [tool.schemacli]',
            )
        if not base.is_dir():  # e.g. --store pointing one folder too high or too low
            raise StoreLayoutError(
                f"the store has no {SUBJECTS_DIR}/ folder, so it holds no subjects",
                location=Location(source=self.source("").rstrip("/") or str(self.root)),
                hint=f"point --store at the folder that holds {SUBJECTS_DIR}/<subject>/v1.avsc "
                "(docs/store.md), or create it with the first subject's v1.avsc",
            )
        # One scandir per folder (the entry types come with the names, no stat per file);
        # the regular files seen are remembered, so read() opens them without asking again.
        # A tree keyed by stat lists once: its keys are those of that listing.
        if self.file_keys.index is not None:
            return {subject: dict(versions) for subject, versions in self.file_keys.index.items()}
        listed = self._files
        listed.clear()
        names: list[tuple[str, str]] = []
        folders = []
        with os.scandir(base) as entries:
            for entry in entries:
                if _is(entry, dir=True):
                    folders.append(entry.name)
                elif _is(entry, dir=False):
                    names.append(("", entry.name))
        stats = self.file_keys.stats if self.file_keys.on else None
        for folder in sorted(folders):
            with os.scandir(base / folder) as entries:
                found = sorted((e.name, _is(e, dir=False), _stat(e, stats)) for e in entries)
            for name, regular, stat in found:
                if regular:
                    path = f"{SUBJECTS_DIR}/{folder}/{name}"
                    listed.add(path)
                    if stat is not None and stats is not None:
                        stats[path] = stat
                if regular or name.endswith(".avsc"):  # a folder named v2.avsc: an error
                    names.append((folder, name))
        listed.add(_LISTED)
        index = index_names(sorted(names, key=lambda n: (n[0] != "", n)), self.source)
        if stats is not None:
            self.file_keys.index = index
        return index

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        texts: dict[str, str | None] = {}
        listed = _LISTED in self._files
        for p in paths:
            if (
                p not in self._files
                and optional
                and ((listed and p.startswith(f"{SUBJECTS_DIR}/")) or not (self.root / p).is_file())
            ):
                texts[p] = None
                continue
            # The bounded reader: a size cap; a FIFO, device, directory or link loop named
            # as such (an InputError naming the file), never a hang or an OSError; nothing
            # that resolves outside the store (a link a pull request adds to /etc/passwd).
            texts[p] = read_text(self.root / p, self.source(p), within=self.confined)
        return texts


def sidecar_path(version_path: str) -> str:
    """``subjects/s/v2.avsc`` -> ``subjects/s/v2.references.json`` (declared references)."""
    return version_path.removesuffix(".avsc") + SIDECAR_SUFFIX
