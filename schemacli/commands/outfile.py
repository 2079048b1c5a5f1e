"""``--out FILE`` and ``--force``, shared by the commands that write one generated file
(``migrate plan``, ``spark codegen``): an existing file is never replaced silently, and the
file is written atomically through :mod:`schemacli.atomicwrite`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from schemacli.atomicwrite import Write, WriteError, refusals, write_all
from schemacli.errors import Location, UsageError

Force = Annotated[
    bool,
    typer.Option("--force", help="Replace the --out file when it exists (default: refuse)."),
]


def check_out(out: Path | None, *, force: bool) -> None:
    """Refuse before any work when ``out`` cannot be written: UsageError (exit 2) when it
    exists and ``force`` is off, WriteError (exit 2) when the file system is in the way."""
    if out is None:
        return
    for refusal in refusals([Write(out, b"", replace=force)]):
        if refusal.exists:
            raise UsageError(
                f"--out {out} exists (nothing was written)",
                hint="Pass --force to replace it, or give another --out path.",
            )
        raise WriteError(
            f"cannot write --out: {refusal.reason} (nothing was written)",
            location=Location(source=str(out)),
            hint="Give an --out path in a folder you can write.",
        )


def write_out(out: Path, text: str, *, force: bool) -> None:
    """Write ``text`` (UTF-8) to ``out`` atomically; refuses as :func:`check_out` does."""
    check_out(out, force=force)
    write_all(
        [Write(out, text.encode("utf-8"), replace=force)],
        hint="Give an --out path in a folder you can write.",
    )
