"""The console script's entry point: Ctrl-C at any moment of start-up is one line and exit 130
(``schemacli.interrupts``), then the app.

Imports only ``schemacli.interrupts`` (the standard library's ``os`` and ``signal``) before the
handler is in place, then sets the collector's policy (``schemacli.gcpolicy``: the process is
ours) before anything large is imported. ``schemacli --help`` alone is answered by
``schemacli.toplevel``, which writes the app's help page without loading click, typer or the
app.
"""

import os
import sys

from schemacli import interrupts


def main() -> None:
    """``schemacli``: the handler first, then the top-level help or the app (click, typer,
    the command asked for)."""
    interrupts.answer_during_start_up()
    from schemacli.gcpolicy import collect_rarely

    collect_rarely()  # before click, typer and the command load: their imports allocate much
    from schemacli import toplevel

    if toplevel.answers_help(sys.argv[1:], os.environ):
        sys.exit(toplevel.answer_help())
    from schemacli.app import main as run

    run()
