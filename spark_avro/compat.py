"""Which writer schemas the reader cannot read, and why: the engine's findings, on the driver.

``decode_confluent`` never imports schemacli (it is copied into generated modules), so the
verdicts are computed here, once per writer id when a reader is built, and handed to it as text:
``{writer id: "KIND at /pointer: message; ..."}``. A generated module embeds that mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from schemacli.contracts.evolution.compat import CompatResult, check


def finding_text(result: CompatResult) -> str:
    """The engine's findings as one line: ``KIND at /pointer: message``, joined with ``; ``."""
    return "; ".join(
        f"{finding.kind} at {finding.location.pointer or '/'}: {finding.message}"
        for finding in result.findings
    )


def incompatible_writers(writer_schemas: Mapping[int, str], reader_schema: str) -> dict[int, str]:
    """``{writer id: finding text}`` for every writer ``reader_schema`` cannot read.

    Each pair is checked with ``schemacli.contracts.compat.check(reader=..., writer=...)``
    (memoised by schema text). Raises SchemaParseError when a schema is not valid Avro.
    """
    found: dict[int, str] = {}
    for schema_id, writer in sorted(writer_schemas.items()):
        result = check(reader=reader_schema, writer=writer)
        if not result.compatible:
            found[schema_id] = finding_text(result) or "the reader cannot read this writer"
    return found
