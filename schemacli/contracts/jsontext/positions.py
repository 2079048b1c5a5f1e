"""Where a JSON pointer sits in a text: one notion of located positions for every reader.

A schema file (``source.Document``, located lazily from the JSON text) and a mapping file
(``converters.mapping.reader``, located while the YAML is composed) both answer "which line:col
does this pointer name?" the same way: at the pointer itself if the text has it, else at its
nearest ancestor that it has (a missing key is reported where its parent is). That walk up is
:func:`nearest`; :class:`Positions` is the eager pointer -> position map a reader fills as it goes.

Lines and columns are 1-based.
"""

from __future__ import annotations

from collections.abc import Callable

from schemacli.contracts.jsontext.pointer import parent_pointer
from schemacli.errors import Location

Position = tuple[int, int]  # a 1-based (line, column)


def nearest(pointer: str, find: Callable[[str], Position | None]) -> Position | None:
    """The position of ``pointer``, or of the closest ancestor ``find`` has one for, walking up
    to the root ``""``; None when not even the root has one."""
    probe = pointer
    while True:
        found = find(probe)
        if found is not None or not probe:
            return found
        probe = parent_pointer(probe)


def at(source: str | None, pointer: str, position: Position | None) -> Location:
    """A Location for ``pointer`` in ``source`` at ``position`` (no line:col when None)."""
    line, column = position if position is not None else (None, None)
    return Location(source=source, pointer=pointer, line=line, column=column)


class Positions(dict[str, Position]):
    """Pointer -> position, filled by a reader as it goes; looked up by nearest ancestor."""

    def nearest(self, pointer: str) -> Position | None:
        return nearest(pointer, self.get)

    def location(self, source: str | None, pointer: str) -> Location:
        """``pointer`` in ``source``, at its own line:col or its nearest ancestor's."""
        return at(source, pointer, self.nearest(pointer))
