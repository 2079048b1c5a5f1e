"""The files lint and validate are given: folders walked for ``*.avsc``, problems with the
paths themselves, and a file that does not load (Java refuses it, or it cannot be read) as a
finding: the same for both commands.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from schemacli.contracts.findings import Finding
from schemacli.contracts.jsontext.source import is_stdin
from schemacli.errors import Location, SchemacliError, SchemaParseError
from schemacli.kinds import Kind


def expand_paths(paths: Iterable[Path | str]) -> tuple[list[Path], list[Finding]]:
    """The .avsc files named or found under folders (sorted, each once), and path problems.

    Folders are searched recursively, skipping hidden ones (``.git``, ``.venv``, ...).
    """
    files: dict[Path, None] = {}
    problems: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        try:
            is_dir = not is_stdin(path) and path.is_dir()
            exists = is_dir or path.exists() or path.is_symlink()
        except OSError as exc:  # a name longer than the filesystem allows (ENAMETOOLONG), ...
            problems.append(
                Finding(
                    kind=Kind.PATH_NOT_FOUND,
                    message=f"cannot look at this path: {exc.strerror}",
                    location=Location(source=str(path)),
                    hint="check the path; each name in it must be shorter than 256 bytes",
                )
            )
            continue
        if is_stdin(path):
            files.setdefault(path)  # read once, named <stdin>
        elif is_dir:
            found, unreadable = _walk(path)
            for folder in unreadable:
                problems.append(
                    Finding(
                        kind=Kind.UNREADABLE_FILE,
                        message="permission denied while listing the folder",
                        location=Location(source=str(folder)),
                        hint="make the folder readable and listable (chmod +rx)",
                    )
                )
            if not found and not unreadable:
                problems.append(
                    Finding(
                        kind=Kind.NO_SCHEMA_FILES,
                        message="no .avsc files in this folder (searched recursively)",
                        location=Location(source=str(path)),
                        hint="point at the folder holding your schemas, or name files directly",
                    )
                )
            for file in found:
                files.setdefault(file)
        elif exists:
            files.setdefault(path)  # a file named explicitly is read whatever its suffix
        else:
            problems.append(
                Finding(
                    kind=Kind.PATH_NOT_FOUND,
                    message="no such file or folder",
                    location=Location(source=str(path)),
                    hint="check the path; folders are searched for *.avsc recursively",
                )
            )
    return list(files), problems


def _walk(folder: Path) -> tuple[list[Path], list[Path]]:
    found: list[Path] = []
    unreadable: list[Path] = []

    def on_error(err: OSError) -> None:
        unreadable.append(Path(err.filename) if err.filename else folder)

    for root, dirs, names in os.walk(folder, onerror=on_error):
        # hidden folders (.git, .venv, .cache) hold tools' files, not the project's schemas
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".avsc"):
                found.append(Path(root) / name)
    return found, unreadable


def error_finding(err: SchemacliError, source: str) -> Finding:
    """A loading/parsing error as a finding (kind from the error class)."""
    kind = getattr(err, "kind", None) or (
        Kind.INVALID_SCHEMA if isinstance(err, SchemaParseError) else Kind.INVALID_INPUT
    )
    location = err.location or Location(source=source)
    if location.source is None:
        location = replace(location, source=source)
    return Finding(kind=kind, message=err.message, location=location, hint=err.hint)


def too_deep(source: str) -> Finding:
    """A file nested deeper than the process can walk, as a finding (never a traceback)."""
    return error_finding(
        SchemaParseError(
            "the schema is nested too deeply to process",
            location=Location(source=source),
            hint="define deep records once by name and refer to them",
        ),
        source,
    )
