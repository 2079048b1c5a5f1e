"""Changing the declared readers in the store (docs/readers.md): what ``readers add``,
``remove`` and ``pull`` write, planned whole and checked before anything is written.

The layout and its rules are ``contracts.readers``'; the writes go through ``atomicwrite``
(temporary file + rename, all or nothing).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from schemacli.atomicwrite import Write, refuse, write_all
from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.readers.declared import (
    MANIFEST,
    SCHEMA_SUFFIX,
    Manifest,
    check_consumer_name,
    check_subject_name,
    consumers,
    load_manifest,
    load_readers,
    readers_root,
    store_root_of,
)
from schemacli.contracts.readers.judge import load_declared
from schemacli.errors import InputError, Location, SchemacliError, UsageError
from schemacli.textfile import Root, inside

_HINT = (
    "nothing was written; fix the store folder (its permissions, or a folder in it that is a "
    "link to another place), or pick another --store"
)


@dataclass(frozen=True)
class Change:
    """What a command did (or would do) to the store's declarations."""

    consumer: str
    written: tuple[str, ...] = ()  # paths relative to the store
    removed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    owner: str | None = None
    contact: str | None = None


@dataclass
class _Plan:
    writes: list[Write] = field(default_factory=list)
    removals: list[Path] = field(default_factory=list)


def manifest_bytes(manifest: Manifest) -> bytes:
    value: dict[str, object] = {}
    if manifest.owner is not None:
        value["owner"] = manifest.owner
    if manifest.contact is not None:
        value["contact"] = manifest.contact
    value["groups"] = list(manifest.groups)
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _store_dir(store: Path) -> None:
    if not store.is_dir():
        raise InputError(
            "the store is a file, not a directory"
            if store.exists()
            else "the store directory does not exist",
            location=Location(source=str(store)),
            hint='pass --store DIR, or set store = "..." in [tool.schemacli]',
        )


def add_reader(
    store: Path,
    consumer: str,
    subject: str,
    schema: LoadedSchema,
    *,
    groups: Sequence[str] = (),
    owner: str | None = None,
    contact: str | None = None,
) -> Change:
    """Write ``schema`` as ``consumer``'s reader of ``subject`` and its manifest (created, or
    updated: ``groups`` added, ``owner`` / ``contact`` replaced when given). Raises UsageError
    for a bad name or a new consumer without a group, InputError for a broken manifest or a
    store that cannot be written (nothing written)."""
    _store_dir(store)
    folder = readers_root(store) / consumer
    check_consumer_name(consumer, Location(source=str(folder)))
    target = folder / f"{subject}{SCHEMA_SUFFIX}"
    check_subject_name(subject, Location(source=str(target)))
    for group in groups:
        if not group.strip() or len(group) > 249:
            raise UsageError(f"--group {group!r} is not a consumer group name")
    manifest_path = folder / MANIFEST
    if folder.is_dir() and (manifest_path.exists() or manifest_path.is_symlink()):
        old = load_manifest(manifest_path, within=store_root_of(store))
    elif not groups:
        raise UsageError(
            f"consumer {consumer} is new: say which consumer group(s) it runs as",
            hint=f"e.g. schemacli readers add {consumer} reader.avsc --group {consumer}-group",
        )
    else:
        old = Manifest(())
    merged = Manifest(
        tuple(dict.fromkeys((*old.groups, *groups))),
        owner=owner if owner is not None else old.owner,
        contact=contact if contact is not None else old.contact,
    )
    text = schema.document.text
    writes = [
        Write(manifest_path, manifest_bytes(merged), replace=True, follow_link=False, within=store),
        Write(target, text.encode("utf-8"), replace=True, follow_link=False, within=store),
    ]
    write_all(writes, hint=_HINT)
    return Change(
        consumer,
        written=(_rel(store, manifest_path), _rel(store, target)),
        groups=merged.groups,
        owner=merged.owner,
        contact=merged.contact,
    )


def remove_reader(store: Path, consumer: str, subject: str | None = None) -> Change:
    """Remove ``consumer``'s reader of ``subject``, or (no subject) the consumer's whole
    folder. InputError (nothing removed) when it is not declared."""
    _store_dir(store)
    folder = readers_root(store) / consumer
    check_consumer_name(consumer, Location(source=str(folder)))
    if folder.is_dir() and not inside(folder, store):
        raise InputError(
            f"{folder} leads outside the store (a folder on its way is a symbolic link); "
            "nothing was removed",
            location=Location(source=str(folder)),
            hint="remove the declarations in the folder the link names yourself",
        )
    if folder.is_symlink() or not folder.is_dir():
        known = consumers(store)
        raise InputError(
            f"consumer {consumer!r} declares no readers in this store",
            location=Location(source=str(folder)),
            hint=f"declared consumers: {', '.join(known)}" if known else "no consumer is declared",
        )
    if subject is None:
        removed = tuple(sorted(_rel(store, p) for p in folder.rglob("*") if p.is_file()))
        shutil.rmtree(folder)
        return Change(consumer, removed=removed)
    target = folder / f"{subject}{SCHEMA_SUFFIX}"
    check_subject_name(subject, Location(source=str(target)))
    if not target.is_file() or target.is_symlink() and not target.exists():
        declared = sorted(r.subject for r in load_readers(store) if r.consumer == consumer)
        raise InputError(
            f"consumer {consumer} declares no reader of {subject!r}",
            location=Location(source=str(target)),
            hint=f"it declares: {', '.join(declared)}" if declared else "it declares none",
        )
    target.unlink()
    return Change(consumer, removed=(_rel(store, target),))


def pull_readers(
    store: Path,
    source_root: Path,
    *,
    shown: str,
    only: Sequence[str] = (),
    rename: bool = False,
    repository: Path | None = None,
) -> list[Change]:
    """Copy the declarations under ``source_root`` (``readers/<consumer>/...``, a consumer's
    repository) into the store: each pulled consumer's folder becomes the source's (its other
    ``.avsc`` files and manifest removed), other consumers are left alone. Everything is
    validated first (``shown`` names the source in messages; ``rename``: the files' paths are
    named from ``shown``, for a temporary clone); nothing is written when anything is wrong.

    Another party's files: every one is read inside ``repository`` (the clone, or the folder
    given; default ``source_root``), so a symbolic link out of it is refused, never followed."""
    _store_dir(store)
    repository = repository if repository is not None else source_root
    confined = Root(repository, f"the repository {shown}")
    if not source_root.is_dir() or not inside(source_root, repository):
        raise InputError(
            f"{shown} is not a folder"
            if not source_root.is_dir()
            else f"--path leads outside the repository {shown} (through a symbolic link)",
            location=Location(source=shown),
            hint="give the repository's root, or the folder holding readers/ with --path",
        )
    try:
        found = load_readers(source_root, within=confined)
        loaded, problems = load_declared(found)
        if problems:
            first = problems[0]
            raise InputError(first.message, location=first.location, hint=first.hint)
    except SchemacliError as err:
        raise (_renamed(err, source_root, shown) if rename else err) from None
    names = consumers(source_root)
    if not names:
        raise InputError(
            f"{shown} holds no readers/<consumer>/ folder",
            location=Location(source=shown),
            hint="a consumer's repository keeps readers/<consumer>/reader.json and "
            "<subject>.avsc (docs/readers.md); point --path at the folder that holds readers/",
        )
    missing = [name for name in only if name not in names]
    if missing:
        raise UsageError(
            f"{shown} declares no consumer {', '.join(map(repr, missing))}",
            hint=f"it declares: {', '.join(names)}",
        )
    wanted = [name for name in names if not only or name in only]
    plan = _Plan()
    changes = []
    for name in wanted:
        source_folder = readers_root(source_root) / name
        manifest = load_manifest(source_folder / MANIFEST, within=confined)
        store_folder = readers_root(store) / name
        files = {MANIFEST: manifest_bytes(manifest)}
        for reader in (r for r in loaded if r.declared.consumer == name):
            files[reader.declared.schema_path.name] = reader.schema.document.text.encode("utf-8")
        written, unchanged = [], []
        for file_name, content in files.items():
            target = store_folder / file_name
            if target.is_file() and not target.is_symlink() and target.read_bytes() == content:
                unchanged.append(_rel(store, target))
                continue
            plan.writes.append(
                Write(target, content, replace=True, follow_link=False, within=store)
            )
            written.append(_rel(store, target))
        removed = []
        if store_folder.is_dir() and not store_folder.is_symlink():
            for old in sorted(store_folder.iterdir()):
                is_declaration = old.name == MANIFEST or old.name.endswith(SCHEMA_SUFFIX)
                if is_declaration and old.name not in files:
                    plan.removals.append(old)
                    removed.append(_rel(store, old))
        changes.append(
            Change(
                name,
                written=tuple(written),
                removed=tuple(removed),
                unchanged=tuple(unchanged),
                groups=manifest.groups,
                owner=manifest.owner,
                contact=manifest.contact,
            )
        )
    refuse(plan.writes, hint=_HINT)
    for old in plan.removals:
        if old.is_dir() and not old.is_symlink():
            raise InputError(
                f"{old} is a folder where a declaration file is expected; nothing was written",
                location=Location(source=str(old)),
                hint="remove or rename it",
            )
    write_all(plan.writes, hint=_HINT)
    for old in plan.removals:
        old.unlink()
    return changes


def _renamed(err: SchemacliError, root: Path, shown: str) -> SchemacliError:
    """``err`` with the temporary clone's path replaced by the source's name."""
    prefix = str(root).rstrip("/") + "/"
    if isinstance(err.hint, str):
        err.hint = err.hint.replace(prefix, f"{shown}:")
    loc = err.location
    if loc is not None and loc.source is not None and loc.source.startswith(prefix):
        err.location = Location(
            f"{shown}:{loc.source[len(prefix) :]}", loc.pointer, loc.line, loc.column
        )
    err.message = err.message.replace(prefix, f"{shown}:")
    return err


def _rel(store: Path, path: Path) -> str:
    try:
        return str(path.relative_to(store))
    except ValueError:
        return str(path)
