"""Printing text that is safe on a terminal: :func:`schemacli.redact.printable` (secrets masked,
control characters and bidi overrides escaped) on the way to ``click.echo``."""

from __future__ import annotations

from typing import Any

from schemacli.redact import printable


def echo(text: str, **kwargs: Any) -> None:
    """``click.echo`` of :func:`printable` text (line breaks and tabs kept): for text output that
    shows names or values from a registry or a file."""
    import click

    click.echo(printable(text, keep="\n\t"), **kwargs)
