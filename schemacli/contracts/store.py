"""The local store, the embedded default registry: every subject's version history in files.

Layout (see docs/store.md)::

    <store>/subjects/<subject>/v1.avsc, v2.avsc, ...   versions 1..N, oldest first, no gaps
    <store>/migration/...                              examples and converters' schemas: not gated

The same history can be read from the working tree (``FileTree``) or as it was at a git ref
(``GitTree``, for ``--against git:REF``). ``check_candidate`` checks one schema against a history
given as an argument (so a registry can supply it as well); ``gate`` checks a whole store.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from schemacli.config import NamingStrategy, Settings
from schemacli.contracts.compat import Level
from schemacli.contracts.findings import Finding, Severity
from schemacli.errors import ExitCode, InputError, Location, SchemacliError, UsageError
from schemacli.textfile import resolved

SUBJECTS_DIR = "subjects"
SIDECAR_SUFFIX = ".references.json"  # as in schemacli.contracts.loader
VERSION_FILE = re.compile(r"v([1-9][0-9]*)\.avsc")

# Finding kinds the store itself reports (next to the engine's Avro incompatibility kinds).
INVALID_SCHEMA = "INVALID_SCHEMA"  # a version does not parse: an input error (exit 2)
STORE_LAYOUT = "STORE_LAYOUT"  # a badly named file or a gap in the versions: an input error
HISTORY_REWRITTEN = "HISTORY_REWRITTEN"  # an existing version changed since the base ref
VERSION_DELETED = "VERSION_DELETED"  # an existing version is gone since the base ref
SUBJECT_DELETED = "SUBJECT_DELETED"  # a whole subject is gone (a warning: may be intended)
UNKNOWN_SUBJECT = "UNKNOWN_SUBJECT"  # the config names a subject the store does not hold
DUPLICATE_VERSION = "DUPLICATE_VERSION"  # identical to an earlier version: not a new version
INPUT_KINDS = frozenset({INVALID_SCHEMA, STORE_LAYOUT})


class StoreLayoutError(InputError):
    """The store's files are not laid out as documented (bad file name, gap in versions)."""


# -- loaded schemas --------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedSchema:
    """One schema text, parsed: where it came from, its JSON, the Avro model, its positions."""

    source: str  # a path, ``REF:path`` for git, or ``subject:version`` for a registry
    document: Any  # schemacli.contracts.source.Document
    schema: Any  # schemacli.contracts.schema.Schema
    version: int | None = None

    @property
    def value(self) -> Any:
        return self.document.value

    @cached_property
    def identity(self) -> str:
        """What "the same schema" means for re-submission: the JSON, ignoring layout and key order.

        Confluent compares Java's ``Schema.toString()`` of both (docs, defaults and custom
        properties included), not the Parsing Canonical Form, so a doc-only change is a new
        version there and here. Like ``toString()``, ``{"type": "int"}`` is the same as ``"int"``.
        """
        return json.dumps(
            _collapse_primitives(self.value),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )

    def location(self, pointer: str | None = None) -> Location:
        """Source, pointer and line:col of ``pointer`` in this schema's text."""
        if pointer is None:
            return Location(source=self.source, line=1, column=1)
        line, column = self.document.position(pointer)
        return Location(source=self.source, pointer=pointer, line=line, column=column)


_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def _collapse_primitives(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and value.get("type") in _PRIMITIVES:
            return value["type"]
        return {k: _collapse_primitives(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_collapse_primitives(v) for v in value]
    return value


def load_schema_text(
    text: str, source: str, *, version: int | None = None, names: Any = None
) -> LoadedSchema:
    """Parse schema text (``names``: named types from referenced schemas, or None).

    Raises InputError / SchemaParseError with source and line:col.
    """
    from schemacli.contracts.schema import parse_schema
    from schemacli.contracts.source import parse_text

    document = parse_text(text.removeprefix("\ufeff"), source)
    try:
        schema = parse_schema(document.value, names=names)
    except SchemacliError as err:
        raise _placed(err, document) from None
    return LoadedSchema(source=source, document=document, schema=schema, version=version)


def load_schema_file(path: Path, source: str | None = None) -> LoadedSchema:
    """Read and parse a .avsc file, with named types from other files (see ``loader``).

    Errors (InputError, SchemaParseError) name the file, line:col and JSON pointer.
    """
    from schemacli.contracts import loader

    loaded = loader.load_schema_file(path, source=source)
    return LoadedSchema(source=loaded.source, document=loaded.document, schema=loaded.schema)


def _placed(err: SchemacliError, document: Any) -> SchemacliError:
    """Fill in source and line:col of a parse error that only knows its JSON pointer."""
    loc = err.location or Location()
    if loc.line is None:
        pointer = loc.pointer if loc.pointer is not None else ""
        line, column = document.position(pointer)
        err.location = Location(
            source=loc.source or document.source, pointer=loc.pointer, line=line, column=column
        )
    elif loc.source is None:
        err.location = Location(document.source, loc.pointer, loc.line, loc.column)
    return err


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

    label: str  # "working tree" or "git:REF"

    def subjects(self) -> dict[str, dict[int, str]]:
        """subject -> {version: relative path}; raises InputError for a badly named file."""
        ...

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        """The text of each relative path (None for a missing one if ``optional``)."""
        ...

    def source(self, path: str) -> str:
        """How to name ``path`` in messages."""
        ...


def _index_names(names: Iterable[tuple[str, str]], where: Callable[[str], str]) -> dict:
    """Group (subject, file name) pairs into subject -> {version: relative path}."""
    found: dict[str, dict[int, str]] = {}
    for subject, name in names:
        if not subject and name.endswith(".avsc"):
            raise StoreLayoutError(
                f"{name!r} sits directly in {SUBJECTS_DIR}/, outside any subject",
                location=Location(source=where(f"{SUBJECTS_DIR}/{name}")),
                hint=f"move it to {SUBJECTS_DIR}/<subject>/v<N>.avsc (e.g. "
                f"{SUBJECTS_DIR}/{name.removesuffix('.avsc')}/v1.avsc)",
            )
        rel = f"{SUBJECTS_DIR}/{subject}/{name}"
        if not name.endswith(".avsc"):
            continue  # READMEs and the like may live next to the versions
        match = VERSION_FILE.fullmatch(name)
        if match is None:
            raise StoreLayoutError(
                f"{name!r} is not a version file name",
                location=Location(source=where(rel)),
                hint="name the versions of a subject v1.avsc, v2.avsc, ... (no leading zeros); "
                "keep other schemas outside subjects/",
            )
        found.setdefault(subject, {})[int(match.group(1))] = rel
    return found


@dataclass(frozen=True)
class FileTree:
    """The store in the working tree."""

    root: Path
    display_root: str | None = None
    label: str = "working tree"

    def source(self, path: str) -> str:
        base = self.display_root if self.display_root is not None else str(self.root)
        return f"{base.rstrip('/')}/{path}" if base else path

    def subjects(self) -> dict[str, dict[int, str]]:
        base = self.root / SUBJECTS_DIR
        if not self.root.is_dir():
            raise StoreLayoutError(
                "the store is a file, not a directory"
                if self.root.exists()
                else "the store directory does not exist",
                location=Location(source=self.source("").rstrip("/") or str(self.root)),
                hint="pass --store DIR, or set store = \"...\" in [tool.schemacli]",
            )
        if not base.is_dir():  # e.g. --store pointing one folder too high or too low
            raise StoreLayoutError(
                f"the store has no {SUBJECTS_DIR}/ folder, so it holds no subjects",
                location=Location(source=self.source("").rstrip("/") or str(self.root)),
                hint=f"point --store at the folder that holds {SUBJECTS_DIR}/<subject>/v1.avsc "
                "(docs/store.md), or create it with the first subject's v1.avsc",
            )
        names = [("", entry.name) for entry in sorted(base.iterdir()) if entry.is_file()]
        names += [
            (entry.name, file.name)
            for entry in sorted(base.iterdir())
            if entry.is_dir()
            for file in sorted(entry.iterdir())
            if file.is_file() or file.name.endswith(".avsc")  # a folder named v2.avsc: an error
        ]
        return _index_names(names, self.source)

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        from schemacli.contracts.source import read_text

        return {
            p: read_text(self.root / p, self.source(p))
            if not optional or (self.root / p).is_file()
            else None
            for p in paths
        }


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
            self.repo, "ls-tree", "-r", "--name-only", "-z", self.ref, "--",
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
        from schemacli.contracts.source import decode_bytes

        listed = _LISTED in self._blobs
        self._fetch(
            [p for p in paths if not (listed and p.startswith(f"{SUBJECTS_DIR}/"))]
        )
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
    directory = store if store.is_dir() else next(
        (p for p in store.parents if p.is_dir()), Path.cwd()
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


def _run_git(cwd: Path, args: list[str], stdin: bytes | None) -> subprocess.CompletedProcess:
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
    tree: Tree, subjects: dict[str, dict[int, str]], subject: str
) -> list[VersionFile]:
    """A subject's version files, oldest first; InputError for a gap in the numbering."""
    versions = subjects.get(subject, {})
    numbers = sorted(versions)
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        missing = sorted(set(range(1, numbers[-1] + 1)) - set(numbers))
        raise StoreLayoutError(
            f"subject {subject!r} has a gap in its versions: "
            f"{', '.join(f'v{n}' for n in missing)} missing",
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


def sidecar_path(version_path: str) -> str:
    """``subjects/s/v2.avsc`` -> ``subjects/s/v2.references.json`` (declared references)."""
    return version_path.removesuffix(".avsc") + SIDECAR_SUFFIX


def load_history(tree: Tree, subject: str) -> tuple[LoadedSchema, ...]:
    """The subject's parsed versions, oldest first (empty if the subject has none)."""
    subjects = tree.subjects()
    resolver = References(tree, subjects)
    return tuple(resolver.load(v) for v in read_versions(tree, subjects, subject))


class References:
    """Loads store versions with their declared references, from any Tree.

    A version ``vN.avsc`` may use named types of other schemas, declared beside it in
    ``vN.references.json`` as Confluent schema references: ``[{"name": "com.x.Money",
    "subject": "money-value", "version": 1}]`` (``"latest"`` allowed) or ``{"name": ...,
    "path": "../../common/Money.avsc"}`` (relative to the subject's folder). Referenced versions
    are read from the same tree, so ``--against git:REF`` resolves them as they were at REF.
    """

    def __init__(self, tree: Tree, index: dict[str, dict[int, str]]) -> None:
        self.tree, self.index = tree, index
        self.cache: dict[str, LoadedSchema] = {}
        self.loading: list[str] = []

    def load(self, version: VersionFile, memo: dict | None = None) -> LoadedSchema:
        """Parse one version. ``memo`` shares parses between trees: with ``--against``, most
        versions have the same text at the ref and in the working tree, parsed once."""
        key = (version.text, version.references)
        if memo is not None and key in memo:
            document, schema = memo[key]
            return LoadedSchema(version.source, document, schema, version.version)
        names = None
        if version.references is not None:
            sidecar = sidecar_path(self.index[version.subject][version.version])
            names = self.names(sidecar, version.references)
        loaded = load_schema_text(
            version.text, version.source, version=version.version, names=names
        )
        if memo is not None and version.references is None:
            # With references, the same text may mean other types at another ref: no sharing.
            memo[key] = (loaded.document, loaded.schema)
        return loaded

    def names(self, sidecar: str, text: str) -> Any:
        from schemacli.contracts.loader import SchemaReferenceError
        from schemacli.contracts.schema import Names
        from schemacli.contracts.source import parse_text

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
            names = names.including(loaded.schema)
            if entry["name"] not in names:
                raise SchemaReferenceError(
                    f"{self.tree.source(target)} does not define {entry['name']!r}",
                    location=where,
                    hint="name the full name of a record, enum or fixed the file defines",
                )
        return names

    def target(self, sidecar: str, entry: dict, where: Location, hint: str) -> str:
        from schemacli.contracts.loader import SchemaReferenceError

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
                hint=hint if not isinstance(subject, str) else
                f"add {SUBJECTS_DIR}/{subject}/v<N>.avsc, or give a \"path\"",
            )
        return versions[version]

    def load_path(self, path: str, where: Location) -> LoadedSchema:
        from schemacli.contracts.loader import SchemaReferenceError

        if path in self.cache:
            return self.cache[path]
        if path in self.loading:
            cycle = " -> ".join(self.tree.source(p) for p in [*self.loading, path])
            raise SchemaReferenceError(
                f"circular references: {cycle}",
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
            names = self.names(sidecar_path(path), sidecar_text) if sidecar_text else None
            loaded = load_schema_text(texts[path] or "", self.tree.source(path), names=names)
        finally:
            self.loading.pop()
        self.cache[path] = loaded
        return loaded


# -- checking one candidate ------------------------------------------------------------------


class Verdict(StrEnum):
    COMPATIBLE = "compatible"
    INCOMPATIBLE = "incompatible"
    INVALID = "invalid"  # input errors: nothing could be decided

    @property
    def exit_code(self) -> ExitCode:
        return {
            Verdict.COMPATIBLE: ExitCode.OK,
            Verdict.INCOMPATIBLE: ExitCode.CHECK_FAILED,
            Verdict.INVALID: ExitCode.INPUT_ERROR,
        }[self]


@dataclass(frozen=True)
class CheckReport:
    """The result of checking one schema against a subject's history."""

    subject: str
    level: Level
    candidate: str  # the candidate's source
    history: tuple[int, ...]  # the versions the subject had
    checked_against: tuple[int, ...]  # the versions the level compared with
    findings: tuple[Finding, ...]
    identical_to: int | None = None  # re-submission of an existing version: not a new version

    @property
    def compatible(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def verdict(self) -> Verdict:
        if any(f.kind in INPUT_KINDS for f in self.findings):
            return Verdict.INVALID
        return Verdict.COMPATIBLE if self.compatible else Verdict.INCOMPATIBLE


def targets_for(level: Level, history: Sequence[LoadedSchema]) -> Sequence[LoadedSchema]:
    """The versions a level compares with: none, the latest, or every one (transitive)."""
    if level is Level.NONE or not history:
        return ()
    return history if level.transitive else history[-1:]


def check_candidate(
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    *,
    subject: str,
    level: Level,
) -> CheckReport:
    """Check ``candidate`` against ``history`` (oldest first) at ``level``, Confluent-style.

    ``history`` may come from the store, a git ref or a registry: this function does not care.
    A schema identical to an existing version is not a new version: compatible, no check. The
    first version always passes. Every incompatibility with every compared version is a finding,
    placed (file, line:col) in the reader's text, as Java's location is the reader's: the
    candidate for BACKWARD, the old version for FORWARD.
    """
    numbers = tuple(h.version or i for i, h in enumerate(history, start=1))
    # Warnings about the JSON itself (comments, duplicate keys): reported, never failing.
    notes = tuple(replace(n, subject=subject or None) for n in candidate.document.notes)
    for number, old in zip(numbers, history, strict=True):
        if old.identity == candidate.identity:
            return CheckReport(subject, level, candidate.source, numbers, (), notes, number)
    targets = targets_for(level, history)
    checked = tuple(numbers[len(history) - len(targets) :])
    labels = [
        f"{subject} v{n}" if subject else h.source
        for n, h in zip(numbers, history, strict=True)
    ]
    findings = _incompatibilities(candidate, history, labels, subject=subject, level=level)
    return CheckReport(subject, level, candidate.source, numbers, checked, notes + findings)


def _incompatibilities(
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    labels: Sequence[str],
    *,
    subject: str,
    level: Level,
) -> tuple[Finding, ...]:
    from schemacli.contracts import compat

    by_label = dict(zip(labels, history, strict=True))
    schemas = [h.schema for h in history]
    found: list[Finding] = []
    # One direction at a time, so each finding can be placed in its reader's file.
    for direction in level.directions:
        one_way = compat.Level(direction.upper() + ("_TRANSITIVE" if level.transitive else ""))
        result = compat.check_level(one_way, candidate.schema, schemas, labels=labels)
        for finding in result.findings:
            reader = candidate if direction == "backward" else by_label[finding.subject]
            found.append(
                replace(
                    finding,
                    location=reader.location(finding.location.pointer),
                    subject=subject or None,
                )
            )
    return tuple(found)


# -- the gate --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubjectReport:
    """One subject's row in the gate's summary, with all its findings."""

    subject: str
    level: Level
    versions: int
    checked: tuple[int, ...]  # the versions that were checked (new or changed ones with --against)
    findings: tuple[Finding, ...] = ()

    @property
    def verdict(self) -> Verdict:
        if any(f.kind in INPUT_KINDS for f in self.findings):
            return Verdict.INVALID
        if any(f.severity is Severity.ERROR for f in self.findings):
            return Verdict.INCOMPATIBLE
        return Verdict.COMPATIBLE


@dataclass(frozen=True)
class GateReport:
    """The gate over a whole store: one row per subject."""

    store: str
    against: str | None
    subjects: tuple[SubjectReport, ...] = field(default_factory=tuple)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for s in self.subjects for f in s.findings)

    @property
    def verdict(self) -> Verdict:
        verdicts = {s.verdict for s in self.subjects}
        for verdict in (Verdict.INVALID, Verdict.INCOMPATIBLE):
            if verdict in verdicts:
                return verdict
        return Verdict.COMPATIBLE


def gate(head: Tree, settings: Settings, *, base: Tree | None = None) -> GateReport:
    """Check every subject of ``head`` at its level; with ``base``, only what changed since it.

    Without ``base``: every version against the versions before it. With ``base`` (the store at
    a git ref): versions that are new since ``base`` against the history at ``base``; an existing
    version that changed or disappeared is a violation (history is immutable). Every problem is
    a finding; nothing stops at the first.
    """
    store = head.source("").rstrip("/") or "."
    against = base.label if base is not None else None
    try:
        head_index = head.subjects()
    except InputError as err:
        return GateReport(store, against, (input_error_row("(store)", settings, err),))
    base_index: dict[str, dict[int, str]] = {}
    if base is not None:
        try:
            base_index = base.subjects()
        except InputError as err:
            return GateReport(store, against, (input_error_row("(store)", settings, err),))
    rows = []
    for subject in sorted(set(head_index) | set(base_index)):
        level = settings.level_for(subject)
        try:
            rows.append(_gate_subject(subject, level, head, head_index, base, base_index))
        except InputError as err:
            rows.append(input_error_row(subject, settings, err, len(head_index.get(subject, {}))))
    known = set(head_index) | set(base_index)
    rows += [
        _unknown_subject_row(subject, level, settings, sorted(known))
        for subject, level in sorted(settings.subject_levels.items())
        if subject not in known
    ]
    return GateReport(store, against, tuple(rows))


def _unknown_subject_row(
    subject: str, level: Level, settings: Settings, known: list[str]
) -> SubjectReport:
    """A warning row: the config sets a level for a subject the store does not hold (a typo
    there would quietly leave the real subject at the default level)."""
    close = difflib.get_close_matches(subject, known, n=1)
    finding = Finding(
        kind=UNKNOWN_SUBJECT,
        severity=Severity.WARNING,
        message=f"the config sets level {level} for subject {subject!r}, which the store does "
        "not hold" + (f" (did you mean {close[0]!r}?)" if close else ""),
        location=Location(source=str(settings.config_file) if settings.config_file else None),
        hint="fix the subject's name in the config, or remove its table",
        subject=subject,
    )
    return SubjectReport(subject, level, 0, (), (finding,))


def input_error_row(
    subject: str, settings: Settings, err: SchemacliError, versions: int = 0
) -> SubjectReport:
    """A gate row for a subject (or the whole store) that could not be read."""
    finding = Finding(
        kind=STORE_LAYOUT if isinstance(err, StoreLayoutError) else INVALID_SCHEMA,
        message=err.message,
        location=err.location or Location(),
        hint=err.hint,
        subject=None if subject == "(store)" else subject,
    )
    return SubjectReport(subject, settings.level_for(subject), versions, (), (finding,))


def parse_versions(
    files: Sequence[VersionFile], resolver: References, memo: dict | None = None
) -> tuple[list[LoadedSchema], list[Finding]]:
    """Parse every version; the ones that fail become INVALID_SCHEMA findings."""
    loaded, problems = [], []
    for f in files:
        try:
            loaded.append(resolver.load(f, memo))
        except SchemacliError as err:
            problems.append(
                Finding(
                    kind=INVALID_SCHEMA,
                    message=err.message,
                    location=err.location or Location(source=f.source),
                    hint=err.hint,
                    subject=f.subject,
                )
            )
    return loaded, problems


def _gate_subject(
    subject: str,
    level: Level,
    head: Tree,
    head_index: dict[str, dict[int, str]],
    base: Tree | None,
    base_index: dict[str, dict[int, str]],
) -> SubjectReport:
    head_files = read_versions(head, head_index, subject)
    base_files = read_versions(base, base_index, subject) if base is not None else []
    findings: list[Finding] = []

    memo: dict = {}
    base_loaded, base_problems = (
        parse_versions(base_files, References(base, base_index), memo)
        if base is not None
        else ([], [])
    )
    head_loaded, problems = parse_versions(head_files, References(head, head_index), memo)
    findings.extend(problems)
    findings.extend(base_problems)
    if findings:  # a history that does not parse cannot be checked
        return SubjectReport(subject, level, len(head_files), (), tuple(findings))

    if base is not None and base_files and not head_files:
        findings.append(
            Finding(
                kind=SUBJECT_DELETED,
                severity=Severity.WARNING,
                message=f"subject {subject!r} ({len(base_files)} versions at {base.label}) is "
                "gone from the store",
                location=Location(source=base_files[-1].source),
                hint="if the subject is still registered, keep its history in the store",
                subject=subject,
            )
        )
        return SubjectReport(subject, level, 0, (), tuple(findings))

    # The history each candidate is checked against: the base's versions where they exist.
    effective = list(base_loaded) + head_loaded[len(base_loaded) :]
    for old in base_loaded:
        n = old.version or 0
        if n > len(head_loaded):
            findings.append(
                Finding(
                    kind=VERSION_DELETED,
                    message=f"{subject} v{n} exists at {base.label if base else 'the base'} "
                    "but not any more: history is immutable",
                    location=Location(source=old.source),
                    hint=f"restore v{n}; to change the contract, add a new version instead",
                    subject=subject,
                )
            )
        elif head_loaded[n - 1].identity != old.identity:
            findings.append(
                Finding(
                    kind=HISTORY_REWRITTEN,
                    message=f"{subject} v{n} was changed since "
                    f"{base.label if base else 'the base'}: registered versions are immutable",
                    location=_first_difference(head_loaded[n - 1], old),
                    hint=f"restore v{n} as it was (git checkout {base.label[4:] if base else 'REF'}"
                    f" -- {head_loaded[n - 1].source}) and put the change in "
                    f"v{len(head_loaded) + 1}.avsc",
                    subject=subject,
                )
            )

    first_new = len(base_loaded) + 1 if base is not None else 2
    checked = []
    for candidate in head_loaded[first_new - 1 :]:
        n = candidate.version or 0
        checked.append(n)
        before = effective[: n - 1]
        report = check_candidate(candidate, before, subject=subject, level=level)
        if report.identical_to is not None:
            findings.append(
                Finding(
                    kind=DUPLICATE_VERSION,
                    message=f"{subject} v{n} is identical to v{report.identical_to}: the registry "
                    f"would not register it as a new version (it returns v{report.identical_to})",
                    location=candidate.location(),
                    hint=f"delete v{n}.avsc, or make the change it was meant to make",
                    subject=subject,
                )
            )
        findings.extend(report.findings)
    return SubjectReport(subject, level, len(head_files), tuple(checked), tuple(findings))


def _first_difference(new: LoadedSchema, old: LoadedSchema) -> Location:
    """The first line where ``new``'s text differs from ``old``'s (for a CI annotation)."""
    new_lines, old_lines = new.document.text.splitlines(), old.document.text.splitlines()
    for number, (a, b) in enumerate(zip(new_lines, old_lines, strict=False), start=1):
        if a != b:
            column = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            return Location(new.source, line=number, column=(column or min(len(a), len(b))) + 1)
    line = min(len(new_lines), len(old_lines)) + 1 if new_lines else 1
    return Location(new.source, line=min(line, max(len(new_lines), 1)), column=1)


# -- subjects for files outside subjects/ ----------------------------------------------------


def subject_for_file(path: Path, value: Any, strategy: NamingStrategy) -> str:
    """The subject a schema file outside ``subjects/`` belongs to, by the naming strategy.

    TopicNameStrategy: the file is named ``<topic>-key.avsc`` or ``<topic>-value.avsc``.
    RecordNameStrategy: the record's full name. TopicRecordNameStrategy: the file is named
    ``<topic>-<record full name>.avsc``. Raises UsageError (with the way out) otherwise.
    """
    stem = path.name.removesuffix(".avsc")
    if strategy is NamingStrategy.TOPIC:
        if stem.endswith(("-key", "-value")):
            return stem
        raise UsageError(
            f"cannot tell the subject of {path}: with TopicNameStrategy the file must be named "
            "<topic>-key.avsc or <topic>-value.avsc",
            hint="pass --subject SUBJECT, or rename the file",
        )
    full_name = _full_name(value)
    if full_name is None:
        raise UsageError(
            f"cannot tell the subject of {path}: {strategy.value} needs a named schema "
            "(record, enum or fixed)",
            hint="pass --subject SUBJECT",
        )
    if strategy is NamingStrategy.RECORD:
        return full_name
    if stem.endswith("-" + full_name) and len(stem) > len(full_name) + 1:
        return stem
    raise UsageError(
        f"cannot tell the subject of {path}: with TopicRecordNameStrategy the file must be "
        f"named <topic>-{full_name}.avsc",
        hint="pass --subject SUBJECT, or rename the file",
    )


def _full_name(value: Any) -> str | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    name = value["name"]
    namespace = value.get("namespace")
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"
