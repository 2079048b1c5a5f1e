"""What a bench run records of the machine it ran on."""

from __future__ import annotations

from pathlib import Path


def cpu_model(default: str = "?") -> str:
    """The CPU's model name from /proc/cpuinfo (``default`` where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:  # not Linux
        return default
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return default
