"""A folder's state, byte for byte: to prove that a command which refuses writes nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def folder_state(root: Path) -> dict[str, tuple[str, int, bytes | str | None]]:
    """Every entry under ``root`` (relative path -> kind, mode, content): a file's bytes, a
    link's target, None for a folder. Equal before and after means nothing changed."""
    state: dict[str, tuple[str, int, bytes | str | None]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            key = str(path.relative_to(root))
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                state[key] = ("link", mode, os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                state[key] = ("folder", mode, None)
            elif stat.S_ISREG(info.st_mode):
                state[key] = ("file", mode, path.read_bytes())
            else:
                state[key] = ("other", mode, None)
    return state
