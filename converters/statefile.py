"""The converter's small JSON state files (deploy.json, progress.json) in its state directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schemacli.errors import InputError, Location
from schemacli.textfile import read_utf8


def loads(text: str) -> Any:
    """``json.loads``; every way it fails is a ``json.JSONDecodeError`` (``msg``, ``lineno``,
    ``colno``, ``pos``): also JSON nested too deeply for Python's stack, or a number too long
    for Python's int, which ``json.loads`` raises as RecursionError / a plain ValueError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise json.JSONDecodeError(reason, text, 0) from None


def read_state(path: Path) -> dict[str, Any]:
    """The file's JSON object; ``{}`` when the file does not exist yet.

    An unreadable or corrupt file is an InputError, never silently empty: the counts that
    ``migrate status`` reports (in = converted + dead-lettered + skipped) come from here.
    """
    try:
        text = read_utf8(path, hint="Restore it, or delete it to restart the counts from zero.")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputError(
            f"cannot read converter state: {exc.strerror}",
            location=Location(source=str(path)),
            hint="Check the state directory's permissions (--state-dir).",
        ) from exc
    try:
        data = loads(text)
    except ValueError as exc:
        raise InputError(
            f"corrupt converter state: {exc.msg}",
            location=Location(source=str(path), line=exc.lineno, column=exc.colno),
            hint="The job writes it atomically, so it was edited by hand: restore it, or delete "
            "it to restart the counts from zero (the checkpoint still keeps the offsets).",
        ) from exc
    if not isinstance(data, dict):
        raise InputError(
            "corrupt converter state: not a JSON object",
            location=Location(source=str(path), line=1, column=1),
            hint="Restore it, or delete it to restart the counts from zero.",
        )
    return data
