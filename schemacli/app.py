"""The typer application: global wiring, and the one place errors become words and exit codes.

Commands live one per module in ``schemacli.commands``, listed here in one static table
(:data:`COMMANDS`): a command's module is imported only when that command runs (or its help or
its completions are asked for), so ``schemacli --help`` and every command start without the
others' imports. The table also holds the first sentence of each command's help, which
``--help`` lists without importing the command (tests/unit/test_app_commands.py keeps it equal
to the command's own). Heavy libraries (pyspark, confluent-kafka) are imported only inside the
commands that need them.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Iterator, MutableMapping
from typing import Any, NamedTuple

import click
import typer
from click.shell_completion import CompletionItem
from typer.core import TyperGroup
from typer.models import CommandInfo, TyperInfo

from schemacli import __version__, entry, redact
from schemacli.commands.completion import complete_var_name, guard_install, run_completion
from schemacli.commands.options import OUTPUT_META_KEY
from schemacli.contracts.jsontext.nesting import deep
from schemacli.errors import ExitCode, SchemacliError, SchemacliWarning, UsageError, error_text
from schemacli.gcpolicy import collect_rarely
from schemacli.output import OutputFormat
from schemacli.redact import printable

HELP = """Avro data contracts on Kafka: validate, check compatibility, gate CI,
read with Spark, migrate.

Exit codes: 0 ok · 1 incompatible / check failed · 2 usage or input error ·
3 registry or network error.
"""


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


class Entry(NamedTuple):
    """Where a command lives, and what ``--help`` lists for it without importing it."""

    module: str
    attribute: str  # the command's function, or its group's typer.Typer
    summary: str  # the first sentence of its help, as --help lists it


# The commands, in the order --help lists them.
COMMANDS: dict[str, Entry] = {
    "init": Entry(
        "schemacli.commands.init",
        "init_command",
        "Create a local store (STORE/subjects/), its configuration ([tool.schemacli] in "
        "pyproject.toml, else schemacli.toml) and, with --pre-commit / --github, the CI glue.",
    ),
    "validate": Entry(
        "schemacli.commands.validate",
        "validate_command",
        "Validate .avsc files: errors where Apache Avro Java (and so the registry) refuses, "
        "warnings where the Avro specification or other readers (fastavro, Python avro) would.",
    ),
    "lint": Entry(
        "schemacli.commands.lint",
        "lint_command",
        "Lint .avsc files: naming, namespaces, docs, optional fields, enum defaults, decimals, "
        "timestamps and Spark-unfriendly unions (schemacli lint --list-rules).",
    ),
    "check": Entry(
        "schemacli.commands.check",
        "check_command",
        "Check SCHEMA against its subject's history in the local store, and against every "
        "reader schema the subject's consumers declared there (readers/, docs/readers.md).",
    ),
    "diff": Entry(
        "schemacli.commands.diff",
        "diff_command",
        "Show what changed from OLD to NEW, field by field, and the verdict at every level.",
    ),
    "gate": Entry(
        "schemacli.commands.gate",
        "gate_command",
        "Check every subject's versions at the subject's compatibility level, and against the "
        "reader schemas its consumers declared in the store (readers/, docs/readers.md).",
    ),
    "register": Entry(
        "schemacli.commands.register", "register_command", "Register SCHEMA under --subject."
    ),
    "pull": Entry(
        "schemacli.commands.pull",
        "pull_command",
        "Snapshot subjects, their versions and levels from the registry into the local store.",
    ),
    "report": Entry(
        "schemacli.commands.report",
        "report_command",
        "Write a static HTML site: an index, one page per subject (its version timeline, the "
        "diff of each version, its level, its declared readers and their verdicts, the census "
        "chart) and one page per migration.",
    ),
    "subjects": Entry(
        "schemacli.commands.subjects",
        "subjects_app",
        "List, show and delete subjects in the schema registry.",
    ),
    "readers": Entry(
        "schemacli.commands.readers",
        "readers_app",
        "Declare, list, remove and pull the reader schemas consumers use (docs/readers.md).",
    ),
    "topics": Entry(
        "schemacli.commands.topics",
        "topics_app",
        "Look at what Kafka topics hold: the census of their writer schema versions.",
    ),
    "config": Entry(
        "schemacli.commands.registry_config",
        "config_app",
        "Read and change compatibility levels in the schema registry (global or per subject).",
    ),
    "spark": Entry(
        "schemacli.commands.spark",
        "spark_app",
        "Spark readers for Confluent-framed Avro topics: generate one, or show a Spark schema.",
    ),
    "migrate": Entry(
        "schemacli.commands.migrate.group",
        "migrate_app",
        "Convert a v2 topic back to v1 with a Spark job: plan a mapping, validate it, deploy, "
        "watch and stop the job, replay its dead letters, and finish the migration once nobody "
        "depends on v1; or compile the same mapping into Confluent migration rules (rules).",
    ),
}


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
    """The root group: its commands are built on first use (:class:`LazyCommands`); catches
    every SchemacliError raised below it, renders it once, exits with its code."""

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
        # Start-up is over: from here Ctrl-C is a KeyboardInterrupt, answered below once the
        # command's own clean-up has run.
        entry.command_starts()
        for stream in (sys.stdout, sys.stderr):
            # A schema may hold text UTF-8 cannot encode (a lone surrogate escape, "\ud800",
            # which Java reads): print it escaped rather than fail in the middle of the output.
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="backslashreplace")
        words = [*ctx._protected_args, *ctx.args]  # before click clears them: see _usage_error
        try:
            with deep(), warnings.catch_warnings():  # deep: schemas as nested as Java reads
                warnings.simplefilter("default", SchemacliWarning)  # each one once
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except SchemacliError as err:
            _report(ctx, err)
            ctx.exit(int(err.exit_code))
        except click.UsageError as err:  # a subcommand's arguments do not parse
            _usage_error(ctx, err, words)
            ctx.exit(err.exit_code)
        except KeyboardInterrupt:
            click.echo(entry.INTERRUPTED, err=True)
            ctx.exit(entry.EXIT_INTERRUPTED)


def _summary(name: str) -> click.Command:
    """A stand-in carrying only the summary of ``name``, so that click shortens it exactly as
    it shortens the command's own help."""
    return click.Command(name, help=COMMANDS[name].summary)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Our warnings as one ``warning:`` line on stderr; anything else as Python prints it."""
    if issubclass(category, SchemacliWarning):
        click.echo(f"warning: {printable(str(message))}", err=True)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


_python_showwarning = warnings.showwarning


def _report(ctx: click.Context, err: SchemacliError) -> None:

    click.echo(error_text(err), err=True)
    _document(ctx, err, ctx.meta.get(OUTPUT_META_KEY))


def _usage_error(ctx: click.Context, err: click.UsageError, words: list[str]) -> None:
    """Click's own words on stderr, as ever; and, when the command line asks for a machine
    format the command has, that format's error document on stdout: a CI step that reads the
    report still finds one when an option is misspelt or an argument is missing."""
    # the registry flags' names (stdlib only, but not needed unless an error is shown)
    from schemacli.registry.settings import SECRET_FLAGS, URL_FLAGS

    # click quotes the words it could not place ("Got unexpected extra arguments (...)"): the
    # command never ran, so no secret was remembered yet; remember the credential flags' values
    # and mask the message like everything else we print
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in SECRET_FLAGS:
            redact.remember(value if eq else (words[i + 1] if i + 1 < len(words) else None))
        elif name in URL_FLAGS and not eq and i + 1 < len(words):
            redact.remember_url(words[i + 1])
        elif name in URL_FLAGS:
            redact.remember_url(value)
    # click declares message Final; the words it prints must be masked all the same
    err.message = redact.redact(err.message)  # type: ignore[misc]
    err.show()
    output = ctx.meta.get(OUTPUT_META_KEY) or _asked_output(err.ctx, words)
    if output is None:
        return
    path = err.ctx.command_path if err.ctx is not None else ctx.command_path
    problem = UsageError(err.format_message(), hint=f"See '{path} --help'.")
    # a --watch writes one JSON document per line: its refusal is one line too
    _document(ctx, problem, output, compact=bool({"--watch", "-w"} & set(words)))


def _asked_output(command_ctx: click.Context | None, words: list[str]) -> str | None:
    """The -o/--output value in ``words`` (the last one given), if the command takes it."""
    command = command_ctx.command if command_ctx is not None else None
    option = next((p for p in getattr(command, "params", ()) if "--output" in p.opts), None)
    if option is None:
        return None
    asked = None
    for i, word in enumerate(words):
        if word == "--":
            break
        if word in option.opts and i + 1 < len(words):
            asked = words[i + 1]
        elif word.startswith("--output="):
            asked = word.partition("=")[2]
        elif word.startswith("-o") and len(word) > 2 and "-o" in option.opts:
            asked = word[2:]
    choices = [str(c) for c in getattr(option.type, "choices", ())]
    return asked if asked in choices else None


def _document(
    ctx: click.Context, err: SchemacliError, output: str | None, *, compact: bool = False
) -> None:
    """``err`` as one document of ``output`` on stdout (nothing for text); ``compact``: JSON on
    one line."""
    if output is None:
        return
    # the one table of formats, as schemacli.output.render reads it; it imports every format
    # (~14 ms), so only when an error is rendered
    from schemacli.output.formats import FORMATS

    command = ctx.invoked_subcommand or "schemacli"
    document = FORMATS[OutputFormat(output)].render_error(err, command=command, compact=compact)
    if document:
        click.echo(document, nl=False)


app = typer.Typer(
    name="schemacli",
    help=HELP,
    cls=SchemacliGroup,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # credentials can live in locals
    rich_markup_mode=None,  # Avro JSON is full of [ ]: never let rich interpret it
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    context_settings={"help_option_names": ["-h", "--help"]},
    suggest_commands=False,  # click suggests a close name itself; typer's would say it again
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"schemacli {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Avro data contracts on Kafka."""


def main() -> None:
    """Runs the app (``schemacli.entry.main`` calls it, after answering Ctrl-C during
    start-up): the process is ours, so its collector runs rarely."""
    collect_rarely()
    sys.exit(app())
