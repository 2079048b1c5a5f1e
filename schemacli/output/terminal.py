"""Text that is safe to print on a terminal.

Names and messages can come from outside: a registry's subjects and error messages, file names,
schema names. A control character among them (ESC, BEL, C1 such as CSI) or a bidi override
could retitle, recolour or rewrite the user's terminal, so text output shows them as visible
escapes like ``\\x1b``. JSON output needs none of this: JSON escapes them itself.

Safe also means without secrets: :func:`printable` first masks URL user info and every secret
the process was given (``schemacli.redact``), so whatever prints through it cannot show one.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str, *, keep: str = "") -> str:
    """``text`` redacted (``schemacli.redact``), then with control characters and bidi
    overrides (except those in ``keep``) escaped."""
    from schemacli.redact import redact

    text = redact(text)

    def safe(char: str) -> str:
        if char in keep:
            return char
        if unicodedata.category(char) == "Cc" or char in _BIDI:
            return char.encode("unicode_escape").decode("ascii")
        return char

    return "".join(map(safe, text))


def echo(text: str, **kwargs: Any) -> None:
    """``click.echo`` of :func:`printable` text (line breaks and tabs kept): for text output that
    shows names or values from a registry or a file."""
    import click

    click.echo(printable(text, keep="\n\t"), **kwargs)
