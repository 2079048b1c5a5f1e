"""`pull`: a snapshot of registry subjects into the local store, so the gate can run offline.

For each subject: its live versions become ``<store>/subjects/<subject>/v<N>.avsc`` (pretty JSON,
numbered 1..N without gaps even where the registry has gaps from deleted versions), a
``registry.json`` beside them records which registry version and id each file is,
``v<N>.references.json`` holds a version's schema references (subject and registry version), and the
subject's level goes into the config file (``[tool.schemacli.subjects."<subject>"] level``).

A local file that differs from the registry's version is a conflict: it is left alone and
reported unless ``force`` is set (it may be a candidate not yet registered). Local versions
beyond the registry's are kept (new schemas waiting for the gate).

All or nothing: ``plan_pull`` fetches everything and checks that the store can hold it (subject
names that are one directory name, no path that leaves the store, no file where a directory must
be) and ``plan_levels`` prepares the config edit, before ``apply_pull`` writes anything. Files
are written to a temporary file beside them and renamed into place, so a symbolic link in the
store is replaced, never written through; if a write still fails, what this pull wrote is undone.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from schemacli.atomicwrite import Write, WriteError, write_all
from schemacli.contracts.evolution.levels import Level
from schemacli.errors import ConfigError, InputError, Location, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.history import fetch_versions, registry_level
from schemacli.textfile import SCHEMA_LIMIT, SETTINGS_LIMIT, UnreadableInput, read_input
from schemacli.tomlfile import (
    LEVEL,
    SUBJECTS,
    TomlEditError,
    TomlError,
    dotted,
    parse,
    set_value,
    settings_path,
    toml_key,
)

SNAPSHOT_FILE = "registry.json"
CONTRACT_SUFFIX = ".contract.json"  # as contracts.store.contractfiles reads them
SUBJECT_CONTRACT = "contract.json"
SIDECAR_SUFFIX = ".references.json"  # as schemacli.contracts.store.tree reads references
SUBJECTS_DIR = "subjects"  # as schemacli.contracts.store.tree reads the store
MAX_NAME_BYTES = 255  # the longest file name ext4, APFS, NTFS and friends accept (in UTF-8 bytes)


@dataclass(frozen=True)
class PulledSubject:
    """What pull did (or, in a plan, will do) for one subject."""

    subject: str
    level: Level
    level_source: str  # "subject" or "global" in the registry
    versions: tuple[dict, ...]  # {"store_version", "registry_version", "id"}
    written: tuple[str, ...] = ()  # files created or overwritten
    unchanged: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()  # local files that differ and were left alone


@dataclass(frozen=True)
class PullReport:
    registry: str
    store: str
    subjects: tuple[PulledSubject, ...] = ()
    config_file: str | None = None
    levels_written: Mapping[str, str] = field(default_factory=dict)

    @property
    def conflicts(self) -> tuple[str, ...]:
        return tuple(c for s in self.subjects for c in s.conflicts)


@dataclass(frozen=True)
class PullPlan:
    """Everything a pull will write, fetched and checked; nothing written yet."""

    store: Path
    subjects: tuple[PulledSubject, ...]
    files: tuple[tuple[Path, str], ...]  # (target, content), in the order they are written


@dataclass(frozen=True)
class LevelsEdit:
    """The config file's new text with the pulled levels, verified; not written yet."""

    config_file: Path
    text: str
    changed: Mapping[str, str]


# -- subject names -----------------------------------------------------------------------------


def unstorable_reason(subject: str) -> str | None:
    """Why ``subject`` cannot be one directory name in the store, or None when it can."""
    if subject in ("", ".", ".."):
        return "it is not a usable directory name" if subject else "it is empty"
    for ch in subject:
        if ch in "/\\":
            return f"it contains {ch!r}, which would make it a path rather than one directory"
        category = unicodedata.category(ch)
        if category == "Cc":
            return f"it contains the control character U+{ord(ch):04X}"
        if category == "Cs":
            return f"it contains an unpaired surrogate (U+{ord(ch):04X}), which is not text"
    if len(subject.encode("utf-8")) > MAX_NAME_BYTES:
        return f"it is longer than the {MAX_NAME_BYTES} bytes a directory name can have"
    return None


def check_subject_names(names: Sequence[str], store: Path, *, from_registry: bool) -> None:
    """Raise InputError (exit 2) for the first name the store cannot hold as one directory.

    Also refuses two names that differ only in case (or Unicode normalisation): on a
    case-insensitive file system (macOS, Windows, and any checkout of the store there) they
    would be one directory, and one subject's files would overwrite the other's.
    """
    where = Location(source=str(store / SUBJECTS_DIR))
    others = (
        "pull the other subjects by naming them (schemacli pull SUBJECT...), or rename the "
        "subject in the registry"
        if from_registry
        else "name the subject as the registry spells it; a subject the store cannot hold "
        "cannot be pulled"
    )
    seen: dict[str, str] = {}
    for subject in names:
        reason = unstorable_reason(subject)
        if reason is not None:
            raise InputError(
                f"subject {subject!r} cannot be pulled: the store keeps each subject in a "
                f"directory named after it, and {reason}",
                location=where,
                hint=f"{others}; nothing was written",
            )
        folded = unicodedata.normalize("NFC", subject).casefold()
        if folded in seen and seen[folded] != subject:
            raise InputError(
                f"subjects {seen[folded]!r} and {subject!r} differ only in case: on a "
                "case-insensitive file system they would be one directory in the store",
                location=where,
                hint=f"{others}; nothing was written",
            )
        seen[folded] = subject


# -- planning: fetch everything, check the store can hold it -----------------------------------


def plan_pull(
    client: RegistryClient,
    subjects: Sequence[str] | None,
    store: Path,
    *,
    force: bool = False,
    each: Callable[[Sequence[str]], Iterable[str]] = lambda names: names,
) -> PullPlan:
    """Fetch ``subjects`` (all of the registry's when None) and work out what to write.

    ``each`` wraps the iteration (the command passes a progress display). Writes nothing.
    Raises RegistryError for a missing subject or a registry failure, InputError (exit 2) for a
    subject name the store cannot hold or a store that cannot be written where pull must write.
    """
    given = bool(subjects)
    names = list(subjects) if subjects else sorted(client.list_subjects())
    check_subject_names(names, store, from_registry=not given)
    _check_store_root(store)
    pulled: list[PulledSubject] = []
    files: list[tuple[Path, str]] = []
    for subject in each(names):
        one, writes = _plan_subject(client, subject, store, force=force)
        pulled.append(one)
        files.extend(writes)
    return PullPlan(store, tuple(pulled), tuple(files))


def pull_subject(
    client: RegistryClient, subject: str, store: Path, *, force: bool = False
) -> PulledSubject:
    """Write one subject's versions into ``store``; raises RegistryError for a missing subject."""
    plan = plan_pull(client, [subject], store, force=force)
    apply_pull(plan)
    return plan.subjects[0]


def pull(
    client: RegistryClient,
    subjects: Sequence[str] | None,
    store: Path,
    *,
    force: bool = False,
    each: Callable[[Sequence[str]], Iterable[str]] = lambda names: names,
) -> tuple[PulledSubject, ...]:
    """Pull ``subjects`` (all of the registry's when None): plan, then write all or nothing."""
    plan = plan_pull(client, subjects, store, force=force, each=each)
    apply_pull(plan)
    return plan.subjects


def _plan_subject(
    client: RegistryClient, subject: str, store: Path, *, force: bool
) -> tuple[PulledSubject, list[tuple[Path, str]]]:
    versions = fetch_versions(client, subject)
    if not versions:
        client.list_versions(subject)  # raises the registry's own "subject not found"
    level = registry_level(client, subject)
    directory = store / SUBJECTS_DIR / subject
    _check_subject_dir(directory, store)
    writes: list[tuple[Path, str]] = []
    written, unchanged, conflicts, rows = [], [], [], []
    for number, version in enumerate(versions, start=1):
        path = directory / f"v{number}.avsc"
        text = _pretty(version.schema)
        rows.append(
            {
                "store_version": number,
                "registry_version": version.version,
                "id": version.id,
                "references": [r.to_json() for r in version.references],
            }
        )
        files = [(path, text, version.schema)]
        contract = _contract(version.metadata, version.rule_set)
        if contract is not None:  # data contracts: v<N>.contract.json (docs/store.md)
            files.append((directory / f"v{number}{CONTRACT_SUFFIX}", contract, contract))
        if version.references:  # the store's form of Confluent references: v<N>.references.json
            refs = json.dumps([r.to_json() for r in version.references], indent=2) + "\n"
            files.append((directory / f"v{number}{SIDECAR_SUFFIX}", refs, refs))
        for target, content, remote in files:
            local = _local_text(target)
            if local is not None:
                if _same(local, remote):
                    unchanged.append(str(target))
                    continue
                if not force:
                    conflicts.append(str(target))
                    continue
            writes.append((target, content))
            written.append(str(target))
    group = _compatibility_group(client, subject) if versions else None
    if group is not None:
        top = json.dumps({"compatibilityGroup": group}, indent=2) + "\n"
        if _local_text(directory / SUBJECT_CONTRACT) != top:
            writes.append((directory / SUBJECT_CONTRACT, top))
            written.append(str(directory / SUBJECT_CONTRACT))
    if versions:
        meta = {
            "registry": client.settings.display_url,
            "subject": subject,
            "level": level.level.value,
            "level_source": level.source,
            "versions": rows,
        }
        record = directory / SNAPSHOT_FILE
        content = json.dumps(meta, indent=2) + "\n"
        if _local_text(record) != content:
            writes.append((record, content))
    pulled = PulledSubject(
        subject,
        level.level,
        level.source,
        tuple(rows),
        tuple(written),
        tuple(unchanged),
        tuple(conflicts),
    )
    return pulled, writes


def _contract(
    metadata: Mapping[str, object] | None, rule_set: Mapping[str, object] | None
) -> str | None:
    """A version's contract file: its metadata and ruleSet as the registry gave them (None when
    it has neither, or only the ``confluent:``-prefixed properties the registry adds itself)."""
    props = dict((metadata or {}).get("properties") or {})  # type: ignore[call-overload]
    own = {k: v for k, v in props.items() if not str(k).startswith("confluent:")}
    if not own and not rule_set and not {k for k in (metadata or {}) if k != "properties"}:
        return None
    doc = {"metadata": dict(metadata or {}), "ruleSet": dict(rule_set or {})}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _compatibility_group(client: RegistryClient, subject: str) -> str | None:
    """The subject's compatibilityGroup, when its config has one (a subject without a config
    of its own has none)."""
    try:
        group = client.get_config_document(subject).get("compatibilityGroup")
    except RegistryError as err:
        if err.status == 404:
            return None
        raise
    return group if isinstance(group, str) and group else None


def _local_text(path: Path) -> str | None:
    """The text of a local file pull may replace; None when there is none.

    Raises InputError for a directory where the file belongs. A symbolic link counts as a file
    with its target's text (one that cannot be read differs from everything); it is only ever
    replaced, never written through.
    """
    if path.is_symlink():
        if not path.is_file():  # dangling, a folder, a pipe (reading one could block forever)
            return ""  # differs, so a conflict unless --force
        try:
            return read_input(path, limit=SCHEMA_LIMIT, what="store file").decode("utf-8")
        except (UnreadableInput, UnicodeDecodeError):
            return ""  # unreadable or too large: differs too
    if path.is_dir():
        raise InputError(
            f"{path.name} is a directory, but pull writes a file there",
            location=Location(source=str(path)),
            hint="move the directory out of the store (or pass another --store); nothing was "
            "written",
        )
    if not path.exists():
        return None
    if not path.is_file():  # a pipe or a device: reading it could block forever
        raise InputError(
            f"{path.name} is not a regular file (a pipe or a device), but pull writes a file there",
            location=Location(source=str(path)),
            hint="remove it from the store (or pass another --store); nothing was written",
        )
    try:
        return read_input(path, limit=SCHEMA_LIMIT, what="store file").decode("utf-8")
    except UnicodeDecodeError:
        return ""


def _check_store_root(store: Path) -> None:
    """The store and its subjects/ folder must be folders, or not exist yet (pull creates them)."""
    for path in (store, store / SUBJECTS_DIR):
        _check_folder(path)
    _inside_store(store / SUBJECTS_DIR, store)


def _check_subject_dir(directory: Path, store: Path) -> None:
    _check_folder(directory)
    _inside_store(directory, store)


def _check_folder(path: Path) -> None:
    if path.is_symlink() and not path.exists():
        raise InputError(
            f"{path.name} is a symbolic link to {os.readlink(path)}, which does not exist",
            location=Location(source=str(path)),
            hint="remove the link (pull creates the folder) or create what it points to; "
            "nothing was written",
        )
    if path.exists() and not path.is_dir():
        raise InputError(
            f"{path.name} is a file, but pull needs a folder there",
            location=Location(source=str(path)),
            hint="move the file away, or pass --store DIR naming a folder (pull creates it if "
            "it does not exist); nothing was written",
        )


def _inside_store(path: Path, store: Path) -> None:
    """Refuse a folder that (through symbolic links) leads out of the store."""
    root = store.resolve()
    real = path.resolve()
    if real != root and not real.is_relative_to(root):
        raise InputError(
            f"{path.relative_to(store)} leads outside the store (to {real}) through a "
            "symbolic link; pull writes only inside the store",
            location=Location(source=str(path)),
            hint="replace the link by a real folder, or pass --store DIR; nothing was written",
        )


# -- writing: all or nothing -------------------------------------------------------------------


def apply_pull(plan: PullPlan, levels: LevelsEdit | None = None) -> None:
    """Write the plan's files and the config edit, or, if any write fails, nothing.

    Through the one atomic writer (schemacli.atomicwrite): each file goes to a temporary file in
    its folder and is renamed into place (a rename replaces a symbolic link in the store, never
    writes through it; the config file, the user's own, is followed). A failure undoes what this
    call did and raises InputError (exit 2) naming the path.
    """
    writes = [
        Write(target, _encoded(target, content), replace=True, follow_link=False)
        for target, content in plan.files
    ]
    if levels is not None:
        writes.append(
            Write(levels.config_file, _encoded(levels.config_file, levels.text), replace=True)
        )
    write_all(writes, hint=_PULL_HINT)


_PULL_HINT = (
    'pull into a folder you can write (--store DIR, or store = "..." in the config); '
    "pull undoes what it wrote when a write fails"
)


def _encoded(target: Path, content: str) -> bytes:
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            "the registry's text for this file is not valid Unicode (an unpaired surrogate)",
            location=Location(source=str(target)),
            hint="fix the schema in the registry; nothing was written",
        ) from None


# -- levels into the config file -----------------------------------------------------------


def write_levels(config_file: Path, levels: Mapping[str, Level]) -> dict[str, str]:
    """Set ``[subjects."<s>"] level`` for each subject in the TOML config file.

    In pyproject.toml under ``[tool.schemacli]``. Edited through ``schemacli.tomlfile``
    (comments and layout survive), which reads the result back to make sure it says what was
    meant; refuses (ConfigError) rather than write something else. Returns what changed.
    """
    edit = plan_levels(config_file, levels)
    if edit is None:
        return {}
    _write_config(edit)
    return dict(edit.changed)


def plan_levels(config_file: Path, levels: Mapping[str, Level]) -> LevelsEdit | None:
    """The verified edit that sets the levels (None when nothing changes); writes nothing.

    Raises ConfigError when the file cannot be read, or the edit would break the file or not
    say what was meant (an inline ``subjects`` table, say).
    """
    try:
        text = (
            read_input(config_file, limit=SETTINGS_LIMIT, what="config file").decode("utf-8")
            if config_file.exists() or config_file.is_symlink()
            else ""
        )
    except (UnreadableInput, UnicodeDecodeError) as err:
        reason = err.message if isinstance(err, UnreadableInput) else str(err)
        raise ConfigError(
            f"cannot read {config_file} to add the pulled levels ({reason})",
            hint="make it a readable UTF-8 file, or pass --no-levels",
        ) from None
    table = dotted(settings_path(config_file, SUBJECTS))
    by_hand = "; ".join(
        f"[{table}.{toml_key(s)}] level = {toml_key(v.value)}" for s, v in sorted(levels.items())
    )
    cannot = f"could not add the pulled levels to {config_file} without breaking it"
    hint = f"add them by hand, or pass --no-levels: {by_hand}"
    try:
        subjects = _get(parse(text, str(config_file)), settings_path(config_file, SUBJECTS))
    except TomlError as err:
        raise ConfigError(f"{cannot} ({err.__cause__ or err.message})", hint=hint) from None
    changed: dict[str, str] = {}
    for subject, level in sorted(levels.items()):
        entry = subjects.get(subject) if isinstance(subjects, dict) else None
        if isinstance(entry, dict) and entry.get(LEVEL) == level.value:
            continue
        path = settings_path(config_file, SUBJECTS, subject, LEVEL)
        try:  # tomlkit: comments and layout survive; refused where the file's form forbids it
            text = set_value(text, path, level.value)
        except TomlEditError as err:
            raise ConfigError(f"{cannot} ({err.message})", hint=hint) from None
        changed[subject] = level.value
    if not changed:
        return None
    return LevelsEdit(config_file, text, changed)


def _write_config(edit: LevelsEdit) -> None:
    # The config file is the user's own: a symbolic link to it is followed (the file it names is
    # replaced), unlike a link in the store.
    try:
        write_all(
            [Write(edit.config_file, _encoded(edit.config_file, edit.text), replace=True)],
            hint="make the config file writable, or pass --no-levels; nothing was written",
        )
    except WriteError as err:
        raise ConfigError(
            f"cannot write the pulled levels to {edit.config_file}: {err.message}",
            location=err.location,
            hint=err.hint,
        ) from None


def _get(data: Mapping[str, object], keys: Sequence[str]) -> object:
    """The value at the key path ``keys`` of ``data``, None where the path does not lead."""
    value: object = data
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _pretty(schema: str) -> str:
    try:
        return json.dumps(json.loads(schema), indent=2, ensure_ascii=False) + "\n"
    except ValueError:
        return schema if schema.endswith("\n") else schema + "\n"


def _same(local: str, remote: str) -> bool:
    try:
        return json.loads(local) == json.loads(remote)
    except ValueError:
        return False
