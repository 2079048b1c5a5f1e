"""Reading schema files as JSON while keeping where every value sits in the text.

``load_json`` parses with the C-accelerated ``json`` module (fast on the common path) and builds
the JSON-pointer -> offset index lazily, with a small tokenizer, only when somebody asks where a
value is (an error or a warning). So a valid 2,000-field schema costs one ``json.loads``.

What counts as valid JSON follows Apache Avro Java 1.12's ``Schema.Parser`` (Jackson), because
that is what the schema registry runs:

* ``/* ... */`` and ``// ...`` comments are accepted (Java enables ``ALLOW_COMMENTS``) but noted
  as a ``JSON_COMMENT`` warning: fastavro, the Python ``avro`` package and strict JSON readers
  refuse them. A comment after the schema is an error (Java: "dangling content").
* Duplicate keys in one object are accepted, the last one wins (as in Java, fastavro and Python
  avro), and noted as a ``DUPLICATE_KEY`` warning: the first value is silently ignored.
* A UTF-8 byte-order mark is skipped (Java's ``parse(File)`` skips it). UTF-16 and UTF-32,
  with or without a byte-order mark, are read as Java reads them (``detect_encoding``) and
  noted as an ``ENCODING_NOT_UTF8`` warning: fastavro and the Python ``avro`` package refuse them.
* Errors (``InputError`` with file:line:col and a hint): empty file, not UTF-8, binary content,
  trailing commas, unquoted or single-quoted keys, ``NaN``/``Infinity``, truncated files,
  anything after the schema.

Lines and columns are 1-based; columns count characters (code points), not bytes.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from schemacli.contracts.jsontext.nesting import TOO_DEEP_HINT, TooDeep, read
from schemacli.contracts.jsontext.numberlength import NUMBER_TOO_LONG_HINT, NumberTooLong
from schemacli.contracts.jsontext.pointer import escape_token, join_pointer, unescape_token
from schemacli.contracts.jsontext.positions import Position, at, nearest
from schemacli.errors import InputError, Location
from schemacli.kinds import Kind
from schemacli.textfile import (
    SCHEMA_LIMIT,
    Root,
    UnreadableInput,
    decode_utf8,
    line_column,
    read_input,
    read_stdin,
)

UTF8 = "UTF-8"


class JsonSyntaxError(InputError):
    """The text is not JSON that Apache Avro Java would read."""

    kind = Kind.INVALID_JSON


# The file cannot be read (missing, a directory, a FIFO, no permission, too large) or is not
# text: one class with the bounded reader's errors, so a finding's kind is UNREADABLE_FILE.
UnreadableFile = UnreadableInput


# Strings, structural characters, comments, and bare words (numbers, true/false/null, junk).
_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|/\*.*?(?:\*/|\Z)|//[^\n]*|[^\s{}\[\]:,"/]+|/', re.S
)
# Strings (kept) or comments (blanked); used only when the text contains "/*" or "//".
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|//[^\n]*', re.S)
_NON_NUMBERS = re.compile(r"-?(?:NaN|Infinity)\b")


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
            clean = self._cache["clean"] = _blank_comments(self.text, self.source)
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
    for match in _TOKEN.finditer(text):
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


STDIN_SOURCE = "<stdin>"  # how a schema given as "-" is named in messages


def is_stdin(path: Path | str) -> bool:
    """``-`` as a path means standard input (a file named "-" is ``./-``)."""
    return str(path) == "-"


def source_name(path: Path | str) -> str:
    """How ``path`` is named in messages: itself, or ``<stdin>`` for ``-``."""
    return STDIN_SOURCE if is_stdin(path) else str(path)


def read_text(path: Path, source: str | None = None, *, within: Root | None = None) -> str:
    """Read ``path`` (``-``: standard input) as text (see ``decode_bytes``), or raise InputError
    saying why it cannot be read (``within``: the root it must resolve inside, textfile's rule
    for input from another party)."""
    return read_text_encoded(path, source, within=within)[0]


def read_text_encoded(
    path: Path, source: str | None = None, *, within: Root | None = None
) -> tuple[str, str]:
    """``read_text``, and the encoding the text was found in (see ``detect_encoding``).

    Files and standard input are read by the one bounded reader (``schemacli.textfile``): at
    most ``SCHEMA_LIMIT`` bytes; directories, FIFOs, devices and link loops refused by name."""
    source = source or source_name(path)
    if is_stdin(path):
        data = read_stdin(limit=SCHEMA_LIMIT, what="schema", source=source)
    else:
        data = read_input(
            path, limit=SCHEMA_LIMIT, what="schema file", source=source, within=within
        )
    return decode_bytes_encoded(data, source)


# Byte-order marks Jackson recognises, longest first (UTF-32LE's starts like UTF-16LE's).
_BOMS = (
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\xef\xbb\xbf", UTF8),
    (b"\xfe\xff", "UTF-16BE"),
    (b"\xff\xfe", "UTF-16LE"),
)


def detect_encoding(data: bytes) -> tuple[str, int]:
    """The encoding Jackson (so Java's ``Schema.Parser().parse(File)``) reads ``data`` in, and
    the length of its byte-order mark.

    A byte-order mark decides; without one, the zero bytes among the first four do (JSON text
    starts with ASCII): ``00 00 00 xx`` UTF-32BE, ``xx 00 00 00`` UTF-32LE, ``00 xx`` UTF-16BE,
    ``xx 00`` UTF-16LE, anything else UTF-8 (Jackson's ``ByteSourceJsonBootstrapper``).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    head = data[:4]
    if len(head) == 4:
        if head[:3] == b"\x00\x00\x00" and head[3]:
            return "UTF-32BE", 0
        if head[0] and head[1:] == b"\x00\x00\x00":
            return "UTF-32LE", 0
    if len(head) >= 2:
        if head[0] == 0 and head[1]:
            return "UTF-16BE", 0
        if head[0] and head[1] == 0:
            return "UTF-16LE", 0
    return UTF8, 0


def decode_bytes(data: bytes, source: str) -> str:
    """File contents as text, in the encoding Java detects (``detect_encoding``); InputError
    for binary content and bytes that do not decode."""
    return decode_bytes_encoded(data, source)[0]


def decode_bytes_encoded(data: bytes, source: str) -> tuple[str, str]:
    """``decode_bytes``, and the encoding found (``UTF8`` for almost every file)."""
    encoding, bom = detect_encoding(data)
    if encoding != UTF8:
        try:
            return data[bom:].decode(encoding.lower()), encoding
        except UnicodeDecodeError as err:
            raise UnreadableFile(
                f"the file looks {encoding} encoded (as Java reads it), but byte {err.start + bom} "
                f"does not decode: {err.reason}",
                location=Location(source, line=1, column=1),
                hint="save it as UTF-8 (the encoding Avro schemas and the registry use)",
            ) from err
    if b"\x00" in data[:8192]:
        nul = data.index(b"\x00")
        line = data.count(b"\n", 0, nul) + 1
        raise UnreadableFile(
            "this is a binary file, not a JSON schema (it contains NUL bytes)",
            location=Location(source, line=line, column=nul - (data.rfind(b"\n", 0, nul) + 1) + 1),
            hint="point at the .avsc text file; Avro data files (.avro) are not schemas",
        )
    hint = "save the file as UTF-8 (Avro schemas are UTF-8 JSON)"
    return decode_utf8(data, source, hint=hint, error=UnreadableFile), UTF8


def load_json(
    path_or_text: Path | str, *, source: str | None = None, within: Root | None = None
) -> Document:
    """Parse a schema file (a ``Path``) or JSON text (a ``str``) into a Document.

    Raises InputError (file:line:col, what is wrong, how to fix it) for unreadable files
    (``within``: one that resolves outside that root, too) and JSON that Apache Avro Java
    would refuse.
    """
    if isinstance(path_or_text, Path):
        source = source or source_name(path_or_text)
        text, encoding = read_text_encoded(path_or_text, source, within=within)
        if encoding != UTF8:
            return replace(parse_text(text, source), encoding=encoding)
    else:
        source = source or "<input>"
        text = path_or_text
        if text.startswith("\ufeff"):
            text = text[1:]
    return parse_text(text, source)


def read_json_file(
    path: Path,
    *,
    limit: int,
    what: str,
    hint: str,
    error: type[InputError] = InputError,
    within: Root | None = None,
) -> Document:
    """A JSON document a user hands schemacli that is not a schema (a rules file, a census, a
    contract file, a report's marker): THE reader of them all. Read by the bounded reader (at
    most ``limit`` bytes, UTF-8, ``within`` its root) and parsed as schema files are (nesting
    and number length within Java's limits, so never a RecursionError or Python's 4,300-digit
    ValueError; NaN and Infinity refused; positions kept), and a number too large for a double
    (``1e400``) refused too: nothing downstream should meet an infinity.

    Raises ``error`` (or UnreadableInput for a file that cannot be read), its message naming
    ``what`` and the place, its hint ``hint``: how to get a right file.
    """
    data = read_input(path, limit=limit, what=what, within=within)
    source = str(path)
    text = decode_utf8(data, source, hint=hint, error=error)
    try:
        document = parse_text(text.removeprefix("\ufeff"), source, what=what)
    except InputError as err:
        raise error(
            f"the {what} is not JSON: {err.message}", location=err.location, hint=hint
        ) from err
    pointer = _non_finite(document.value)
    if pointer is not None:
        raise error(
            f"the {what} holds a number too large for a double (it would be Infinity)",
            location=document.location(pointer),
            hint=hint,
        )
    return document


def _non_finite(value: Any) -> str | None:
    """The pointer of the first float that is not finite in parsed JSON, or None (no
    recursion: the value may nest as deep as Java reads)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return pointer
        if isinstance(node, dict):
            stack.extend((v, join_pointer(pointer, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{pointer}/{i}") for i, v in reversed(list(enumerate(node))))
    return None


def parse_text(text: str, source: str, *, what: str = "schema") -> Document:
    """Parse JSON text; see ``load_json`` (``what`` names the document in messages)."""
    if not text.strip():
        raise JsonSyntaxError(
            "the file is empty",
            location=Location(source, line=1, column=1),
            hint='a schema file holds one JSON value, e.g. {"type": "record", "name": "X", '
            '"fields": []} or "string"',
        )
    has_comments = "/*" in text or "//" in text
    clean = _blank_comments(text, source) if has_comments else text
    has_comments = has_comments and clean != text
    duplicates = False

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal duplicates
        obj = dict(pairs)
        if len(obj) != len(pairs):
            duplicates = True
        return obj

    def reject_constant(name: str) -> Any:
        raise _NonNumber(name)

    decoder = json.JSONDecoder(object_pairs_hook=pairs_hook, parse_constant=reject_constant)
    start = len(clean) - len(clean.lstrip())
    try:
        value, end = read(decoder.raw_decode, clean, start)
    except TooDeep as err:
        raise JsonSyntaxError(
            str(err), location=_loc(clean, err.position, source), hint=TOO_DEEP_HINT
        ) from None
    except NumberTooLong as err:
        raise JsonSyntaxError(
            str(err), location=_loc(clean, err.position, source), hint=NUMBER_TOO_LONG_HINT
        ) from None
    except json.JSONDecodeError as err:
        raise _syntax_error(clean, err.msg, err.pos, source) from None
    except _NonNumber as err:
        match = _first_non_number(clean)
        pos = match.start() if match else 0
        raise JsonSyntaxError(
            f"{err.args[0]} is not a JSON value",
            location=_loc(clean, pos, source),
            hint="JSON has no NaN or Infinity (Java refuses them); use a number or a string",
        ) from None
    rest = text[end:]
    if rest.strip():
        pos = end + len(rest) - len(rest.lstrip())
        raise JsonSyntaxError(
            f"unexpected content after the end of the {what}: {_found(text, pos)}",
            location=_loc(text, pos, source),
            hint="a schema file holds exactly one JSON value; delete what follows it (or, for a "
            "union, wrap all branches in one [...] array)",
        )
    return Document(
        value=value,
        source=source,
        text=text,
        has_comments=has_comments,
        has_duplicates=duplicates,
    )


class _NonNumber(ValueError):
    pass


def _first_non_number(text: str) -> re.Match[str] | None:
    for match in _TOKEN.finditer(text):
        if _NON_NUMBERS.fullmatch(match.group()):
            return match
    return None


def _blank_comments(text: str, source: str) -> str:
    """Replace comments by spaces (keeping newlines), so offsets stay those of the original."""

    def blank(match: re.Match[str]) -> str:
        tok = match.group()
        if tok[0] == '"':
            return tok
        return re.sub(r"[^\n]", " ", tok)

    clean = _STRING_OR_COMMENT.sub(blank, text)
    if "/*" in clean:
        # an unterminated block comment (a terminated one would have been blanked)
        for match in _TOKEN.finditer(clean):
            if match.group().startswith("/*"):
                raise JsonSyntaxError(
                    "comment opened with /* is never closed",
                    location=_loc(clean, match.start(), source),
                    hint="close it with */ (or delete it: strict JSON readers refuse comments)",
                )
    return clean


def _loc(text: str, pos: int, source: str) -> Location:
    line, column = line_column(text, pos)
    return Location(source=source, line=line, column=column)


def _prev_significant(text: str, pos: int) -> str:
    stripped = text[:pos].rstrip()
    return stripped[-1] if stripped else ""


def _syntax_error(text: str, msg: str, pos: int, source: str) -> JsonSyntaxError:
    """Translate a json.JSONDecodeError into what is wrong and how to fix it."""
    at_end = not text[pos:].strip()
    char = text[pos] if pos < len(text) else ""
    prev = _prev_significant(text, pos)
    loc = _loc(text, pos, source)
    truncated = JsonSyntaxError(
        "the file ends before the JSON is complete (truncated, or a bracket is missing)",
        location=loc,
        hint="close every { with } and every [ with ]; check the file was saved completely",
    )
    if msg.startswith("Unterminated string"):
        return JsonSyntaxError(
            "string is never closed",
            location=loc,
            hint='add the closing double quote (")',
        )
    if at_end and not msg.startswith("Invalid"):
        return truncated
    if msg.startswith("Expecting property name"):
        if prev == ",":
            return JsonSyntaxError(
                "trailing comma before '}'",
                location=_loc(text, text.rindex(",", 0, pos), source),
                hint="remove the comma after the last member of the object",
            )
        if char == "'":
            return JsonSyntaxError(
                "key in single quotes",
                location=loc,
                hint="JSON strings use double quotes: write \"key\" instead of 'key'",
            )
        return JsonSyntaxError(
            f"expected a key in double quotes, found {_found(text, pos)}",
            location=loc,
            hint='write each member as "key": value (keys must be double-quoted strings)',
        )
    if msg.startswith("Expecting value"):
        if prev == "," and char == "]":
            return JsonSyntaxError(
                "trailing comma before ']'",
                location=_loc(text, text.rindex(",", 0, pos), source),
                hint="remove the comma after the last item of the array",
            )
        if char == "'":
            return JsonSyntaxError(
                "string in single quotes",
                location=loc,
                hint="JSON strings use double quotes: write \"text\" instead of 'text'",
            )
        return JsonSyntaxError(
            f"expected a JSON value, found {_found(text, pos)}",
            location=loc,
            hint='a value is a "string", a number, {...}, [...], true, false or null; '
            'type names must be quoted ("string", not string)',
        )
    if msg.startswith("Expecting ',' delimiter"):
        return JsonSyntaxError(
            f"expected ',' or a closing bracket, found {_found(text, pos)}",
            location=loc,
            hint="separate members and items with commas; check for a missing comma on the "
            "previous line",
        )
    if msg.startswith("Expecting ':' delimiter"):
        return JsonSyntaxError(
            f"expected ':' after the key, found {_found(text, pos)}",
            location=loc,
            hint='write each member as "key": value',
        )
    if msg.startswith("Invalid control character"):
        return JsonSyntaxError(
            "raw control character (newline, tab, ...) inside a string",
            location=loc,
            hint="escape it (\\n, \\t) or remove it; JSON strings cannot span lines",
        )
    if msg.startswith("Invalid"):
        return JsonSyntaxError(
            "invalid escape sequence in a string",
            location=loc,
            hint='valid escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX',
        )
    return JsonSyntaxError(
        f"invalid JSON: {msg}", location=loc, hint="fix the JSON syntax at this position"
    )


def _found(text: str, pos: int) -> str:
    """What stands at ``pos``, by its kind, never its text: a file that is not JSON may hold
    anything (a token, a password line), and an error may be printed into a CI log. The
    position and the kind are what the reader of the error needs."""
    if pos >= len(text):
        return "the end of the file"
    char = text[pos]
    if char in _STRUCTURAL:
        return repr(char)
    if char == '"':
        return "a string"
    if char in "-0123456789":
        return "a number"
    if char.isalnum() or char == "_":
        return "a word without quotes"
    if char.isascii() and char.isprintable():
        return f"the character {char!r}"
    return f"the character U+{ord(char):04X}"


_STRUCTURAL = frozenset("{}[]:,")
