"""The ONE place an error that stops a command becomes words on stderr, a document in the
chosen format on stdout, and an exit code: every command runs inside :func:`guarded`
(``app.SchemacliGroup.invoke`` loads this module when a command runs; ``--help`` never does).
"""

from __future__ import annotations

import errno
import sys
import warnings
from collections.abc import Callable
from typing import Any, TextIO

import click

from schemacli import interrupts, redact
from schemacli.commands.options import OUTPUT_META_KEY
from schemacli.contracts.jsontext.nesting import deep
from schemacli.errors import InputError, SchemacliError, SchemacliWarning, UsageError, error_text
from schemacli.output import OutputFormat
from schemacli.redact import printable


def guarded(ctx: click.Context, invoke: Callable[[], Any]) -> Any:
    """``invoke()`` (the group running its command) with every failure turned into words: a
    SchemacliError once on stderr (and as a document of the command's format), a usage error
    as click words it (and as a document), Ctrl-C as one line; each with its exit code."""
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
            return invoke()
    except SchemacliError as err:
        _report(ctx, err)
        ctx.exit(int(err.exit_code))
    except click.UsageError as err:  # a subcommand's arguments do not parse
        _usage_error(ctx, err, words)
        ctx.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo(interrupts.INTERRUPTED, err=True)
        ctx.exit(interrupts.EXIT_INTERRUPTED)
    except MemoryError:  # the input's structures are garbage by now: room to say so
        _report(ctx, OUT_OF_MEMORY)
        ctx.exit(int(OUT_OF_MEMORY.exit_code))
    except OSError as err:
        if err.errno != errno.ENAMETOOLONG:
            raise
        # a path given on the command line (or found in a file) longer than the file system
        # names: the user's input, wherever in the command it was first looked at
        too_long = name_too_long(err)
        _report(ctx, too_long)
        ctx.exit(int(too_long.exit_code))


def name_too_long(err: OSError) -> InputError:
    """The input error for a path the file system cannot name (ENAMETOOLONG)."""
    name = str(err.filename) if err.filename is not None else "a path"
    shown = name if len(name) <= 80 else f"{name[:60]}...{name[-16:]} ({len(name)} characters)"
    return InputError(
        f"the path {printable(shown)} is longer than the file system can name",
        hint="use a shorter file or folder name (most file systems take 255 bytes a name)",
    )


# What a run that exhausts memory says (docs/store.md: the schema cap is the memory bound).
OUT_OF_MEMORY = InputError(
    "ran out of memory: the input is larger than this machine (or its memory limit) can check",
    hint="check fewer or smaller files at once; a schema file holds at most 8 MiB (docs/store.md)",
)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
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
    # the registry flags' names: their module (TOML, URLs) is loaded only for this
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
