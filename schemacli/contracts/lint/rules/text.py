"""The JSON text itself (``validate``'s warnings too): comments, a key twice in one object, a
file that is not UTF-8. Java reads such files; fastavro, the ``avro`` package and strict JSON
parsers do not (tests/unit/test_source.py, tests/unit/test_source_encoding.py). The text's
reader (``contracts.jsontext.source``, ``contracts.jsontext.document.Document.notes``) finds
them as it reads.
"""

from __future__ import annotations

from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run
from schemacli.kinds import Kind

JSON_COMMENT = Rule(
    Kind.JSON_COMMENT,
    "json-comment",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="no // or /* */ comments in the JSON",
    validate=True,
)
DUPLICATE_KEY = Rule(
    Kind.DUPLICATE_KEY,
    "duplicate-key",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="no key twice in one JSON object",
    validate=True,
)
ENCODING_NOT_UTF8 = Rule(
    Kind.ENCODING_NOT_UTF8,
    "encoding-not-utf8",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="the file is UTF-8",
    validate=True,
)


def _start(run: Run) -> None:
    for note in run.loaded.document.notes:
        if run.on(note.kind):
            run.add(note.kind, note.location, note.message, note.hint)


FAMILY = Family((JSON_COMMENT, DUPLICATE_KEY, ENCODING_NOT_UTF8), start=_start)
