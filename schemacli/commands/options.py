"""Options shared by several commands, declared once as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

import click
import typer

from schemacli.output import OutputFormat, TextOrJson


def _remember_output(
    ctx: click.Context, value: OutputFormat | TextOrJson | None
) -> OutputFormat | TextOrJson | None:
    # Errors raised later are rendered by SchemacliGroup; it reads the format from ctx.meta.
    if value is not None:
        from schemacli.app import OUTPUT_META_KEY

        ctx.meta[OUTPUT_META_KEY] = value.value
    return value


Output = Annotated[
    OutputFormat,
    typer.Option(
        "--output",
        "-o",
        help="Result format: text for people; json for machines; junit / github for CI reports; "
        "sarif for code scanning; gitlab for GitLab code quality.",
        callback=_remember_output,
        case_sensitive=False,
    ),
]

# Commands whose result is not a list of findings: text or json only, so that junit / github
# are refused rather than silently answered with text.
JsonOutput = Annotated[
    TextOrJson,
    typer.Option(
        "--output",
        "-o",
        help="Result format: text for people; json for machines.",
        callback=_remember_output,
        case_sensitive=False,
    ),
]

Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Treat warnings (things Java accepts but other Avro readers refuse) as errors.",
    ),
]
