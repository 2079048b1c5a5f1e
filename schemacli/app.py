"""The typer application: global wiring; every command runs inside the error edge
(``schemacli.edge``), the one place errors become words and exit codes.

Commands live one per module in ``schemacli.commands``, listed in one static table
(``schemacli.toplevel.COMMANDS``): a command's module is imported only when that command runs
(or its help or its completions are asked for), so ``schemacli --help`` and every command start
without the others' imports. The table also holds the first sentence of each command's help,
which ``--help`` lists without importing the command (tests/cli/test_app_start_up.py keeps it
equal to the command's own). Nor does ``--help`` load the edge, the errors or the renderers.
``schemacli --help`` alone on the command line does not come here at all: ``schemacli.toplevel``
writes the same page without click or typer. Heavy libraries (pyspark, confluent-kafka) are
imported only inside the commands that need them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import click
import typer
from click.shell_completion import CompletionItem
from typer.core import TyperGroup
from typer.models import CommandInfo, TyperInfo

from schemacli import __version__, interrupts
from schemacli.commands.completion import guard_install, run_completion
from schemacli.gcpolicy import collect_rarely
from schemacli.toplevel import COMMANDS, HELP, HELP_OPTION_NAMES, VERSION_HELP, complete_var_name


def _keep_argument_help() -> None:
    """Positional arguments keep their ``help=``. typer (< 0.25) stores it on its TyperArgument
    and then calls click's ``Argument.__init__`` without it; click 8.5 takes ``help`` there too
    and resets it to None, so every argument's help vanished from ``--help``. Checked, not
    assumed: nothing changes once typer passes it through."""
    from typer.core import TyperArgument

    if TyperArgument(param_decls=["probe"], help="probe").help == "probe":
        return
    typer_init = TyperArgument.__init__

    def init(self: TyperArgument, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        typer_init(self, *args, help=help, **kwargs)
        self.help = help

    TyperArgument.__init__ = init  # type: ignore[method-assign]


_keep_argument_help()


def _one_arguments_section() -> None:
    """``--help`` lists the positional arguments once. typer (< 0.25) writes them under
    "Arguments" in its ``format_options``; click 8.5 added ``format_arguments``, which writes
    them again under "Positional arguments". typer's section stays (the layout of older clicks,
    and of the docs); click's is left out only while typer writes its own."""
    import click
    from typer.core import TyperCommand, TyperGroup

    for command in (TyperCommand, TyperGroup):
        if hasattr(click.Command, "format_arguments") and "format_options" in vars(command):

            def no_second_section(
                self: click.Command, ctx: click.Context, formatter: click.HelpFormatter
            ) -> None:
                return None

            command.format_arguments = no_second_section  # type: ignore[method-assign]


_one_arguments_section()


def build_command(name: str) -> click.Command:
    """The click command of ``COMMANDS[name]``: its module imported, built by typer as
    ``app.command(name)`` / ``app.add_typer`` would have built it."""
    entry = COMMANDS[name]
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    if isinstance(target, typer.Typer):
        return typer.main.get_group_from_info(
            TyperInfo(target, name=name),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
            suggest_commands=app.suggest_commands,
        )
    return typer.main.get_command_from_info(
        CommandInfo(name=name, callback=target),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


class LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands by name: every name of :data:`COMMANDS` is there, and a command is
    built (its module imported) the first time it is looked up. Membership and the names
    import nothing."""

    def __init__(self) -> None:
        self._built: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = build_command(name)
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in COMMANDS

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS.keys() | self._built.keys())

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]


class SchemacliGroup(TyperGroup):
    """The root group: its commands are built on first use (:class:`LazyCommands`); a command
    runs inside the error edge (``schemacli.edge.guarded``), which catches every SchemacliError
    raised below it, renders it once and exits with its code."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands()  # typer hands the root no command: every one is lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # the names alone: typer's own would build every command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """--help's list of commands, each with the start of its help, from :data:`COMMANDS`
        (no command's module is imported); shortened as click shortens a command's help."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, _summary(name).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The command names that start with what was typed, from :data:`COMMANDS` (nothing
        imported), then the group's options as click offers them."""
        found = [
            CompletionItem(name, help=_summary(name).get_short_help_str())
            for name in self.list_commands(ctx)
            if name.startswith(incomplete)
        ]
        # click.Command's completion of the options, past Group's, which would build every
        # command to ask whether it is hidden
        return found + click.Command.shell_complete(self, ctx, incomplete)

    def _main_shell_completion(
        self, ctx_args: Any, prog_name: str, complete_var: str | None = None
    ) -> None:
        """Runs first on every start: completion requests and --install-completion are served
        by schemacli.commands.completion, which turns their failures into an error and exit 2."""

        guard_install(self.params)
        run_completion(
            lambda: super(SchemacliGroup, self)._main_shell_completion(
                ctx_args, prog_name, complete_var
            ),
            complete_var or complete_var_name(prog_name),
        )

    def invoke(self, ctx: click.Context) -> Any:
        # Start-up is over: from here Ctrl-C is a KeyboardInterrupt, answered by the edge once
        # the command's own clean-up has run.
        interrupts.command_starts()
        from schemacli.edge import guarded  # the error edge: loaded when a command runs

        return guarded(ctx, lambda: super(SchemacliGroup, self).invoke(ctx))


def _summary(name: str) -> click.Command:
    """A stand-in carrying only the summary of ``name``, so that click shortens it exactly as
    it shortens the command's own help."""
    return click.Command(name, help=COMMANDS[name].summary)


app = typer.Typer(
    name="schemacli",
    help=HELP,
    cls=SchemacliGroup,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # credentials can live in locals
    rich_markup_mode=None,  # Avro JSON is full of [ ]: never let rich interpret it
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    context_settings={"help_option_names": list(HELP_OPTION_NAMES)},
    suggest_commands=False,  # click suggests a close name itself; typer's would say it again
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"schemacli {__version__}")
        raise typer.Exit(0)  # ExitCode.OK: its module (errors) is not loaded at start-up


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help=VERSION_HELP
    ),
) -> None:
    """Avro data contracts on Kafka."""


def main() -> None:
    """Runs the app (``schemacli.entry.main`` calls it, after answering Ctrl-C during
    start-up): the process is ours, so its collector runs rarely."""
    collect_rarely()
    sys.exit(app())
