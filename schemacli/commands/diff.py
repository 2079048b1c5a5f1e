"""``schemacli diff``: what changed between two schemas, and what each level makes of it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from schemacli.commands.options import Output
from schemacli.errors import UsageError
from schemacli.output import OutputFormat, diff_report, render


def diff_command(
    old: Annotated[Path, typer.Argument(help="The earlier schema (.avsc; - for stdin).")],
    new: Annotated[Path, typer.Argument(help="The later schema (.avsc; - for stdin).")],
    output: Output = OutputFormat.text,
) -> None:
    """Show what changed from OLD to NEW, field by field, and the verdict at every level.

    BACKWARD: NEW can read data written with OLD; FORWARD: OLD can read data written with
    NEW; FULL: both. Exit codes: 0 the diff was computed (whatever it says), 2 usage or
    input error.
    """
    from schemacli.contracts.avro.loader import load_schema_file
    from schemacli.contracts.evolution.diff import diff as compute
    from schemacli.contracts.jsontext.source import is_stdin

    if is_stdin(old) and is_stdin(new):
        raise UsageError(
            "OLD and NEW cannot both be - (standard input holds one schema)",
            hint="give one of them as a file",
        )
    result = compute(load_schema_file(old), load_schema_file(new))
    typer.echo(render(diff_report(result), output, color=sys.stdout.isatty()), nl=False)
