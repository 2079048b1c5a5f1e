"""Reading what a user hands schemacli: files, standard input, properties files.

One bounded reader serves every user-supplied input (schemas, the store's files, config and
pyproject files, mapping files, Kafka properties files, converter state): ``read_input`` looks
at what the path names before it opens it (``os.stat``), refuses a directory, a FIFO, a device
or a socket *by name*, opens with ``O_NONBLOCK`` (so a FIFO swapped in after the look never
blocks the open) and reads at most ``limit + 1`` bytes, so ``/dev/zero``, an endless pipe on
stdin or a 20 GB file stops at the cap with an input error instead of exhausting memory. A
symbolic-link loop (``ELOOP``), a missing file, a path through a file, no permission: each is
an ``UnreadableInput`` naming the file and the way out, never an OSError or a traceback.

Input that comes from another party is read inside its root (``within``: the store, a pulled
repository, the folder a mapping names its schemas in): the path, every symbolic link on it
followed, must resolve inside the root, or it is refused by name (``reason`` ``"outside"``)
before it is opened. A link that stays inside the root is fine. docs/store.md says which
command reads inside which root. The root resolves each folder once (``Root.resolve``): a file
that is no link itself is its folder, resolved, and its name, exactly what ``realpath`` of the
file gives; only a link is resolved on its own.

The caps are per kind of input (``SCHEMA_LIMIT``, ``DOCUMENT_LIMIT``, ``SETTINGS_LIMIT``);
docs/store.md lists them.

The text files are all UTF-8. A file that is not is an input error at the first byte that does
not decode, with its line and column (1-based, counting characters), never a UnicodeDecodeError.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from schemacli.errors import InputError, Location
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind

UTF8_BOM = b"\xef\xbb\xbf"

MiB = 1024 * 1024
# The most schemacli reads of one input, by kind. Generous for real files (the largest schema
# in the wild is a few MiB; a default Confluent registry keeps schemas in a Kafka topic of 1 MB
# messages; a mapping may carry both schemas inline), small enough that a wrong path
# (/dev/zero, a disk image, a log) fails at once with a clear error. A schema's cap is also what
# 2 GiB of memory holds: the commands take up to ~110 bytes of memory per byte of the densest
# schema (check and diff hold two; bench/bench_wide_schema.py measures the curve), so 8 MiB
# stays under 1 GiB; at 64 MiB a wide schema ran out of memory.
SCHEMA_LIMIT = 8 * MiB  # .avsc files, the store's files, a schema on standard input
DOCUMENT_LIMIT = 16 * MiB  # mapping files, converter state and checkpoint files
SETTINGS_LIMIT = 1 * MiB  # schemacli.toml, pyproject.toml, Kafka properties files

STDIN_SOURCE = "<stdin>"
# Non-blocking, so that opening a FIFO never waits for a writer; no controlling terminal.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


@frozen_dataclass
class Root:
    """The folder input from another party must stay inside (``path``), and how messages name
    it (``name``: "the store schemas", "the pulled repository")."""

    path: Path
    name: str

    @cached_property
    def real(self) -> str:
        """``path`` resolved, once (a store that is a link to another folder is that folder)."""
        return _real(self.path) or str(self.path)

    def holds(self, real: str) -> bool:
        """Whether the resolved path ``real`` lies inside this root."""
        return _below(real, self.real)

    @cached_property
    def _folders(self) -> dict[str, str | None]:
        """Folders resolved so far, by their absolute path as the caller spelt it."""
        return {}

    def resolve(self, path: Path | str, info: os.stat_result | None = None) -> str | None:
        """``os.path.realpath(path)``, exactly, resolving each folder once: a file that is no
        link itself (``info``: its ``lstat``, taken by the caller) is its folder resolved
        (remembered) and its name; a link, a name such as ``..``, a relative folder or a file
        whose ``lstat`` is unknown is resolved on its own. None where it cannot be resolved."""
        if info is None or stat.S_ISLNK(info.st_mode):
            return _real(path)
        folder, name = os.path.split(path)
        if name in ("", ".", "..") or not os.path.isabs(folder):
            return _real(path)
        try:
            real = self._folders[folder]
        except KeyError:
            real = self._folders[folder] = _real(folder)
        return None if real is None else os.path.join(real, name)


class UnreadableInput(InputError):
    """An input that cannot be read: missing, not a regular file, a link loop, too large, no
    permission. ``reason`` says which (``"missing"``, ``"directory"``, ``"fifo"``,
    ``"device"``, ``"socket"``, ``"loop"``, ``"too-large"``, ``"permission"``,
    ``"not-a-directory"``, ``"outside"``, ``"other"``)."""

    kind = Kind.UNREADABLE_FILE

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        reason: str = "other",
    ) -> None:
        super().__init__(message, location=location, hint=hint)
        self.reason = reason


def size_text(limit: int) -> str:
    """``67108864`` -> ``64 MiB`` (a cap as a person reads it)."""
    if limit % MiB == 0:
        return f"{limit // MiB} MiB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"


def refused_kind(mode: int) -> tuple[str, str] | None:
    """(reason, words) for a file type schemacli never reads, None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "directory", "is a directory"
    if stat.S_ISFIFO(mode):
        return "fifo", "is a FIFO (named pipe), not a regular file: reading it could block forever"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device", "is a device, not a regular file: reading it might never end"
    if stat.S_ISSOCK(mode):
        return "socket", "is a socket, not a regular file"
    return "other", "is not a regular file"


def inside(path: Path | str, root: Path | str) -> bool:
    """Whether ``path``, every symbolic link on it followed, resolves inside ``root`` (itself
    resolved: a store that is a link to another folder is that folder). Never raises."""
    real, base = _real(path), _real(root)
    return real is not None and base is not None and _below(real, base)


def _real(path: Path | str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # a NUL in the name, a name too long to resolve
        return None


def _below(real: str, base: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def work_tree(folder: Path) -> Path | None:
    """The git work tree ``folder`` lies in (the nearest folder above it, itself resolved, that
    holds ``.git``), or None: the root of a mapping's schema paths (docs/store.md)."""
    start = resolved(folder)
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def is_file(path: Path | str) -> bool:
    """``Path.is_file`` that answers False where the file system answers with an error (a name
    longer than it allows, a link loop, no permission), instead of raising."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_input(
    path: Path | str,
    *,
    limit: int,
    what: str = "file",
    source: str | None = None,
    within: Root | None = None,
) -> bytes:
    """The bytes of the user's file ``path``, at most ``limit`` of them.

    ``what`` names the kind of file in messages ("schema file", "Kafka properties file").
    ``within``: the root of input that comes from another party; a path that resolves
    outside it (through a symbolic link, or ``..``) is refused before it is opened.
    Raises ``UnreadableInput`` for anything that is not a readable regular file of at most
    ``limit`` bytes; never OSError.
    """
    source = source or str(path)
    where = Location(source=source)
    flags = _OPEN_FLAGS
    known: os.stat_result | None = None  # the file's stat, where its lstat gives it
    if within is not None:
        try:  # a file that is no link: its lstat is its stat, and its folder resolves it
            known = os.lstat(path)
        except (OSError, ValueError):
            known = None  # resolved on its own; opening it below says what is wrong
        if known is not None and stat.S_ISLNK(known.st_mode):
            known = None
        real = within.resolve(path, known)
        if real is None or not within.holds(real):
            raise _outside(where, what, within)
        path, flags = real, flags | getattr(os, "O_NOFOLLOW", 0)
    try:
        info = os.stat(path) if known is None else known
        refused = refused_kind(info.st_mode)
        if refused is not None:
            raise _unreadable(refused[0], refused[1], where, what)
        if info.st_size > limit:
            raise _too_large(where, what, limit)
        fd = os.open(path, flags)
    except OSError as err:
        raise _os_error(err, where, what) from err
    try:
        info = os.fstat(fd)  # what was opened, in case the path changed since the stat
        refused = refused_kind(info.st_mode)
        if refused is not None:
            raise _unreadable(refused[0], refused[1], where, what)
        if within is not None and not _opened_inside(fd, within):
            raise _outside(where, what, within)  # a folder on the way swapped for a link
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as handle:
            data = _read_capped(handle, limit, first=info.st_size + 1)
    except OSError as err:
        raise _os_error(err, where, what) from err
    finally:
        os.close(fd)
    if data is None:
        raise _too_large(where, what, limit)
    return data


def read_stdin(
    *,
    limit: int,
    what: str = "input",
    source: str = STDIN_SOURCE,
    stream: BinaryIO | None = None,
) -> bytes:
    """Standard input's bytes, at most ``limit``: an endless stream (``</dev/zero``) stops at
    the cap with an input error instead of exhausting memory."""
    handle = stream if stream is not None else sys.stdin.buffer
    try:
        data = _read_capped(handle, limit)
    except OSError as err:
        raise _os_error(err, Location(source=source), what) from err
    if data is None:
        endless = _too_large(Location(source=source), what, limit)
        endless.hint = f"send one {what} on standard input, not an endless stream"
        raise endless
    return data


def _read_capped(handle: BinaryIO, limit: int, first: int = 64 * 1024) -> bytes | None:
    """Up to ``limit`` bytes of ``handle`` to its end; None when there are more."""
    chunks: list[bytes] = []
    total = 0
    size = max(min(first, limit + 1), 1)
    while total <= limit:
        chunk = handle.read(min(size, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        size = 1024 * 1024
    if total > limit:
        return None
    return b"".join(chunks)


def _opened_inside(fd: int, root: Root) -> bool:
    """Whether the file open as ``fd`` is inside ``root``, where the system can say which file
    a descriptor names (Linux's /proc: the path it gives is resolved already); elsewhere the
    look before opening stands alone."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True
    return root.holds(opened)


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def _kinded(message: str, where: Location, hint: str, reason: str) -> UnreadableInput:
    return UnreadableInput(message, location=where, hint=hint, reason=reason)


def _unreadable(reason: str, words: str, where: Location, what: str) -> UnreadableInput:
    if reason == "directory":
        words = f"is a directory, not {_a(what)}"
        hint = f"name the {what} itself"
    else:
        hint = f"name a regular {what}: schemacli reads no pipes, devices or sockets"
    return _kinded(words, where, hint, reason)


def _too_large(where: Location, what: str, limit: int) -> UnreadableInput:
    return _kinded(
        f"is larger than {size_text(limit)}, the most schemacli reads of {_a(what)}",
        where,
        "check that the path names the right file (docs/store.md lists the limits)",
        "too-large",
    )


def _outside(where: Location, what: str, root: Root) -> UnreadableInput:
    return _kinded(
        f"leads outside {root.name} (through a symbolic link or '..'); schemacli reads no "
        f"{what} from outside it",
        where,
        f"put the file itself inside {root.name}, or make the link name a file there",
        "outside",
    )


def _os_error(err: OSError, where: Location, what: str) -> UnreadableInput:
    code = err.errno
    if code == errno.ENOENT:
        return _kinded("no such file", where, "check the path and its spelling", "missing")
    if code == errno.ELOOP:
        return _kinded(
            "symbolic links in a loop: the path never reaches a file",
            where,
            "see where the links point (ls -l) and make one of them name the file",
            "loop",
        )
    if code in (errno.EACCES, errno.EPERM):
        return _kinded(
            "permission denied while reading the file",
            where,
            "make the file readable (chmod +r) or run as a user who can read it",
            "permission",
        )
    if code == errno.EISDIR:
        return _unreadable("directory", "", where, what)
    if code == errno.ENOTDIR:
        return _kinded(
            "a part of the path is a file, not a directory",
            where,
            "check the path: a folder in it is a file",
            "not-a-directory",
        )
    if code == errno.ENAMETOOLONG:
        return _kinded("the path is too long", where, "check the path", "other")
    return _kinded(
        f"cannot read the file: {err.strerror or err}",
        where,
        f"check that the path names {_a(what)} you can read",
        "other",
    )


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


def read_utf8(
    path: Path,
    *,
    hint: str,
    error: type[InputError] = InputError,
    limit: int = DOCUMENT_LIMIT,
    what: str = "file",
    within: Root | None = None,
) -> str:
    """``path``'s text, read by :func:`read_input` (at most ``limit`` bytes; ``what`` names
    the file's kind in messages; ``within``: the root it must resolve inside) and decoded by
    :func:`decode_utf8` (``hint`` for a bad byte).
    Raises UnreadableInput (``reason`` says why) or, for a byte that is not UTF-8, ``error``."""
    data = read_input(path, limit=limit, what=what, within=within)
    return decode_utf8(data, str(path), hint=hint, error=error)


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
