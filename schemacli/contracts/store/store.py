"""The local store, the embedded default registry: every subject's version history in files.

Layout (see docs/store.md)::

    <store>/subjects/<subject>/v1.avsc, v2.avsc, ...   versions 1..N, oldest first, no gaps
    <store>/migration/...                              examples and converters' schemas: not gated

The same history can be read from the working tree (``FileTree``) or as it was at a git ref
(``GitTree``, for ``--against git:REF``); ``load_history`` parses a subject's versions with
their declared references, and the named types other subjects' latest versions define
(``StoreNames``). Checking a candidate against a history is ``check``'s; checking a
whole store is ``gate``'s.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from schemacli.contracts.avro.loader import (
    SIDECAR_SUFFIX,
    CircularReferenceError,
    DuplicateDefinitionError,
    Fallback,
    LoadedSchema,
    NameUse,
    SchemaReferenceError,
    collapse_primitives,
    load_schema_document,
    scan_names,
)
from schemacli.contracts.avro.parse import UNDEFINED_NAME
from schemacli.contracts.avro.schema import Names
from schemacli.contracts.jsontext.source import Document, decode_bytes, parse_text, read_text
from schemacli.errors import InputError, Location, SchemacliError, SchemaParseError, UsageError
from schemacli.textfile import Root, resolved

SUBJECTS_DIR = "subjects"
VERSION_FILE = re.compile(r"v([1-9][0-9]*)\.avsc")
# A registry numbers versions with a Java int (Confluent's and Karapace's API): a file named
# past it is no version any registry can hold, and the gap before it must not cost its size.
MAX_VERSION = 2**31 - 1
_GAPS_SHOWN = 5  # gaps listed in a message; the rest are counted


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


def _index_names(
    names: Iterable[tuple[str, str]], where: Callable[[str], str]
) -> dict[str, dict[int, str]]:
    """Group (subject, file name) pairs into subject -> {version: relative path}.

    Raises StoreLayoutErrors listing every badly named file (with the index of the rest).
    """
    found: dict[str, dict[int, str]] = {}
    problems: list[StoreLayoutError] = []
    for subject, name in names:
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


@dataclass(frozen=True)
class FileTree:
    """The store in the working tree."""

    root: Path
    display_root: str | None = None
    label: str = "working tree"
    # The regular files under subjects/ when subjects() listed them.
    _files: set[str] = field(default_factory=set, repr=False, compare=False)

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
        for folder in sorted(folders):
            with os.scandir(base / folder) as entries:
                found = sorted((e.name, _is(e, dir=False)) for e in entries)
            for name, regular in found:
                if regular:
                    listed.add(f"{SUBJECTS_DIR}/{folder}/{name}")
                if regular or name.endswith(".avsc"):  # a folder named v2.avsc: an error
                    names.append((folder, name))
        listed.add(_LISTED)
        return _index_names(sorted(names, key=lambda n: (n[0] != "", n)), self.source)

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


@dataclass(frozen=True)
class GitTree:
    """The store as it was at a git ref: ``git ls-tree`` for names, ``git cat-file`` for texts.

    Listing the subjects also fetches every file under ``subjects/`` in one ``git cat-file
    --batch``, so a gate over hundreds of subjects costs two git processes, not hundreds.
    """

    repo: Path
    ref: str
    prefix: str  # the store directory relative to the repository root, "" for the root
    # A cache of file contents (None: not in the tree); filled by subjects() and read().
    _blobs: dict[str, bytes | None] = field(default_factory=dict, repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"git:{self.ref}"

    def source(self, path: str) -> str:
        return f"{self.ref}:{self._path(path)}"

    def _path(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def subjects(self) -> dict[str, dict[int, str]]:
        out = _git(
            self.repo,
            "ls-tree",
            "-r",
            "--name-only",
            "-z",
            self.ref,
            "--",
            self._path(SUBJECTS_DIR),
        )
        names = []
        files = []
        strip = len(self._path(SUBJECTS_DIR)) + 1
        for full in filter(None, out.split("\0")):
            rel = full[strip:]
            files.append(f"{SUBJECTS_DIR}/{rel}")
            parts = rel.split("/")
            if len(parts) == 2:
                names.append((parts[0], parts[1]))
            elif len(parts) == 1:
                names.append(("", parts[0]))
        self._fetch([f for f in files if f.endswith((".avsc", ".json"))])
        self._blobs[_LISTED] = b""  # files under subjects/ not fetched now do not exist
        return _index_names(sorted(names), self.source)

    def _fetch(self, paths: Sequence[str]) -> None:
        paths = [p for p in dict.fromkeys(paths) if p not in self._blobs]
        if not paths:
            return
        request = "".join(f"{self.ref}:{self._path(p)}\n" for p in paths).encode()
        data = _run_git(self.repo, ["cat-file", "--batch"], request).stdout
        pos = 0
        for path in paths:
            end = data.index(b"\n", pos)
            header = data[pos:end].decode()
            pos = end + 1
            if header.endswith(" missing"):
                self._blobs[path] = None
                continue
            size = int(header.rsplit(" ", 1)[1])
            self._blobs[path] = data[pos : pos + size]
            pos += size + 1

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        listed = _LISTED in self._blobs
        self._fetch([p for p in paths if not (listed and p.startswith(f"{SUBJECTS_DIR}/"))])
        texts: dict[str, str | None] = {}
        for path in paths:
            blob = self._blobs.get(path)
            if blob is None:
                if optional:
                    texts[path] = None
                    continue
                raise InputError(
                    "file not found at that ref", location=Location(source=self.source(path))
                )
            texts[path] = decode_bytes(blob, self.source(path))
        return texts


_LISTED = "\0listed"  # a key no path can be: marks that subjects/ was listed and fetched


def git_tree(spec: str, store: Path) -> GitTree:
    """``git:REF`` -> the store at that ref.

    Raises UsageError for a malformed spec, InputError outside a git repository or for an
    unknown ref.
    """
    if not spec.startswith("git:") or not spec[4:].strip():
        raise UsageError(
            f"--against {spec!r}: expected git:REF",
            hint="e.g. --against git:origin/main, git:HEAD~1 or git:v1.2.0",
        )
    ref = spec[4:].strip()
    if ref.startswith("-"):  # never let a ref reach git as an option
        raise InputError(
            f"--against {spec}: {ref!r} is not a git ref",
            hint="name a branch, tag or commit, e.g. git:origin/main or git:HEAD~1",
        )
    directory = (
        store if store.is_dir() else next((p for p in store.parents if p.is_dir()), Path.cwd())
    )
    try:
        top = _git(directory, "rev-parse", "--show-toplevel").strip()
    except InputError as err:
        raise InputError(
            f"--against {spec}: {directory} is not inside a git repository",
            hint="run from a git checkout (in CI: actions/checkout with fetch-depth: 0), "
            "or drop --against to check the whole history in the working tree",
        ) from err
    try:
        _git(Path(top), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except InputError as err:
        hint = _unknown_ref_hint(Path(top), ref)
        try:
            shallow = _git(Path(top), "rev-parse", "--is-shallow-repository").strip() == "true"
        except InputError:
            shallow = False
        if shallow:  # CI checkouts are often one commit deep: HEAD~1 and older do not exist
            hint = (
                "this clone is shallow: fetch more history (git fetch --unshallow origin; in "
                "GitHub Actions: actions/checkout with fetch-depth: 0), or " + hint
            )
        raise InputError(f"--against {spec}: unknown git ref {ref!r}", hint=hint) from err
    repo = Path(top)
    try:
        prefix = resolved(store).relative_to(resolved(repo)).as_posix()
    except ValueError as err:
        raise InputError(
            f"the store {store} is outside the git repository {repo}",
            hint="pass a --store inside the repository",
        ) from err
    return GitTree(repo=repo, ref=ref, prefix="" if prefix == "." else prefix)


def _unknown_ref_hint(top: Path, ref: str) -> str:
    """What to do about a ref git does not know, by the ref's shape."""
    if ref == "HEAD" or ref.startswith(("HEAD~", "HEAD^")):
        try:
            _git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        except InputError:
            return "the repository has no commits yet: commit first, or drop --against"
        return "HEAD has fewer ancestors than that (git log --oneline shows them)"
    remote, _, branch = ref.partition("/")
    if branch and remote == "origin":
        return f"fetch it first (git fetch origin {branch}), or name an existing branch"
    return "name an existing branch, tag or commit (git branch -a, git tag)"


def _git(cwd: Path, *args: str) -> str:
    return _run_git(cwd, list(args), None).stdout.decode("utf-8", "replace")


def _run_git(cwd: Path, args: list[str], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
    try:
        result = subprocess.run(
            ["git", "-C", str(cwd), *args], input=stdin, capture_output=True, check=False
        )
    except FileNotFoundError as err:
        raise InputError("git is not installed", hint="install git, or drop --against") from err
    if result.returncode != 0:
        raise InputError(f"git {' '.join(args)} failed: {result.stderr.decode().strip()}")
    return result


# -- histories -------------------------------------------------------------------------------


def read_versions(
    tree: Tree, subjects: dict[str, dict[int, str]], subject: str, *, deleted: Iterable[int] = ()
) -> list[VersionFile]:
    """A subject's version files, oldest first; InputError for a gap in the numbering.

    ``deleted``: numbers known to be gone (``gate --against`` reports them as deleted
    versions), which are not a gap.
    """
    versions = subjects.get(subject, {})
    numbers = sorted(versions)
    gaps = version_gaps(numbers, deleted)
    if gaps:
        shown = ", ".join(
            f"v{lo}" if lo == hi else f"v{lo}..v{hi}" for lo, hi in gaps[:_GAPS_SHOWN]
        )
        more = len(gaps) - _GAPS_SHOWN
        raise StoreLayoutError(
            f"subject {subject!r} has a gap in its versions: {shown} missing"
            + (f" (and {more} more gap(s))" if more > 0 else ""),
            location=Location(source=tree.source(f"{SUBJECTS_DIR}/{subject}")),
            hint="versions run v1, v2, ... without gaps; history is immutable, so restore the "
            "missing file rather than renumbering",
        )
    paths = [versions[n] for n in numbers]
    texts = tree.read(paths)
    sidecars = tree.read([sidecar_path(p) for p in paths], optional=True)
    return [
        VersionFile(subject, n, tree.source(p), texts[p] or "", sidecars[sidecar_path(p)])
        for n, p in zip(numbers, paths, strict=True)
    ]


def version_gaps(numbers: Sequence[int], deleted: Iterable[int] = ()) -> list[tuple[int, int]]:
    """The runs of numbers missing from 1..max(``numbers``), as (first, last) pairs, oldest
    first; ``deleted`` numbers are not missing. Costs the number of files, not the numbers'
    size (``v20251125.avsc`` alone is one gap, v1..v20251124)."""
    if not numbers:
        return []
    top = max(numbers)
    present = sorted({*numbers, *(n for n in deleted if 0 < n <= top)})
    gaps = []
    previous = 0
    for n in present:
        if n > previous + 1:
            gaps.append((previous + 1, n - 1))
        previous = n
    return gaps


CONTRACT_SUFFIX = ".contract.json"  # v<N>.contract.json: the version's metadata and ruleSet
SUBJECT_CONTRACT = "contract.json"  # subjects/<s>/contract.json: {"compatibilityGroup": NAME}
_MIGRATING_DOWN = ("DOWNGRADE", "UPDOWN")


@dataclass(frozen=True)
class Contracts:
    """A subject's data contracts in the store (docs/store.md#data-contracts): the subject's
    ``compatibilityGroup`` and, per version, its metadata properties and whether a migration
    rule turns it back into the version before it."""

    group: str | None
    properties: dict[int, dict[str, str]]
    downgrade: frozenset[int]

    def group_of(self, version: int) -> str | None:
        """The version's value of the group property (None: it has none)."""
        return self.properties.get(version, {}).get(self.group) if self.group else None


def read_contracts(
    tree: Tree, subjects: dict[str, dict[int, str]], subject: str
) -> Contracts | None:
    """The subject's contract files, or None when it has none. InputError (file:line:col) for
    one that is not the JSON `pull` writes."""
    folder = f"{SUBJECTS_DIR}/{subject}"
    versions = subjects.get(subject, {})
    paths = {n: p.removesuffix(".avsc") + CONTRACT_SUFFIX for n, p in versions.items()}
    texts = tree.read([f"{folder}/{SUBJECT_CONTRACT}", *paths.values()], optional=True)
    if not any(t is not None for t in texts.values()):
        return None
    subject_file = f"{folder}/{SUBJECT_CONTRACT}"
    top = _contract_json(tree, subject_file, texts[subject_file])
    group = top.get("compatibilityGroup")
    if group is not None and not isinstance(group, str):
        raise InputError(
            "compatibilityGroup must be a metadata property name (a string)",
            location=Location(source=tree.source(subject_file), pointer="/compatibilityGroup"),
            hint='For example {"compatibilityGroup": "major_version"}.',
        )
    properties: dict[int, dict[str, str]] = {}
    downgrade = set()
    for n, path in paths.items():
        doc = _contract_json(tree, path, texts[path])
        props = doc.get("metadata", {}).get("properties", {})
        rules = doc.get("ruleSet", {}).get("migrationRules", [])
        props = {} if props is None else props
        rules = [] if rules is None else rules
        if not isinstance(props, dict) or not isinstance(rules, list):
            raise InputError(
                "metadata.properties must be an object and ruleSet.migrationRules a list",
                location=Location(source=tree.source(path)),
                hint='Write it as `schemacli pull` does: {"metadata": {"properties": '
                '{...}}, "ruleSet": {"migrationRules": [...]}}.',
            )
        properties[n] = {str(k): str(v) for k, v in props.items()}
        if any(isinstance(r, dict) and r.get("mode") in _MIGRATING_DOWN for r in rules):
            downgrade.add(n)
    return Contracts(group, properties, frozenset(downgrade))


def _contract_json(tree: Tree, path: str, text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:  # the one JSON parser: Java's limits on nesting and numbers, positions kept
        doc = parse_text(text.removeprefix("\ufeff"), tree.source(path), what="contract file").value
    except InputError as exc:
        raise InputError(
            f"not JSON: {exc.message}",
            location=exc.location,
            hint="A contract file is the JSON `schemacli pull` writes.",
        ) from None
    if not isinstance(doc, dict) or not all(
        isinstance(doc.get(k, {}), dict) for k in ("metadata", "ruleSet")
    ):
        raise InputError(
            "a contract file is a JSON object (metadata and ruleSet objects in it)",
            location=Location(source=tree.source(path)),
            hint="A contract file is the JSON `schemacli pull` writes.",
        )
    return doc


def sidecar_path(version_path: str) -> str:
    """``subjects/s/v2.avsc`` -> ``subjects/s/v2.references.json`` (declared references)."""
    return version_path.removesuffix(".avsc") + SIDECAR_SUFFIX


def load_history(tree: Tree, subject: str) -> tuple[LoadedSchema, ...]:
    """The subject's parsed versions, oldest first (empty if the subject has none)."""
    subjects = tree.subjects()
    resolver = References(tree, subjects)
    return tuple(resolver.load(v) for v in read_versions(tree, subjects, subject))


@dataclass(frozen=True)
class Definition:
    """A named type as one subject's latest version defines it."""

    subject: str
    version: int
    path: str  # the version file, relative to the store
    pointer: str  # where the definition sits in it
    body: str  # the definition's JSON (layout, key order and {"type": "int"} aside)


class StoreNames:
    """Which full names the latest version of each subject in a tree defines.

    Built on the first lookup, so a store whose versions all define or declare the types they
    use never reads it: one read of each subject's latest version and a cheap walk of its JSON
    (``scan_names``). A file that cannot be read or parsed defines nothing here (it gets its
    own error where it is gated).
    """

    def __init__(self, tree: Tree, index: dict[str, dict[int, str]]) -> None:
        self.tree, self.index = tree, index
        self._defined: dict[str, list[Definition]] | None = None

    def defining(self, name: str, *, besides: str | None = None) -> list[Definition]:
        """The definitions of ``name`` by subjects other than ``besides``; one per distinct
        body (subjects that define it identically count once, the first by name)."""
        if self._defined is None:
            self._defined = self._build()
        found: dict[str, Definition] = {}
        for definition in self._defined.get(name, ()):
            if definition.subject != besides:
                found.setdefault(definition.body, definition)
        return list(found.values())

    def _build(self) -> dict[str, list[Definition]]:
        numbers = {s: max(v) for s, v in sorted(self.index.items()) if v}
        latest = {s: self.index[s][n] for s, n in numbers.items()}
        try:
            texts = self.tree.read(list(latest.values()), optional=True)
        except SchemacliError:  # one unreadable file: read the others one by one
            texts = {}
            for path in latest.values():
                try:
                    texts.update(self.tree.read([path], optional=True))
                except SchemacliError:
                    texts[path] = None
        defined: dict[str, list[Definition]] = {}
        for subject, path in latest.items():
            text = texts.get(path)
            if text is None:
                continue
            try:
                value = parse_text(text.removeprefix("\ufeff"), self.tree.source(path)).value
            except SchemacliError:
                continue
            for name, pointer in scan_names(value)[0].items():
                body = json.dumps(
                    collapse_primitives(_value_at(value, pointer)),
                    sort_keys=True,
                    separators=(",", ":"),
                    ensure_ascii=False,
                )
                found = Definition(subject, numbers[subject], path, pointer, body)
                defined.setdefault(name, []).append(found)
        return defined


def _value_at(value: Any, pointer: str) -> Any:
    """The JSON value at a pointer ``scan_names`` made (plain keys and indexes, no escapes)."""
    for token in pointer.split("/")[1:]:
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


_NEEDS_STORE = "\0needs the store's names"  # a memo key no (text, references) pair can be


# Parses shared between trees (References.load and parse): (text, references) -> (Document,
# Schema); (_NEEDS_STORE, text) -> True once the text was found to need the store's names;
# (that key, its found types' contents) -> the Schema parsed with them.
ParseMemo = dict[tuple[object, ...], Any]


def _content(loaded: LoadedSchema) -> tuple[object, ...]:
    """A schema's JSON (layout and key order aside) and its references', recursively."""
    return (loaded.identity, tuple(_content(r) for r in loaded.references))


def _subject_of(path: str) -> str | None:
    """``subjects/<s>/vN.avsc`` -> ``s``; None for a file outside the subjects."""
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == SUBJECTS_DIR and VERSION_FILE.fullmatch(parts[2]):
        return parts[1]
    return None


def store_fallback(tree: Tree, subject: Callable[[Any], str]) -> Fallback:
    """The store's names in ``tree`` as a ``Loader`` fallback, for a file checked as a version
    of the subject ``subject(JSON value)`` names (whose own versions do not count): a candidate
    finds types the way the store's versions do. The store is listed on the first name asked.
    """
    resolver: list[References] = []

    def find(use: NameUse, document: Document) -> LoadedSchema | None:
        if not resolver:
            resolver.append(References(tree, tree.subjects()))
        return resolver[0].find(use, document, subject(document.value))

    return find


class References:
    """Loads store versions with the named types they take from other schemas, from any Tree.

    A version ``vN.avsc`` may use named types of other schemas, declared beside it in
    ``vN.references.json`` as Confluent schema references: ``[{"name": "com.x.Money",
    "subject": "money-value", "version": 1}]`` (``"latest"`` allowed) or ``{"name": ...,
    "path": "../../common/Money.avsc"}`` (relative to the subject's folder). A name it neither
    defines nor declares is looked up in ``StoreNames``: the latest version of every *other*
    subject (its own versions never count: a version's meaning must not depend on its own
    subject's later versions). Referenced versions are read from the same tree, so ``--against
    git:REF`` resolves them as they were at REF. One instance serves a whole tree: the files it
    loaded for one version are reused for the next.
    """

    def __init__(self, tree: Tree, index: dict[str, dict[int, str]]) -> None:
        self.tree, self.index = tree, index
        self.cache: dict[str, LoadedSchema] = {}
        self.loading: list[str] = []
        self.store_names = StoreNames(tree, index)
        # How many files looked for a type in the store's names (found or not): what they
        # mean depends on other subjects' files, so the gate does not cache their rows by
        # their own texts.
        self.resolved_from_store = 0

    def load(self, version: VersionFile, memo: ParseMemo | None = None) -> LoadedSchema:
        """Parse one version. ``memo`` shares parses between trees: with ``--against``, most
        versions have the same text at the ref and in the working tree, parsed once. A version
        with references keeps the referenced schemas in ``references`` (its content, for the
        verdict cache, includes theirs)."""
        key = (version.text, version.references)
        if memo is not None and key in memo:
            document, schema = memo[key]
            return LoadedSchema(version.source, document, schema, version.version)
        path = self.index[version.subject][version.version]
        names: Names | None = None
        refs: tuple[LoadedSchema, ...] = ()
        if version.references is not None:
            names, refs = self.resolve(sidecar_path(path), version.references)
        consulted = self.resolved_from_store
        self.loading.append(path)
        try:
            loaded = self.parse(
                version.text,
                path,
                names,
                refs,
                version=version.version,
                memo=memo if version.references is None else None,
            )
        finally:
            self.loading.pop()
        own_text_only = version.references is None and self.resolved_from_store == consulted
        if memo is not None and own_text_only:
            # With references (declared or from the store's names), the same text may mean
            # other types at another ref: no sharing.
            memo[key] = (loaded.document, loaded.schema)
        return loaded

    def parse(
        self,
        text: str,
        path: str,
        names: Names | None,
        refs: tuple[LoadedSchema, ...],
        *,
        version: int | None = None,
        memo: ParseMemo | None = None,
    ) -> LoadedSchema:
        """Parse the file ``path`` (its ``text``) knowing ``names`` (from ``refs``); a name it
        still lacks is taken from the store's names (counted in ``resolved_from_store``).
        ``memo`` (shared between trees, for a version without declared references) remembers
        that a text needs the store's names, and its model for the same types found there."""
        document = parse_text(text.removeprefix("\ufeff"), self.tree.source(path))
        needs_store = (_NEEDS_STORE, text)
        if memo is None or needs_store not in memo:
            try:
                loaded = load_schema_document(document, version=version, names=names)
                return replace(loaded, references=refs) if refs else loaded
            except SchemaParseError as err:
                if err.kind != UNDEFINED_NAME:
                    raise
        self.resolved_from_store += 1
        found = self.from_store(document, _subject_of(path), names)
        for dep in found:
            names = (names or Names()).including(dep.schema)
        refs = (*refs, *found)
        # The same text with the same types found (by content) is the same model: with
        # --against, a version unchanged since the ref is parsed once, not once per tree.
        same = (needs_store, tuple(_content(dep) for dep in found))
        if memo is not None and same in memo:
            loaded = LoadedSchema(document.source, document, memo[same], version)
            return replace(loaded, references=refs)
        try:
            loaded = load_schema_document(document, version=version, names=names)
        except SchemaParseError as again:
            if again.kind == UNDEFINED_NAME:
                again.hint = (
                    f"{again.hint or ''} No other subject's latest version in the store "
                    f"({self.tree.label}) defines it either; add it to one, or declare "
                    f"where it comes from in {sidecar_path(posixpath.basename(path))}."
                )
            raise
        finally:
            if memo is not None:
                memo[needs_store] = True
        if memo is not None:
            memo[same] = loaded.schema
        return replace(loaded, references=refs) if refs else loaded

    def from_store(
        self, document: Document, own: str | None, known: Names | None
    ) -> tuple[LoadedSchema, ...]:
        """The latest versions of subjects other than ``own`` that define the names
        ``document`` uses but neither defines nor finds in ``known``, each loaded once, in
        order of first use.

        Raises DuplicateDefinitionError for a name two subjects define differently, and
        CircularReferenceError for files that need each other.
        """
        defined, uses = scan_names(document.value)
        deps: dict[str, LoadedSchema] = {}
        for use in uses:
            if any(c in defined or (known is not None and c in known) for c in use.candidates):
                continue
            dep = self.find(use, document, own)
            if dep is not None:
                deps.setdefault(dep.source, dep)
                known = (known or Names()).including(dep.schema)
        return tuple(deps.values())

    def find(self, use: NameUse, document: Document, own: str | None) -> LoadedSchema | None:
        """The latest version of the one subject other than ``own`` that defines the name
        ``use`` makes in ``document`` (its full name first, then as written: Java's order)."""
        where = document.location(use.pointer)
        for name in use.candidates:
            found = self.store_names.defining(name, besides=own)
            if len(found) > 1:
                raise self.duplicate(name, found, where)
            if found:
                return self.load_path(found[0].path, where)
        return None

    def duplicate(
        self, name: str, found: list[Definition], where: Location
    ) -> DuplicateDefinitionError:
        places = []
        for definition in found:
            text = self.tree.read([definition.path])[definition.path] or ""
            document = parse_text(text.removeprefix("\ufeff"), self.tree.source(definition.path))
            loc = document.location(definition.pointer)
            places.append(f"{loc.source}:{loc.line}:{loc.column}")
        first = found[0]
        return DuplicateDefinitionError(
            f"{name} is defined differently by {len(found)} subjects: " + ", ".join(places),
            location=where,
            hint="say which one is meant in this version's references file (e.g. "
            + json.dumps([{"name": name, "subject": first.subject, "version": first.version}])
            + "), or keep one definition and let the other subject use it by name",
        )

    def names(self, sidecar: str, text: str) -> Any:
        """The named types the references file ``sidecar`` (its ``text``) provides."""
        return self.resolve(sidecar, text)[0]

    def resolve(self, sidecar: str, text: str) -> tuple[Any, tuple[LoadedSchema, ...]]:
        """The named types ``sidecar`` provides, and the schemas they come from."""
        document = parse_text(text, self.tree.source(sidecar))
        hint = (
            'write [{"name": "<namespace.Name>", "subject": "<subject>", "version": <n>}, ...] '
            'or {"name": ..., "path": "<file.avsc>"} entries'
        )
        if not isinstance(document.value, list):
            raise SchemaReferenceError(
                "references must be a JSON array", location=document.location(""), hint=hint
            )
        names = Names()
        refs: list[LoadedSchema] = []
        for i, entry in enumerate(document.value):
            where = document.location(f"/{i}")
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise SchemaReferenceError(
                    'a reference needs a "name" (the full name of the type it provides)',
                    location=where,
                    hint=hint,
                )
            target = self.target(sidecar, entry, where, hint)
            loaded = self.load_path(target, where)
            refs.append(loaded)
            names = names.including(loaded.schema)
            if entry["name"] not in names:
                raise SchemaReferenceError(
                    f"{self.tree.source(target)} does not define {entry['name']!r}",
                    location=where,
                    hint="name the full name of a record, enum or fixed the file defines",
                )
        return names, tuple(refs)

    def target(self, sidecar: str, entry: dict[str, Any], where: Location, hint: str) -> str:
        if isinstance(entry.get("path"), str):
            folder = posixpath.dirname(sidecar)
            target = posixpath.normpath(posixpath.join(folder, entry["path"]))
            if target.startswith("../") or target == "..":
                raise SchemaReferenceError(
                    f"referenced path {entry['path']!r} leaves the store",
                    location=where,
                    hint="keep referenced schemas inside the store directory",
                )
            return target
        subject, version = entry.get("subject"), entry.get("version")
        versions = self.index.get(subject, {}) if isinstance(subject, str) else {}
        if version in ("latest", -1) and versions:
            version = max(versions)
        if type(version) is not int or version not in versions:
            raise SchemaReferenceError(
                f"reference to subject {subject!r} version {entry.get('version')!r}: "
                "not in the store",
                location=where,
                hint=hint
                if not isinstance(subject, str)
                else f'add {SUBJECTS_DIR}/{subject}/v<N>.avsc, or give a "path"',
            )
        return versions[version]

    def load_path(self, path: str, where: Location) -> LoadedSchema:
        if path in self.cache:
            return self.cache[path]
        if path in self.loading:
            cycle = self.loading[self.loading.index(path) :]
            raise CircularReferenceError(
                "circular references: " + " -> ".join(self.tree.source(p) for p in [*cycle, path]),
                location=where,
                hint="break the cycle: define the shared type in one file",
            )
        self.loading.append(path)
        try:
            texts = self.tree.read([path, sidecar_path(path)], optional=True)
            if texts[path] is None:
                raise SchemaReferenceError(
                    f"referenced file {self.tree.source(path)} does not exist",
                    location=where,
                    hint="paths are relative to the folder of the references file",
                )
            sidecar_text = texts[sidecar_path(path)]
            names, refs = (
                self.resolve(sidecar_path(path), sidecar_text) if sidecar_text else (None, ())
            )
            loaded = self.parse(texts[path] or "", path, names, refs)
        finally:
            self.loading.pop()
        self.cache[path] = loaded
        return loaded
