"""The store's name index: which full names the latest version of each subject defines (a
version's named types may come from another subject without a references file)."""

from __future__ import annotations

import json
from dataclasses import dataclass

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
                    collapse_primitives(value_at(value, pointer)),
                    sort_keys=True,
                    separators=(",", ":"),
                    ensure_ascii=False,
                )
                found = Definition(subject, numbers[subject], path, pointer, body)
                defined.setdefault(name, []).append(found)
        return defined
