"""The store's name index: which full names the latest version of each subject defines (a
version's named types may come from another subject without a references file)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from schemacli.contracts.avro.loader import collapse_primitives, scan_names
from schemacli.contracts.jsontext.pointer import value_at
from schemacli.contracts.jsontext.source import parse_text
from schemacli.contracts.store.tree import Tree
from schemacli.errors import SchemacliError


@dataclass(frozen=True)
class Definition:
    """A named type as one subject's latest version defines it."""

    subject: str
    version: int
    path: str  # the version file, relative to the store
    pointer: str  # where the definition sits in it
    body: str  # a digest of the definition's JSON (layout, key order and {"type": "int"} aside)


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
        # What each latest version defines, by its content key (see use_scans): those known
        # from an earlier run, and those of this run's latest versions.
        self.known: dict[str, Any] | None = None
        self.seen: dict[str, list[list[str]]] = {}

    def use_scans(self, known: dict[str, Any]) -> None:
        """Take what each file defines from ``known`` (content key -> [[name, pointer,
        body], ...], what ``seen`` held in an earlier run), reading only the latest versions
        whose content key it lacks."""
        self.known = known

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

    @property
    def built(self) -> bool:
        """Whether the index was built (some version looked a name up)."""
        return self._defined is not None

    def _build(self) -> dict[str, list[Definition]]:
        numbers = {s: max(v) for s, v in sorted(self.index.items()) if v}
        latest = {s: self.index[s][n] for s, n in numbers.items()}
        keys: dict[str, str | None] = {}
        if self.known is not None:
            try:
                keys = self.tree.keys(list(latest.values()))
            except SchemacliError:
                keys = {}
        scans: dict[str, list[list[str]]] = {}
        for path in latest.values():
            key = keys.get(path)
            if self.known is None or key is None:
                continue
            known = self.known.get(key)
            if isinstance(known, list):
                scans[path] = self.seen[key] = known
        texts = self._texts([p for p in latest.values() if p not in scans])
        for path, text in texts.items():
            scan = self._scan(path, text)
            if scan is not None:
                scans[path] = scan
                key = keys.get(path)
                if key is not None:
                    self.seen[key] = scan
        defined: dict[str, list[Definition]] = {}
        for subject, path in latest.items():
            for entry in scans.get(path, ()):
                try:
                    name, pointer, body = entry
                except (TypeError, ValueError):
                    continue
                found = Definition(subject, numbers[subject], path, pointer, body)
                defined.setdefault(name, []).append(found)
        return defined

    def defines(self, path: str) -> list[str] | None:
        """The full names the version file ``path`` defines (as the index would take them
        from it), None when it cannot be read."""
        scan = self._scan(path, self._texts([path]).get(path))
        return None if scan is None else [name for name, _, _ in scan]

    def _texts(self, paths: list[str]) -> dict[str, str | None]:
        try:
            return self.tree.read(paths, optional=True)
        except SchemacliError:  # one unreadable file: read the others one by one
            texts: dict[str, str | None] = {}
            for path in paths:
                try:
                    texts.update(self.tree.read([path], optional=True))
                except SchemacliError:
                    texts[path] = None
            return texts

    def _scan(self, path: str, text: str | None) -> list[list[str]] | None:
        """What the file ``path`` defines, as [name, pointer, body]; None when it cannot be
        read, nothing when it does not parse (it gets its own error where it is gated)."""
        if text is None:
            return None
        try:
            value = parse_text(text.removeprefix("\ufeff"), self.tree.source(path)).value
        except SchemacliError:
            return []
        out = []
        for name, pointer in scan_names(value)[0].items():
            body = json.dumps(
                collapse_primitives(value_at(value, pointer)),
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
            )
            # only compared: its digest is as good, and a table of them stays small
            digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            out.append([name, pointer, digest])
        return out
