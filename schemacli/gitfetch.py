"""A git repository named by a URL, cloned shallowly into a temporary folder: bounded in time,
never prompting, only over the transports a declaration may come from.

``readers pull`` reads the declarations a consumer keeps in its own repository with it. git's
``ext::`` transport runs a command and is refused (``GIT_ALLOW_PROTOCOL``); credentials in a
URL are never shown (every message goes through ``redact``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from schemacli import redact
from schemacli.errors import InputError, Location, NetworkError, UsageError

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
_URL = re.compile(r"^(?:https?|ssh|git|file)://", re.IGNORECASE)
_SCP = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+:(?!//)")
_ANY_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::?")
MAX_TIMEOUT = 3600.0


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
def cloned(url: str, *, ref: str | None = None, timeout: float = 120.0) -> Iterator[Path]:
    """Clone ``url`` (its ``ref``, else its default branch) at depth 1 into a temporary folder,
    yield the working tree, and remove it afterwards.

    Raises GitFetchError (exit 3) when git fails or runs past ``timeout`` seconds (the clone is
    then killed), InputError when git is not installed, UsageError for a ref that is an option.
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
    with tempfile.TemporaryDirectory(prefix="schemacli-readers-") as temp:
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
        try:
            done = subprocess.run(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise GitFetchError(
                f"cloning {shown} took longer than {timeout:g} s; stopped",
                location=Location(source=shown),
                hint="raise --timeout, or clone it yourself and give the folder",
            ) from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            fatal = [line for line in said if line.startswith(("fatal:", "error:"))]
            reason = (fatal or said or [f"git exited with {done.returncode}"])[0]
            raise GitFetchError(
                f"cannot clone {shown}" + (f" at {ref}" if ref else "") + f": {reason}",
                location=Location(source=shown),
                hint="check the URL, the ref and your access to the repository",
            )
        yield target
