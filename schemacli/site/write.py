"""Where the site goes: every page planned as one ``atomicwrite.Write``, refused before a byte
is written when the output folder cannot take them, and written all or nothing.

The folder must be new, empty, or an earlier report (it holds ``MARKER``): a report never
writes into a folder of other files (``--html ~/`` replaces nothing of yours), and a path that
is a file is refused. Pages of an earlier report are replaced; pages it had that this one does
not (a subject gone since) are left, and no longer linked from the index.
"""

from __future__ import annotations

import json
from pathlib import Path

from schemacli import __version__
from schemacli.atomicwrite import NOTHING_WRITTEN, Write, WriteError, write_all
from schemacli.errors import Location

MARKER = ".schemacli-report.json"
HINT = "pass --html a new or empty folder, or the folder of an earlier `schemacli report`"


def plan(out: Path, files: dict[str, str]) -> list[Write]:
    """The writes of ``files`` (name -> text) into ``out``, and the marker. Raises WriteError
    when ``out`` is a file, or a folder that holds other things than an earlier report."""
    if out.is_symlink() and not out.exists():
        raise WriteError(
            f"{out} is a symbolic link that names nothing ({NOTHING_WRITTEN})",
            location=Location(source=str(out)),
            hint=HINT,
        )
    if out.exists() and not out.is_dir():
        raise WriteError(
            f"{out} is a file, not a folder ({NOTHING_WRITTEN})",
            location=Location(source=str(out)),
            hint=HINT,
        )
    if out.is_dir():
        try:
            entries = [p.name for p in out.iterdir()]
        except OSError as err:
            raise WriteError(
                f"cannot list {out}: {err.strerror or err} ({NOTHING_WRITTEN})",
                location=Location(source=str(out)),
                hint=HINT,
            ) from err
        if entries and MARKER not in entries:
            shown = ", ".join(sorted(entries)[:3]) + (" ..." if len(entries) > 3 else "")
            raise WriteError(
                f"{out} holds files that are not a schemacli report ({shown}); {NOTHING_WRITTEN}",
                location=Location(source=str(out)),
                hint=HINT,
            )
    marker = json.dumps({"generator": f"schemacli {__version__}", "files": sorted(files)}, indent=2)
    return [
        Write(out / name, text.encode("utf-8"), replace=True, follow_link=False)
        for name, text in sorted({**files, MARKER: marker + "\n"}.items())
    ]


def write_site(out: Path, files: dict[str, str]) -> list[Path]:
    """Write the site into ``out`` (all or nothing); the paths written."""
    writes = plan(out, files)
    write_all(writes, hint=HINT)
    return [w.path for w in writes]
