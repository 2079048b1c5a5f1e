"""Where schemacli keeps its caches by default, by the platform's convention (stdlib only).

Linux and other Unixes: ``$XDG_CACHE_HOME/schemacli``, else ``~/.cache/schemacli``; macOS:
``~/Library/Caches/schemacli``; Windows: ``%LOCALAPPDATA%\\schemacli\\Cache``. The config's
``cache-dir`` key and ``SCHEMACLI_CACHE_DIR`` override it (``config.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

APP = "schemacli"


def default_cache_dir(
    *,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Path:
    """The user's cache directory for schemacli on ``platform`` (default: this one)."""
    platform = platform or sys.platform
    environ = os.environ if environ is None else environ
    home = home if home is not None else Path.home()
    if platform.startswith("win"):
        local = environ.get("LOCALAPPDATA")
        base = Path(local) if local else home / "AppData" / "Local"
        return base / APP / "Cache"
    if platform == "darwin":
        return home / "Library" / "Caches" / APP
    xdg = environ.get("XDG_CACHE_HOME", "")
    # The XDG spec: a relative path is invalid and must be ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"
    return base / APP
