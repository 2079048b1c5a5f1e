"""`pull`: a snapshot of registry subjects into the local store, so the gate can run offline.

For each subject: its live versions become ``<store>/subjects/<subject>/v<N>.avsc`` (pretty JSON,
numbered 1..N without gaps even where the registry has gaps from deleted versions), a
``registry.json`` beside them records which registry version and id each file is (and the
fingerprint of what the registry held, so that a later pull, or ``gate --registry``, takes an
unchanged file for that version without asking for it again: registered versions are immutable),
``v<N>.references.json`` holds a version's schema references (subject and registry version), and the
subject's level goes into the config file (``[tool.schemacli.subjects."<subject>"] level``).

A local file that differs from the registry's version is a conflict: it is left alone and
reported unless ``force`` is set (it may be a candidate not yet registered). Local versions
beyond the registry's are kept (new schemas waiting for the gate).

All or nothing: ``plan_pull`` fetches everything (the subjects together, at most
``settings.concurrency`` requests in flight) and checks that the store can hold it (subject
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
from typing import Any

from schemacli.atomicwrite import Write, WriteError, write_all
from schemacli.contracts.avro.loader import SIDECAR_SUFFIX
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.jsontext.source import parse_text
from schemacli.contracts.rules.model import CONTRACT_SUFFIX
from schemacli.contracts.store.contractfiles import SUBJECT_CONTRACT
from schemacli.contracts.store.tree import SUBJECTS_DIR, Tree
from schemacli.errors import ConfigError, InputError, Location
from schemacli.registry.client import RegistryClient
from schemacli.registry.history import Levels, SubjectLevel
from schemacli.registry.models import Reference
from schemacli.registry.schemas import RegistrySchemas, RegistryVersion, fingerprint_of
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
MAX_NAME_BYTES = 255  # the longest file name ext4, APFS, NTFS and friends accept (in UTF-8 bytes)


@dataclass(frozen=True)
class PulledSubject:
    """What pull did (or, in a plan, will do) for one subject."""

    subject: str
    level: Level
    level_source: str  # "subject" or "global" in the registry
    versions: tuple[dict[str, Any], ...]  # {"store_version", "registry_version", "id", ...}
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


@dataclass(frozen=True)
class SnapshotRow:
    """One stored version as ``registry.json`` records it."""

    store_version: int
    registry_version: int
    id: int
    references: tuple[Reference, ...] = ()
    fingerprint: str | None = None  # of the registry's schema (None: written by an older pull)
    contract: str | None = None  # fingerprint of v<N>.contract.json, when pull wrote one

    def to_json(self) -> dict[str, object]:
        row: dict[str, object] = {
            "store_version": self.store_version,
            "registry_version": self.registry_version,
            "id": self.id,
            "references": [r.to_json() for r in self.references],
        }
        if self.fingerprint is not None:
            row["fingerprint"] = self.fingerprint
        if self.contract is not None:
            row["contract"] = self.contract
        return row


@dataclass(frozen=True)
class Snapshot:
    """A subject's ``registry.json``: which registry and version each store file is."""

    registry: str
    subject: str
    rows: tuple[SnapshotRow, ...]

    def row(self, store_version: int) -> SnapshotRow | None:
        return next((r for r in self.rows if r.store_version == store_version), None)

    def vouches(self, registry: str, place: int, number: int, text: str) -> bool:
        """Whether the store's version at ``place`` (its file's ``text``) is, unchanged, the
        registry's version ``number``: pulled from ``registry`` into that place, and the file
        still as pull wrote it. Registered versions are immutable, so it need not be asked for
        again."""
        row = self.row(place)
        return (
            self.registry == registry
            and row is not None
            and row.registry_version == number
            and row.fingerprint is not None
            and row.fingerprint == fingerprint_of(text)
        )


def parse_snapshot(text: str, source: str) -> Snapshot:
    """``registry.json``'s text; InputError naming ``source`` when it is not a snapshot. Parsed
    by the one JSON parser (nesting and number length within Java's limits: never a
    RecursionError); the error quotes nothing of the file (a store comes from another party)."""
    try:
        data = parse_text(text.removeprefix("\ufeff"), source, what="registry snapshot").value
    except InputError as exc:
        raise InputError(
            f"{source} is not a registry snapshot: {exc.message}",
            location=exc.location,
            hint=_SNAPSHOT_HINT,
        ) from None
    try:
        subject, registry = data["subject"], data.get("registry", "")
        if not isinstance(subject, str) or not isinstance(registry, str):
            raise TypeError("subject")
        rows = tuple(
            SnapshotRow(
                store_version=_number(r["store_version"]),
                registry_version=_number(r["registry_version"]),
                id=_number(r["id"]),
                references=tuple(Reference.from_json(x) for x in r.get("references") or ()),
                fingerprint=_text_or_none(r.get("fingerprint")),
                contract=_text_or_none(r.get("contract")),
            )
            for r in data["versions"]
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise InputError(
            f"{source} is not a registry snapshot: it needs a subject, and versions each with a "
            "whole-number store_version, registry_version and id",
            location=Location(source=source),
            hint=_SNAPSHOT_HINT,
        ) from None
    return Snapshot(registry, subject, rows)


_SNAPSHOT_HINT = "Run `schemacli pull` again to rewrite it, or remove it."


def read_snapshot(tree: Tree, subject: str) -> Snapshot | None:
    """The subject's snapshot in the store ``tree``; None when it has none, or one that cannot
    be read (then nothing is taken on trust: every version is asked for)."""
    path = f"{SUBJECTS_DIR}/{subject}/{SNAPSHOT_FILE}"
    try:
        text = tree.read([path], optional=True)[path]
        return None if text is None else parse_snapshot(text, tree.source(path))
    except InputError:
        return None


def _number(value: object) -> int:
    if type(value) is not int or value < 1:
        raise ValueError(f"{value!r} is not a version or id")
    return value


def _text_or_none(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{value!r} is not a fingerprint")
    return value


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
    road, levels = RegistrySchemas(client), Levels(client)
    answers = road.map(lambda subject: _fetch_subject(road, levels, subject, store), names)
    pulled: list[PulledSubject] = []
    files: list[tuple[Path, str]] = []
    for subject, fetched in zip(each(names), answers, strict=True):
        one, writes = _plan_subject(client, subject, store, fetched, force=force)
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


@dataclass(frozen=True)
class _Fetched:
    """What the registry said about one subject: each live version at its store place (the
    earlier pull's row where the store's files and snapshot vouch for it, else the registry's
    answer), its level and compatibility group."""

    versions: tuple[tuple[int, RegistryVersion | SnapshotRow], ...]  # (registry version, ...)
    level: SubjectLevel
    group: str | None


def _fetch_subject(road: RegistrySchemas, levels: Levels, subject: str, store: Path) -> _Fetched:
    """Everything pull asks about one subject (run on a pool thread): its version numbers,
    the versions the store does not hold unchanged from an earlier pull, its level and group."""
    numbers = road.version_numbers(subject)
    if numbers is None:
        road.client.list_versions(subject)  # raises the registry's own "subject not found"
        numbers = []
    directory = store / SUBJECTS_DIR / subject
    present = _listing(directory)
    previous = _previous_snapshot(directory, present)
    found: list[tuple[int, RegistryVersion | SnapshotRow]] = []
    for place, number in enumerate(numbers, start=1):
        row = _unchanged(previous, road.client.settings.display_url, directory, place, number)
        found.append((number, row if row is not None else road.version(subject, number)))
    level, group = levels.level_and_group(subject)
    return _Fetched(tuple(found), level, group if numbers else None)


def _previous_snapshot(directory: Path, present: frozenset[str] | None) -> Snapshot | None:
    """The snapshot an earlier pull wrote for this subject; None when there is none or it
    cannot be read (everything is asked for then)."""
    record = directory / SNAPSHOT_FILE
    try:
        text = _local_text(record, present)
        return parse_snapshot(text, str(record)) if text else None
    except InputError:
        return None


def _unchanged(
    previous: Snapshot | None, registry: str, directory: Path, place: int, number: int
) -> SnapshotRow | None:
    """The earlier pull's row for the store's version at ``place`` when every file it wrote
    for it is still as it wrote it and it is the registry's version ``number``: registered
    versions are immutable, so it need not be asked for again."""
    if previous is None or previous.registry != registry:
        return None
    row = previous.row(place)
    if row is None or row.registry_version != number or row.fingerprint is None:
        return None
    try:
        text = _local_text(directory / f"v{place}.avsc")
    except InputError:
        return None
    if text is None or fingerprint_of(text) != row.fingerprint:
        return None
    refs = _sidecar(row.references)
    if _local_text(directory / f"v{place}{SIDECAR_SUFFIX}") != refs:
        return None
    contract = _local_text(directory / f"v{place}{CONTRACT_SUFFIX}")
    if (contract and fingerprint_of(contract)) != row.contract:
        return None
    return row


def _sidecar(references: Sequence[Reference]) -> str | None:
    """A version's ``v<N>.references.json`` text (None: it has no references)."""
    if not references:
        return None
    return json.dumps([r.to_json() for r in references], indent=2) + "\n"


def _plan_subject(
    client: RegistryClient, subject: str, store: Path, fetched: _Fetched, *, force: bool
) -> tuple[PulledSubject, list[tuple[Path, str]]]:
    level = fetched.level
    directory = store / SUBJECTS_DIR / subject
    _check_subject_dir(directory, store)
    present = _listing(directory)
    writes: list[tuple[Path, str]] = []
    written, unchanged, conflicts, rows = [], [], [], []
    for number, (_, version) in enumerate(fetched.versions, start=1):
        path = directory / f"v{number}.avsc"
        if isinstance(version, SnapshotRow):  # every file as the earlier pull wrote it
            rows.append(version.to_json())
            unchanged.append(str(path))
            for extra in (SIDECAR_SUFFIX, CONTRACT_SUFFIX):
                if _local_text(directory / f"v{number}{extra}", present) is not None:
                    unchanged.append(str(directory / f"v{number}{extra}"))
            continue
        text = version.stored_text()
        contract = _contract(version.metadata, version.rule_set)
        rows.append(
            SnapshotRow(
                number,
                version.version or number,
                version.id,
                version.references,
                fingerprint_of(text),
                fingerprint_of(contract) if contract is not None else None,
            ).to_json()
        )
        files = [(path, text, text)]
        if contract is not None:  # data contracts: v<N>.contract.json (docs/store.md)
            files.append((directory / f"v{number}{CONTRACT_SUFFIX}", contract, contract))
        refs = _sidecar(version.references)
        if refs is not None:  # the store's form of Confluent references: v<N>.references.json
            files.append((directory / f"v{number}{SIDECAR_SUFFIX}", refs, refs))
        for target, content, remote in files:
            local = _local_text(target, present)
            if local is not None:
                if _same(local, remote):
                    unchanged.append(str(target))
                    continue
                if not force:
                    conflicts.append(str(target))
                    continue
            writes.append((target, content))
            written.append(str(target))
    if fetched.group is not None:
        top = json.dumps({"compatibilityGroup": fetched.group}, indent=2) + "\n"
        if _local_text(directory / SUBJECT_CONTRACT, present) != top:
            writes.append((directory / SUBJECT_CONTRACT, top))
            written.append(str(directory / SUBJECT_CONTRACT))
    if fetched.versions:
        meta = {
            "registry": client.settings.display_url,
            "subject": subject,
            "level": level.level.value,
            "level_source": level.source,
            "versions": rows,
        }
        record = directory / SNAPSHOT_FILE
        content = json.dumps(meta, indent=2) + "\n"
        if _local_text(record, present) != content:
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


def _listing(directory: Path) -> frozenset[str] | None:
    """The names in ``directory`` (none when it is no directory yet; None when it cannot be
    read: then every file is looked at). One read of the folder spares a stat of every file
    pull might write there, which a slow file system makes dear."""
    try:
        return frozenset(os.listdir(directory))
    except (NotADirectoryError, FileNotFoundError):
        return frozenset()
    except OSError:
        return None


def _local_text(path: Path, present: frozenset[str] | None = None) -> str | None:
    """The text of a local file pull may replace; None when there is none (``present``: the
    names in its folder, when they are known: a name not among them is no file).

    Raises InputError for a directory where the file belongs. A symbolic link counts as a file
    with its target's text (one that cannot be read differs from everything); it is only ever
    replaced, never written through.
    """
    if present is not None and path.name not in present:
        return None
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


def _same(local: str, remote: str) -> bool:
    try:
        return bool(json.loads(local) == json.loads(remote))
    except (ValueError, RecursionError):
        return False
