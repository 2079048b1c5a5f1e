"""`schemacli config get|set|delete [SUBJECT] [LEVEL]`: compatibility levels in the registry."""

from typing import Annotated

import typer

from schemacli.commands.options import JsonOutput
from schemacli.commands.registry_options import NO_FLAGS, RegistryFlags, connect, registry_flags
from schemacli.errors import UsageError
from schemacli.output import TextOrJson
from schemacli.output.json_out import emit_json, is_json
from schemacli.output.terminal import echo

config_app = typer.Typer(
    name="config",
    help="Read and change compatibility levels in the schema registry (global or per subject).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

OptionalSubject = Annotated[
    str | None, typer.Argument(help="The subject; without it, the registry's global level.")
]


@config_app.command("get")
@registry_flags()
def get_command(
    subject: OptionalSubject = None,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Print the level that applies to SUBJECT (its own, else the global one), or the global one."""
    with connect(flags) as conn:
        from schemacli.registry.history import registry_level

        found = registry_level(conn.client, subject)
        if is_json(output):
            emit_json(
                {
                    "registry": conn.url,
                    "subject": subject,
                    "level": found.level.value,
                    "source": found.source,
                }
            )
            return
        where = subject if subject is not None else "global"
        suffix = (
            " (inherited from the global level)" if subject and found.source == "global" else ""
        )
        echo(f"{where}: {found.level.value}{suffix}")


@config_app.command("set")
@registry_flags()
def set_command(
    args: Annotated[
        list[str], typer.Argument(metavar="[SUBJECT] LEVEL", help="LEVEL, or SUBJECT LEVEL.")
    ],
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Set the global level (LEVEL) or a subject's level (SUBJECT LEVEL)."""
    with connect(flags) as conn:
        from schemacli.config import parse_level

        if len(args) not in (1, 2):
            raise UsageError(
                f"config set takes LEVEL or SUBJECT LEVEL, got {len(args)} arguments.",
                hint="e.g. schemacli config set taxi-rides-value FULL",
            )
        subject = args[0] if len(args) == 2 else None
        level = parse_level(args[-1], what="LEVEL")
        if not level.in_registry:
            raise UsageError(
                f"{level.value} is schemacli's own level, not one a registry knows.",
                hint="set it for the subject in [tool.schemacli.subjects] instead "
                "(docs/readers.md); a registry takes NONE, BACKWARD, FORWARD, FULL or "
                "*_TRANSITIVE",
            )
        now = conn.client.set_config(level.value, subject)
        from schemacli.registry.history import registry_level

        applied = registry_level(conn.client, subject).level
        if applied is not level:  # e.g. Apicurio: NONE deletes the rule, the global one applies
            echo(
                f"warning: the registry accepted {level.value} but applies {applied.value} to "
                f"{subject or 'new subjects'} (see docs/registry.md, registry deviations)",
                err=True,
            )
        if is_json(output):
            emit_json({"registry": conn.url, "subject": subject, "level": now})
            return
        echo(f"{subject or 'global'}: {now}")


@config_app.command("delete")
@registry_flags()
def delete_command(
    subject: OptionalSubject = None,
    output: JsonOutput = TextOrJson.text,
    flags: RegistryFlags = NO_FLAGS,
) -> None:
    """Drop SUBJECT's own level (it then inherits the global one), or reset the global level."""
    with connect(flags) as conn:
        previous = conn.client.delete_config(subject)
        if is_json(output):
            emit_json({"registry": conn.url, "subject": subject, "deleted_level": previous})
            return
        where = subject or "global"
        echo(f"{where}: level {previous or '(none)'} deleted")
