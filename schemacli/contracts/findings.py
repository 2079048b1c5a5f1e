"""A finding: one record holding everything a renderer needs to say about one problem."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from schemacli.errors import Location
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind, Severity

if TYPE_CHECKING:  # the CLI loads findings at start-up, the JSON reader only when it reads,
    # the fixes' editor (``contracts.fixes.edits``) only when a fix is made
    from schemacli.contracts.fixes.edits import Fix
    from schemacli.contracts.jsontext.document import Note

__all__ = ["Finding", "Kind", "ReaderRef", "Severity"]


@frozen_dataclass
class ReaderRef:
    """The declared reader (docs/readers.md) a finding is about: the consumer, who owns it,
    its consumer groups, and where in the reader's schema the finding sits."""

    consumer: str
    owner: str | None
    contact: str | None
    groups: tuple[str, ...]
    location: Location


@frozen_dataclass
class Finding:
    """One problem: what kind, where, the values involved and the way out.

    ``kind`` is an entry of the one catalogue (:class:`schemacli.kinds.Kind`): Apache
    Avro's vocabulary for incompatibilities (TYPE_MISMATCH, NAME_MISMATCH, ...) and our own rule
    ids for validation (e.g. ``INVALID_DEFAULT``). ``old`` / ``new`` are the
    writer / reader values (or before / after in a diff), as JSON-able values. ``fixes`` are
    concrete edits of the file that resolve the finding, each safe, unsafe or display-only.
    """

    kind: Kind
    message: str
    location: Location = Location()
    hint: str | None = None
    severity: Severity = Severity.ERROR
    old: Any = None
    new: Any = None
    subject: str | None = None
    fixes: tuple[Fix, ...] = ()  # ways out as edits of the file (contracts.edits); not hashed
    # A declared reader's verdict: which consumer cannot read the writer, and where in its
    # reader schema (``location`` is then the writer's place).
    reader: ReaderRef | None = None

    def __hash__(self) -> int:
        # ``old`` / ``new`` may be lists or objects (enum symbols, default values): unhashable,
        # so they stay out of the hash (equal findings still hash alike; == compares them).
        return hash((self.kind, self.message, self.location, self.hint, self.severity))

    @classmethod
    def of_note(cls, note: Note, **more: Any) -> Finding:
        """A note about a file's JSON text (``Document.notes``) as a finding, at its kind's
        severity; ``more`` sets other fields (``subject=``)."""
        return cls(
            kind=note.kind,
            message=note.message,
            location=note.location,
            hint=note.hint,
            severity=note.kind.severity,
            **more,
        )

    def at(self, **changes: Any) -> Finding:
        """Return a copy whose location has ``changes`` applied (e.g. ``source=``, ``line=``)."""
        return replace(self, location=replace(self.location, **changes))
