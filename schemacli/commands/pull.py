"""`schemacli pull [SUBJECT...]`: snapshot registry subjects into the local store."""

from pathlib import Path
from typing import Annotated

import typer

from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import ExitCode
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo, progress
from schemacli.tomlfile import CONFIG_FILE


@registry_flags()
def pull_command(
    subjects: Annotated[
        list[str] | None, typer.Argument(help="Subjects to pull; all of them when none given.")
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option("--store", help="The local store directory [default: from the config]."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite local versions that differ.")
    ] = False,
    levels: Annotated[
        bool,
        typer.Option("--levels/--no-levels", help="Write subjects' levels into the config file."),
    ] = True,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Snapshot subjects, their versions and levels from the registry into the local store.

    Then `schemacli gate` checks new schemas offline against production history. A local
    version that differs from the registry's is left alone and reported (exit 1) unless --force.
    Nothing is written unless all of it can be: a subject name that cannot be a folder in the
    store, or a store or config file that cannot be written, is exit 2 and leaves both as they
    were.
    """
    with connect(flags, store=store) as conn:
        from schemacli.registry.snapshot import apply_pull, plan_levels, plan_pull

        settings = conn.settings
        root = settings.store
        # Fetch and check everything, prepare the config edit, then write: all or nothing.
        plan = plan_pull(
            conn.client,
            subjects,
            root,
            force=force,
            each=lambda names: progress(names, len(names), "pulling"),
        )
        pulled = plan.subjects
        config_file = settings.config_file or (Path.cwd() / CONFIG_FILE)
        wanted = {p.subject: p.level for p in pulled if settings.level_for(p.subject) != p.level}
        edit = plan_levels(config_file, wanted) if levels and wanted else None
        apply_pull(plan, edit)
        changed = dict(edit.changed) if edit is not None else {}
        conflicts = [c for p in pulled for c in p.conflicts]
        if is_json(output):
            emit_json(
                {
                    "registry": conn.url,
                    "store": str(root),
                    "subjects": list(pulled),
                    "config_file": str(config_file) if changed else None,
                    "levels_written": changed,
                    "conflicts": conflicts,
                }
            )
        else:
            if not pulled:
                echo(f"no subjects in {conn.url}: nothing pulled", err=True)
            for p in pulled:
                echo(
                    f"{p.subject}: {len(p.versions)} version(s), level {p.level.value} "
                    f"({p.level_source}); {len(p.written)} written, {len(p.unchanged)} unchanged"
                    + (f", {len(p.conflicts)} CONFLICT(S)" if p.conflicts else "")
                )
            for subject, level in changed.items():
                echo(f"{config_file}: {subject} level = {level}")
            for path in conflicts:
                echo(f"conflict: {path} differs from the registry; kept (use --force)", err=True)
        raise typer.Exit(ExitCode.CHECK_FAILED if conflicts else ExitCode.OK)
