"""What the site shows, gathered once (``build``) and rendered (``render``): plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schemacli.contracts.evolution.check import CheckReport
from schemacli.contracts.evolution.diff import SchemaDiff
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding
from schemacli.contracts.readers.declared import DeclaredReader

if TYPE_CHECKING:
    from converters.ops.overview import Overview


@dataclass(frozen=True)
class VersionEntry:
    """One version of a subject: its text, what changed from the one before, its verdict."""

    number: int
    source: str
    schema_text: str = ""  # the schema's JSON, indented
    name: str = ""  # the top-level type's full name (or its type, for a primitive)
    doc: str | None = None
    fingerprint: str = ""  # CRC-64-AVRO of the Parsing Canonical Form, hex
    diff: SchemaDiff | None = None  # from the version before (None for v1 or an invalid one)
    check: CheckReport | None = None  # against the versions before it, at the subject's level
    error: str | None = None  # the version does not load: the error's words


@dataclass(frozen=True)
class ReadsVersion:
    """Can the reader read data written with ``version``?"""

    version: int
    compatible: bool
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class ReaderEntry:
    """A declared reader of the subject and its verdict against each version."""

    reader: DeclaredReader
    verdicts: tuple[ReadsVersion, ...] = ()
    error: str | None = None  # its schema does not load


@dataclass(frozen=True)
class CensusEntry:
    """One census file that mentions the subject: its topic, its JSON as read (the chart's data,
    embedded as it is), and the file's name."""

    source: str
    topic: str
    data: Any


@dataclass(frozen=True)
class SubjectPage:
    subject: str
    slug: str  # the page's file name, without .html
    level: Level
    versions: tuple[VersionEntry, ...] = ()
    readers: tuple[ReaderEntry, ...] = ()
    censuses: tuple[CensusEntry, ...] = ()
    error: str | None = None  # the subject could not be read at all

    @property
    def latest(self) -> VersionEntry | None:
        return self.versions[-1] if self.versions else None

    @property
    def broken_readers(self) -> int:
        """Declared readers that cannot read the latest version (or whose schema is invalid)."""
        latest = self.latest
        count = 0
        for entry in self.readers:
            if entry.error is not None:
                count += 1
            elif latest is not None and any(
                v.version == latest.number and not v.compatible for v in entry.verdicts
            ):
                count += 1
        return count


@dataclass(frozen=True)
class MigrationPage:
    slug: str
    state_dir: str
    overview: Overview | None
    error: str | None = None  # a state directory found (not named) whose files do not read


@dataclass(frozen=True)
class Site:
    store: str
    generated: float  # seconds since the epoch
    subjects: tuple[SubjectPage, ...] = ()
    migrations: tuple[MigrationPage, ...] = ()
    readers_error: str | None = None  # the readers/ folder could not be read
    unmatched_censuses: tuple[CensusEntry, ...] = field(default_factory=tuple)
