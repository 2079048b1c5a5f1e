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
import itertools
import operator
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeGuard

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
# A folder's listing as the key table keeps it: one text, a line "name/size/mtime_ns/ctime_ns/
# inode" per regular file, by name (a file name holds no "/", so the text says each entry
# alone even where a name holds a line break). One string per folder: the table of 10,000
# folders decodes in a fraction of the time lists of numbers take.
Listing = str
# One entry of this run's listing: the file's name, its line, its newest mtime or ctime.
Entry = tuple[str, str, int]
_ENTRY = re.compile(r"([^/]*)/[0-9]+/[0-9]+/[0-9]+/[0-9]+(?:\n|\Z)")
_PLAIN_VERSION = re.compile(r"^v([1-9][0-9]{0,8})\.avsc$", re.MULTILINE)  # _plain_number's
_AVSC = re.compile(r"\.avsc$", re.MULTILINE)
_LISTING = re.compile(r"(?:[^/]*/[0-9]+/[0-9]+/[0-9]+/[0-9]+(?:\n|\Z))+")  # a whole listing


def _entries_of(listing: Listing) -> list[tuple[str, str]]:
    """A table's listing's entries: (name, its line); [] for a text this code did not write."""
    found = [(m.group(1), m.group(0).removesuffix("\n")) for m in _ENTRY.finditer(listing)]
    return found if sum(len(line) + 1 for _, line in found) == len(listing) + 1 else []


def _stat_of(result: os.stat_result) -> Stat:
    return [result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino]


def _dir_stat(result: os.stat_result) -> tuple[str, int]:
    """A subject folder's own stat as the key table keeps it ("size/mtime_ns/ctime_ns/inode":
    any name added, removed or renamed in it moves its mtime and ctime), and its newest time."""
    mtime, ctime = result.st_mtime_ns, result.st_ctime_ns
    text = f"{result.st_size}/{mtime}/{ctime}/{result.st_ino}"
    return text, mtime if mtime > ctime else ctime


@dataclass(frozen=True)
class IndexView:
    """What git's index says of a store's subject folders, asked by the commands
    (``schemacli.gittree.index_view``; the core runs no git) before the store is listed.

    ``trees``: ``subjects/<subject>`` -> the folder's tree id at HEAD, for each folder whose
    tracked files git finds as HEAD has them (``git diff-index HEAD``: git's own stat of every
    file in C, racy entries compared by content), none of them with git's assume-unchanged or
    skip-worktree bit, no filter or line-ending conversion configured (what git compares is
    then the file's bytes). ``since_ns``: a time before git looked (less a margin for a
    filesystem clock a tick behind). ``tracked``: the names git tracks in each of the given
    folders at HEAD.

    A folder's key-table entry made while git found it so (see ``FileKeys``) keeps its tree id
    and the folder's own stat; a later run that finds the same tree id, git finding the
    folder as HEAD has it again, and the folder's own stat unchanged (no name added, removed
    or renamed in it) takes its listing and keys from the table without a stat of its
    files."""

    trees: dict[str, str]
    since_ns: int
    tracked: Callable[[Sequence[str]], dict[str, list[str]]]


@dataclass
class FileKeys:
    """The content keys of a working tree's files by their stat, as git's index and ruff's
    cache trust them: a file whose size, mtime, ctime and inode are what an earlier run saw
    keeps the key that run computed, unread. A file changed within the clock's granularity of
    the table's writing keeps its stat ("racy"): an entry whose mtime or ctime is not older
    than the table (``racy_ns``, the table file's own mtime) is never trusted, read again.

    A subject's folder is compared as one unit: its listing (every regular file's name and
    stat) equal to the table's, and none of it racy, gives every file its key at once; a
    folder whose listing changed is compared file by file. Files outside a listed folder are
    keyed one by one.

    ``folders``: folder -> [listing, keys] from the table (``keys``: the files' keys in the
    listing's order, joined by spaces, "" for a file not keyed then); ``files``: path ->
    [size, mtime_ns, ctime_ns, inode, key] from the table, for files outside a listed folder.
    ``stat_all``: the listing takes every file's stat at once (a run that keys every
    subject); else a folder is listed with its stats when one of its files is first keyed
    (``gate --against`` keys the changed ones)."""

    folders: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)
    racy_ns: int = 0
    # a folder's or file's own racy time, where the table came in parts written at different
    # times (each part's entries are racy against that part's writing); else ``racy_ns``
    racy: dict[str, int] = field(default_factory=dict)
    on: bool = False
    stat_all: bool = True
    index: dict[str, dict[int, str]] | None = None  # the listing's index, when on
    read: int = 0  # files read to key them (for the tests)
    # this run: each listed folder's listing and its newest mtime or ctime
    listings: dict[str, tuple[Listing, int, list[Entry]]] = field(default_factory=dict)
    # this run: the keys known so far of a folder's files (None: to read), by name
    named: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # this run, outside the listed folders: each file's stat, and [*stat, key] once keyed
    stats: dict[str, Stat] = field(default_factory=dict)
    seen: dict[str, list[Any]] = field(default_factory=dict)
    # this run: the folders whose listing is the table's, none of it racy
    same: set[str] = field(default_factory=set)
    # git's index (see IndexView): None outside a git work tree or when not asked
    git: IndexView | None = None
    # this run, with ``git``: each scanned folder's own stat (taken before its files') and
    # newest time; the scanned folders holding regular files only (no link, folder or other
    # entry); the folders a file was read in; the folders git proved as the table has them
    dirs: dict[str, tuple[str, int]] = field(default_factory=dict)
    flat: set[str] = field(default_factory=set)
    read_in: set[str] = field(default_factory=set)
    proven: set[str] = field(default_factory=set)
    # this run: the folders holding an entry named like a version that is no regular file
    # (a folder named v3.avsc): their listing of regular files does not say all of them
    strayed: set[str] = field(default_factory=set)

    def is_same(self, folder: str, listing: Listing, newest: int) -> bool:
        """Whether a listed folder is as the table has it, none of it racy (one comparison of
        two texts; see the class)."""
        if folder in self.same:
            return True
        stored = self.folders.get(folder)
        if _is_folder_entry(stored) and stored[0] == listing and newest < self.racy_of(folder):
            self.same.add(folder)
            return True
        return False

    def folder_keys(
        self, folder: str, listing: Listing, newest: int, entries: list[Entry]
    ) -> dict[str, str | None]:
        """The keys of a listed folder's files the table lets this run trust (see the class)."""
        found = self.named.get(folder)
        if found is not None:
            return found
        stored = self.folders.get(folder)
        keys: list[str | None] = [None] * len(entries)
        if _is_folder_entry(stored):
            old_keys = [k or None for k in stored[1].split(" ")]
            if self.is_same(folder, listing, newest):  # the usual case: one comparison
                if len(old_keys) == len(entries):
                    keys = old_keys
            else:  # changed, or a file in it racy: compared file by file
                keys = self._by_file(
                    entries, _entries_of(stored[0]), old_keys, self.racy_of(folder)
                )
        found = {name: key for (name, _, _), key in zip(entries, keys, strict=True)}
        self.named[folder] = found
        return found

    def racy_of(self, name: str) -> int:
        """The time a folder's or file's table entry was written at (see the class)."""
        return self.racy.get(name, self.racy_ns)

    @staticmethod
    def _by_file(
        entries: list[Entry], old: list[tuple[str, str]], old_keys: list[str | None], racy: int
    ) -> list[str | None]:
        """The keys of a changed folder's files whose own stat is as it was (not racy)."""
        keys: list[str | None] = [None] * len(entries)
        if len(old) != len(old_keys):  # not a table this code wrote
            return keys
        by_line = {line: key for (_, line), key in zip(old, old_keys, strict=True)}
        for i, (_, line, newest) in enumerate(entries):
            if newest < racy:
                keys[i] = by_line.get(line)
        return keys

    def trusted(self, path: str) -> str | None:
        """The table's key of ``path`` outside a listed folder, when its stat is as it was."""
        stat = self.stats.get(path)
        entry = self.files.get(path)
        if stat is None or not isinstance(entry, list) or entry[:4] != stat:
            return None
        racy = self.racy_of(path)
        if stat[1] >= racy or stat[2] >= racy:
            return None
        key = entry[4] if len(entry) == 5 else None
        return key if isinstance(key, str) else None

    def table(self) -> dict[str, Any]:
        """What to write: each listed folder's listing with the keys known of its files (a
        folder not keyed this run keeps the keys the table had for its unchanged files), and
        the files keyed outside them. ``carried``: the time each folder's entry not listed
        this run was written at (its stats were not taken again: it stays racy against that
        time, not against the writing that carries it over)."""
        folders: dict[str, Any] = {}
        carried: dict[str, int] = {}
        if self.index is not None:  # a folder not listed with its stats this run: as it was
            for subject in self.index:
                folder = f"{SUBJECTS_DIR}/{subject}"
                if folder not in self.listings and _is_folder_entry(self.folders.get(folder)):
                    folders[folder] = self.folders[folder]
                    carried[folder] = self.racy_of(folder)
        for folder, (listing, newest, entries) in self.listings.items():
            stored = self.folders.get(folder)
            if folder not in self.named and self.is_same(folder, listing, newest):
                folders[folder] = stored  # the same entry: nothing new to write
                continue
            named = self.folder_keys(folder, listing, newest, entries)
            keys = " ".join(named[name] or "" for name, _, _ in entries)
            if _is_folder_entry(stored) and stored[0] == listing and stored[1] == keys:
                folders[folder] = stored
            else:
                folders[folder] = [listing, keys]
        if self.git is not None:
            self._with_trees(folders)
        return {"folders": folders, "files": dict(self.seen), "carried": carried}

    def _with_trees(self, folders: dict[str, Any]) -> None:
        """With git's index: each folder's entry with its tree id and own stat where git
        proves its keys (``_recordable``), kept where git proved it this run, else without
        (see IndexView)."""
        view = self.git
        assert view is not None
        candidates = [f for f in folders if f not in self.proven and self._recordable(f, view)]
        tracked = view.tracked(candidates) if candidates else {}
        recorded = set()
        for folder in candidates:
            names = [name for name, _, _ in self.listings[folder][2]]
            if sorted(tracked.get(folder, ())) == names:  # every file tracked (names sorted)
                entry = folders[folder]
                folders[folder] = [entry[0], entry[1], view.trees[folder], self.dirs[folder][0]]
                recorded.add(folder)
        for folder, entry in folders.items():
            if folder not in recorded and folder not in self.proven and len(entry) == 4:
                folders[folder] = entry[:2]

    def _recordable(self, folder: str, view: IndexView) -> bool:
        """Whether this run's listing of ``folder`` and its keys are what git's index says
        of it: git found its tracked files as HEAD has them; it holds regular files only;
        neither it nor any file in it changed since before git looked (the folder's own stat
        taken before its files'); every key comes from the table by an unchanged stat (none
        read this run: a file rewritten between its stat and its read could pair the new
        text's key with the old tree); no attributes file among its files."""
        listed = self.listings.get(folder)
        own = self.dirs.get(folder)
        return (
            folder in view.trees
            and listed is not None
            and not any(name == ".gitattributes" for name, _, _ in listed[2])
            and listed is not None
            and own is not None
            and folder in self.flat
            and folder not in self.read_in
            and own[1] < view.since_ns
            and listed[1] < view.since_ns
            and self.is_same(folder, listed[0], listed[1])
        )


def _is_folder_entry(value: Any) -> TypeGuard[list[str]]:
    """[listing, keys], or [listing, keys, tree id, the folder's own stat] (see IndexView)."""
    return (
        isinstance(value, list)
        and len(value) in (2, 4)
        and all(isinstance(part, str) for part in value)
    )


def index_names(
    names: Iterable[tuple[str, str]], where: Callable[[str], str]
) -> dict[str, dict[int, str]]:
    """Group (subject, file name) pairs into subject -> {version: relative path}.

    Raises StoreLayoutErrors listing every badly named file (with the index of the rest).
    """
    found: dict[str, dict[int, str]] = {}
    problems: list[StoreLayoutError] = []
    for subject, group in itertools.groupby(names, key=_first):
        index_folder(subject, [name for _, name in group], found, problems, where)
    if problems:
        raise StoreLayoutErrors(problems, found)
    return found


def index_folder(
    subject: str,
    names: Iterable[str],
    found: dict[str, dict[int, str]],
    problems: list[StoreLayoutError],
    where: Callable[[str], str],
) -> None:
    """Add one folder's file names (``subject``'s, "" for subjects/ itself), in order, to
    ``found`` (subject -> {version: relative path}) and each badly named one to ``problems``
    (see ``index_names``): the listing indexes each folder as it lists it."""
    versions: dict[int, str] | None = None
    prefix = f"{SUBJECTS_DIR}/{subject}/"
    for name in names:
        if not name.endswith(".avsc"):
            continue  # READMEs and the like may live next to the versions
        number = _plain_number(name) if subject else None
        if number is not None:  # the usual case at once
            if versions is None:
                versions = found.setdefault(subject, {})
            versions[number] = prefix + name
            continue
        problem = _name_problem(subject, name, where)
        if problem is not None:
            problem.subject = subject or None
            problems.append(problem)
            continue
        number = int(name[1:-5])  # vN.avsc, checked by _name_problem
        found.setdefault(subject, {})[number] = prefix + name


_first = operator.itemgetter(0)


def _plain_number(name: str) -> int | None:
    """The version a file named ``*.avsc`` holds when its name is the usual ``vN.avsc`` (N of
    1-9 ASCII digits, no leading zero), else None (the naming rule looks at it)."""
    digits = name[1:-5]
    if (
        name[0] == "v"
        and 0 < len(digits) < 10
        and digits[0] != "0"
        and digits.isascii()
        and digits.isdigit()
    ):
        return int(digits)
    return None


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


@dataclass
class _Scanned:
    """One subject's folder as ``_scan`` found it (see there)."""

    paths: list[str]  # its regular files' relative paths, by name
    versions: dict[int, str]  # its versions, when every name ending .avsc is a plain vN.avsc
    plain: bool  # whether ``versions`` is the folder's whole index (no name to look at twice)
    strays: list[str]  # entries named *.avsc that are no regular file (a folder named v2.avsc)
    listing: Listing = ""
    newest: int = 0
    entries: list[Entry] = field(default_factory=list)
    flat: bool = True  # every entry a regular file, none a link (see IndexView)

    def indexed(self, prefix: str) -> list[str]:
        """The names the folder's index takes, by name: its files and the strays."""
        names = [path[len(prefix) :] for path in self.paths]
        return sorted(names + self.strays) if self.strays else names


def _scan(folder: Path, prefix: str, *, stat: bool) -> _Scanned:
    """One scandir of a subject's folder (``prefix``: its relative path and "/"), indexed in
    the same pass: its regular files' paths, by name, and its versions where every version
    name is a plain ``vN.avsc`` (else ``index_folder`` indexes its names, naming what is
    wrong); with ``stat``, the regular files' listing (see ``Listing``), its newest mtime or
    ctime and its entries (a file whose stat cannot be taken is left out: reading it says
    why)."""
    with os.scandir(folder) as found_entries:
        ordered = sorted(found_entries, key=_entry_name)
    paths: list[str] = []
    versions: dict[int, str] = {}
    plain = True
    strays: list[str] = []
    entries: list[Entry] = []
    newest = 0
    flat = True
    for entry in ordered:
        name = entry.name
        try:  # False where the answer is an error (see _is)
            regular = entry.is_file()
            if flat and (not regular or entry.is_symlink()):
                flat = False
        except OSError:
            regular = flat = False
        if not regular:
            if name.endswith(".avsc"):
                strays.append(name)
                plain = False
            continue
        path = prefix + name
        paths.append(path)
        if name.endswith(".avsc"):
            number = _plain_number(name)
            if number is not None:
                versions[number] = path
            else:
                plain = False
        if not stat:
            continue
        try:
            result = entry.stat()
        except OSError:
            flat = False
            continue
        mtime, ctime = result.st_mtime_ns, result.st_ctime_ns
        latest = mtime if mtime > ctime else ctime
        line = f"{name}/{result.st_size}/{mtime}/{ctime}/{result.st_ino}"
        entries.append((name, line, latest))
        if latest > newest:
            newest = latest
    listing = "\n".join([line for _, line, _ in entries])
    return _Scanned(paths, versions, plain, strays, listing, newest, entries, flat)


def _from_listing(listing: Listing, prefix: str) -> _Scanned | None:
    """A folder as the table's ``listing`` has it (a folder git's index proved unchanged,
    see IndexView): what ``_scan`` would find there, without a stat; None for a listing this
    code did not write or a folder it does not index as listed (``_scan`` then looks)."""
    if not listing or _LISTING.fullmatch(listing) is None:
        return None
    names = _ENTRY.findall(listing)
    lines = "\n".join(names)  # a name per line, unless a name holds a line break
    if lines.count("\n") != len(names) - 1:
        return None
    numbers = _PLAIN_VERSION.findall(lines)  # each plain vN.avsc (see _plain_number)
    if len(numbers) != len(_AVSC.findall(lines)):  # another name ending .avsc
        return None
    paths = [prefix + name for name in names]
    versions = {int(digits): f"{prefix}v{digits}.avsc" for digits in numbers}
    # a proven folder is the table's (``FileKeys.is_same``): its entries' lines and times are
    # never looked at, only their names
    entries: list[Entry] = [(name, "", 0) for name in names]
    return _Scanned(paths, versions, True, [], listing, 0, entries)


def folder_listing(folder: Path) -> tuple[Listing, list[str]]:
    """A folder's listing as the key table keeps it, and its files' names in its order."""
    scanned = _scan(folder, "", stat=True)
    return scanned.listing, [name for name, _, _ in scanned.entries]


_entry_name = operator.attrgetter("name")


_LISTED = "\0listed"  # a key no path can be: marks that subjects/ was listed
_SUBJECTS_PREFIX = f"{SUBJECTS_DIR}/"


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

    def use_keys(
        self,
        known: dict[str, Any],
        racy_ns: int,
        *,
        racy: dict[str, int] | None = None,
        stat_all: bool = True,
    ) -> None:
        """Key files by their stat from now on, trusting ``known`` (a table an earlier run
        wrote at ``racy_ns``: ``{"folders": ..., "files": ...}``, see FileKeys; ``racy``: the
        time each folder's or file's entry was written at, where it differs); call before
        ``subjects``. ``stat_all``: take every file's stat with the listing (a run that keys
        every subject); else each folder's when one of its files is first keyed."""
        keys = self.file_keys
        folders, files = known.get("folders"), known.get("files")
        keys.folders = folders if isinstance(folders, dict) else {}
        keys.files = files if isinstance(files, dict) else {}
        keys.racy_ns, keys.on, keys.stat_all = racy_ns, True, stat_all
        keys.racy = racy if racy is not None else {}

    def use_index(self, view: IndexView | None) -> None:
        """Let git's index prove which subject folders are as the key table has them (see
        IndexView); call before ``subjects``. None: every file's stat is taken (the road
        outside a git work tree)."""
        self.file_keys.git = view

    def keys(self, paths: Sequence[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        keys = self.file_keys
        files = self._files
        listed = _LISTED in files
        prefix = f"{SUBJECTS_DIR}/"
        for p in paths:
            if listed and p.startswith(prefix) and p.count("/") == 2:  # in a subject's folder
                if p not in files:
                    out[p] = None  # not listed: not there
                    continue
                if keys.on:
                    folder, _, name = p.rpartition("/")
                    named = keys.named.get(folder)
                    if named is None:
                        named = keys.folder_keys(folder, *self._listing(folder))
                    key = named.get(name)
                    if key is None and name in named:  # listed with its stat: read to key it
                        key = named[name] = self._read_key(p)
                        keys.read_in.add(folder)
                    elif name not in named:  # its stat could not be taken: not trusted
                        key = self._read_key(p)
                        keys.read_in.add(folder)
                    out[p] = key
                    continue
            entry = keys.seen.get(p)
            if entry is not None:
                out[p] = entry[4]
                continue
            if keys.on and p not in keys.stats:
                try:
                    keys.stats[p] = _stat_of(os.stat(self.root / p))
                except OSError:
                    pass  # reading it says what it is
            trusted = keys.trusted(p) if keys.on else None
            if trusted is None:
                trusted = self._read_key(p)
            if trusted is not None and p in keys.stats:
                keys.seen[p] = [*keys.stats[p], trusted]
            out[p] = trusted
        return out

    def unchanged(self, folder: str) -> bool:
        """Whether a listed subject's ``folder`` (``subjects/<subject>``) is as the table has
        it (every file's name and stat, none racy): every key of its files is the table's."""
        keys = self.file_keys
        if not keys.on or _LISTED not in self._files or folder in keys.strayed:
            return False
        listing, newest, _ = self._listing(folder)
        return keys.is_same(folder, listing, newest)

    def unchanged_store(self) -> bool:
        """Whether every subject's folder is as the table has it (``unchanged``) and the
        table holds no other folder: every file under subjects/ keeps the key the run that
        wrote the table gave it, and the store's subjects are those it had."""
        keys = self.file_keys
        if not keys.on or not keys.stat_all or keys.index is None or keys.strayed:
            return False
        listed = keys.listings
        if listed.keys() != keys.folders.keys():
            return False
        return all(
            keys.is_same(folder, listing, newest) for folder, (listing, newest, _) in listed.items()
        )

    def changed_folders(self) -> list[str] | None:
        """The subject folders (``subjects/<subject>``) this run's listing does not find as
        the table has them (``unchanged``), and those the table holds that it did not list;
        None when the store was not listed with every file's stat against a table."""
        keys = self.file_keys
        if not keys.on or not keys.stat_all or keys.index is None:
            return None
        listed = keys.listings
        out = [
            folder
            for folder, (listing, newest, _) in listed.items()
            if folder in keys.strayed or not keys.is_same(folder, listing, newest)
        ]
        return out + [folder for folder in keys.folders if folder not in listed]

    def table_latest(self, folder: str) -> tuple[str, str] | None:
        """The path and content key of ``folder``'s latest version as the table has it
        (("", "") for a folder without versions), None when the table does not say (no entry,
        a version name indexed otherwise, the latest not keyed then)."""
        stored = self.file_keys.folders.get(folder)
        if not _is_folder_entry(stored):
            return None
        entries, keys = _entries_of(stored[0]), stored[1].split(" ")
        if len(entries) != len(keys):
            return None
        best: tuple[int, str, str] | None = None
        for (name, _), key in zip(entries, keys, strict=True):
            if name.endswith(".avsc"):
                number = _plain_number(name)
                if number is None:
                    return None
                if best is None or number > best[0]:
                    best = (number, name, key)
        if best is None:
            return ("", "")
        return (f"{folder}/{best[1]}", best[2]) if best[2] else None

    def _read_key(self, path: str) -> str | None:
        text = self.read([path], optional=True)[path]
        self.file_keys.read += 1
        return None if text is None else text_key(text)

    def _listing(self, folder: str) -> tuple[Listing, int, list[Entry]]:
        """A listed folder's listing with its files' stats: the one ``subjects`` took, or
        taken now (``stat_all`` off). An empty one when the folder cannot be listed."""
        keys = self.file_keys
        found = keys.listings.get(folder)
        if found is None:
            try:
                scanned = _scan(self.root / folder, "", stat=True)
                listing, newest, entries = scanned.listing, scanned.newest, scanned.entries
            except OSError:
                listing, newest, entries = "", 0, []
            found = keys.listings[folder] = (listing, newest, entries)
        return found

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
        keys = self.file_keys
        if keys.index is not None:
            return {subject: dict(versions) for subject, versions in keys.index.items()}
        listed = self._files
        listed.clear()
        top: list[tuple[str, str]] = []  # files directly in subjects/ (a layout problem)
        folders = []
        stat = keys.on and keys.stat_all
        view = keys.git if stat else None
        own: dict[str, os.DirEntry[str]] = {}  # with git's index: each folder's entry
        with os.scandir(base) as top_entries:
            for entry in top_entries:
                if _is(entry, dir=True):
                    folders.append(entry.name)
                    if view is not None:
                        own[entry.name] = entry
                elif _is(entry, dir=False):
                    top.append(("", entry.name))
        # indexed as listed, in index order: subjects/ first, then each folder's names, by name
        index: dict[str, dict[int, str]] = {}
        problems: list[StoreLayoutError] = []
        index_folder("", [name for _, name in sorted(top)], index, problems, self.source)
        for folder in sorted(folders):
            prefix = f"{SUBJECTS_DIR}/{folder}/"
            scanned = None
            if view is not None:
                scanned = self._proven(folder, own[folder], view)
            if scanned is None:
                scanned = _scan(base / folder, prefix, stat=stat)
                if view is not None and scanned.flat:
                    keys.flat.add(prefix[:-1])
            if stat:
                keys.listings[prefix[:-1]] = (scanned.listing, scanned.newest, scanned.entries)
                if scanned.strays:
                    keys.strayed.add(prefix[:-1])
            listed.update(scanned.paths)
            if scanned.plain:  # indexed as listed
                if scanned.versions:
                    index[folder] = scanned.versions
            else:
                index_folder(folder, scanned.indexed(prefix), index, problems, self.source)
        listed.add(_LISTED)
        if keys.on:
            keys.index = index
        if problems:
            raise StoreLayoutErrors(problems, index)
        return index

    def _proven(self, name: str, entry: os.DirEntry[str], view: IndexView) -> _Scanned | None:
        """Subject ``name``'s folder as the key table has it, when git's index proves it
        unchanged (see IndexView): the same tree id at HEAD, git finding it as HEAD has it,
        and its own stat as the table has it, not racy. Else None, its own stat noted (taken
        before its files' by ``_scan``)."""
        keys = self.file_keys
        folder = f"{SUBJECTS_DIR}/{name}"
        try:
            if entry.is_symlink():
                return None
            own = _dir_stat(entry.stat(follow_symlinks=False))
        except OSError:
            return None
        keys.dirs[folder] = own
        stored = keys.folders.get(folder)
        tree = view.trees.get(folder)
        if (
            tree is None
            or not _is_folder_entry(stored)
            or len(stored) != 4
            or stored[2] != tree
            or stored[3] != own[0]
            or own[1] >= keys.racy_of(folder)
        ):
            return None
        scanned = _from_listing(stored[0], folder + "/")
        if scanned is not None:
            keys.proven.add(folder)
        return scanned

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        listed = _LISTED in self._files
        if (
            optional
            and listed
            and self._files.isdisjoint(paths)
            and all(map(str.startswith, paths, itertools.repeat(_SUBJECTS_PREFIX)))
        ):  # the usual case of a subject's contract files: none listed, none there
            return dict.fromkeys(paths)
        texts: dict[str, str | None] = {}
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
