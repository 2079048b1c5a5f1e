"""Compatibility levels: what each one checks, and which level a subject has.

The one table of the levels (STYLE.md, principle 2): BACKWARD = the new schema reads the old,
FORWARD = the old reads the new, FULL = both; ``*_TRANSITIVE`` = against every earlier version
instead of the latest. ``comparisons`` turns a level into the checks to make; the engine
(``compat.check_level``) and the store's check (``check.check_candidate``) both use it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import field
from enum import StrEnum
from types import MappingProxyType

from schemacli.frozen import frozen_dataclass

BACKWARD = "backward"  # the candidate is the reader, the earlier version the writer
FORWARD = "forward"  # the earlier version is the reader, the candidate the writer


class Level(StrEnum):
    """Confluent's compatibility levels."""

    NONE = "NONE"
    BACKWARD = "BACKWARD"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD = "FORWARD"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL = "FULL"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"
    # Ours, not a registry's: no check against earlier versions, only against the readers the
    # subject's consumers declared (docs/readers.md), which every level checks too.
    READERS = "READERS"

    @classmethod
    def parse(cls, text: str) -> Level:
        """The level named ``text`` (case-insensitive); ValueError names the valid ones."""
        try:
            return cls(text.strip().upper())
        except ValueError:
            valid = ", ".join(level.value for level in cls)
            raise ValueError(f"unknown compatibility level {text!r}; use one of {valid}") from None

    @property
    def transitive(self) -> bool:
        return self.value.endswith("_TRANSITIVE")

    @property
    def in_registry(self) -> bool:
        """Whether a schema registry knows this level (READERS is schemacli's alone)."""
        return self is not Level.READERS

    @property
    def directions(self) -> tuple[str, ...]:
        """Which checks run: BACKWARD (candidate reads old), FORWARD (old reads candidate)."""
        return _DIRECTIONS[self]


_DIRECTIONS: dict[Level, tuple[str, ...]] = {
    Level.NONE: (),
    Level.BACKWARD: (BACKWARD,),
    Level.BACKWARD_TRANSITIVE: (BACKWARD,),
    Level.FORWARD: (FORWARD,),
    Level.FORWARD_TRANSITIVE: (FORWARD,),
    Level.FULL: (BACKWARD, FORWARD),
    Level.FULL_TRANSITIVE: (BACKWARD, FORWARD),
    Level.READERS: (),
}


def compared_versions(level: Level, count: int) -> range:
    """Indexes (oldest first) of the earlier versions ``level`` checks a candidate against.

    None for NONE, READERS or an empty history, the latest one, or all of them for ``*_TRANSITIVE``.
    """
    if not level.directions or count <= 0:
        return range(0)
    return range(count) if level.transitive else range(count - 1, count)


@functools.lru_cache(maxsize=4096)  # asked once per candidate; a history's lengths recur
def comparisons(level: Level, count: int) -> tuple[tuple[int, str], ...]:
    """Every check ``level`` makes against ``count`` earlier versions, in the registry's order.

    Each is (index of the earlier version, direction): newest version first and, for FULL,
    BACKWARD before FORWARD for each version.
    """
    return tuple(
        (index, direction)
        for index in reversed(compared_versions(level, count))
        for direction in level.directions
    )


@frozen_dataclass
class SubjectLevels:
    """The level each subject is checked at: its own if one is configured, else the default."""

    default: Level
    subjects: Mapping[str, Level] = field(default_factory=lambda: MappingProxyType({}))
    source: str | None = None  # where the subjects' levels were configured (named in warnings)

    def level_for(self, subject: str) -> Level:
        """The subject's own level if configured, else the default level."""
        return self.subjects.get(subject, self.default)
