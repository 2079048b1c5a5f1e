"""The one table of output formats: each format's module renders a report and an error.

Every module listed here exports the same two functions:

* ``render(report, *, color=False) -> str``: a :class:`~schemacli.output.Report` as the
  format's document, ending with a newline (``color`` is for a terminal: text only);
* ``render_error(err, *, command, compact=False) -> str``: a :class:`SchemacliError` that
  stopped ``command`` as the document a machine reading stdout expects (``""`` for text, whose
  words go to stderr through :func:`schemacli.errors.error_text`); ``compact``: on one line,
  for a stream of documents (JSON).

``schemacli.output.render`` and the CLI's error edge (``schemacli.app``) both read this table.
Importing it imports every format (xml.etree for JUnit, hashlib for GitLab: ~14 ms), so both
import it when they render, not when the CLI starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from schemacli.output import OutputFormat, github, gitlab, json_out, junit, sarif, text

if TYPE_CHECKING:
    from schemacli.errors import SchemacliError
    from schemacli.output import Report


class Format(Protocol):
    def render(self, report: Report, *, color: bool = False) -> str: ...

    def render_error(self, err: SchemacliError, *, command: str, compact: bool = False) -> str: ...


FORMATS: dict[OutputFormat, Format] = {
    OutputFormat.text: text,
    OutputFormat.json: json_out,
    OutputFormat.junit: junit,
    OutputFormat.github: github,
    OutputFormat.sarif: sarif,
    OutputFormat.gitlab: gitlab,
}
