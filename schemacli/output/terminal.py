"""Printing for people on a terminal: text made safe by :func:`schemacli.redact.printable`
(secrets masked, control characters and bidi overrides escaped) on the way to ``click.echo``,
and progress on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import click

from schemacli.redact import printable

T = TypeVar("T")


def echo(text: str, **kwargs: Any) -> None:
    """``click.echo`` of :func:`printable` text (line breaks and tabs kept): for text output that
    shows names or values from a registry or a file."""
    click.echo(printable(text, keep="\n\t"), **kwargs)


def progress(items: Iterable[T], total: int, label: str, *, threshold: int = 5) -> Iterator[T]:
    """Yield ``items``, showing a progress bar on stderr when there are ``threshold`` or more.

    Results go to stdout; the bar goes to stderr, and is drawn only on a terminal.
    """
    if total < threshold:
        yield from items
        return
    with click.progressbar(items, length=total, label=label, file=sys.stderr, show_pos=True) as bar:
        yield from bar
