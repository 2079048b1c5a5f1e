"""The verdict cache on disk: JSON values under content keys, one file each, in a directory of
the engine that wrote them (``verdicts-<engine>``), and one-file tables (a store's gate table);
checksummed, bounded, and any damage read as a miss with one warning."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from schemacli.errors import SchemacliWarning
from schemacli.textfile import DOCUMENT_LIMIT, UnreadableInput, read_input

# The engine's version: bump it whenever a verdict or a finding (kind, message, pointer, hint,
# old/new) the engine, the parser or the gate gives can change. A cache written by another
# version is never read. As a guard against a forgotten bump, the key also holds a digest of
# the contract core's source files (engine_id), so an edited engine never reads old entries.
ENGINE_VERSION = "2"


def engine_id() -> str:
    """:data:`ENGINE_VERSION` and a digest of ``schemacli/contracts/**/*.py`` and the kinds
    catalogue (what decides every verdict and finding): the version a cache entry is written by
    and read for."""
    return f"{ENGINE_VERSION}-{_source_digest()}"


@functools.cache
def _source_digest() -> str:
    hasher = hashlib.sha256()
    try:
        core = Path(__file__).parent.parent
        for path in [*sorted(core.rglob("*.py")), core.parent / "kinds.py"]:
            name = path.relative_to(core.parent).as_posix()
            hasher.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:  # sources not readable (a frozen build): the version alone
        return "unknown"
    return hasher.hexdigest()[:16]


_TABLE_LIMIT = 1 << 30  # a table (one per store) is at most this large


UNUSED_ENGINE_DAYS = 30  # another engine's directory unused this long is removed


class DiskCache:
    """JSON values under content keys, one file each, in ``directory/verdicts-<engine>/``.

    Each schemacli version (engine) has a directory of its own, so an upgrade starts afresh.
    The first run that uses a directory marks it used (its mtime) and removes the directories
    of other engines that no run has used for :data:`UNUSED_ENGINE_DAYS`: old versions' caches
    do not pile up, and two versions in use side by side never remove each other's."""

    def __init__(self, directory: Path) -> None:
        self.engine = engine_id()
        self.root = Path(directory) / f"verdicts-{self.engine}"
        self._made: set[Path] = set()
        self._failed_write = False
        self._marked = False

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key[2:]}.json"

    def mark_used(self, *, now: float | None = None) -> None:
        """Mark this engine's directory used, once, and remove other engines' directories no
        run has used for :data:`UNUSED_ENGINE_DAYS` (see the class). Best effort: a directory
        that cannot be touched or removed is left as it is."""
        if self._marked:
            return
        self._marked = True
        now = time.time() if now is None else now
        with contextlib.suppress(OSError):
            os.utime(self.root, (now, now))
        cutoff = now - UNUSED_ENGINE_DAYS * 86400
        try:
            siblings = list(self.root.parent.glob("verdicts-*"))
        except OSError:
            return
        for other in siblings:
            with contextlib.suppress(OSError):
                if other != self.root and other.is_dir() and other.stat().st_mtime < cutoff:
                    shutil.rmtree(other, ignore_errors=True)

    def load(self, key: str) -> Any:
        """The value stored under ``key``, or None (absent, or unusable: then a warning)."""
        path = self.path(key)
        data = self._read(path, DOCUMENT_LIMIT)
        if data is None:
            return None
        try:
            entry = json.loads(data.decode("utf-8"))
            value = entry["value"]
            ok = (
                entry["engine"] == self.engine
                and entry["key"] == key
                and entry["sha256"] == _checksum(value)
            )
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError):
            self._warn(path, "is not a cache entry (truncated or corrupt)")
            return None
        if not ok:
            self._warn(path, "does not match its key, engine version or checksum")
            return None
        self.mark_used()
        return value

    def load_table(self, name: str) -> tuple[Any, int] | None:
        """The value :meth:`store_table` wrote under ``name`` and the time it was written (the
        file's mtime in ns), or None (absent; unusable: then a warning). One file for a
        large value: a header line (engine, name, the payload's SHA-256) and the payload,
        checked by its bytes, never re-encoded."""
        path = self.root / "tables" / f"{name}.table"
        try:  # before reading: a table replaced meanwhile makes the time older, never newer
            written = os.stat(path).st_mtime_ns
        except OSError:
            return None
        data = self._read(path, _TABLE_LIMIT)
        if data is None:
            return None
        head, _, payload = data.partition(b"\n")
        try:
            header = json.loads(head.decode("utf-8"))
            ok = (
                header["engine"] == self.engine
                and header["name"] == name
                and header["sha256"] == hashlib.sha256(payload).hexdigest()
            )
            value = json.loads(payload.decode("utf-8")) if ok else None
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError):
            self._warn(path, "is not a cache entry (truncated or corrupt)")
            return None
        if not ok:
            self._warn(path, "does not match its name, engine version or checksum")
            return None
        self.mark_used()
        return value, written

    def store_table(self, name: str, value: Any) -> None:
        """Write ``value`` under ``name`` atomically (see :meth:`load_table`)."""
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
        header = {
            "engine": self.engine,
            "name": name,
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        self._write(
            self.root / "tables" / f"{name}.table", json.dumps(header).encode() + b"\n" + payload
        )

    def _read(self, path: Path, limit: int) -> bytes | None:
        """The bytes of a cache file, or None (absent; unreadable: then a warning)."""
        try:  # the bounded reader: a FIFO or a device planted in the cache never blocks a run
            return read_input(path, limit=limit, what="cache entry")
        except UnreadableInput as err:
            if err.reason not in ("missing", "not-a-directory"):  # absent: no entry, no cache
                self._warn(path, f"cannot be read ({err.message})", stacklevel=4)
            return None

    def corrupt(self, key: str, why: str) -> None:
        self._warn(self.path(key), why)

    def store(self, key: str, value: Any) -> None:
        """Write ``value`` under ``key`` atomically; a cache that cannot be written is skipped
        with one warning."""
        if self._failed_write:
            return
        entry = {"engine": self.engine, "key": key, "sha256": _checksum(value), "value": value}
        data = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        self._write(self.path(key), data.encode("utf-8", "surrogatepass"))

    def _write(self, path: Path, data: bytes) -> None:
        """``data`` into ``path`` through a temporary file and a rename; a cache that cannot
        be written is skipped with one warning."""
        if self._failed_write:
            return
        try:
            if path.parent not in self._made:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._made.add(path.parent)
            handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                os.replace(temp, path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
            self.mark_used()
        except OSError as err:
            self._failed_write = True
            warnings.warn(
                f"the verdict cache {self.root} cannot be written ({err.strerror or err}); "
                "going on without it (--no-cache skips it, cache-dir moves it)",
                SchemacliWarning,
                stacklevel=3,
            )

    def _warn(self, path: Path, why: str, *, stacklevel: int = 3) -> None:
        warnings.warn(
            f"ignoring the verdict cache entry {path}: it {why}; the verdict is computed again",
            SchemacliWarning,
            stacklevel=stacklevel,
        )


def _checksum(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
