"""Values the shell can complete (``schemacli --install-completion`` for bash, zsh and fish).

Output formats complete by themselves (they are choices); levels and subjects are plain text
options parsed by us, so they get completers here (typer's ``autocompletion=``: it passes the
context and the text typed so far by their annotations). A completer never fails: a broken
config or a missing store completes nothing rather than printing an error into the shell.

The app's group hands every run to :func:`run_completion` and :func:`guard_install`, so a
completion request or ``--install-completion`` that cannot be served is one ``error:`` line and
exit 2, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click


def complete_level(incomplete: str) -> list[str]:
    """Confluent's compatibility levels that start with what was typed (any case)."""
    from schemacli.contracts.evolution.levels import Level

    typed = incomplete.upper()
    return [level.value for level in Level if level.value.startswith(typed)]


def complete_subject(ctx: click.Context, incomplete: str) -> list[str]:
    """The subjects of the local store (its ``subjects/`` folders) that start with the text."""
    try:
        from schemacli.config import load_settings

        store = ctx.params.get("store") or load_settings().store
        subjects = Path(store) / "subjects"
        names = sorted(p.name for p in subjects.iterdir() if p.is_dir())
    except Exception:  # completion must never break the shell: nothing to offer
        return []
    return [name for name in names if name.startswith(incomplete)]


# -- the edge: completion requests and --install-completion never end in a traceback ----------

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
SCRIPT_HINT = (
    "Load the script that `schemacli --show-completion SHELL` prints (or run "
    "`schemacli --install-completion SHELL`); the shell then sets these variables itself."
)


def run_completion(complete: Callable[[], None], complete_var: str) -> None:
    """Answer a completion request (typer's ``complete``, which exits) when ``complete_var`` is
    set; return when it is not. A request that cannot be answered — an unknown shell, bash's
    COMP_WORDS missing or COMP_CWORD not a number, anything failing inside click — is one
    ``error:`` line and exit 2, never a traceback in the user's shell.

    Click documents ``bash_source``; typer reads ``source_bash``: both spellings work.
    """
    value = os.environ.get(complete_var)
    if not value:
        complete()  # nothing asked: typer returns at once
        return
    first, _, second = value.partition("_")
    if first in SHELLS and second in ("source", "complete"):
        first, second = second, first
        os.environ[complete_var] = f"{first}_{second}"
    instruction, shell = first, second
    if instruction not in ("source", "complete") or shell not in SHELLS:
        _fail(
            f"{complete_var}={value!r} is not a completion request schemacli knows",
            hint=f"Use source_SHELL or complete_SHELL, SHELL one of {', '.join(SHELLS)}. "
            + SCRIPT_HINT,
        )
    if instruction == "complete" and shell == "bash":
        words, cword = os.environ.get("COMP_WORDS"), os.environ.get("COMP_CWORD")
        if words is None or cword is None or not cword.strip().lstrip("-").isdigit():
            _fail(
                f"{complete_var}=complete_bash needs COMP_WORDS (the command line) and "
                f"COMP_CWORD (the number of the word being completed); got "
                f"COMP_WORDS={'unset' if words is None else repr(words)}, "
                f"COMP_CWORD={'unset' if cword is None else repr(cword)}",
                hint=SCRIPT_HINT,
            )
    try:
        complete()
    except Exception as err:  # completion must never put a traceback into the shell
        _fail(f"shell completion failed: {type(err).__name__}: {err}", hint=SCRIPT_HINT)


def guard_install(params: list[click.Parameter]) -> None:
    """Make ``--install-completion`` report a file it cannot write (an unwritable HOME, a file
    where its folder must be) as an error and exit 2, not a traceback. Idempotent."""
    for param in params:
        callback = param.callback
        if param.name != "install_completion" or callback is None:
            continue
        if getattr(callback, "_schemacli_guarded", False):
            continue

        def guarded(
            ctx: click.Context,
            param: click.Parameter,
            value: Any,
            _cb: Callable[[click.Context, click.Parameter, Any], Any] = callback,
        ) -> Any:
            try:
                return _cb(ctx, param, value)
            except OSError as err:
                from schemacli.atomicwrite import why  # its tempfile and shutil: when failing

                where = f" {err.filename}" if err.filename else ""
                _fail(
                    f"cannot install the shell completion: cannot write{where}: {why(err)}",
                    hint="Make your home folder (HOME) writable, or load the script that "
                    "`schemacli --show-completion SHELL` prints from your shell's startup file.",
                )

        guarded._schemacli_guarded = True  # type: ignore[attr-defined]
        param.callback = guarded


def _fail(message: str, *, hint: str) -> NoReturn:
    # the errors' words: loaded only when completion fails (every start runs this module)
    from schemacli.errors import ExitCode, UsageError, error_text

    click.echo(error_text(UsageError(message, hint=hint)), err=True)
    sys.exit(int(ExitCode.INPUT_ERROR))
