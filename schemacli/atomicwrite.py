"""The one way schemacli writes a user's files: plan, check everything, then write atomically.

A command describes every file it will create or edit as a :class:`Write` (path, bytes, whether
an existing file may be replaced). :func:`refusals` checks them all without touching anything —
the parent is a folder or can be created, the target is not a folder, the folders and files are
writable, nothing that must not be overwritten exists — so the command can refuse before writing
a byte. :func:`write_all` checks again and writes each file through a temporary file in the same
folder (flushed and fsynced) and a rename: a reader sees the old file or the new one, never half
of either (pip's ``adjacent_tmp_file`` + ``replace``). If a later write still fails (a full disk,
a file appearing meanwhile), the earlier ones are undone — created files and folders removed,
replaced files put back from memory — so the folder is as it was.

A replaced file keeps what a rename would otherwise lose: its mode, its owner and group (root
fixing another user's file does not take it over; a user who cannot give the new file the old
owner is refused), and its hard links (a file with more than one is refused: a rename would
split them). A file edited in place (:func:`edit`: ``lint --fix``, ``check --fix``) must still
hold what the command read, checked as the plan is made and again just before the rename: an
edit made meanwhile is never overwritten, a FIFO swapped in is refused by name.

Pure plumbing: no typer, no rich. Errors are :class:`WriteError` (an InputError: exit 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from schemacli.errors import InputError, Location
from schemacli.textfile import UnreadableInput, inside, read_input

# A refusal says "nothing was written"; a failure after the first write says it was undone.
NOTHING_WRITTEN = "nothing was written"


@dataclass(frozen=True)
class Write:
    """One file to write. ``replace``: an existing regular file may be replaced (its mode is
    kept); otherwise the path must not exist at all, not even as a dangling link.
    ``follow_link``: a symbolic link at ``path`` is followed, so the link stays and the file it
    names changes (a user's own config file); off, the link itself is replaced by the file, never
    written through (a store pulled from a registry). ``within``: the folder the file must land
    in; a folder on the way that is a symbolic link leading out of it (``readers/`` linked to
    another place) refuses the write, so nothing is written through it."""

    path: Path
    content: bytes
    replace: bool = False
    follow_link: bool = True
    within: Path | None = None
    # The bytes the file held when the command read it: a file changed since is refused.
    expected: bytes | None = None


@dataclass(frozen=True)
class Refusal:
    """Why one planned write cannot happen. ``exists``: only because the target is there (a
    command may offer --force for that); otherwise the file system refuses (a file where a
    folder must be, a read-only folder, a folder where the file must be)."""

    path: Path
    reason: str
    exists: bool = False

    def __str__(self) -> str:
        return f"{self.path} {self.reason}"


class WriteError(InputError):
    """A planned write was refused, or failed and was undone (exit 2)."""


_WHY = {
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.EEXIST: "something of that name exists",
    errno.ELOOP: "a symbolic link loops",
}


def why(err: OSError) -> str:
    """A short reason for an OSError, without the path (the caller names it)."""
    return _WHY.get(err.errno or 0) or err.strerror or str(err)


def _leaves(root: Path) -> str:
    return f"a folder on its way is a symbolic link that leads outside {root}"


def _writable(path: Path) -> bool:
    """Whether we may write into (or replace) ``path``: the OS lets us, and its mode has a
    write bit. The mode matters for root, whom the OS lets write anywhere: a folder or file
    the user made read-only is left alone even then."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    needs = os.W_OK | (os.X_OK if stat.S_ISDIR(mode) else 0)
    return os.access(path, needs) and bool(mode & 0o222)


def _target(write: Write) -> Path:
    """Where the bytes go: a link is followed for a replaceable file, never for a new one."""
    if write.replace and write.follow_link and write.path.is_symlink():
        return write.path.resolve(strict=True)  # OSError/RuntimeError on a loop: caller says so
    return write.path


def refusals(writes: Sequence[Write]) -> list[Refusal]:
    """Every reason the planned writes cannot all happen (empty: they can). Touches nothing."""
    found: list[Refusal] = []
    for write in writes:
        refusal = _refusal(write)
        if refusal is not None:
            found.append(refusal)
    return found


def _refusal(write: Write) -> Refusal | None:
    try:
        return _look(write)
    except OSError as err:  # a name longer than the file system allows (ENAMETOOLONG), ...
        return Refusal(write.path, f"cannot be written: {why(err)}")


def _look(write: Write) -> Refusal | None:
    try:
        target = _target(write)
    except (OSError, RuntimeError):
        return Refusal(write.path, "is a symbolic link that loops or names nothing")
    # The nearest existing ancestor must be a writable folder, and nothing on the way a file.
    missing: list[Path] = []
    folder = target.parent
    while not (folder.exists() or folder.is_symlink()):
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    if not folder.is_dir():
        return Refusal(write.path, f"cannot be written: {folder} is not a folder")
    if write.within is not None and not inside(target.parent, write.within):
        return Refusal(write.path, f"cannot be written: {_leaves(write.within)}")
    if not _writable(folder):
        what = f"cannot create {missing[-1]}" if missing else "cannot be written"
        return Refusal(write.path, f"{what}: the folder {folder} is read-only")
    if missing:
        return None  # a new folder holds nothing yet
    if target.is_dir():
        return Refusal(write.path, "is a folder")
    if target.exists() or target.is_symlink():
        if not write.replace:
            return Refusal(write.path, "exists", exists=True)
        if target.is_symlink():  # a link replaced, not followed: whatever it names is left alone
            return None
        try:
            mode = target.stat().st_mode
        except OSError as err:
            return Refusal(write.path, f"cannot be replaced: {why(err)}")
        if not stat.S_ISREG(mode):
            return Refusal(write.path, "is not a regular file (a device, a FIFO or a socket)")
        if not _writable(target):
            return Refusal(write.path, "is read-only")
        kept = _keeps(target.stat())
        if kept is not None:
            return Refusal(write.path, kept)
        if write.expected is not None and _changed(target, write.expected):
            return Refusal(write.path, CHANGED)
    return None


CHANGED = "changed since schemacli read it (edited meanwhile?): run the command again"


def _keeps(info: os.stat_result) -> str | None:
    """Why replacing the file of ``info`` by a new one would lose something a rename cannot
    carry over, or None. Hard links: a rename gives the name a new file, the other names keep
    the old one. The owner: only root can give a file to another user."""
    if info.st_nlink > 1:
        return (
            f"has {info.st_nlink} hard links: replacing it would split them (the other names "
            "would keep the old content); give it a single name first (cp FILE TMP && mv TMP FILE)"
        )
    if hasattr(os, "geteuid") and os.geteuid() != 0:  # root can chown; Windows has no owners
        if info.st_uid != os.geteuid():
            return (
                f"is owned by another user (uid {info.st_uid}): the new file would be yours; "
                "run as its owner"
            )
        if info.st_gid not in (os.getegid(), *os.getgroups()):
            return (
                f"belongs to group {info.st_gid}, which you are not in: the new file would "
                "not; run as its owner"
            )
    return None


def _changed(target: Path, expected: bytes) -> bool:
    """Whether ``target`` no longer holds ``expected`` (read by the bounded reader: a FIFO or
    a device swapped in is "changed", and never blocks)."""
    try:
        return read_input(target, limit=len(expected), what="file") != expected
    except UnreadableInput:
        return True


class _Changed(OSError):
    """The file changed between the plan and the rename."""


# The byte-order mark of each encoding a schema file may be read in (Jackson's detection).
_BOMS = {
    "utf-8": b"\xef\xbb\xbf",
    "utf-16le": b"\xff\xfe",
    "utf-16be": b"\xfe\xff",
    "utf-32le": b"\xff\xfe\x00\x00",
    "utf-32be": b"\x00\x00\xfe\xff",
}


def edit(path: Path, before: str, after: str, *, encoding: str = "UTF-8") -> Write:
    """The Write that replaces the user's file ``path``, which held the text ``before`` when it
    was read (in ``encoding``: "UTF-8", "UTF-16LE", ... as the reader found it), by ``after``,
    in the same encoding and with the byte-order mark it had: ``lint --fix``, ``check --fix``.

    The file is looked at again now, by the bounded reader (a FIFO or a device swapped in is
    refused by name, never opened blocking): WriteError (nothing written) when it no longer
    holds ``before``. The Write expects the bytes seen now, so a change between now and the
    rename is refused too."""
    codec = encoding.lower().replace("_", "-")
    codec = "utf-8" if codec == "utf8" else codec
    body, bom = before.encode(codec), _BOMS.get(codec, b"")
    where = Location(source=str(path))
    try:
        now: bytes | None = read_input(path, limit=len(bom) + len(body), what="file")
    except UnreadableInput as err:
        if err.reason != "too-large":
            raise WriteError(
                f"{path} {err.message}; {NOTHING_WRITTEN}", location=where, hint=err.hint
            ) from err
        now = None  # larger than what was read: changed
    if now is None or now not in (body, bom + body):
        raise WriteError(
            f"{path} {CHANGED}; {NOTHING_WRITTEN}",
            location=where,
            hint="someone (an editor, a formatter) changed the file while schemacli worked on it",
        )
    had = bom if bom and now == bom + body else b""
    return Write(path, had + after.encode(codec), replace=True, expected=now)


def refuse(writes: Sequence[Write], *, hint: str) -> None:
    """Raise WriteError naming every refusal (nothing is written); return when there is none."""
    found = refusals(writes)
    if found:
        raise WriteError(
            "; ".join(str(r) for r in found) + f" ({NOTHING_WRITTEN})",
            location=Location(source=str(found[0].path)),
            hint=hint,
        )


def write_all(writes: Sequence[Write], *, hint: str) -> None:
    """Check the writes (WriteError, nothing written, when any is refused), then write them all
    or, if one fails, none: what was written before the failure is undone."""
    refuse(writes, hint=hint)
    txn = _Transaction()
    try:
        staged = [(write, txn.stage(write)) for write in writes]
        for write, temp in staged:
            txn.commit(write, temp)
        txn.sync()
    except OSError as err:
        failed_path = txn.current
        left = txn.rollback()
        message = f"cannot write: {why(err)}; {NOTHING_WRITTEN}"
        if left:
            shown = ", ".join(str(p) for p in left[:3]) + (" ..." if len(left) > 3 else "")
            message = (
                f"cannot write: {why(err)}; undoing the earlier writes failed for {shown}, "
                "so they may be half-written (restore them from git, or run the command again)"
            )
        raise WriteError(message, location=Location(source=str(failed_path)), hint=hint) from None
    except BaseException:  # Ctrl-C between two renames: the folder goes back as it was
        txn.rollback()
        raise


class _Transaction:
    """The folders, temporary files and renames of one write_all, to undo on failure."""

    def __init__(self) -> None:
        self.folders: list[Path] = []  # created here, parents first
        self.temps: list[Path] = []
        # target, what was there (bytes of a file, the text of a link, None), its mode
        self.done: list[tuple[Path, bytes | str | None, int | None]] = []
        self.current: Path | None = None
        umask = os.umask(0)
        os.umask(umask)
        self.new_mode = 0o666 & ~umask  # what a plain open() gives a new file

    def stage(self, write: Write) -> Path:
        self.current = write.path
        target = _target(write)
        if write.within is not None and not inside(target.parent, write.within):
            # a folder swapped for a link since the look: refuse, nothing of this write made
            raise OSError(errno.EXDEV, _leaves(write.within))
        missing = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                if not folder.is_dir():
                    raise
                continue  # made by someone else meanwhile: not ours to remove
            self.folders.append(folder)
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        temp = Path(name)
        self.temps.append(temp)
        with os.fdopen(fd, "wb") as handle:
            handle.write(write.content)
            handle.flush()
            os.fsync(handle.fileno())
        mode = self.new_mode
        if write.replace and target.is_file() and not target.is_symlink():
            info = target.stat()
            mode = stat.S_IMODE(info.st_mode)
            made = os.stat(temp)
            if (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
                os.chown(temp, info.st_uid, info.st_gid)  # the owner's file stays the owner's
        os.chmod(temp, mode)  # after chown, which clears set-id bits
        return temp

    def commit(self, write: Write, temp: Path) -> None:
        self.current = write.path
        target = _target(write)
        if write.replace:
            before: bytes | str | None = None
            mode = None
            if target.is_symlink():
                before = os.readlink(target)
            elif target.exists():
                if write.expected is not None and _changed(target, write.expected):
                    raise _Changed(errno.EBUSY, CHANGED)  # the last look, just before the rename
                before, mode = _held(target), stat.S_IMODE(target.stat().st_mode)
            os.replace(temp, target)
        else:
            before, mode = None, None
            _link_new(temp, target)
        self.temps.remove(temp)
        self.done.append((target, before, mode))

    def sync(self) -> None:
        """fsync each folder that got a new name, so the renames survive a crash (best effort:
        some file systems refuse to fsync a folder)."""
        for folder in {target.parent for target, _, _ in self.done}:
            try:
                fd = os.open(folder, os.O_RDONLY)
            except OSError:
                continue
            try:
                with contextlib.suppress(OSError):  # some file systems refuse to fsync a folder
                    os.fsync(fd)
            finally:
                os.close(fd)

    def rollback(self) -> list[Path]:
        """Put back what was there and remove what this write created; the paths that could not
        be (empty: the folder is as it was)."""
        failed: list[Path] = []
        for target, before, mode in reversed(self.done):
            try:
                if before is None:
                    target.unlink(missing_ok=True)
                elif isinstance(before, str):
                    target.unlink(missing_ok=True)
                    os.symlink(before, target)
                else:
                    _restore(target, before, mode)
            except OSError:
                failed.append(target)
        for temp in self.temps:
            try:
                temp.unlink(missing_ok=True)
            except OSError:
                failed.append(temp)
        for folder in reversed(self.folders):
            try:
                folder.rmdir()
            except OSError:
                failed.append(folder)
        self.done, self.temps, self.folders = [], [], []
        return failed


def _held(target: Path) -> bytes:
    """What ``target`` holds, to put back if a later write fails (bounded, never blocking: it
    was checked a regular file, but it may have been swapped since)."""
    try:
        return read_input(target, limit=1 << 62, what="file")
    except UnreadableInput as err:
        raise OSError(errno.EIO, f"cannot be read back before replacing it: {err.message}") from err


def _link_new(temp: Path, target: Path) -> None:
    """Give ``temp`` the name ``target`` only if nothing has it (a hard link fails with EEXIST
    where a rename would clobber); the temporary name goes. File systems without hard links
    get a last look and a rename."""
    try:
        os.link(temp, target)
    except FileExistsError:
        raise
    except OSError as err:
        if err.errno not in (
            errno.EPERM,
            errno.ENOTSUP,
            errno.EOPNOTSUPP,
            errno.EXDEV,
            errno.EMLINK,
        ):
            raise
        if target.exists() or target.is_symlink():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)) from None
        os.replace(temp, target)
        return
    temp.unlink()


def _restore(target: Path, before: bytes, mode: int | None) -> None:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(before)
        if mode is not None:
            os.chmod(name, mode)
        os.replace(name, target)
    except OSError:
        Path(name).unlink(missing_ok=True)
        raise
