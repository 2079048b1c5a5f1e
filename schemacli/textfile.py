"""Decoding the text files schemacli reads (schemas, config, mappings, converter state).

They are all UTF-8. A file that is not is an input error at the first byte that does not
decode, with its line and column (1-based, counting characters), never a UnicodeDecodeError.
"""

from __future__ import annotations

from pathlib import Path

from schemacli.errors import InputError, Location

UTF8_BOM = b"\xef\xbb\xbf"


def decode_utf8(
    data: bytes, source: str, *, hint: str, error: type[InputError] = InputError
) -> str:
    """``data`` as text, a UTF-8 byte-order mark skipped; ``error`` at the first bad byte."""
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start].decode("utf-8")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        raise error(
            f"not valid UTF-8: byte 0x{data[err.start]:02x} cannot be decoded",
            location=Location(source, line=line, column=column),
            hint=hint,
        ) from err


def read_utf8(path: Path, *, hint: str, error: type[InputError] = InputError) -> str:
    """``path``'s text (see :func:`decode_utf8`). OSError is left to the caller, which knows
    what the file is for and so what to say."""
    return decode_utf8(path.read_bytes(), str(path), hint=hint, error=error)


def line_column(text: str, pos: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of position ``pos`` in ``text``."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def resolved(path: Path) -> Path:
    """``path.resolve()``; its absolute form when a symlink loop stops resolution (Python 3.11
    raises RuntimeError there), so that reading the file reports the loop as an input error."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return path.absolute()
