"""References between schemas in the store: a version's named types taken from other schemas,
declared in ``v<N>.references.json`` (Confluent schema references, or paths) or found in the
store's name index; read from the same tree, so ``--against git:REF`` resolves them as they
were at REF."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from schemacli.contracts.avro.loader import (
    CircularReferenceError,
    DuplicateDefinitionError,
    Fallback,
    LoadedSchema,
    NameUse,
    SchemaReferenceError,
    load_schema_document,
    scan_names,
)
from schemacli.contracts.avro.parse import UNDEFINED_NAME
from schemacli.contracts.avro.schema import Names, Schema
from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.source import parse_text
from schemacli.contracts.store.nameindex import Definition, StoreNames
from schemacli.contracts.store.tree import (
    SUBJECTS_DIR,
    VERSION_FILE,
    Tree,
    VersionFile,
    sidecar_path,
)
from schemacli.errors import Location, SchemaParseError

_NEEDS_STORE = "\0needs the store's names"  # a memo key no (text, references) pair can be


# Parses shared between trees (References.load and parse): (text, references) -> (Document,
# Schema); (_NEEDS_STORE, text) -> True once the text was found to need the store's names;
# (that key, its found types' contents) -> the Schema parsed with them; _FIELDS -> the
# parser's FieldMemo (fields parsed once for all the versions, see parse_schema).
ParseMemo = dict[tuple[object, ...], Any]
_FIELDS = ("\0fields parsed once",)  # no (text, references) pair is a 1-tuple


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


@dataclass
class Consulted:
    """What loading some versions took from outside their own files: each file read (a
    referenced schema, its references file, a definer named in an ambiguity), each name looked
    up in the store's names with the definers found (their paths, one per distinct body), and
    each declared reference to a subject's version with the file it named. A gate row that
    holds these as they were is the same row (``References.still``)."""

    files: set[str] = field(default_factory=set)
    names: dict[tuple[str, str | None], tuple[str, ...]] = field(default_factory=dict)
    targets: dict[tuple[str, object], str | None] = field(default_factory=dict)

    def add(self, other: Consulted) -> None:
        self.files |= other.files
        self.names.update(other.names)
        self.targets.update(other.targets)


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
        self.alone: dict[int, tuple[Schema, Names]] = {}  # see including()
        self.loading: list[str] = []
        self.store_names = StoreNames(tree, index)
        # How many files looked for a type in the store's names (found or not).
        self.resolved_from_store = 0
        # What is being consulted, innermost last (see consulting()), and what loading each
        # file of ``cache`` consulted (a cached file consults it again for whoever uses it).
        self._consulting: list[Consulted] = []
        self._consulted: dict[str, Consulted] = {}

    @contextmanager
    def consulting(self) -> Iterator[Consulted]:
        """Within the block, what loads take from outside their own files is gathered in the
        ``Consulted`` yielded (the gate keys a row's cache entry by it)."""
        found = Consulted()
        self._consulting.append(found)
        try:
            yield found
        finally:
            self._consulting.pop()

    def _note(self, consulted: Consulted) -> None:
        for frame in self._consulting:
            frame.add(consulted)

    def _read(self, paths: list[str], *, optional: bool = False) -> dict[str, str | None]:
        if self._consulting:
            self._note(Consulted(files=set(paths)))
        return self.tree.read(paths, optional=optional)

    def still(self, names: Any, targets: Any) -> bool:
        """Whether the store's names and the declared references recorded by ``consulting``
        (as ``names``: [[name, besides, [paths]]], ``targets``: [[subject, version, path]])
        still find the same files."""
        try:
            for name, besides, paths in names:
                found = [d.path for d in self.store_names.defining(name, besides=besides)]
                if found != list(paths):
                    return False
            for subject, version, path in targets:
                if self._target_of(subject, version) != path:
                    return False
        except (TypeError, ValueError):
            return False
        return True

    def _target_of(self, subject: object, version: object) -> str | None:
        versions = self.index.get(subject, {}) if isinstance(subject, str) else {}
        if version in ("latest", -1) and versions:
            version = max(versions)
        if type(version) is not int or version not in versions:
            return None
        return versions[version]

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
        # A history's versions share most fields' text: each parsed once (parse_schema).
        fields = memo.setdefault(_FIELDS, {}) if memo is not None else None
        if memo is None or needs_store not in memo:
            try:
                loaded = load_schema_document(document, version=version, names=names, fields=fields)
                return replace(loaded, references=refs) if refs else loaded
            except SchemaParseError as err:
                if err.kind != UNDEFINED_NAME:
                    raise
        self.resolved_from_store += 1
        found = self.from_store(document, _subject_of(path), names)
        for dep in found:
            names = self.including(names, dep)
        refs = (*refs, *found)
        # The same text with the same types found (by content) is the same model: with
        # --against, a version unchanged since the ref is parsed once, not once per tree.
        same = (needs_store, tuple(_content(dep) for dep in found))
        if memo is not None and same in memo:
            loaded = LoadedSchema(document.source, document, memo[same], version)
            return replace(loaded, references=refs)
        try:
            loaded = load_schema_document(document, version=version, names=names, fields=fields)
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
                known = self.including(known, dep)
        return tuple(deps.values())

    def including(self, names: Names | None, dep: LoadedSchema) -> Names:
        """``names`` and the named types ``dep`` defines; ``dep``'s alone are listed once
        (a shared type's file is used by many versions, and listing walks its whole tree)."""
        if names:
            return names.including(dep.schema)
        entry = self.alone.get(id(dep.schema))
        if entry is None or entry[0] is not dep.schema:
            entry = self.alone[id(dep.schema)] = (dep.schema, Names().including(dep.schema))
        return entry[1]

    def find(self, use: NameUse, document: Document, own: str | None) -> LoadedSchema | None:
        """The latest version of the one subject other than ``own`` that defines the name
        ``use`` makes in ``document`` (its full name first, then as written: Java's order)."""
        for name in use.candidates:
            found = self.store_names.defining(name, besides=own)
            if self._consulting:
                self._note(Consulted(names={(name, own): tuple(d.path for d in found)}))
            if len(found) > 1:
                raise self.duplicate(name, found, document.location(use.pointer))
            if found:
                path = found[0].path
                if path in self.cache:  # placed in the text only for a message: not here
                    return self._cached(path)
                return self.load_path(path, document.location(use.pointer))
        return None

    def _cached(self, path: str) -> LoadedSchema:
        """A file loaded before; what loading it consulted is consulted again."""
        if self._consulting:
            self._note(Consulted(files={path, sidecar_path(path)}))
            if path in self._consulted:
                self._note(self._consulted[path])
        return self.cache[path]

    def duplicate(
        self, name: str, found: list[Definition], where: Location
    ) -> DuplicateDefinitionError:
        places = []
        for definition in found:
            text = self._read([definition.path])[definition.path] or ""
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
        found = self._target_of(subject, version)
        if self._consulting and isinstance(subject, str):
            self._note(Consulted(targets={(subject, _plain_version(version)): found}))
        if found is None:
            raise SchemaReferenceError(
                f"reference to subject {subject!r} version {entry.get('version')!r}: "
                "not in the store",
                location=where,
                hint=hint
                if not isinstance(subject, str)
                else f'add {SUBJECTS_DIR}/{subject}/v<N>.avsc, or give a "path"',
            )
        return found

    def load_path(self, path: str, where: Location) -> LoadedSchema:
        if path in self.cache:
            return self._cached(path)
        if path in self.loading:
            cycle = self.loading[self.loading.index(path) :]
            raise CircularReferenceError(
                "circular references: " + " -> ".join(self.tree.source(p) for p in [*cycle, path]),
                location=where,
                hint="break the cycle: define the shared type in one file",
            )
        self.loading.append(path)
        own = Consulted()
        self._consulting.append(own)
        try:
            texts = self._read([path, sidecar_path(path)], optional=True)
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
            self._consulting.pop()
            self._note(own)
        self.cache[path] = loaded
        self._consulted[path] = own
        return loaded


def _plain_version(version: object) -> object:
    """A reference's version as JSON keeps it (an int, "latest", or what was written)."""
    return version if isinstance(version, int | str) or version is None else repr(version)
