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

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from schemacli.contracts.jsontext.document import UTF8, Document
from schemacli.contracts.jsontext.nesting import TOO_DEEP_HINT, TooDeep, read
from schemacli.contracts.jsontext.numberlength import NUMBER_TOO_LONG_HINT, NumberTooLong
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.syntax import (
    JsonSyntaxError,
    NonNumber,
    blank_comments,
    first_non_number,
    found_at,
    location_at,
    syntax_error,
)
from schemacli.errors import InputError, Location
from schemacli.textfile import (
    SCHEMA_LIMIT,
    Root,
    UnreadableInput,
    decode_utf8,
    read_input,
    read_stdin,
)

# The file cannot be read (missing, a directory, a FIFO, no permission, too large) or is not
# text: one class with the bounded reader's errors, so a finding's kind is UNREADABLE_FILE.
UnreadableFile = UnreadableInput


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
    clean = blank_comments(text, source) if has_comments else text
    has_comments = has_comments and clean != text
    duplicates = False

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal duplicates
        obj = dict(pairs)
        if len(obj) != len(pairs):
            duplicates = True
        return obj

    def reject_constant(name: str) -> Any:
        raise NonNumber(name)

    decoder = json.JSONDecoder(object_pairs_hook=pairs_hook, parse_constant=reject_constant)
    start = len(clean) - len(clean.lstrip())
    try:
        value, end = read(decoder.raw_decode, clean, start)
    except TooDeep as err:
        raise JsonSyntaxError(
            str(err), location=location_at(clean, err.position, source), hint=TOO_DEEP_HINT
        ) from None
    except NumberTooLong as err:
        raise JsonSyntaxError(
            str(err), location=location_at(clean, err.position, source), hint=NUMBER_TOO_LONG_HINT
        ) from None
    except json.JSONDecodeError as err:
        raise syntax_error(clean, err.msg, err.pos, source) from None
    except NonNumber as err:
        match = first_non_number(clean)
        pos = match.start() if match else 0
        raise JsonSyntaxError(
            f"{err.args[0]} is not a JSON value",
            location=location_at(clean, pos, source),
            hint="JSON has no NaN or Infinity (Java refuses them); use a number or a string",
        ) from None
    rest = text[end:]
    if rest.strip():
        pos = end + len(rest) - len(rest.lstrip())
        raise JsonSyntaxError(
            f"unexpected content after the end of the {what}: {found_at(text, pos)}",
            location=location_at(text, pos, source),
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
