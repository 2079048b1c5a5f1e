"""Fixes as edits to a schema file's text: the one road from "a change to a JSON schema" to text.

A :class:`Fix` is a title, an :class:`Applicability` and a tuple of :class:`TextEdit` (replace
``text[start:end]``), as ruff's ``Fix`` is a list of ``Edit``s. Edits are made by
:class:`JsonEditor` from the positions ``contracts.source.Document`` tracks: only the edited
span changes, so the file's formatting, indentation, line breaks, comments and key order
everywhere else survive byte for byte (the JSON is never re-dumped). A new member or element
takes its siblings' indentation and line style; a new object or array value is laid out in the
file's indent unit.

``apply_fixes`` applies the fixes that may apply (safe ones; unsafe ones only when asked;
display-only advice never) and skips one whose edits overlap an earlier fix's, as ruff does;
a caller re-checks the result and applies again until nothing changes.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI loads this module at start-up (findings name Fix); not the reader
    from schemacli.contracts.jsontext.document import Document

__all__ = [
    "Applicability",
    "Dropped",
    "EditError",
    "Fix",
    "JsonEditor",
    "TextEdit",
    "apply_checked",
    "apply_edits",
    "apply_fixes",
    "overlapping",
    "unified_diff",
]


class Applicability(StrEnum):
    """Whether a fix may be applied without a person reading it (ruff's applicability)."""

    SAFE = "safe"  # keeps what the schema means: applied by --fix
    UNSAFE = "unsafe"  # changes meaning or compatibility: applied only with --unsafe-fixes
    DISPLAY = "display"  # advice only: shown, never applied


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[start:end]`` by ``text``; ``start_pos`` / ``end_pos`` are the 1-based
    (line, column) of ``start`` and ``end`` in the original text (``end`` is exclusive, as a
    SARIF region's ``endColumn``)."""

    start: int
    end: int
    text: str
    start_pos: tuple[int, int]
    end_pos: tuple[int, int]

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end


@dataclass(frozen=True)
class Fix:
    """A way out of a finding: a one-line imperative title, its applicability and its edits
    (none only for display-only advice)."""

    title: str
    applicability: Applicability
    edits: tuple[TextEdit, ...] = ()
    # The file the edits apply to when it is not the finding's own: a FORWARD compatibility
    # finding is placed in the earlier version (Java's reader), its fix edits the candidate.
    source: str | None = None

    @property
    def applies(self) -> bool:
        """Whether the fix can change the text at all (display advice cannot)."""
        return self.applicability is not Applicability.DISPLAY and bool(self.edits)


class EditError(ValueError):
    """Edits that cannot be applied together (they overlap) or a pointer the document lacks."""


def _overlaps(a: TextEdit, b: TextEdit) -> bool:
    """Two edits touch the same text. Insertions at one point do not overlap (they apply in
    the order given), nor does an insertion at the edge of a replacement."""
    if a.is_insertion or b.is_insertion:
        return a.start < b.end and b.start < a.end
    return a.start < b.end and b.start < a.end


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with every edit applied (positions are in the original ``text``).

    Raises EditError when two edits overlap or one lies outside the text."""
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[1].end, item[0]))
    out: list[str] = []
    cursor = 0
    previous: TextEdit | None = None
    for _, edit in ordered:
        if not 0 <= edit.start <= edit.end <= len(text):
            raise EditError(f"edit {edit.start}:{edit.end} lies outside the text")
        if previous is not None and (edit.start < cursor or _overlaps(previous, edit)):
            raise EditError(
                f"edits overlap at line {edit.start_pos[0]}, column {edit.start_pos[1]}"
            )
        out.append(text[cursor : edit.start])
        out.append(edit.text)
        cursor = edit.end
        previous = edit
    out.append(text[cursor:])
    return "".join(out)


def apply_fixes(
    text: str, fixes: Iterable[Fix], *, unsafe: bool = False
) -> tuple[str, list[Fix], list[Fix]]:
    """Apply, in order, every fix that may apply: (new text, applied, skipped).

    Skipped: display-only advice, unsafe fixes unless ``unsafe``, a fix whose own edits
    overlap, and a fix any of whose edits overlaps an edit of a fix already taken (re-check the
    result and apply again)."""
    applied: list[Fix] = []
    skipped: list[Fix] = []
    taken: list[TextEdit] = []
    spans = _Spans()
    for fix in fixes:
        allowed = fix.applies and (fix.applicability is Applicability.SAFE or unsafe)
        if not allowed or _self_overlapping(fix) or any(spans.clashes(e) for e in fix.edits):
            skipped.append(fix)
            continue
        for edit in fix.edits:
            spans.add(edit)
        taken.extend(fix.edits)
        applied.append(fix)
    return apply_edits(text, taken), applied, skipped


@dataclass(frozen=True)
class Dropped:
    """A fix that was not applied because the result would not have been accepted, and why."""

    fix: Fix
    reason: str


def apply_checked(
    text: str,
    fixes: Iterable[Fix],
    refusal: Callable[[str], str | None],
    *,
    unsafe: bool = False,
) -> tuple[str, list[Fix], list[Dropped]]:
    """``apply_fixes``, keeping only what ``refusal`` accepts: (new text, applied, dropped).

    ``refusal(text)`` says why a text is refused (None: accepted), e.g. that it no longer
    parses. When the fixes together are refused, they are tried in halves: a fix that is
    refused whatever else is applied is dropped with the reason, and the others still apply
    (one bad fix never takes the rest down). Costs one ``refusal`` when all go together, about
    two per dropped fix and halving step otherwise."""
    _, taken, _ = apply_fixes(text, fixes, unsafe=unsafe)
    accepted: list[Fix] = []
    dropped: list[Dropped] = []

    def take(group: list[Fix]) -> None:
        if not group:
            return
        trial = apply_edits(text, [e for fix in (*accepted, *group) for e in fix.edits])
        reason = refusal(trial)
        if reason is None:
            accepted.extend(group)
        elif len(group) == 1:
            dropped.append(Dropped(group[0], reason))
        else:
            take(group[: len(group) // 2])
            take(group[len(group) // 2 :])

    take(taken)
    order = {id(fix): n for n, fix in enumerate(taken)}
    accepted.sort(key=lambda fix: order[id(fix)])
    result = apply_edits(text, [e for fix in accepted for e in fix.edits])
    return result, accepted, dropped


def _self_overlapping(fix: Fix) -> bool:
    """A fix whose own edits overlap (no fix we make; a caller's could): never applied."""
    return overlapping(fix.edits)


def overlapping(edits: Iterable[TextEdit]) -> bool:
    """Whether two of ``edits`` overlap (``apply_edits`` would refuse them)."""
    own = _Spans()
    for edit in edits:
        if own.clashes(edit):
            return True
        own.add(edit)
    return False


class _Spans:
    """The spans of the edits taken so far, sorted: whether a new edit overlaps one of them
    in O(log n) (not one comparison per taken edit: a 10,000-field fix stays linear).

    Taken spans never overlap, so sorted by (start, end) their ends never decrease: the one
    that could overlap ``[s, e)`` is the last that starts before ``e``."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def clashes(self, edit: TextEdit) -> bool:
        at = bisect.bisect_left(self.spans, (edit.end, -1)) - 1
        if at < 0:
            return False
        start, end = self.spans[at]
        return start < edit.end and edit.start < end

    def add(self, edit: TextEdit) -> None:
        bisect.insort(self.spans, (edit.start, edit.end))


def unified_diff(source: str, before: str, after: str) -> str:
    """A unified diff of ``before`` -> ``after`` with ``a/source`` and ``b/source`` headers
    (an absolute path as it is; "" when they are equal); a last line without a line break is
    marked as ``diff`` does."""
    if before == after:
        return ""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=source if source.startswith("/") else f"a/{source}",
        tofile=source if source.startswith("/") else f"b/{source}",
    )
    out: list[str] = []
    for line in lines:
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


# -- the editor --------------------------------------------------------------------------------

_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
# json.dumps with these options, its encoder made once (json.dumps makes one per call)
_ONE_LINE = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
_INDENTED = json.JSONEncoder(ensure_ascii=False, indent=4, separators=(",", ": "))
_SCALAR = json.JSONEncoder(ensure_ascii=False)  # at C speed (json's indented encoder is not)
_QUOTED = json.encoder.encode_basestring


def _indented(value: object, depth: int = 0) -> str:
    """``_INDENTED.encode(value)``, the same text: containers laid out here, scalars written
    by json at C speed. Raises TypeError for a key that is not a string (the caller then asks
    json itself)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = "\n" + "    " * (depth + 1)
        parts = []
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(key)
            parts.append(inner + _QUOTED(key) + ": " + _indented(item, depth + 1))
        return "{" + ",".join(parts) + "\n" + "    " * depth + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        inner = "\n" + "    " * (depth + 1)
        body = ",".join(inner + _indented(item, depth + 1) for item in value)
        return "[" + body + "\n" + "    " * depth + "]"
    return _SCALAR.encode(value)


@dataclass(frozen=True)
class _Member:
    """One member of an object (``key_start`` is the opening quote) or element of an array
    (``key_start == value_start``)."""

    key: str | None
    key_start: int
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class _Container:
    open: int  # offset of '{' or '['
    close: int  # offset of '}' or ']'
    members: tuple[_Member, ...]


def _ws_end(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _value_end(text: str, start: int) -> int:
    return _DECODER.raw_decode(text, start)[1]


def _scan(text: str, open_at: int) -> _Container:
    """The members of the object or array opening at ``open_at`` in comment-free ``text``."""
    is_object = text[open_at] == "{"
    members: list[_Member] = []
    cursor = _ws_end(text, open_at + 1)
    closer = "}" if is_object else "]"
    while text[cursor] != closer:
        if is_object:
            key, key_end = json.decoder.scanstring(text, cursor + 1)  # type: ignore[attr-defined]
            value_start = _ws_end(text, _ws_end(text, key_end) + 1)  # past ':'
            value_end = _value_end(text, value_start)
            members.append(_Member(key, cursor, key_end, value_start, value_end))
        else:
            value_end = _value_end(text, cursor)
            members.append(_Member(None, cursor, cursor, cursor, value_end))
        cursor = _ws_end(text, value_end)
        if text[cursor] == ",":
            cursor = _ws_end(text, cursor + 1)
    return _Container(open_at, cursor, tuple(members))


def _line_break(gap: str) -> str | None:
    """The line break and indentation that end ``gap`` (white space), or None if it has none."""
    at = gap.rfind("\n")
    if at < 0:
        return None
    start = at - 1 if at > 0 and gap[at - 1] == "\r" else at
    return gap[start:]


class JsonEditor:
    """Edits to one parsed schema file, each a :class:`TextEdit` against its original text.

    Pointers are RFC 6901 JSON pointers, as findings carry them. Raises EditError for a pointer
    the document lacks or of the wrong kind (a member of an array, an element of an object)."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.text = document.text
        self._scan_text = document.scan_text
        self._containers: dict[int, _Container] = {}
        self._break = "\r\n" if "\r\n" in self.text else "\n"
        # A file laid out on one line (a line break at its end aside) stays on one line.
        self._one_line = "\n" not in self.text.strip()
        self._indent_unit: str | None = None  # the file's indent unit, found when first asked
        self._spans: dict[str, tuple[int, int]] = {}  # pointer -> its value's span

    # -- looking ------------------------------------------------------------------------------
    def _start(self, pointer: str) -> int:
        if not self.document.pointer_exists(pointer):
            raise EditError(f"the schema has no value at {pointer or '/'!r}")
        return self.document.offset(pointer)

    def span(self, pointer: str) -> tuple[int, int]:
        """The ``[start, end)`` offsets of the value at ``pointer``."""
        found = self._spans.get(pointer)
        if found is None:  # a finding's plans ask for one spot several times
            start = self._start(pointer)
            found = self._spans[pointer] = (start, _value_end(self._scan_text, start))
        return found

    def _container(self, pointer: str, opener: str) -> _Container:
        start = self._start(pointer)
        if self._scan_text[start] != opener:
            what = "an object" if opener == "{" else "an array"
            raise EditError(f"the value at {pointer or '/'!r} is not {what}")
        found = self._containers.get(start)
        if found is None:
            found = self._containers[start] = _scan(self._scan_text, start)
        return found

    def _member(self, container: _Container, key: str) -> _Member | None:
        found = None
        for member in container.members:  # the last repeat wins, as in the parsed value
            if member.key == key:
                found = member
        return found

    def _indent_of_line(self, offset: int) -> str:
        line_start = self.text.rfind("\n", 0, offset) + 1
        end = line_start
        while end < offset and self.text[end] in " \t":
            end += 1
        return self.text[line_start:end]

    def _newline(self) -> str:
        return self._break

    def _unit(self) -> str:
        """The file's indent unit: the indentation of the first indented line (two spaces when
        nothing is indented)."""
        if self._indent_unit is None:
            match = re.search(r"\n([ \t]+)\S", self._scan_text)
            self._indent_unit = match.group(1) if match else "  "
        return self._indent_unit

    def _spans_lines(self, sibling: _Member) -> bool:
        """Lay a new container out over lines unless its sibling is a container on one line."""
        scan = self._scan_text
        if scan[sibling.value_start] not in "{[":
            return True
        return "\n" in scan[sibling.value_start : sibling.value_end]

    def _edit(self, start: int, end: int, text: str) -> TextEdit:
        line_col = self.document.line_col
        return TextEdit(start, end, text, line_col(start), line_col(end))

    # -- values --------------------------------------------------------------------------------
    def _dump(self, value: object, base_indent: str, multiline: bool) -> str:
        """``value`` as JSON: scalars, empty containers and arrays of scalars on one line;
        others laid out one member a line in the file's indent unit when ``multiline``, else on
        one line."""
        flat = isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value)
        if not multiline or not isinstance(value, (dict, list)) or not value or flat:
            return _ONE_LINE.encode(value)
        unit = self._unit()
        try:
            text = _indented(value)
        except TypeError:
            text = _INDENTED.encode(value)
        newline = self._newline()
        lines = text.split("\n")
        out = [lines[0]]
        for line in lines[1:]:
            stripped = line.lstrip(" ")
            depth = (len(line) - len(stripped)) // 4
            out.append(base_indent + unit * depth + stripped)
        return newline.join(out)

    def replace(self, pointer: str, value: object) -> TextEdit:
        """Replace the value at ``pointer`` by ``value``."""
        start, end = self.span(pointer)
        multiline = "\n" in self._scan_text[start:end] or not self._one_line
        return self._edit(start, end, self._dump(value, self._indent_of_line(start), multiline))

    # -- objects -------------------------------------------------------------------------------
    def set_member(self, object_pointer: str, key: str, value: object) -> TextEdit:
        """Set ``key`` to ``value`` in the object at ``object_pointer``: replace its value if the
        key is there, else add it after the last member in its siblings' style."""
        container = self._container(object_pointer, "{")
        existing = self._member(container, key)
        if existing is not None:
            start, end = existing.value_start, existing.value_end
            multiline = "\n" in self._scan_text[start:end] or not self._one_line
            text = self._dump(value, self._indent_of_line(existing.key_start), multiline)
            return self._edit(start, end, text)
        members = container.members
        scan = self._scan_text
        key_text = json.dumps(key, ensure_ascii=False)
        if not members:
            return self._into_empty(container, f"{key_text}: ", value)
        last = members[-1]
        colon = scan[last.key_end : last.value_start]
        separator = colon if "\n" not in colon else ": "
        gap = (
            scan[members[-2].value_end : last.key_start]
            if len(members) > 1
            else scan[container.open + 1 : last.key_start]
        )
        if len(members) > 1:
            gap = gap.lstrip().lstrip(",")
        elif "\n" not in gap:  # one member on one line: space as after its colon
            gap = " " if separator.endswith(" ") else ""
        return self._after(last, gap, key_text + separator, value)

    def _after(self, last: _Member, gap: str, prefix: str, value: object) -> TextEdit:
        """Insert ``, <prefix><value>`` right after ``last``, spaced as ``gap`` spaces it from
        the member before it."""
        breaks = _line_break(gap)
        if breaks is not None:
            indent = breaks.lstrip("\r\n")
            body = self._dump(value, indent, self._spans_lines(last))
            text = "," + breaks + prefix + body
        else:
            spacing = gap if gap.strip(" \t") == "" else " "
            text = "," + spacing + prefix + self._dump(value, "", False)
        return self._edit(last.value_end, last.value_end, text)

    def _into_empty(self, container: _Container, prefix: str, value: object) -> TextEdit:
        """Fill an empty object or array (its inside is white space or comments)."""
        scan = self._scan_text
        inside = scan[container.open + 1 : container.close]
        if "\n" in inside:
            outer = self._indent_of_line(container.open)
            indent = outer + self._unit()
            newline = self._newline()
            text = newline + indent + prefix + self._dump(value, indent, True) + newline + outer
        else:
            text = prefix + self._dump(value, "", False)
        return self._edit(container.open + 1, container.close, text)

    def remove_member(self, object_pointer: str, key: str) -> TextEdit:
        """Remove ``key`` and its value from the object at ``object_pointer``, with the comma
        that separated it."""
        container = self._container(object_pointer, "{")
        member = self._member(container, key)
        if member is None:
            raise EditError(f"the object at {object_pointer or '/'!r} has no member {key!r}")
        return self._remove(container, member)

    def _remove(self, container: _Container, member: _Member) -> TextEdit:
        members = container.members
        index = members.index(member)
        if len(members) == 1:
            return self._edit(container.open + 1, container.close, "")
        if index + 1 < len(members):
            return self._edit(member.key_start, members[index + 1].key_start, "")
        return self._edit(members[index - 1].value_end, member.value_end, "")

    def rename_key(self, object_pointer: str, old: str, new: str) -> TextEdit:
        """Rename the member ``old`` of the object at ``object_pointer`` to ``new``."""
        container = self._container(object_pointer, "{")
        member = self._member(container, old)
        if member is None:
            raise EditError(f"the object at {object_pointer or '/'!r} has no member {old!r}")
        return self._edit(member.key_start, member.key_end, json.dumps(new, ensure_ascii=False))

    # -- arrays --------------------------------------------------------------------------------
    def insert_element(self, array_pointer: str, index: int, value: object) -> TextEdit:
        """Insert ``value`` into the array at ``array_pointer`` so that it becomes element
        ``index`` (``len`` or more: at the end)."""
        container = self._container(array_pointer, "[")
        members = container.members
        scan = self._scan_text
        if not members:
            return self._into_empty(container, "", value)
        if len(members) > 1:
            gap = scan[members[0].value_end : members[1].value_start].lstrip().lstrip(",")
        else:
            gap = scan[container.open + 1 : members[0].value_start]
            gap = gap if "\n" in gap else " "
        if index >= len(members):
            return self._after(members[-1], gap, "", value)
        if index < 0:
            raise EditError(f"no element {index} in the array at {array_pointer or '/'!r}")
        at = members[index].value_start
        breaks = _line_break(gap)
        if breaks is not None:
            indent = breaks.lstrip("\r\n")
            sibling = members[index - 1] if index else members[index]
            text = self._dump(value, indent, self._spans_lines(sibling)) + "," + breaks
        else:
            spacing = gap if gap.strip(" \t") == "" and gap else " "
            text = self._dump(value, "", False) + "," + spacing
        return self._edit(at, at, text)

    def remove_element(self, array_pointer: str, index: int) -> TextEdit:
        """Remove element ``index`` of the array at ``array_pointer``, with its comma."""
        container = self._container(array_pointer, "[")
        if not 0 <= index < len(container.members):
            raise EditError(f"no element {index} in the array at {array_pointer or '/'!r}")
        return self._remove(container, container.members[index])
