"""The converter's state directory: what a deployment leaves there, its small JSON state files
(deploy.json, progress.json), and where its checkpoint lives. Shared by deploy, status and stop."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemacli.errors import InputError, Location, UsageError
from schemacli.textfile import UnreadableInput, read_utf8
from schemacli.topics import TOPIC_HINT, topic_problem

if TYPE_CHECKING:
    from converters.mapping.model import Mapping


def default_state_dir(mapping: Mapping, base: Path | None = None) -> Path:
    """``<base>/<v2 topic>--<v1 topic>``; topics are checked first (a path is built of them)."""
    for topic in (mapping.source.topic, mapping.target.topic):
        problem = topic_problem(topic) if topic is not None else None
        if problem is not None:
            raise UsageError(
                f"invalid topic name: {topic!r} {problem}",
                hint=f"{TOPIC_HINT} Or pass --state-dir.",
            )
    base = base or Path(".schemacli") / "migrate"
    return base / f"{mapping.source.topic or 'v2'}--{mapping.target.topic or 'v1'}"


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
    except UnreadableInput as exc:
        if exc.reason == "missing":
            return {}
        raise InputError(
            f"cannot read converter state: {exc.message}",
            location=exc.location,
            hint="Check the state directory's permissions (--state-dir)."
            if exc.reason == "permission"
            else exc.hint,
        ) from exc
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
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


# What a deployment leaves in its state directory (any one of them means there is one).
STATE_FILES = ("deploy.json", "progress.json", "submit.pid", "driver.pid", "checkpoint")


def no_state(state_dir: Path) -> InputError:
    if state_dir.is_dir():
        return InputError(
            f"no converter state in {str(state_dir)!r}: the directory holds none of "
            f"{', '.join(STATE_FILES)}",
            hint="Pass the --state-dir the converter was deployed with (or the mapping file), "
            "or deploy one with `schemacli migrate deploy`.",
        )
    return InputError(
        f"no converter state in {str(state_dir)!r}",
        hint="Deploy one with `schemacli migrate deploy`, or pass the --state-dir it used.",
    )


def has_state(state_dir: Path) -> bool:
    return state_dir.is_dir() and any((state_dir / name).exists() for name in STATE_FILES)


def local_checkpoint(location: str) -> Path | None:
    """The local directory of a checkpoint given as a path or a ``file:`` URI; None for a remote
    filesystem (hdfs://, s3a://, abfss://, ...), which schemacli does not read."""
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", location)
    if scheme is None or len(scheme.group(1)) == 1:  # a path (or a Windows drive letter)
        return Path(location)
    if scheme.group(1).lower() == "file":
        return Path(re.sub(r"^file:(//)?", "", location, flags=re.IGNORECASE))
    return None


def whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def write_state(path: Path, data: Any) -> None:
    """Write a JSON state file atomically (a reader never sees half of it)."""
    import json

    write_text(path, json.dumps(data, indent=2, default=str))


def write_text(path: Path, text: str) -> None:
    """Write one of the converter's own state files (a pid, the resolved mapping, a report)
    through a temporary file and a rename: a reader, or a run killed mid-write, never leaves
    half of it."""
    import os

    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
