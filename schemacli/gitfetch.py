"""A git repository named by a URL, cloned shallowly into a temporary folder: bounded in time
and in size, never prompting, only over the transports a declaration may come from.

``readers pull`` reads the declarations a consumer keeps in its own repository with it. git's
``ext::`` transport runs a command and is refused (``GIT_ALLOW_PROTOCOL``); credentials in a
URL are never shown (every message goes through ``redact``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO

from schemacli import redact
from schemacli.errors import InputError, Location, NetworkError, UsageError

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
_URL = re.compile(r"^(?:https?|ssh|git|file)://", re.IGNORECASE)
_SCP = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+:(?!//)")
_ANY_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::?")
MAX_TIMEOUT = 3600.0
# A repository of reader declarations is small; a clone growing past this is stopped (a wrong
# URL, a monorepo, or a repository made to fill the disk).
MAX_CLONE_BYTES = 256 * 1024 * 1024
_WATCH_EVERY = 0.2  # seconds between looks at the clone's size


class GitFetchError(NetworkError):
    """The repository could not be cloned (exit 3): unreachable, no such ref, timed out."""


def is_git_url(source: str) -> bool:
    """Whether ``source`` names a git repository by URL (``https://``, ``ssh://``, ``git://``,
    ``file://``, or scp-like ``user@host:path``) rather than a local folder."""
    return bool(_URL.match(source) or _SCP.match(source))


def check_url(source: str) -> str:
    """``source`` when git may clone it; UsageError for another scheme (``ext::``, ``fd::``)."""
    if is_git_url(source):
        return source
    if _ANY_SCHEME.match(source) and not Path(source).exists():
        raise UsageError(
            f"{redact.redact(source)!r}: only https://, ssh://, git://, file:// and "
            "user@host:path repositories are read",
            hint="give a git URL of one of those kinds, or a local folder",
        )
    return source


@contextlib.contextmanager
def cloned(
    url: str,
    *,
    ref: str | None = None,
    timeout: float = 120.0,
    max_bytes: int = MAX_CLONE_BYTES,
) -> Iterator[Path]:
    """Clone ``url`` (its ``ref``, else its default branch) at depth 1 into a temporary folder,
    yield the working tree, and remove it afterwards.

    Raises GitFetchError (exit 3) when git fails, runs past ``timeout`` seconds or writes more
    than ``max_bytes`` (the clone is then killed and removed), InputError when git is not
    installed, UsageError for a ref that is an option.
    """
    if ref is not None and (ref.startswith("-") or not ref.strip()):
        raise UsageError(f"--ref {ref!r} is not a branch or tag name")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise UsageError(f"--timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    git = shutil.which("git")
    if git is None:
        raise InputError(
            "git is not installed, so a repository URL cannot be read",
            hint="install git, or clone the repository yourself and give its folder",
        )
    shown = redact.redact(url)
    with (
        _cleaned_up_on_termination(),
        tempfile.TemporaryDirectory(prefix="schemacli-readers-") as temp,
    ):
        target = Path(temp) / "repo"
        command = [
            git, "-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null",
            "clone", "--quiet", "--depth", "1", "--no-tags", "--single-branch",
            *(["--branch", ref] if ref is not None else []),
            "--", url, str(target),
        ]  # fmt: skip
        env = {
            **os.environ,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "true",
            "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_LFS_SKIP_SMUDGE": "1",
        }
        with tempfile.TemporaryFile() as errors:
            returncode = _run_bounded(
                command, env, errors, target, shown=shown, timeout=timeout, max_bytes=max_bytes
            )
            errors.seek(0)
            stderr = errors.read(64 * 1024)
        if returncode != 0:
            said = stderr.decode("utf-8", "replace").strip().splitlines()
            fatal = [line for line in said if line.startswith(("fatal:", "error:"))]
            reason = (fatal or said or [f"git exited with {returncode}"])[0]
            raise GitFetchError(
                f"cannot clone {shown}" + (f" at {ref}" if ref else "") + f": {reason}",
                location=Location(source=shown),
                hint="check the URL, the ref and your access to the repository",
            )
        yield target


# Signals that end the process by default without running a single ``finally``: while a clone
# exists, they unwind the stack instead, so git is killed and the clone removed.
_TERMINATING = tuple(
    sig for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if sig
)


@contextlib.contextmanager
def _cleaned_up_on_termination() -> Iterator[None]:
    """SIGTERM (and SIGHUP) inside the block exit the process as they would (status 128 + the
    signal's number), but through ``SystemExit``, so every ``finally`` on the way runs: the
    temporary clone never stays behind in $TMPDIR. The handlers before are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; a library caller's thread keeps its own
        return

    def unwind(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    before = {sig: signal.signal(sig, unwind) for sig in _TERMINATING}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _run_bounded(
    command: list[str],
    env: dict[str, str],
    errors: IO[bytes],
    target: Path,
    *,
    shown: str,
    timeout: float,
    max_bytes: int,
) -> int:
    """Run the clone; kill it past ``timeout`` or once ``target`` holds more than
    ``max_bytes``. Its exit status; GitFetchError when it was stopped."""
    deadline = time.monotonic() + timeout
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=errors, stderr=errors
    )
    try:
        while True:
            try:
                code: int | None = process.wait(
                    timeout=min(_WATCH_EVERY, max(deadline - time.monotonic(), 0))
                )
            except subprocess.TimeoutExpired:
                code = None
            if _size(target) > max_bytes:
                raise GitFetchError(
                    f"cloning {shown} wrote more than {max_bytes // (1024 * 1024)} MiB; stopped "
                    "(a repository of reader declarations is small)",
                    location=Location(source=shown),
                    hint="check the URL; for a large repository, clone it yourself and give "
                    "the folder that holds readers/",
                )
            if code is not None:
                return code
            if time.monotonic() >= deadline:
                raise GitFetchError(
                    f"cloning {shown} took longer than {timeout:g} s; stopped",
                    location=Location(source=shown),
                    hint="raise --timeout, or clone it yourself and give the folder",
                )
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _size(folder: Path) -> int:
    """The bytes of the files below ``folder`` (0 while it does not exist)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # git renames its temporary files as it goes
                total += os.lstat(os.path.join(root, name)).st_size
    return total
