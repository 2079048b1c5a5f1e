"""The store as it was at a git ref (``--against git:REF``): a ``Tree`` read with git.

The contract core reads a store through ``contracts.store.tree.Tree`` and never runs git; the
commands build a :class:`GitTree` here (``git_tree("git:REF", store)``) and hand it in. Two git
processes serve a whole gate: ``git ls-tree`` for the names and the blob ids, and one ``git
cat-file --batch`` kept open, asked for the files read (by blob id), its answers read as they
come: a file is held only once it is asked for, never the whole store at once.
``changed_paths`` says which files of the store differ from the working tree (``git diff``).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from schemacli.contracts.jsontext.source import decode_bytes
from schemacli.contracts.store.tree import (
    SUBJECTS_DIR,
    IndexView,
    StoreLayoutError,
    StoreLayoutErrors,
    index_folder,
    text_key,
)
from schemacli.errors import InputError, Location, UsageError
from schemacli.textfile import resolved

_LISTED = "\0listed"  # a key no path can be: marks that subjects/ was listed and fetched


_CHUNK = 64  # requests written to cat-file before its answers are read (well under a pipe)


class _CatFile:
    """One ``git cat-file --batch`` for a tree's whole life: requests written a chunk at a
    time, each answer read as it comes (header, then exactly its size), so only the files
    asked for are held, and neither pipe fills while the other waits."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.process: subprocess.Popen[bytes] | None = None
        self._closer: weakref.finalize[[subprocess.Popen[bytes]], _CatFile] | None = None

    def ask(self, names: Sequence[str]) -> list[bytes | None]:
        """The content of each object name (a blob id or REF:path), None where missing."""
        out: list[bytes | None] = []
        for start in range(0, len(names), _CHUNK):
            chunk = names[start : start + _CHUNK]
            process = self._started()
            stdin, stdout = process.stdin, process.stdout
            assert stdin is not None and stdout is not None  # opened as pipes
            try:
                stdin.write("".join(f"{name}\n" for name in chunk).encode())
                stdin.flush()
                out.extend(_answer(stdout) for _ in chunk)
            except (OSError, ValueError) as err:
                self.close()
                raise InputError(f"git cat-file --batch failed: {err}") from err
        return out

    def _started(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            try:
                self.process = subprocess.Popen(
                    ["git", "-C", str(self.repo), "cat-file", "--batch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except FileNotFoundError as err:
                raise InputError(
                    "git is not installed", hint="install git, or drop --against"
                ) from err
            self._closer = weakref.finalize(self, _stop, self.process)
        return self.process

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
        self.process = None


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a cat-file process: its input closed, it exits; waited for (never left behind)."""
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _answer(stdout: IO[bytes]) -> bytes | None:
    """One answer of ``cat-file --batch``: "<id> <type> <size>\\n<content>\\n", or
    "<name> missing\\n"."""
    header = stdout.readline()
    if not header.endswith(b"\n"):
        raise ValueError("git cat-file stopped answering")
    if header.rstrip().endswith(b" missing"):
        return None
    size = int(header.rsplit(b" ", 1)[1])
    data = stdout.read(size + 1)  # the content and its newline
    if len(data) != size + 1:
        raise ValueError("git cat-file stopped in the middle of an object")
    return data[:size]


@dataclass(frozen=True)
class GitTree:
    """The store as it was at a git ref: ``git ls-tree`` for names and blob ids, one ``git
    cat-file --batch`` for the texts read (see the module)."""

    repo: Path
    ref: str
    prefix: str  # the store directory relative to the repository root, "" for the root
    # A cache of file contents (None: not in the tree); filled by subjects() and read().
    _blobs: dict[str, bytes | None] = field(default_factory=dict, repr=False, compare=False)
    # The blob id of each file under subjects/, from the listing: its content key.
    _ids: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    _cat: list[_CatFile] = field(default_factory=list, repr=False, compare=False)

    def close(self) -> None:
        """End the git process reading the texts (also done when the tree is collected)."""
        for cat in self._cat:
            cat.close()

    def changed_paths(self) -> frozenset[str]:
        """The files under the store that differ between the ref and the working tree
        (added, changed, deleted, and files git does not track), relative to the store: what
        ``git diff`` and ``git ls-files --others`` list, git's own index deciding by stat."""
        where = self._path("") or "."
        tracked = _git(
            self.repo, "diff", "--name-only", "--no-renames", "-z", self.ref, "--", where
        )
        untracked = _git(self.repo, "ls-files", "--others", "-z", "--", where)
        strip = len(self.prefix) + 1 if self.prefix else 0
        return frozenset(name[strip:] for name in (tracked + untracked).split("\0") if name)

    @property
    def label(self) -> str:
        return f"git:{self.ref}"

    def source(self, path: str) -> str:
        return f"{self.ref}:{self._path(path)}"

    def _path(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def subjects(self) -> dict[str, dict[int, str]]:
        out = _git(self.repo, "ls-tree", "-r", "-z", self.ref, "--", self._path(SUBJECTS_DIR))
        # each folder's names as they come (git lists a folder's files together), indexed a
        # folder at a time in the order the working tree's listing takes (by name)
        folders: dict[str, list[str]] = {}
        top = (
            len(self.prefix) + 1 if self.prefix else 0
        )  # "<prefix>/subjects/..." -> "subjects/..."
        strip = len(SUBJECTS_DIR) + 1
        ids = self._ids
        for line in out.split("\0"):
            if not line:
                continue
            meta, _, full = line.partition("\t")  # "<mode> <type> <object>\t<path>"
            path = full[top:]
            ids[path] = meta[meta.rindex(" ") + 1 :]
            folder, sep, name = path[strip:].partition("/")
            if not sep:
                folders.setdefault("", []).append(folder)  # a file directly in subjects/
            elif "/" not in name:
                found = folders.get(folder)
                if found is None:
                    found = folders[folder] = []
                found.append(name)
        self._blobs[_LISTED] = b""  # files under subjects/ not listed do not exist
        index: dict[str, dict[int, str]] = {}
        problems: list[StoreLayoutError] = []
        for folder in sorted(folders):
            index_folder(folder, sorted(folders[folder]), index, problems, self.source)
        if problems:
            raise StoreLayoutErrors(problems, index)
        return index

    def _fetch(self, paths: Sequence[str]) -> None:
        """Read ``paths`` through the tree's one ``git cat-file --batch``; by their blob ids
        where the listing named them: git finds a blob by its id at once, while ``REF:path``
        walks the trees from the root on every line, and ``subjects/`` has an entry per
        subject (a store's every file read that way costs files x subjects)."""
        listed = _LISTED in self._blobs
        paths = [p for p in dict.fromkeys(paths) if p not in self._blobs]
        asked = []
        for p in paths:
            if p in self._ids:
                asked.append(p)
            elif listed and p.startswith(f"{SUBJECTS_DIR}/"):
                self._blobs[p] = None  # not in the listing: not at the ref
            else:
                asked.append(p)
        if not asked:
            return
        if not self._cat:
            self._cat.append(_CatFile(self.repo))
        names = [self._ids.get(p) or f"{self.ref}:{self._path(p)}" for p in asked]
        for path, blob in zip(asked, self._cat[0].ask(names), strict=True):
            self._blobs[path] = blob

    def keys(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Each file's blob id, as the listing named it (git's own content key); a file
        outside subjects/ is read and keyed by its text."""
        listed = _LISTED in self._blobs
        out: dict[str, str | None] = {}
        for path in paths:
            if path in self._ids:
                out[path] = self._ids[path]
            elif listed and path.startswith(f"{SUBJECTS_DIR}/"):
                out[path] = None
            else:
                text = self.read([path], optional=True)[path]
                out[path] = None if text is None else text_key(text)
        return out

    def read(self, paths: Sequence[str], *, optional: bool = False) -> dict[str, str | None]:
        self._fetch(paths)
        texts: dict[str, str | None] = {}
        for path in paths:
            # a text is decoded when read, and its bytes let go: each is read once per tree
            # (the references' resolver keeps what it parsed)
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


# git as the index road needs it: its own stat of every file, ctime included (an edit that
# puts the mtime back still moves the ctime), no file system monitor answering for it, and no
# conversion of a file's bytes on their way into the index (what git compares is then the
# file's own bytes); attributes files anywhere near the store turn the road off (index_view)
_INDEX_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.trustctime=true",
    "-c",
    "core.checkStat=default",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.attributesFile=/dev/null",
    "--no-optional-locks",
)
_CLOCK_MARGIN_NS = 2_000_000_000  # a file system's clock may lag the system's by a tick
_WHOLE_FOLDER = 256  # more folders than this asked at once: the whole subjects/ listed


def index_view(store: Path) -> IndexView | None:
    """What git's index says of ``store``'s subject folders (``IndexView``), or None where it
    cannot be trusted or does not apply: outside a git work tree, no commit yet, git missing
    or failing, an attributes file that could convert a file's bytes on the way (a
    ``.gitattributes`` in the store's folder or above it, ``info/attributes``). A folder that
    git finds changed since HEAD (staged or not, deleted, unmerged), or holding a file with
    git's assume-unchanged or skip-worktree bit, has no tree id in it (its files are statted)."""
    try:
        head = _index_git(store, "rev-parse", "--show-prefix", "--git-path", "info/attributes")
        prefix, info_attributes = head.split("\n")[:2]
        _index_git(store, "rev-parse", "--verify", "--quiet", "HEAD^{tree}")
    except (InputError, ValueError):
        return None
    if (store / info_attributes).exists():  # (an absolute path stays itself)
        return None
    top = store.joinpath(*[".."] * prefix.count("/"))
    folders = [top, *(top.joinpath(*prefix.split("/")[: i + 1]) for i in range(prefix.count("/")))]
    if any((folder / ".gitattributes").exists() for folder in [*folders, store / SUBJECTS_DIR]):
        return None
    since = time.time_ns() - _CLOCK_MARGIN_NS
    subjects = f"{SUBJECTS_DIR}/"
    try:
        changed = _index_git(store, "diff-index", "--name-only", "-z", "HEAD", "--", subjects)
        flags = _index_git(store, "ls-files", "-v", "-z", "--", subjects)
        listed = _index_git(store, "ls-tree", "-z", "--full-name", "HEAD", "--", subjects)
    except InputError:
        return None
    strip = len(prefix)
    untrusted = {_folder_of(path[strip:]) for path in changed.split("\0") if path}
    # "H <path>": a plain cached entry; any other tag (lower case: assume-unchanged; S:
    # skip-worktree; M: unmerged) leaves its folder to the stat road
    untrusted.update(  # (ls-files names paths from the store's folder)
        _folder_of(record[2:]) for record in re.findall(r"(?:^|\0)((?!H )[^\0]+)", flags)
    )
    trees: dict[str, str] = {}
    for record in listed.split("\0"):
        meta, _, path = record.partition("\t")
        folder = path[strip:]
        if meta.startswith("040000 tree ") and folder not in untrusted:
            trees[folder] = meta[12:]
    return IndexView(trees, since, functools.partial(_tracked, store, prefix))


def _folder_of(path: str) -> str:
    """``subjects/<subject>/...`` -> ``subjects/<subject>``."""
    return "/".join(path.split("/", 2)[:2])


def _tracked(store: Path, prefix: str, folders: Sequence[str]) -> dict[str, list[str]]:
    """The names git tracks directly in each of ``folders`` at HEAD (see IndexView)."""
    asked = [f"{f}/" for f in folders] if len(folders) <= _WHOLE_FOLDER else [f"{SUBJECTS_DIR}/"]
    out: dict[str, list[str]] = {}
    try:
        listed = _index_git(
            store, "ls-tree", "-r", "-z", "--name-only", "--full-name", "HEAD", "--", *asked
        )
    except InputError:
        return out
    strip = len(prefix)
    for path in listed.split("\0"):
        folder, _, name = path[strip:].rpartition("/")
        if name and folder.count("/") == 1:
            out.setdefault(folder, []).append(name)
    return out


def _index_git(store: Path, *args: str) -> str:
    """git run in the store's folder as the index road needs it (``_INDEX_CONFIG``); its
    output decoded without loss (a name git quotes no way with -z)."""
    env = {**os.environ, "GIT_ATTR_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"}
    result = _run_git(store, [*_INDEX_CONFIG, *args], None, env=env)
    return result.stdout.decode("utf-8", "surrogateescape")


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


def _run_git(
    cwd: Path, args: list[str], stdin: bytes | None, *, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    try:
        result = subprocess.run(
            ["git", "-C", str(cwd), *args], input=stdin, capture_output=True, check=False, env=env
        )
    except FileNotFoundError as err:
        raise InputError("git is not installed", hint="install git, or drop --against") from err
    if result.returncode != 0:
        raise InputError(f"git {' '.join(args)} failed: {result.stderr.decode().strip()}")
    return result
