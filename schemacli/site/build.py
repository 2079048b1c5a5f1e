"""Gather what the site shows from the store: every subject's versions, the diff of each from
the one before (``contracts.diff``), its verdict at the subject's level (``contracts.check``),
the subject's declared readers against each version, and the censuses that name it.

Nothing here stops at a bad file: a version that does not load, or a reader schema, is shown on
its page with its error. Only a store that cannot be listed at all raises.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.canonical import fingerprint_hex
from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.diff import diff
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.findings import Severity
from schemacli.contracts.readers.declared import DeclaredReader, load_readers
from schemacli.contracts.readers.judge import judge_readers, load_declared
from schemacli.contracts.store.history import read_versions
from schemacli.contracts.store.references import References
from schemacli.contracts.store.tree import StoreLayoutErrors, Tree
from schemacli.errors import SchemacliError, error_text
from schemacli.site.census import Census
from schemacli.site.model import (
    CensusEntry,
    MigrationPage,
    ReaderEntry,
    ReadsVersion,
    Site,
    SubjectPage,
    VersionEntry,
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(name: str, taken: set[str]) -> str:
    """A file name for ``name``'s page: its safe characters, and a short hash of the name when
    any was dropped or the result is taken (two subjects never share a page)."""
    base = _UNSAFE.sub("_", name).strip("._")[:80] or "subject"
    if base != name or base.lower() in taken:
        base = f"{base}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"
    taken.add(base.lower())
    return base


def build_site(
    tree: Tree,
    store_root: Path,
    levels: SubjectLevels,
    *,
    censuses: Sequence[Census] = (),
    migrations: Sequence[tuple[str, Any, str | None]] = (),
    verdicts: VerdictCache | None = None,
    now: float | None = None,
) -> Site:
    """The whole site's data. ``migrations``: (state directory, ``converters.ops.overview``'s
    Overview or None, the error that kept it from being read or None). Raises InputError when
    the store cannot be listed."""
    verdicts = verdicts if verdicts is not None else VerdictCache()
    try:
        index = tree.subjects()
    except StoreLayoutErrors as err:  # badly named files: the rest of the store is shown
        index = err.index
    resolver = References(tree, index)
    readers_error = None
    try:
        readers = load_readers(store_root)
    except SchemacliError as err:
        readers, readers_error = [], error_text(err)
    taken: set[str] = {"index"}
    pages = []
    for subject in sorted(index):
        level = levels.level_for(subject)
        mine = [r for r in readers if r.subject == subject]
        entries = tuple(
            CensusEntry(c.source, c.topic, c.data) for c in censuses if subject in c.subjects()
        )
        try:
            files = read_versions(tree, index, subject)
        except SchemacliError as err:
            pages.append(
                SubjectPage(subject, slug(subject, taken), level, (), (), entries, error_text(err))
            )
            continue
        loaded: list[LoadedSchema | None] = []
        versions = []
        for file in files:
            try:
                schema = resolver.load(file)
            except SchemacliError as err:
                loaded.append(None)
                versions.append(VersionEntry(file.version, file.source, error=error_text(err)))
                continue
            versions.append(_version(subject, level, schema, loaded, verdicts))
            loaded.append(schema)
        pages.append(
            SubjectPage(
                subject,
                slug(subject, taken),
                level,
                tuple(versions),
                tuple(_reader(r, loaded, verdicts) for r in mine),
                entries,
            )
        )
    taken_m: set[str] = {p.slug.lower() for p in pages} | {"index"}
    migration_pages = tuple(
        MigrationPage(slug(f"migration-{Path(d).name}", taken_m), d, o, e) for d, o, e in migrations
    )
    listed = {p.subject for p in pages}
    unmatched = tuple(
        CensusEntry(c.source, c.topic, c.data) for c in censuses if not (set(c.subjects()) & listed)
    )
    return Site(
        store=tree.source("").rstrip("/") or ".",
        generated=time.time() if now is None else now,
        subjects=tuple(pages),
        migrations=migration_pages,
        readers_error=readers_error,
        unmatched_censuses=unmatched,
    )


def _version(
    subject: str,
    level: Level,
    schema: LoadedSchema,
    before: Sequence[LoadedSchema | None],
    verdicts: VerdictCache,
) -> VersionEntry:
    value = schema.value
    name = ""
    doc = None
    if isinstance(value, dict):
        name = str(value.get("name", value.get("type", "")))
        namespace = value.get("namespace")
        if namespace and "." not in name and value.get("type") in ("record", "enum", "fixed"):
            name = f"{namespace}.{name}"
        doc = value.get("doc") if isinstance(value.get("doc"), str) else None
    elif isinstance(value, str):
        name = value
    previous = before[-1] if before else None
    history = [b for b in before if b is not None]
    return VersionEntry(
        number=schema.version or len(before) + 1,
        source=schema.source,
        schema_text=json.dumps(value, indent=2, ensure_ascii=False),
        name=name,
        doc=doc,
        fingerprint=fingerprint_hex(schema.schema),
        diff=diff(previous, schema) if previous is not None else None,
        check=check_candidate(schema, history, subject=subject, level=level, verdicts=verdicts),
    )


def _reader(
    reader: DeclaredReader, versions: Sequence[LoadedSchema | None], verdicts: VerdictCache
) -> ReaderEntry:
    """The reader against every version that loads, as the gate judges a new version
    (``readercheck.judge_readers``): each finding at line:col in the writer, with the reader's
    line:col in ``Finding.reader``."""
    loaded, problems = load_declared([reader])
    if problems:
        return ReaderEntry(reader, (), "\n".join(f"{p.location}: {p.message}" for p in problems))
    out = []
    for number, writer in enumerate(versions, start=1):
        if writer is None:
            continue
        found = judge_readers(
            writer,
            loaded,
            subject=reader.subject,
            writer_label=f"{reader.subject} v{writer.version or number}",
            verdicts=verdicts,
        )
        ok = not any(f.severity is Severity.ERROR for f in found)
        out.append(ReadsVersion(writer.version or number, ok, found))
    return ReaderEntry(reader, tuple(out))
