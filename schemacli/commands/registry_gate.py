"""The `gate --registry URL [--register]` branch of `schemacli gate` (called from gate.py)."""

from __future__ import annotations

import sys
from typing import Any

import typer

from schemacli.errors import UsageError
from schemacli.registry.settings import RegistryFlags


def gate_with_registry(
    flags: RegistryFlags,
    settings: Any,
    head: Any,
    against: str | None,
    register: bool,
    output: Any,
    quiet: bool,
) -> None:
    """Check the store against the registry, register if asked and all passed, render, exit.

    ``flags`` are the registry options of `gate` (``flags.url`` is --registry); the client is
    built from them here, once, and handed to the core.

    Exit 0 pass (and registered), 1 a violation (nothing registered), 2 input error,
    3 registry or network error.
    """
    from schemacli.commands.registry_options import connect, progress
    from schemacli.output import gate_report, render
    from schemacli.registry.gate import registry_gate

    if against is not None:
        raise UsageError(
            "--against and --registry are two different histories; give one.",
            hint="--registry checks against production history; --against git:REF against the "
            "store at a git ref.",
        )
    if flags.url is None and register:
        raise UsageError("--register needs --registry URL.")

    def each(names):
        return progress(names, len(names), "gate") if not quiet else names

    def done(result):
        if not quiet:
            typer.echo(result.describe(), err=True)

    with connect(flags, settings=settings) as conn:
        if not quiet:
            where = head.source("").rstrip("/")
            typer.echo(f"gate: checking {where} against {conn.url}", err=True)
        gate, registered = registry_gate(
            conn.client, settings, head, register=register, each=each, on_done=done
        )
    typer.echo(render(gate_report(gate.report), output, color=sys.stdout.isatty()), nl=False)
    if register and not gate.passed:
        typer.echo("gate: FAILED — nothing was registered (all or nothing)", err=True)
    elif register and not quiet:
        typer.echo(f"gate: passed — {len(registered)} version(s) registered", err=True)
    raise typer.Exit(int(gate.report.verdict.exit_code))
