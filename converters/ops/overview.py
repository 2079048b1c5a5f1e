"""Everything a migration window's state directory says, read offline for ``schemacli report``:
the window (state and when each began), the converter's counts and committed offsets
(``status`` without Kafka), its progress history (counts and lag per batch, written by the job:
``pipeline.progress``), the last look at v1's dependents and the final report.

Every file is read by the bounded reader; one that does not read as the converter writes it is
an InputError naming it (never a wrong picture).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converters.ops.status import SNAPSHOT, Status, status
from converters.ops.window import Window
from converters.pipeline.progress import HISTORY
from converters.state import has_state, loads, read_state, whole
from schemacli.errors import InputError, Location
from schemacli.textfile import DOCUMENT_LIMIT, UnreadableInput, read_utf8

FINAL_REPORT = "final-report.json"
MAX_POINTS = 5000  # history points kept for the chart: evenly thinned past this


@dataclass(frozen=True)
class HistoryPoint:
    time: float  # seconds since the epoch
    batch: int
    totals: dict[str, int]
    lag: int | None


@dataclass(frozen=True)
class Overview:
    state_dir: str
    status: Status
    window: Window | None
    history: tuple[HistoryPoint, ...]
    dependents: dict[str, Any] | None  # dependents.json: {"looked_at", "groups"}
    final_report: dict[str, Any] | None  # final-report.json
    deploy: dict[str, Any]  # deploy.json (topics, mapping, options as deploy recorded them)


def overview(state_dir: Path) -> Overview:
    """Read the state directory. Raises InputError when it holds no converter state, or a file
    there is corrupt (named, with line:col where it has one)."""
    st = status(state_dir, topic=None, bootstrap=None)
    deps = read_state(state_dir / SNAPSHOT) or None
    final = read_state(state_dir / FINAL_REPORT) or None
    return Overview(
        state_dir=str(state_dir),
        status=st,
        window=st.window,
        history=read_history(state_dir / HISTORY),
        dependents=deps,
        final_report=final,
        deploy=read_state(state_dir / "deploy.json"),
    )


def discover(base: Path) -> list[Path]:
    """The state directories under ``base`` (``.schemacli/migrate``, where deploy puts them by
    default) that hold converter state, sorted; none when ``base`` is not a folder."""
    if not base.is_dir():
        return []
    try:
        return sorted(d for d in base.iterdir() if d.is_dir() and has_state(d))
    except OSError:
        return []


def read_history(path: Path) -> tuple[HistoryPoint, ...]:
    """The progress history's points, oldest first (none when the file does not exist); at
    most ``MAX_POINTS``, evenly thinned. A line that does not read as the job writes it is an
    InputError naming the file and line; the last line alone may be cut short (the job was
    killed while appending), and is left out."""
    hint = (
        "The converter appends one line per batch: restore the file, or delete it to start the "
        "history again (the counts in progress.json are kept)."
    )
    try:
        text = read_utf8(path, hint=hint, limit=DOCUMENT_LIMIT, what="progress history")
    except UnreadableInput as exc:
        if exc.reason == "missing":
            return ()
        raise InputError(
            f"cannot read the progress history: {exc.message}", location=exc.location, hint=hint
        ) from exc
    lines = text.splitlines()
    points = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                break  # the last append, cut short
            raise InputError(
                f"corrupt progress history: {exc.msg}",
                location=Location(source=str(path), line=number, column=exc.colno),
                hint=hint,
            ) from exc
        point = _point(data)
        if point is None:
            raise InputError(
                'corrupt progress history: expected {"time", "batch", "totals", "lag"} '
                "with numbers",
                location=Location(source=str(path), line=number, column=1),
                hint=hint,
            )
        points.append(point)
    if len(points) > MAX_POINTS:
        step = len(points) / MAX_POINTS
        points = [points[int(i * step)] for i in range(MAX_POINTS - 1)] + [points[-1]]
    return tuple(points)


def _point(data: Any) -> HistoryPoint | None:
    if not isinstance(data, dict):
        return None
    t, batch, totals, lag = data.get("time"), data.get("batch"), data.get("totals"), data.get("lag")
    if isinstance(t, bool) or not isinstance(t, int | float) or not isinstance(batch, int):
        return None
    if isinstance(batch, bool):
        return None
    if not isinstance(totals, dict) or not all(whole(v) for v in totals.values()):
        return None
    if lag is not None and not whole(lag):
        return None
    return HistoryPoint(float(t), batch, {str(k): v for k, v in totals.items()}, lag)
