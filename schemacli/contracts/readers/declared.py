"""Declared readers: the reader schema each consumer uses for a subject, and who it is.

Layout (beside ``subjects/``; see docs/readers.md)::

    <store>/readers/<consumer>/reader.json          the manifest: owner, contact, groups
    <store>/readers/<consumer>/<subject>.avsc       the reader schema it reads <subject> with

The manifest is JSON (as every other file of the store), read by the same bounded reader and
parser as a schema, so every refusal names its file and line:col::

    {"owner": "team-billing", "contact": "billing@acme.example",
     "groups": ["billing-invoicer"]}

``groups`` (the Kafka consumer groups this consumer runs as) is required and non-empty;
``owner`` and ``contact`` are optional strings; any other key is refused. A consumer folder's
name is the consumer's name (letters, digits, ``.``, ``_``, ``-``). Files that are neither the
manifest nor ``.avsc`` (a README) are ignored. Parsing the reader schemas themselves is
:func:`load_reader_schema`'s, done only for the subjects a caller asks about.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.loader import LoadedSchema, load_schema_file
from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.source import parse_text, read_text
from schemacli.errors import InputError, Location
from schemacli.textfile import Root

READERS_DIR = "readers"
MANIFEST = "reader.json"
SCHEMA_SUFFIX = ".avsc"
CONSUMER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
# A subject is a file name: no separators, not hidden, not "."/"..".
SUBJECT_NAME = re.compile(r"[^/\\\x00-\x1f.][^/\\\x00-\x1f]{0,248}")
MANIFEST_KEYS = ("owner", "contact", "groups")
MAX_GROUPS = 1000
_MANIFEST_HINT = (
    'write {"owner": "<team>", "contact": "<email or channel>", "groups": ["<consumer group>"]} '
    "(docs/readers.md)"
)


class ReaderDeclarationError(InputError):
    """A reader declaration is not laid out or written as documented (exit 2)."""


@dataclass(frozen=True)
class DeclaredReader:
    """One consumer's reader schema for one subject, and who the consumer is."""

    consumer: str  # the folder name under readers/
    subject: str
    schema_path: Path  # readers/<consumer>/<subject>.avsc
    groups: tuple[str, ...]  # consumer groups, from the manifest
    owner: str | None
    contact: str | None
    # The store (or pulled repository) it was declared in: its files are read inside it.
    root: Root | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """``consumer (owner)``, as reports name it."""
        return f"{self.consumer} ({self.owner})" if self.owner else self.consumer


@dataclass(frozen=True)
class Manifest:
    """A consumer's ``reader.json``: who it is."""

    groups: tuple[str, ...]
    owner: str | None = None
    contact: str | None = None


def readers_root(store_root: Path) -> Path:
    """Where the declared readers live in the store at ``store_root``."""
    return store_root / READERS_DIR


def store_root_of(store_root: Path) -> Root:
    """The root a store's declarations are read inside (docs/store.md)."""
    return Root(store_root, f"the store {store_root}")


def load_readers(
    store_root: Path, subject: str | None = None, *, within: Root | None = None
) -> list[DeclaredReader]:
    """Every declared reader in the store (of ``subject`` only, when given), sorted by subject
    then consumer. A store without ``readers/`` declares none. Every file is read inside
    ``within`` (default: the store itself): a link out of it is refused.

    Raises ReaderDeclarationError (a file in the wrong place, a bad consumer or subject name, a
    missing or invalid manifest: each with its file and line:col), or InputError for a file
    that cannot be read (a directory, FIFO, device, too large, not UTF-8).
    """
    confined = within or store_root_of(store_root)
    root = readers_root(store_root)
    if not root.exists():
        return []
    if not root.is_dir():
        raise ReaderDeclarationError(
            f"{READERS_DIR} is a file, not a directory",
            location=Location(source=str(root)),
            hint=f"{READERS_DIR}/ holds one folder per consumer (docs/readers.md)",
        )
    found: list[DeclaredReader] = []
    for name, is_dir in _entries(root):
        where = root / name
        if not is_dir:
            if name.endswith(SCHEMA_SUFFIX) or name == MANIFEST:
                raise ReaderDeclarationError(
                    f"{name!r} sits directly in {READERS_DIR}/, outside any consumer",
                    location=Location(source=str(where)),
                    hint=f"move it to {READERS_DIR}/<consumer>/{name}",
                )
            continue
        check_consumer_name(name, Location(source=str(where)))
        found.extend(_consumer_readers(where, name, subject, confined))
    found.sort(key=lambda r: (r.subject, r.consumer))
    return found


def consumers(store_root: Path) -> list[str]:
    """The consumers that have a folder under ``readers/``, sorted."""
    root = readers_root(store_root)
    if not root.is_dir():
        return []
    return [name for name, is_dir in _entries(root) if is_dir]


def _entries(folder: Path) -> list[tuple[str, bool]]:
    """(name, is a directory) of each entry, sorted; an entry whose type cannot be told (a
    link loop) counts as a file, so reading it names what it is."""
    out = []
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            out.append((entry.name, is_dir))
    return sorted(out)


def _consumer_readers(
    folder: Path, consumer: str, subject: str | None, within: Root
) -> list[DeclaredReader]:
    names = _entries(folder)
    schemas = []
    for name, is_dir in names:
        if not name.endswith(SCHEMA_SUFFIX):
            continue
        where = Location(source=str(folder / name))
        if is_dir:
            raise ReaderDeclarationError(
                f"{name!r} is a directory, not a reader schema",
                location=where,
                hint=f"{READERS_DIR}/<consumer>/<subject>.avsc is a file",
            )
        check_subject_name(name[: -len(SCHEMA_SUFFIX)], where)
        schemas.append(name)
    manifest = load_manifest(folder / MANIFEST, within=within)
    out = []
    for name in schemas:
        declared = name[: -len(SCHEMA_SUFFIX)]
        if subject is not None and declared != subject:
            continue
        out.append(
            DeclaredReader(
                consumer=consumer,
                subject=declared,
                schema_path=folder / name,
                groups=manifest.groups,
                owner=manifest.owner,
                contact=manifest.contact,
                root=within,
            )
        )
    return out


def check_consumer_name(name: str, where: Location) -> str:
    """``name`` when it is a valid consumer name; ReaderDeclarationError otherwise."""
    if CONSUMER_NAME.fullmatch(name) is None:
        raise ReaderDeclarationError(
            f"{_shown(name)} is not a consumer name",
            location=where,
            hint="name a consumer with letters, digits, '.', '_' and '-' (at most 200), "
            "starting with a letter or digit",
        )
    return name


def check_subject_name(name: str, where: Location) -> str:
    """``name`` when it can name a subject file; ReaderDeclarationError otherwise."""
    if SUBJECT_NAME.fullmatch(name) is None:
        raise ReaderDeclarationError(
            f"{_shown(name)} is not a subject name a reader schema file can have",
            location=where,
            hint="name the file <subject>.avsc after the registry subject it reads "
            "(e.g. orders-value.avsc); no '/', no leading '.'",
        )
    return name


def _shown(name: str) -> str:
    return repr(name if len(name) <= 60 else name[:57] + "...")


def load_manifest(path: Path, source: str | None = None, *, within: Root | None = None) -> Manifest:
    """The manifest at ``path``; ReaderDeclarationError (file, line:col) when it is missing
    or not as documented, InputError when it cannot be read (or resolves outside
    ``within``)."""
    source = source or str(path)
    if not path.exists() and not path.is_symlink():
        raise ReaderDeclarationError(
            f"the consumer folder has no {MANIFEST}",
            location=Location(source=source),
            hint=_MANIFEST_HINT,
        )
    return parse_manifest(read_text(path, source, within=within), source)


def parse_manifest(text: str, source: str) -> Manifest:
    """A manifest's text -> Manifest; ReaderDeclarationError (line:col) when it is invalid."""
    try:
        document = parse_text(text.removeprefix("\ufeff"), source)
    except InputError as err:
        raise ReaderDeclarationError(err.message, location=err.location, hint=err.hint) from err
    value = document.value
    if not isinstance(value, dict):
        raise _bad(document, "", f"a manifest is a JSON object, not {_json_type(value)}")
    for key in value:
        if key not in MANIFEST_KEYS:
            raise _bad(
                document,
                join_pointer("", key),
                f"unknown key {key!r} in a reader manifest",
                hint=f"the keys are {', '.join(MANIFEST_KEYS)}",
            )
    if "groups" not in value:
        raise _bad(document, "", 'the manifest has no "groups"')
    groups = value["groups"]
    if not isinstance(groups, list) or not groups:
        raise _bad(
            document,
            "/groups",
            f'"groups" must be a non-empty list of consumer group names, not {_json_type(groups)}'
            if not isinstance(groups, list)
            else '"groups" is empty',
        )
    if len(groups) > MAX_GROUPS:
        raise _bad(
            document, "/groups", f'"groups" lists {len(groups)} groups (at most {MAX_GROUPS})'
        )
    seen: set[str] = set()
    for i, group in enumerate(groups):
        if not isinstance(group, str) or not group.strip():
            raise _bad(
                document,
                f"/groups/{i}",
                f"a consumer group is a non-empty string, not {_json_type(group)}",
            )
        if len(group) > 249:
            raise _bad(document, f"/groups/{i}", "a consumer group name has at most 249 characters")
        if group in seen:
            raise _bad(document, f"/groups/{i}", f"consumer group {group!r} is listed twice")
        seen.add(group)
    texts: dict[str, str | None] = {}
    for key in ("owner", "contact"):
        item = value.get(key)
        if item is not None and (not isinstance(item, str) or not item.strip()):
            raise _bad(
                document, f"/{key}", f'"{key}" is a non-empty string, not {_json_type(item)}'
            )
        texts[key] = item
    return Manifest(tuple(groups), owner=texts["owner"], contact=texts["contact"])


def _bad(document: Document, pointer: str, message: str, hint: str = _MANIFEST_HINT) -> Any:
    return ReaderDeclarationError(message, location=document.location(pointer), hint=hint)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def load_reader_schema(reader: DeclaredReader, source: str | None = None) -> LoadedSchema:
    """The reader's schema, parsed (as a schema file: bounded read, JSON with positions,
    Java's parser rules). Raises InputError / SchemaParseError with file and line:col."""
    return load_schema_file(reader.schema_path, source=source, within=reader.root)
