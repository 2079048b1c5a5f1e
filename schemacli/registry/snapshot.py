"""`pull`: a snapshot of registry subjects into the local store, so the gate can run offline.

For each subject: its live versions become ``<store>/subjects/<subject>/v<N>.avsc`` (pretty JSON,
numbered 1..N without gaps even where the registry has gaps from deleted versions), a
``registry.json`` beside them records which registry version and id each file is,
``v<N>.references.json`` holds a version's schema references (subject and registry version), and the
subject's level goes into the config file (``[tool.schemacli.subjects."<subject>"] level``).

A local file that differs from the registry's version is a conflict: it is left alone and
reported unless ``force`` is set (it may be a candidate not yet registered). Local versions
beyond the registry's are kept (new schemas waiting for the gate).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from schemacli.config import Level
from schemacli.errors import ConfigError
from schemacli.registry.client import RegistryClient
from schemacli.registry.history import fetch_versions, registry_level

SNAPSHOT_FILE = "registry.json"
SIDECAR_SUFFIX = ".references.json"  # as schemacli.contracts.store reads references


@dataclass(frozen=True)
class PulledSubject:
    """What pull did for one subject."""

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


def pull_subject(
    client: RegistryClient, subject: str, store: Path, *, force: bool = False
) -> PulledSubject:
    """Write one subject's versions into ``store``; raises RegistryError for a missing subject."""
    versions = fetch_versions(client, subject)
    if not versions:
        client.list_versions(subject)  # raises the registry's own "subject not found"
    level = registry_level(client, subject)
    directory = store / "subjects" / subject
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
        if version.references:  # the store's form of Confluent references: v<N>.references.json
            refs = json.dumps([r.to_json() for r in version.references], indent=2) + "\n"
            files.append((directory / f"v{number}{SIDECAR_SUFFIX}", refs, refs))
        for target, content, remote in files:
            if target.is_file():
                if _same(target.read_text(encoding="utf-8"), remote):
                    unchanged.append(str(target))
                    continue
                if not force:
                    conflicts.append(str(target))
                    continue
            directory.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(str(target))
    if versions:
        directory.mkdir(parents=True, exist_ok=True)
        meta = {
            "registry": client.settings.display_url,
            "subject": subject,
            "level": level.level.value,
            "level_source": level.source,
            "versions": rows,
        }
        (directory / SNAPSHOT_FILE).write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    return PulledSubject(
        subject,
        level.level,
        level.source,
        tuple(rows),
        tuple(written),
        tuple(unchanged),
        tuple(conflicts),
    )


def pull(
    client: RegistryClient,
    subjects: Sequence[str] | None,
    store: Path,
    *,
    force: bool = False,
    each: Callable[[Sequence[str]], Sequence[str]] = lambda names: names,
) -> tuple[PulledSubject, ...]:
    """Pull ``subjects`` (all of the registry's when None). ``each`` wraps the iteration
    (the command passes a progress display)."""
    names = sorted(client.list_subjects()) if not subjects else list(subjects)
    return tuple(pull_subject(client, s, store, force=force) for s in each(names))


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


# -- levels into the config file -----------------------------------------------------------


def write_levels(config_file: Path, levels: Mapping[str, Level]) -> dict[str, str]:
    """Set ``[<prefix>subjects."<s>"] level`` for each subject in the TOML config file.

    ``prefix`` is ``tool.schemacli.`` in pyproject.toml, empty in schemacli.toml. Edits the text
    in place (comments and layout survive), then re-reads it to make sure the result says what
    was meant; refuses (ConfigError) rather than write something else. Returns what changed.
    """
    text = config_file.read_text(encoding="utf-8") if config_file.exists() else ""
    prefix = "tool.schemacli." if config_file.name == "pyproject.toml" else ""
    changed: dict[str, str] = {}
    for subject, level in sorted(levels.items()):
        new_text = _set_level(text, prefix, subject, level.value)
        if new_text != text:
            changed[subject] = level.value
            text = new_text
    if not changed:
        return {}
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(
            f"could not add the pulled levels to {config_file} without breaking it ({err})",
            hint="add them by hand: "
            + "; ".join(f'[{prefix}subjects."{s}"] level = "{v}"' for s, v in changed.items()),
        ) from None
    table = parsed.get("tool", {}).get("schemacli", {}) if prefix else parsed
    for subject, value in changed.items():
        if table.get("subjects", {}).get(subject, {}).get("level") != value:
            raise ConfigError(
                f"could not set the level of {subject!r} in {config_file}: the file defines "
                "its subjects in a form pull does not edit (an inline table?)",
                hint=f'set it by hand: [{prefix}subjects."{subject}"] level = "{value}"',
            )
    config_file.write_text(text, encoding="utf-8")
    return changed


def _set_level(text: str, prefix: str, subject: str, level: str) -> str:
    quoted = json.dumps(subject)  # a TOML basic string is JSON-compatible for our purposes
    headers = {f"[{prefix}subjects.{quoted}]"}
    if subject.replace("-", "").replace("_", "").isalnum():
        headers.add(f"[{prefix}subjects.{subject}]")
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() in headers:
            end = next(
                (j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("[")),
                len(lines),
            )
            for j in range(i + 1, end):
                key = lines[j].split("=", 1)[0].strip()
                if key == "level":
                    new = f'level = "{level}"\n'
                    if lines[j].strip() == new.strip():
                        return text
                    lines[j] = new
                    return "".join(lines)
            lines.insert(i + 1, f'level = "{level}"\n')
            return "".join(lines)
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f'{text}{sep}[{prefix}subjects.{quoted}]\nlevel = "{level}"\n'
