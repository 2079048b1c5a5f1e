"""The migration window as a managed object: planned -> running -> draining -> finished.

Its state and the time it entered each one live in ``<state-dir>/migration.json``, beside the
converter's other state: ``deploy`` marks it running (and planned at the mapping file's time),
``finish`` draining and then finished. ``status`` shows it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from converters.state import read_state, write_state
from schemacli.errors import InputError, Location

STATES = ("planned", "running", "draining", "finished")
FILE = "migration.json"


@dataclass(frozen=True)
class Window:
    state: str
    since: dict[str, float]  # state -> when it was entered (seconds since the epoch)

    @property
    def started(self) -> float | None:
        return self.since.get("running")


def read_window(state_dir: Path) -> Window | None:
    """The recorded window, or None before the first deploy. A corrupt file is an InputError."""
    path = state_dir / FILE
    data = read_state(path)
    if not data:
        return None
    state, since = data.get("state"), data.get("since")
    if (
        state not in STATES
        or not isinstance(since, dict)
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in since.values())
    ):
        raise InputError(
            f"corrupt migration state: state {state!r} with since {since!r}",
            location=Location(source=str(path)),
            hint=f"It holds one of {', '.join(STATES)} and when each began; restore it, or "
            "delete it (the next deploy starts a new window).",
        )
    return Window(state, dict(since))


def advance(state_dir: Path, to: str, *, planned_at: float | None = None) -> Window:
    """Enter state ``to`` now (``planned_at``: when the mapping was planned, if not recorded)."""
    if to not in STATES:
        raise ValueError(to)
    current = read_window(state_dir)
    since = dict(current.since) if current else {}
    now = time.time()
    if planned_at is not None:
        since.setdefault("planned", planned_at)
    if to == "running":  # a new run of the window: later states are from an earlier finish
        for later in ("draining", "finished"):
            since.pop(later, None)
    since[to] = now
    window = Window(to, since)
    write_state(state_dir / FILE, {"state": to, "since": since})
    return window
