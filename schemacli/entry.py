"""The console script's entry point: Ctrl-C at any moment of start-up is one line and exit 130
(``schemacli.interrupts``), then the app.

Imports only ``schemacli.interrupts`` (the standard library's ``os`` and ``signal``) before the
handler is in place.
"""

from schemacli import interrupts


def main() -> None:
    """``schemacli``: the handler first, then the app (click, typer, the command asked for)."""
    interrupts.answer_during_start_up()
    from schemacli.app import main as run

    run()
