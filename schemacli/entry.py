"""The console script's entry point: Ctrl-C at any moment of start-up is one line and exit 130.

Python turns SIGINT into KeyboardInterrupt wherever the main thread is; during start-up that is
inside an import (click, typer, a command's module), and Python prints the traceback. So the
first thing this module does is answer SIGINT itself: ``interrupted`` on stderr and exit 130,
nothing else. Start-up writes nothing, so there is nothing to clean up. The command proper
gets Python's own handler back when it starts (``app.SchemacliGroup.invoke``), so its
``finally`` blocks and temporary files are cleaned up as ever, and the error edge there says the
same line with the same code.

Imports only the standard library's ``os`` and ``signal`` before the handler is in place.
"""

import os
import signal

INTERRUPTED = "interrupted"  # what an interrupted run says on stderr (app.py says it too)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a process Ctrl-C stopped


def _interrupted_during_start_up(signum: int, frame: object) -> None:
    os.write(2, f"{INTERRUPTED}\n".encode())
    os._exit(EXIT_INTERRUPTED)  # nothing was written yet; no import is left half-done to unwind


def main() -> None:
    """``schemacli``: the handler first, then the app (click, typer, the command asked for)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
        signal.signal(signal.SIGINT, _interrupted_during_start_up)
    from schemacli.app import main as run

    run()


def command_starts() -> None:
    """Start-up is over: SIGINT is Python's KeyboardInterrupt again, which the command's
    ``finally`` blocks and the error edge handle. Nothing when another handler is in place."""
    if signal.getsignal(signal.SIGINT) is _interrupted_during_start_up:
        signal.signal(signal.SIGINT, signal.default_int_handler)
