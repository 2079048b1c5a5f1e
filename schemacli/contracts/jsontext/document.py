"""A parsed JSON document that remembers where every value sits in its text: the position
index (JSON pointer -> offset -> line:col), built lazily, only when somebody asks where a value
is, and the notes about the JSON text itself (its encoding, comments, repeated keys)."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from schemacli.contracts.jsontext.pointer import escape_token, join_pointer, unescape_token
from schemacli.contracts.jsontext.positions import Position, at, nearest
from schemacli.contracts.jsontext.syntax import TOKEN, blank_comments
from schemacli.errors import Location
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind

UTF8 = "UTF-8"


@frozen_dataclass
class Note:
    """A warning about the JSON text itself (its encoding, a comment, a repeated key): Java
    reads the file, another reader may not. The parts of a finding, which
    ``contracts.findings.Finding.of_note`` makes of it (this room sits below the findings)."""

    kind: Kind
    message: str
    location: Location
    hint: str


@dataclass
class _Index:
    offsets: dict[str, int]
    duplicates: list[tuple[str, str, int]]  # (object pointer, key, offset of the repeated key)
    comments: list[int]  # offsets of comments


@frozen_dataclass
class Document:
    """A parsed JSON document: its value, where it came from, and a position map.

    ``position(pointer)`` gives the 1-based (line, column) of the value at ``pointer`` (or of its
    nearest existing ancestor, for pointers to members that are missing). ``notes`` are
    warnings about the JSON itself (comments, duplicate keys).
    """

    value: Any
    source: str
    text: str
    has_comments: bool = False
    has_duplicates: bool = False
    encoding: str = UTF8  # as read from bytes: Jackson's detection (source.detect_encoding)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- positions ---------------------------------------------------------------------------
    def _index(self) -> _Index:
        index = self._cache.get("index")
        if index is None:
            index = self._cache["index"] = _build_index(self.text)
        return index

    def _clean_text(self) -> str:
        """The text with comments blanked out (same offsets), which ``json`` can scan."""
        if not self.has_comments:
            return self.text
        clean = self._cache.get("clean")
        if clean is None:
            clean = self._cache["clean"] = blank_comments(self.text, self.source)
        return clean

    @property
    def scan_text(self) -> str:
        """The text with comments blanked to spaces (same offsets, same line breaks): what
        scanners of the JSON structure read (``contracts.edits``)."""
        return self._clean_text()

    def _locate(self, pointer: str) -> tuple[int, bool]:
        found = self._cache.get(pointer)
        if found is None:
            children = self._cache.get("children")
            if children is None:
                children = self._cache["children"] = {}
            found = self._cache[pointer] = _navigate(
                self._clean_text(), pointer, last_wins=self.has_duplicates, children=children
            )
        return found

    def offset(self, pointer: str) -> int:
        """Character offset of the value at ``pointer`` (or its nearest existing ancestor)."""
        return self._locate(pointer)[0]

    def line_col(self, offset: int) -> tuple[int, int]:
        starts = self._cache.get("line_starts")
        if starts is None:
            starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
            self._cache["line_starts"] = starts
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def _exact(self, pointer: str) -> Position | None:
        """The position of the value at ``pointer``; None when the text has no such value."""
        offset, exists = self._locate(pointer)
        return self.line_col(offset) if exists else None

    def position(self, pointer: str) -> Position:
        """Where ``pointer`` is, or its nearest ancestor (positions.nearest, as for a mapping
        file); located lazily, one path at a time, so valid files cost nothing here."""
        found = nearest(pointer, self._exact)
        return found if found is not None else self.line_col(self.offset(""))

    def location(self, pointer: str) -> Location:
        """A Location for ``pointer`` in this document: source, pointer, line and column."""
        return at(self.source, pointer, self.position(pointer))

    def pointer_exists(self, pointer: str) -> bool:
        return self._locate(pointer)[1]

    # -- notes -------------------------------------------------------------------------------
    def _encoding_note(self) -> Note:
        # Checked in tests/unit/test_source_encoding.py: fastavro.schema.load_schema and the
        # avro package's parse of the text read as UTF-8 both fail on these files.
        return Note(
            kind=Kind.ENCODING_NOT_UTF8,
            message=f"the file is {self.encoding} encoded; Apache Avro Java reads it (it detects "
            "UTF-16 and UTF-32 as Jackson does), but fastavro and the Python avro package read "
            "schema files as UTF-8 and refuse it, and the registry receives UTF-8 text",
            location=Location(self.source, None, 1, 1),
            hint="save the file as UTF-8",
        )

    @property
    def notes(self) -> tuple[Note, ...]:
        """Warnings about the JSON text: its encoding, comments and duplicate keys, in text
        order."""
        found: list[tuple[int, Note]] = []
        if self.encoding != UTF8:
            found.append((-1, self._encoding_note()))
        if not (self.has_comments or self.has_duplicates):
            return tuple(f for _, f in found)
        index = self._index()
        if index.comments:
            offset = index.comments[0]
            line, col = self.line_col(offset)
            more = len(index.comments) - 1
            found.append(
                (
                    offset,
                    Note(
                        kind=Kind.JSON_COMMENT,
                        message="the file contains JSON comments"
                        + (f" ({more} more after this one)" if more else "")
                        + "; Apache Avro Java and the schema registry accept them, but fastavro, "
                        "the Python avro package and strict JSON parsers refuse the file",
                        location=Location(self.source, None, line, col),
                        hint='move the remark into a "doc" attribute and delete the comment',
                    ),
                )
            )
        for obj_pointer, key, offset in index.duplicates:
            line, col = self.line_col(offset)
            found.append(
                (
                    offset,
                    Note(
                        kind=Kind.DUPLICATE_KEY,
                        message=f"key {key!r} appears more than once in this object; Java, "
                        "fastavro and the Python avro package silently keep the last value and "
                        "ignore the earlier ones",
                        location=Location(self.source, join_pointer(obj_pointer, key), line, col),
                        hint=f"keep a single {key!r} member",
                    ),
                )
            )
        return tuple(f for _, f in sorted(found, key=lambda item: item[0]))


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The end of the white space at ``pos``: the pattern matches the empty string, so match() never
# gives None (the cast says so once, outside the scanning loops).
_skip_ws = cast("Callable[[str, int], re.Match[str]]", _WHITESPACE.match)
_SKIPPER = json.JSONDecoder()


def _navigate(
    text: str,
    pointer: str,
    *,
    last_wins: bool = False,
    children: dict[int, Any] | None = None,
) -> tuple[int, bool]:
    """Offset of the value at ``pointer`` in valid JSON ``text``, and whether it exists.

    Walks only the path. Each object or array on it is scanned once, recording where each of its
    members starts (siblings are skipped with the C JSON scanner, ``raw_decode``), into
    ``children`` (container offset -> key or index -> offset) when given: so the first lookup
    costs at most about one ``json.loads`` of the text, and later lookups in the same document
    cost only the path's depth (placing N findings in an N-field record stays linear). A missing
    member gives the offset of its nearest existing ancestor. With ``last_wins``, a repeated key
    resolves to its last occurrence, as the parsed value does.
    """
    pos = _skip_ws(text, 0).end()
    if not pointer:
        return pos, True
    if children is None:
        children = {}
    for raw in pointer[1:].split("/"):
        token = unescape_token(raw)
        opener = text[pos] if pos < len(text) else ""
        if opener == "{":
            members = children.get(pos)
            if members is None:
                members = children[pos] = _object_members(text, pos, last_wins)
            found = members.get(token, -1)
        elif opener == "[":
            if not token.isdigit():
                return pos, False
            members = children.get(pos)
            if members is None:
                members = children[pos] = _array_members(text, pos)
            index = int(token)
            found = members[index] if index < len(members) else -1
        else:
            return pos, False
        if found < 0:
            return pos, False
        pos = found
    return pos, True


def _object_members(text: str, pos: int, last_wins: bool) -> dict[str, int]:
    """Key -> offset of its value, for the object starting at ``pos`` (first or last repeat)."""
    ws = _skip_ws
    skip = _SKIPPER.raw_decode
    scan = json.decoder.scanstring  # type: ignore[attr-defined]  # in CPython, not in typeshed
    members: dict[str, int] = {}
    cursor = ws(text, pos + 1).end()
    while text[cursor] == '"':
        key, cursor = scan(text, cursor + 1)
        cursor = ws(text, ws(text, cursor).end() + 1).end()  # past ':'
        if last_wins or key not in members:
            members[key] = cursor
        cursor = ws(text, skip(text, cursor)[1]).end()
        if text[cursor] == ",":
            cursor = ws(text, cursor + 1).end()
    return members


def _array_members(text: str, pos: int) -> list[int]:
    """The offset of each element of the array starting at ``pos``."""
    ws = _skip_ws
    skip = _SKIPPER.raw_decode
    members: list[int] = []
    cursor = ws(text, pos + 1).end()
    while text[cursor] != "]":
        members.append(cursor)
        cursor = ws(text, skip(text, cursor)[1]).end()
        if text[cursor] == ",":
            cursor = ws(text, cursor + 1).end()
    return members


def _decode_key(token: str) -> str:
    return token[1:-1] if "\\" not in token else json.loads(token)


def _build_index(text: str) -> _Index:
    """Walk the tokens of a (known valid) JSON text, recording each value's pointer and offset."""
    offsets: dict[str, int] = {}
    duplicates: list[tuple[str, str, int]] = []
    comments: list[int] = []
    # Frame: [pointer, is_object, expecting_key, current_key_or_index, seen_keys]
    stack: list[list[Any]] = []
    for match in TOKEN.finditer(text):
        tok = match.group()
        first = tok[0]
        if first == "/":
            comments.append(match.start())
            continue
        if first in ",:":
            if first == "," and stack and stack[-1][1]:
                stack[-1][2] = True
            continue
        if first in "}]":
            if stack:
                stack.pop()
            continue
        top = stack[-1] if stack else None
        if top is not None and top[1] and top[2]:
            # an object key
            key = _decode_key(tok)
            if key in top[4]:
                duplicates.append((top[0], key, match.start()))
            top[4].add(key)
            top[3] = key
            top[2] = False
            continue
        if top is None:
            pointer = ""
        elif top[1]:
            pointer = top[0] + "/" + escape_token(top[3])
        else:
            pointer = top[0] + "/" + str(top[3])
            top[3] += 1
        offsets[pointer] = match.start()
        if first == "{":
            stack.append([pointer, True, True, None, set()])
        elif first == "[":
            stack.append([pointer, False, False, 0, None])
    return _Index(offsets, duplicates, comments)


# -- loading ---------------------------------------------------------------------------------
