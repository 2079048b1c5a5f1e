"""Ctrl-C during start-up: one line and exit 130, never a traceback.

Python turns SIGINT into KeyboardInterrupt wherever the main thread is; during start-up that is
inside an import (click, typer, a command's module), and Python prints the traceback. So the
console script (``schemacli.entry``) first answers SIGINT itself (:func:`answer_during_start_up`):
``interrupted`` on stderr and exit 130, nothing else. Start-up writes nothing, so there is
nothing to clean up. The command proper gets Python's own handler back when it starts
(:func:`command_starts`, called by ``app.SchemacliGroup.invoke``), so its ``finally`` blocks
and temporary files are cleaned up as ever, and the error edge there says the same line with
the same code.

Imports only the standard library's ``os`` and ``signal``: it is loaded before the handler is
in place.
"""

import os
import signal

INTERRUPTED = "interrupted"  # what an interrupted run says on stderr (the error edge too)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a process Ctrl-C stopped


def _interrupted_during_start_up(signum: int, frame: object) -> None:
    os.write(2, f"{INTERRUPTED}\n".encode())
    os._exit(EXIT_INTERRUPTED)  # nothing was written yet; no import is left half-done to unwind


def answer_during_start_up() -> None:
    """Answer SIGINT with one line and exit 130 until :func:`command_starts` (not when SIGINT
    is ignored, as under ``nohup`` or a shell's background job)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted_during_start_up)


def command_starts() -> None:
    """Start-up is over: SIGINT is Python's KeyboardInterrupt again, which the command's
    ``finally`` blocks and the error edge handle. Nothing when another handler is in place."""
    if signal.getsignal(signal.SIGINT) is _interrupted_during_start_up:
        signal.signal(signal.SIGINT, signal.default_int_handler)
