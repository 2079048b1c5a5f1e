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


class Progress:
    """A count of work done, drawn as a bar on stderr when stderr is a terminal, and nothing
    otherwise: call it with (done, total) as often as you like; :meth:`close` when finished.
    The bar is made at the first call, when the total is known."""

    def __init__(self, label: str, *, threshold: int = 1) -> None:
        self.label, self.threshold = label, threshold
        self.bar: Any = None
        self.shown = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.shown or total < self.threshold:
            return
        if self.bar is None:
            self.bar = click.progressbar(
                length=total, label=self.label, file=sys.stderr, show_pos=True
            )
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
