"""The typer application: global wiring, and the one place errors become words and exit codes.

Commands live one per module in ``schemacli.commands``, listed here statically.
Heavy libraries (pyspark, confluent-kafka) are imported only inside the commands that need them,
so ``schemacli --help`` starts fast.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import click
import typer
from typer.core import TyperGroup

from schemacli import __version__, redact
from schemacli.commands import (
    check,
    diff,
    gate,
    init,
    lint,
    migrate,
    pull,
    readers,
    register,
    registry_config,
    report,
    spark,
    subjects,
    topics,
    validate,
)
from schemacli.commands.completion import complete_var_name, guard_install, run_completion
from schemacli.commands.options import OUTPUT_META_KEY
from schemacli.contracts.jsontext.nesting import deep
from schemacli.errors import (
    ExitCode,
    InputError,
    SchemacliError,
    SchemacliWarning,
    UsageError,
    error_text,
)
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


class SchemacliGroup(TyperGroup):
    """Catches every SchemacliError raised below it, renders it once, exits with its code."""

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
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except MemoryError:  # the input's structures are garbage by now: room to say so
            _report(ctx, OUT_OF_MEMORY)
            ctx.exit(int(OUT_OF_MEMORY.exit_code))


# What a run that exhausts memory says (docs/store.md: the schema cap is the memory bound).
OUT_OF_MEMORY = InputError(
    "ran out of memory: the input is larger than this machine (or its memory limit) can check",
    hint="check fewer or smaller files at once; a schema file holds at most 8 MiB (docs/store.md)",
)


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


SECRET_FLAGS = ("--password", "--token")
URL_FLAGS = ("--registry", "-r")


def _usage_error(ctx: click.Context, err: click.UsageError, words: list[str]) -> None:
    """Click's own words on stderr, as ever; and, when the command line asks for a machine
    format the command has, that format's error document on stdout: a CI step that reads the
    report still finds one when an option is misspelt or an argument is missing."""

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


# The commands, in the order --help lists them.
app.command("init")(init.init_command)
app.command("validate")(validate.validate_command)
app.command("lint")(lint.lint_command)
app.command("check")(check.check_command)
app.command("diff")(diff.diff_command)
app.command("gate")(gate.gate_command)
app.command("register")(register.register_command)
app.command("pull")(pull.pull_command)
app.command("report")(report.report_command)
app.add_typer(subjects.subjects_app)
app.add_typer(readers.readers_app)
app.add_typer(topics.topics_app)
app.add_typer(registry_config.config_app)
app.add_typer(spark.spark_app, name="spark")
migrate.register(app)  # its subcommands onto its own typer, then that typer onto the app


def main() -> None:
    """Console-script entry point: the process is ours, so its collector runs rarely."""
    collect_rarely()
    sys.exit(app())
