"""``schemacli init``: scaffold a local store, its configuration and, on request, CI glue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from schemacli.atomicwrite import WriteError, refusals, write_all
from schemacli.commands.completion import complete_level
from schemacli.commands.options import JsonOutput
from schemacli.errors import ExitCode, Location, UsageError
from schemacli.output import TextOrJson


def init_command(
    directory: Annotated[
        Path, typer.Argument(help="The project folder (default: the current one).")
    ] = Path("."),
    store: Annotated[
        str, typer.Option("--store", help="The store's folder, inside the project.")
    ] = "schemas",
    level: Annotated[
        str,
        typer.Option(
            "--level",
            help="default-level for subjects without one.",
            autocompletion=complete_level,
        ),
    ] = "BACKWARD",
    pre_commit: Annotated[
        bool, typer.Option("--pre-commit", help="Also write .pre-commit-config.yaml.")
    ] = False,
    github: Annotated[
        bool,
        typer.Option("--github", help="Also write .github/workflows/schemacli.yml."),
    ] = False,
    install: Annotated[
        str,
        typer.Option(
            "--install",
            help="What the workflow installs with pip (a requirement, e.g. a git URL).",
        ),
    ] = "schemacli",
    output: JsonOutput = TextOrJson.text,
) -> None:
    """Create a local store (STORE/subjects/), its configuration ([tool.schemacli] in
    pyproject.toml, else schemacli.toml) and, with --pre-commit / --github, the CI glue.

    Never overwrites, never half-writes: every file is planned and checked first; when
    any would overwrite something or cannot be written it says which and writes nothing
    (exit 2). Each file is written through a temporary file and a rename.
    Exit codes: 0 written, 2 usage or input error.
    """
    from schemacli.config import parse_level
    from schemacli.scaffold import plan

    if not directory.is_dir():
        raise UsageError(
            f"{directory} is not a folder", hint="Create it first, or give the project folder."
        )
    planned = plan(
        directory,
        store=store,
        level=parse_level(level),
        pre_commit=pre_commit,
        github=github,
        install=install,
    )
    writes = [item.write() for item in planned.files]
    blocked = refusals(writes)
    overwrite = planned.conflicts + [str(r) for r in blocked if r.exists]
    if overwrite:
        raise UsageError(
            "init would overwrite: " + "; ".join(overwrite) + " (nothing was written)",
            hint="Move those files away or edit them by hand; init never overwrites.",
        )
    if blocked:
        raise WriteError(
            "init cannot write: " + "; ".join(map(str, blocked)) + " (nothing was written)",
            location=Location(source=str(blocked[0].path)),
            hint="Make those folders and files writable, or move what is in the way; "
            "then run init again.",
        )
    write_all(writes, hint="Run it in a folder you can write; init undoes a partial write.")
    if TextOrJson(output) is TextOrJson.json:
        written = [{"path": str(p.path), "appended": p.edit} for p in planned.files]
        typer.echo(json.dumps({"written": written}, indent=2))
    else:
        for item in planned.files:
            typer.echo(
                f"added [tool.schemacli] to {item.path}" if item.edit else f"wrote {item.path}"
            )
        subjects = Path(store) / "subjects" / "<subject>" / "v1.avsc"
        typer.echo(f"next: add schemas as {subjects}, then schemacli gate")
    raise typer.Exit(int(ExitCode.OK))
