"""Where the site goes: every page planned as one ``atomicwrite.Write``, refused before a byte
is written when the output folder cannot take them, and written all or nothing.

The folder must be new, empty, or an earlier report: it holds ``MARKER``, the JSON an earlier
report wrote (read by the one bounded JSON reader and checked: a marker of any other content is
not one), and nothing but the files that marker lists. So a report never writes into a folder
of other files (``--html ~/`` replaces nothing of yours, and neither does an empty
``.schemacli-report.json`` put there), and a path that is a file is refused. Pages of an earlier
report are replaced; pages it had that this one does not (a subject gone since) are left, still
listed in the marker, and no longer linked from the index.
"""

from __future__ import annotations

import json
from pathlib import Path

from schemacli import __version__
from schemacli.atomicwrite import NOTHING_WRITTEN, Write, WriteError, why, write_all
from schemacli.contracts.jsontext.source import read_json_file
from schemacli.errors import InputError, Location

MARKER = ".schemacli-report.json"
MARKER_LIMIT = 1024 * 1024  # a list of page names
GENERATOR = "schemacli"
HINT = "pass --html a new or empty folder, or the folder of an earlier `schemacli report`"


def plan(out: Path, files: dict[str, str]) -> list[Write]:
    """The writes of ``files`` (name -> text) into ``out``, and the marker. Raises WriteError
    when ``out`` is a file, or a folder that holds other things than an earlier report."""
    try:
        earlier = _earlier_pages(out)
    except OSError as err:  # a name longer than the file system allows, no permission, ...
        raise WriteError(
            f"{out} cannot be written: {why(err)} ({NOTHING_WRITTEN})",
            location=Location(source=str(out)),
            hint=HINT,
        ) from None
    listed = sorted(set(files) | earlier)
    marker = json.dumps({"generator": f"{GENERATOR} {__version__}", "files": listed}, indent=2)
    return [
        Write(out / name, text.encode("utf-8"), replace=True, follow_link=False, within=out)
        for name, text in sorted({**files, MARKER: marker + "\n"}.items())
    ]


def _earlier_pages(out: Path) -> set[str]:
    """The pages an earlier report in ``out`` wrote that are still there (empty for a new or
    empty folder). WriteError when ``out`` is not a folder a report may write into."""
    if out.is_symlink() and not out.exists():
        raise _refused(f"{out} is a symbolic link that names nothing ({NOTHING_WRITTEN})", out)
    if out.exists() and not out.is_dir():
        raise _refused(f"{out} is a file, not a folder ({NOTHING_WRITTEN})", out)
    if not out.is_dir():
        return set()
    entries = {p.name for p in out.iterdir()}
    if not entries:
        return set()
    listed = _marker_pages(out / MARKER) if MARKER in entries else set()
    stray = sorted(entries - listed - {MARKER})
    if stray:
        shown = ", ".join(stray[:3]) + (" ..." if len(stray) > 3 else "")
        what = (
            "that are not a schemacli report"
            if MARKER not in entries
            else ("that the earlier report there did not write")
        )
        raise _refused(f"{out} holds files {what} ({shown}); {NOTHING_WRITTEN}", out)
    return listed & entries


def _marker_pages(path: Path) -> set[str]:
    """The page names an earlier report's marker lists; WriteError when the marker is not
    the one a report writes (any other content, a link, too large, not JSON)."""
    not_ours = f"{path} is not the marker a schemacli report writes; {NOTHING_WRITTEN}"
    try:
        value = read_json_file(path, limit=MARKER_LIMIT, what="report marker", hint=HINT).value
    except InputError as err:
        raise _refused(f"{not_ours} ({err.message})", path) from None
    pages = value.get("files") if isinstance(value, dict) else None
    generator = value.get("generator") if isinstance(value, dict) else None
    if (
        not isinstance(generator, str)
        or not generator.startswith(f"{GENERATOR} ")
        or not isinstance(pages, list)
        or not all(isinstance(p, str) and p and "/" not in p and p != MARKER for p in pages)
    ):
        raise _refused(not_ours, path)
    return set(pages)


def _refused(message: str, where: Path) -> WriteError:
    return WriteError(message, location=Location(source=str(where)), hint=HINT)


def write_site(out: Path, files: dict[str, str]) -> list[Path]:
    """Write the site into ``out`` (all or nothing); the paths written."""
    writes = plan(out, files)
    write_all(writes, hint=HINT)
    return [w.path for w in writes]
