"""Loading ``.avsc`` files whose named types may be defined in other files.

A schema may use a record, enum or fixed defined in another file. ``load_schema_file`` finds
that file in one of two ways, loads it first (recursively), and parses the schema knowing its
types, the way Confluent schema references and Java's ``Schema.Parser`` reuse work:

1. **Declared references**: a sidecar ``<stem>.references.json`` next to ``<stem>.avsc`` holding
   the list a Confluent user writes when registering a schema with references::

       [{"name": "com.acme.Address", "subject": "address-value", "version": 1},
        {"name": "com.acme.Money", "path": "../common/com.acme.Money.avsc"}]

   ``path`` (relative to the sidecar) wins; otherwise ``subject`` + ``version`` resolve in the
   store layout ``<store>/subjects/<subject>/v<version>.avsc`` (``"version": "latest"`` or -1
   takes the highest version). ``name`` must be a full name the referenced file defines.
2. **The naming convention**: a name used but not defined and not declared is looked up as
   ``<namespace>.<Name>.avsc`` (then ``<Name>.avsc``, for a full name too) in the schema's own
   folder, then in each of ``search_paths``.
3. **The index of names**: otherwise, any ``.avsc`` file that defines the name, whatever the
   file is called (``position.avsc`` defining ``com.acme.Position``), found under the
   loader's ``roots`` (validate's paths), the schema's own folder and ``search_paths``
   (recursively, hidden folders skipped). This is how Java resolves names when it parses
   several files with one parser (avro-maven-plugin's ``imports``), but independent of the
   order of the files. The index is built once per folder, on the first name the first two
   ways do not find, by a cheap scan of each file's JSON (``scan_names``). A name defined in
   two different files is an error naming both (``DuplicateDefinitionError``).
4. **A fallback** the caller gives (``fallback``): asked last, for a name none of the above
   finds. ``check`` against the store passes the store's names (``store.References.fallback``),
   so a candidate finds types the way the store's versions do.

Circular file references (a.avsc needs b.avsc, which needs a.avsc) are an InputError naming
the cycle. A SchemaParseError from the parser gets file, line and column added to its pointer.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.facts import PRIMITIVE_TYPES
from schemacli.contracts.avro.parse import FIELD_TEXT, FieldMemo, parse_schema
from schemacli.contracts.avro.schema import NamedSchema, Names, RecordSchema, Schema, named_types
from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.source import load_json, parse_text
from schemacli.errors import InputError, Location, SchemacliError, SchemaParseError
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind
from schemacli.textfile import Root, is_file, resolved

SIDECAR_SUFFIX = ".references.json"


class SchemaReferenceError(InputError):
    """A declared or conventional reference to another schema file cannot be used."""

    kind = Kind.BAD_REFERENCE


class CircularReferenceError(SchemaReferenceError):
    """Schema files that need each other (Avro parses one file after another)."""

    kind = Kind.CIRCULAR_REFERENCE


class DuplicateDefinitionError(SchemaReferenceError):
    """A name this schema needs is defined in two different files: which one is meant?"""

    kind = Kind.DUPLICATE_DEFINITION


_VERSION_FILE = re.compile(r"v([1-9][0-9]*)\.avsc")
_REFERENCE_KEYS = frozenset({"name", "subject", "version", "path"})


@frozen_dataclass
class LoadedSchema:
    """One schema text, parsed: where it came from, its JSON, the Avro model, its positions.

    From a file (``load_schema_file``): ``path`` is the file, ``defines`` the named types this
    file itself defines, ``references`` the files it referenced directly (each a LoadedSchema)
    and ``names`` every named type visible in it. From text (``load_schema_text``: a store
    version, a git blob, a registry's answer) ``path`` is None and ``version`` is the version's
    number, when it has one.
    """

    source: str  # a path, ``REF:path`` for git, or ``subject:version`` for a registry
    document: Document
    schema: Schema
    version: int | None = None
    path: Path | None = None
    defines: tuple[NamedSchema, ...] = ()
    references: tuple[LoadedSchema, ...] = ()
    names: Names = field(default_factory=Names)

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
        # Written by the C encoder, then collapsed in the text (a Python walk over every node
        # cost most of it): equal to json.dumps(collapse_primitives(value)), see the test.
        by_fields = _identity_by_fields(self.value, self.schema)
        if by_fields is not None:
            return by_fields
        return _COLLAPSIBLE.sub(_collapsed, _IDENTITY_ENCODER.encode(self.value))

    def location(self, pointer: str | None = None) -> Location:
        """Source, pointer and line:col of ``pointer`` in this schema's text."""
        if pointer is None:
            return Location(source=self.source, line=1, column=1)
        line, column = self.document.position(pointer)
        return Location(source=self.source, pointer=pointer, line=line, column=column)

    def referenced_files(self) -> tuple[Path, ...]:
        """Every file this one needed, directly or not, dependencies first, each once."""
        out: dict[Path, None] = {}
        for ref in self.references:
            for path in ref.referenced_files():
                out.setdefault(path)
            if ref.path is not None:
                out.setdefault(ref.path)
        return tuple(out)


def collapse_primitives(value: Any) -> Any:
    """``{"type": "int"}`` as ``"int"``, throughout: how ``identity`` compares JSON."""
    if isinstance(value, dict):
        if len(value) == 1 and value.get("type") in PRIMITIVE_TYPES:
            return value["type"]
        # strings, numbers and the like are returned as they are, without a call each (most
        # of a schema's values): identity is computed for every version a gate reads
        return {
            k: v if v.__class__ in _SCALARS else collapse_primitives(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [v if v.__class__ in _SCALARS else collapse_primitives(v) for v in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})
_IDENTITY_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
# An object whose only member is "type": a primitive, as the compact sorted encoder writes it.
# Outside a string only: inside one, every quote is escaped, and a string's closing quote is
# never followed by a letter. One left-to-right pass, as collapse_primitives replaces a node
# without looking at what it became.
_COLLAPSIBLE = re.compile('\\{"type":"(' + "|".join(sorted(PRIMITIVE_TYPES)) + ')"\\}')


def _collapsed(match: re.Match[str]) -> str:
    return f'"{match.group(1)}"'


_FIELD_IDENTITY = "_identity"  # a memoised field's part of identity, kept in the field
_NO_FIELDS = '"fields":[]'


def _identity_by_fields(value: Any, schema: Schema) -> str | None:
    """``identity`` of a record whose fields the parser memoised (a history's versions share
    them): each field's part encoded and collapsed once, then put in the record's own text;
    None for any other schema. Equal to encoding the whole (see the test): a field always
    has a name, so no collapsible node spans two fields or a field and the record."""
    if schema.__class__ is not RecordSchema or value.__class__ is not dict:
        return None
    raws = value.get("fields")
    fields: tuple[Any, ...] = schema.fields
    if raws.__class__ is not list or len(raws) != len(fields) or not fields:
        return None
    parts = []
    for model, raw in zip(fields, raws, strict=True):
        attrs = model.__dict__
        part = attrs.get(_FIELD_IDENTITY)
        if part is None:
            if FIELD_TEXT not in attrs:
                return None
            part = attrs[_FIELD_IDENTITY] = _COLLAPSIBLE.sub(
                _collapsed, _IDENTITY_ENCODER.encode(raw)
            )
        parts.append(part)
    head = _COLLAPSIBLE.sub(_collapsed, _IDENTITY_ENCODER.encode({**value, "fields": []}))
    if head.count(_NO_FIELDS) != 1:  # a property spelled like it: the whole road
        return None
    return head.replace(_NO_FIELDS, '"fields":[' + ",".join(parts) + "]")


@frozen_dataclass
class NameUse:
    """A reference to a named type in the JSON: the names Java would try, and where."""

    candidates: tuple[str, ...]
    pointer: str


def scan_names(value: Any) -> tuple[dict[str, str], list[NameUse]]:
    """The full names a schema's JSON defines (name -> pointer) and every named-type reference.

    Mirrors the namespace rules of the parser; used only to find files before parsing.
    """
    defined: dict[str, str] = {}
    uses: list[NameUse] = []

    def use(name: str, namespace: str | None, pointer: str) -> None:
        if name in PRIMITIVE_TYPES:
            return
        full = f"{namespace}.{name}" if namespace and "." not in name else name
        uses.append(NameUse((full, name) if full != name else (name,), pointer))

    def walk(node: Any, pointer: str, namespace: str | None) -> None:
        if isinstance(node, str):
            use(node, namespace, pointer)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{pointer}/{i}", namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if not isinstance(kind, str) or kind in PRIMITIVE_TYPES:
                return
            if kind in ("record", "error", "enum", "fixed"):
                name = node.get("name")
                if not isinstance(name, str):
                    return
                space = node.get("namespace")
                space = space if isinstance(space, str) else namespace
                if "." in name:
                    space, name = name.rsplit(".", 1)
                space = space or None
                defined.setdefault(f"{space}.{name}" if space else name, pointer)
                fields = node.get("fields")
                if kind in ("record", "error") and isinstance(fields, list):
                    for i, fld in enumerate(fields):
                        if isinstance(fld, dict) and "type" in fld:
                            walk(fld["type"], f"{pointer}/fields/{i}/type", space)
            elif kind == "array":
                if "items" in node:
                    walk(node["items"], pointer + "/items", namespace)
            elif kind == "map":
                if "values" in node:
                    walk(node["values"], pointer + "/values", namespace)
            else:
                use(kind, namespace, pointer)

    walk(value, "", None)
    return defined, uses


@frozen_dataclass
class _Declared:
    """A named type a file declares: its full name, the file, and where in it."""

    name: str
    path: Path
    location: Location


class NameIndex:
    """Which files define which full names, under the folders and files scanned so far.

    Each folder or file is scanned once (``cover``): every ``*.avsc`` under it (hidden folders
    skipped) is parsed as JSON and walked by ``scan_names``; a file that cannot be read or
    parsed defines nothing here (it gets its own error when it is loaded). The documents are
    kept, so a file found here is not read twice.
    """

    def __init__(self, within: Root | None = None) -> None:
        self.within = within
        self.defined: dict[str, dict[Path, tuple[Path, str]]] = {}  # name -> key -> (file, ptr)
        self.documents: dict[Path, Document] = {}
        self._covered: set[Path] = set()
        self._indexed: set[Path] = set()

    def cover(self, path: Path) -> None:
        """Scan ``path`` (a folder, recursively, or one file) unless it was scanned before."""
        key = resolved(path)
        if key in self._covered:
            return
        self._covered.add(key)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".avsc"):
                        self._scan(Path(root) / name)
        elif is_file(path):
            self._scan(path)

    def remember(self, path: Path, doc: Document) -> None:
        """Keep a document the loader read anyway, so a later scan does not read it again."""
        self.documents.setdefault(resolved(path), doc)

    def _scan(self, path: Path) -> None:
        key = resolved(path)
        if key in self._indexed:
            return
        self._indexed.add(key)
        doc = self.documents.get(key)
        if doc is None:
            try:
                doc = load_json(path, within=self.within)
            except SchemacliError:
                return
            self.documents[key] = doc
        defined, _ = scan_names(doc.value)
        for full, pointer in defined.items():
            self.defined.setdefault(full, {}).setdefault(key, (path, pointer))

    def files_defining(self, name: str, besides: Path) -> list[tuple[Path, str]]:
        """(file, pointer) of each file other than ``besides`` that defines ``name``."""
        found = self.defined.get(name, {})
        return [where for key, where in found.items() if key != besides]


Fallback = Callable[[NameUse, Document], "LoadedSchema | None"]


class Loader:
    """Loads schema files, caching each file once (a folder often shares its dependencies).

    ``roots``: folders and files whose ``.avsc`` files may define the names a schema uses,
    besides its own folder and ``search_paths`` (validate passes the paths it was given).
    ``fallback``: asked last for a name no file defines, with the use and the document that
    makes it; returns the schema defining it (or None), or raises an InputError.
    ``within``: every file is read inside that root (textfile's rule for input from another
    party: a link or a reference out of it is refused).
    """

    def __init__(
        self,
        *,
        search_paths: Sequence[Path] = (),
        names: Names | None = None,
        roots: Sequence[Path] = (),
        fallback: Fallback | None = None,
        within: Root | None = None,
    ) -> None:
        self.fallback = fallback
        self.within = within
        self.search_paths = tuple(Path(p) for p in search_paths)
        self.roots = tuple(Path(p) for p in roots)
        self.names = names or Names()
        self._cache: dict[Path, LoadedSchema | SchemacliError] = {}
        self._index = NameIndex(within)
        self._scopes: set[Path] = set()

    def load(self, path: Path, *, source: str | None = None) -> LoadedSchema:
        """Load and parse ``path``; raises InputError / SchemaParseError with file:line:col."""
        return self._load(Path(path), source, ())

    def _load(self, path: Path, source: str | None, stack: tuple[Path, ...]) -> LoadedSchema:
        key = resolved(path)
        cached = self._cache.get(key)
        if isinstance(cached, LoadedSchema):
            return cached
        if cached is not None:
            raise cached
        try:
            loaded = self._load_uncached(path, source, stack + (key,))
        except SchemacliError as err:
            self._cache[key] = err
            raise
        self._cache[key] = loaded
        return loaded

    def _load_uncached(
        self, path: Path, source: str | None, stack: tuple[Path, ...]
    ) -> LoadedSchema:
        plain = source in (None, str(path))  # a document named as the index names it
        doc = self._index.documents.get(stack[-1]) if plain else None
        if doc is None:
            doc = load_json(path, source=source, within=self.within)
            if plain:
                self._index.remember(path, doc)
        defined, uses = scan_names(doc.value)
        known = set(self.names.types)
        deps: dict[Path | str, LoadedSchema] = {}

        for declared in self._declared(path):
            dep = self._dependency(declared.path, stack, doc, declared.location)
            if declared.name not in dep.names:
                raise SchemaReferenceError(
                    f"{dep.source} does not define {declared.name}",
                    location=declared.location,
                    hint='a reference\'s "name" is the full name (namespace.Name) of a record, '
                    "enum or fixed defined in the referenced schema",
                )
            assert dep.path is not None  # loaded from declared.path, a file
            deps.setdefault(resolved(dep.path), dep)
        for dep in deps.values():
            known.update(dep.names.types)

        missing_at: dict[str, list[Path]] = {}
        for name_use in uses:
            if any(c in defined or c in known for c in name_use.candidates):
                continue
            found, tried = self._find_by_convention(path, name_use.candidates)
            if found is None:
                found = self._find_in_index(path, name_use, doc)
            if found is None and self.fallback is not None:
                given = self.fallback(name_use, doc)
                if given is not None:  # keyed by its source: it need not be a file here
                    given = replace(given, names=Names().including(given.schema))
                    deps.setdefault(given.source, given)
                    known.update(given.names.types)
                    continue
            if found is None:
                missing_at[name_use.pointer] = tried
                continue
            location = doc.location(name_use.pointer)
            dep = self._dependency(found, stack, doc, location)
            deps.setdefault(resolved(found), dep)
            known.update(dep.names.types)

        visible = dict(self.names.types)
        for dep in deps.values():
            for full, named in dep.names.types.items():
                visible.setdefault(full, named)
        names = Names(dict(visible))
        try:
            schema = parse_schema(doc.value, names=names)
        except SchemaParseError as err:
            raise _placed(err, doc, missing_at) from err
        except RecursionError as err:
            raise SchemaParseError(
                "the schema is nested too deeply to parse",
                location=Location(doc.source),
                hint="flatten it: define deep records once by name and refer to them",
            ) from err
        own = tuple(n for n in named_types(schema) if names.get(n.fullname) is not n)
        for named in own:
            visible.setdefault(named.fullname, named)
        return LoadedSchema(
            source=doc.source,
            path=path,
            document=doc,
            schema=schema,
            defines=own,
            references=tuple(deps.values()),
            names=Names(visible),
        )

    def _dependency(
        self, dep_path: Path, stack: tuple[Path, ...], doc: Document, location: Location
    ) -> LoadedSchema:
        key = resolved(dep_path)
        if key in stack:
            cycle = [*stack[stack.index(key) :], key]
            raise CircularReferenceError(
                "circular file reference: " + " -> ".join(_short(p) for p in cycle),
                location=location,
                hint="Avro cannot parse files that need each other; move the mutually recursive "
                "types into one file",
            )
        try:
            return self._load(dep_path, None, stack)
        except SchemacliError as err:
            if isinstance(err, CircularReferenceError):
                # the same cycle, reported where this file enters it
                raise CircularReferenceError(err.message, location=location, hint=err.hint) from err
            where = f"{err.location}: " if err.location is not None else ""
            raise SchemaReferenceError(
                f"referenced schema {dep_path} cannot be loaded: {where}{err.message}",
                location=location,
                hint=err.hint or f"fix {dep_path} first",
            ) from err

    def _find_in_index(self, path: Path, name_use: NameUse, doc: Document) -> Path | None:
        """The one file under the roots, ``path``'s folder or the search paths that defines
        the name (its full name first, then the name as written: Java's fallback)."""
        for scope in (*self.roots, path.parent, *self.search_paths):
            if scope not in self._scopes:  # each scope once: no resolve() per name
                self._scopes.add(scope)
                self._index.cover(scope)
        own = resolved(path)
        for name in name_use.candidates:
            files = self._index.files_defining(name, own)
            if len(files) == 1:
                return files[0][0]
            if len(files) > 1:
                places = [
                    self._index.documents[resolved(f)].location(join_pointer(p, "name"))
                    for f, p in files
                ]
                raise DuplicateDefinitionError(
                    f"{name} is defined in {len(files)} files: "
                    + ", ".join(_place(loc) for loc in places),
                    location=doc.location(name_use.pointer),
                    hint="keep one definition and let the other files use it by name, or "
                    "narrow the paths given so that only one of them is seen",
                )
        return None

    def _find_by_convention(
        self, path: Path, candidates: Iterable[str]
    ) -> tuple[Path | None, list[Path]]:
        # A full name is also looked for as <Name>.avsc.
        candidates = list(dict.fromkeys([*candidates, *(c.rsplit(".", 1)[-1] for c in candidates)]))
        tried: list[Path] = []
        for folder in (path.parent, *self.search_paths):
            for name in candidates:
                candidate = folder / f"{name}.avsc"
                tried.append(candidate)
                # is_file: a name longer than the file system allows is simply not there
                if is_file(candidate) and resolved(candidate) != resolved(path):
                    return candidate, tried
        return None, tried

    def _declared(self, path: Path) -> list[_Declared]:
        sidecar = path.with_name(path.name.removesuffix(".avsc") + SIDECAR_SUFFIX)
        if not is_file(sidecar):
            return []
        doc = load_json(sidecar, within=self.within)
        if not isinstance(doc.value, list):
            raise SchemaReferenceError(
                "references must be a JSON array",
                location=doc.location(""),
                hint='write [{"name": "ns.Type", "subject": "s", "version": 1}, ...]',
            )
        out = []
        for i, entry in enumerate(doc.value):
            pointer = f"/{i}"
            out.append(self._declared_one(doc, entry, pointer, sidecar))
        return out

    def _declared_one(self, doc: Document, entry: Any, pointer: str, sidecar: Path) -> _Declared:
        hint = (
            'each reference is {"name": "<namespace.Name>", "subject": "<subject>", "version": '
            '<n>} or {"name": ..., "path": "<file.avsc>"}'
        )
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise SchemaReferenceError(
                'a reference needs a "name" (the full name of the type it provides)',
                location=doc.location(pointer),
                hint=hint,
            )
        unknown = sorted(set(entry) - _REFERENCE_KEYS)
        if unknown:
            raise SchemaReferenceError(
                f"unknown key {unknown[0]!r} in a reference",
                location=doc.location(join_pointer(pointer, unknown[0])),
                hint=hint,
            )
        location = doc.location(pointer)
        if "path" in entry:
            if not isinstance(entry["path"], str):
                raise SchemaReferenceError(
                    '"path" must be a string',
                    location=doc.location(pointer + "/path"),
                    hint=hint,
                )
            target = sidecar.parent / entry["path"]
            if not is_file(target):
                what = "is not a regular file" if target.exists() else "does not exist"
                raise SchemaReferenceError(
                    f"referenced file {target} {what}",
                    location=doc.location(pointer + "/path"),
                    hint="the path is relative to the folder of the references file",
                )
            return _Declared(entry["name"], target, location)
        subject, version = entry.get("subject"), entry.get("version")
        if not isinstance(subject, str) or not (type(version) is int or version == "latest"):
            raise SchemaReferenceError(
                'a reference needs "subject" and "version" (or a "path")',
                location=location,
                hint=hint,
            )
        stored = _store_file(sidecar, subject, version)
        if stored is None:
            raise SchemaReferenceError(
                f"subject {subject!r} version {version} is not in the local store",
                location=location,
                hint='add it as <store>/subjects/<subject>/v<version>.avsc, or give a "path"',
            )
        return _Declared(entry["name"], stored, location)


def _store_file(sidecar: Path, subject: str, version: int | str) -> Path | None:
    """``<store>/subjects/<subject>/v<version>.avsc`` for the store above ``sidecar``."""
    folders = [*sidecar.parents, *resolved(sidecar).parents]
    store = next((f for f in folders if f.name == "subjects"), None)
    if store is None:
        return None
    subject_dir = store / subject
    if version in ("latest", -1):
        versions = [
            (int(m.group(1)), p)
            for p in subject_dir.glob("v*.avsc")
            if (m := _VERSION_FILE.fullmatch(p.name))
        ]
        return max(versions)[1] if versions else None
    target = subject_dir / f"v{version}.avsc"
    return target if is_file(target) else None


def _placed(
    err: SchemaParseError, doc: Document, missing_at: dict[str, list[Path]]
) -> SchemaParseError:
    """The parser's error with this file's name and the pointer's line:col filled in."""
    pointer = err.location.pointer if err.location is not None else None
    location = doc.location(pointer) if pointer is not None else Location(doc.source)
    hint = err.hint
    tried = missing_at.get(pointer or "")
    if tried:
        looked = ", ".join(str(p) for p in tried[:4]) + (" ..." if len(tried) > 4 else "")
        hint = (
            f"{hint} Looked for a file defining it: {looked}, and in every .avsc under the "
            f"schema's folder and the search paths; add one there, or declare it in "
            f"<stem>{SIDECAR_SUFFIX}."
        )
    return SchemaParseError(err.message, location=location, hint=hint, kind=err.kind)


def _place(location: Location) -> str:
    return f"{location.source}:{location.line}:{location.column}"


def _short(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load_schema_file(
    path: Path | str,
    *,
    search_paths: Sequence[Path] = (),
    names: Names | None = None,
    source: str | None = None,
    fallback: Fallback | None = None,
    within: Root | None = None,
) -> LoadedSchema:
    """Load one .avsc file and the files it references; see the module docstring (``within``:
    the root every file read must resolve inside, see ``Loader``).

    Raises InputError (unreadable file, bad JSON, bad references, circular references) or
    SchemaParseError (invalid Avro), each with file, line:col and JSON pointer, and a hint.
    """
    loader = Loader(search_paths=search_paths, names=names, fallback=fallback, within=within)
    return loader.load(Path(path), source=source)


def load_schema_text(
    text: str, source: str, *, version: int | None = None, names: Names | None = None
) -> LoadedSchema:
    """Parse schema text (``names``: named types from referenced schemas, or None).

    Raises InputError / SchemaParseError with source and line:col.
    """
    document = parse_text(text.removeprefix("\ufeff"), source)
    return load_schema_document(document, version=version, names=names)


def load_schema_document(
    document: Document,
    *,
    version: int | None = None,
    names: Names | None = None,
    fields: FieldMemo | None = None,
) -> LoadedSchema:
    """``load_schema_text`` for JSON already parsed (a caller that parses it again with more
    ``names`` reads the text once; ``fields``: see ``parse_schema``)."""
    source = document.source
    try:
        schema = parse_schema(document.value, names=names, fields=fields)
    except SchemacliError as err:
        raise _positioned(err, document) from None
    return LoadedSchema(source=source, document=document, schema=schema, version=version)


def _positioned(err: SchemacliError, document: Document) -> SchemacliError:
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
