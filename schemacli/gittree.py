"""The store as it was at a git ref (``--against git:REF``): a ``Tree`` read with git.

The contract core reads a store through ``contracts.store.tree.Tree`` and never runs git; the
commands build a :class:`GitTree` here (``git_tree("git:REF", store)``) and hand it in. Two git
processes serve a whole gate: ``git ls-tree`` for the names, one ``git cat-file --batch`` for
every file under ``subjects/``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from schemacli.contracts.jsontext.source import decode_bytes
from schemacli.contracts.store.tree import SUBJECTS_DIR, index_names
from schemacli.errors import InputError, Location, UsageError
from schemacli.textfile import resolved

_LISTED = "\0listed"  # a key no path can be: marks that subjects/ was listed and fetched


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
        out = _git(self.repo, "ls-tree", "-r", "-z", self.ref, "--", self._path(SUBJECTS_DIR))
        names = []
        files = []
        objects: dict[str, str] = {}  # path -> its blob's id
        strip = len(self._path(SUBJECTS_DIR)) + 1
        for line in filter(None, out.split("\0")):
            meta, _, full = line.partition("\t")  # "<mode> <type> <object>\t<path>"
            rel = full[strip:]
            files.append(f"{SUBJECTS_DIR}/{rel}")
            objects[files[-1]] = meta.rsplit(" ", 1)[-1]
            parts = rel.split("/")
            if len(parts) == 2:
                names.append((parts[0], parts[1]))
            elif len(parts) == 1:
                names.append(("", parts[0]))
        self._fetch([f for f in files if f.endswith((".avsc", ".json"))], objects)
        self._blobs[_LISTED] = b""  # files under subjects/ not fetched now do not exist
        return index_names(sorted(names), self.source)

    def _fetch(self, paths: Sequence[str], objects: dict[str, str] | None = None) -> None:
        """Read ``paths`` in one ``git cat-file --batch``; by their blob ids where ``objects``
        (from the listing) has them: git finds a blob by its id at once, while ``REF:path``
        walks the trees from the root on every line, and ``subjects/`` has an entry per
        subject (a store's every file read that way costs files x subjects)."""
        paths = [p for p in dict.fromkeys(paths) if p not in self._blobs]
        if not paths:
            return
        known = objects or {}
        request = "".join(
            f"{known[p]}\n" if p in known else f"{self.ref}:{self._path(p)}\n" for p in paths
        ).encode()
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
