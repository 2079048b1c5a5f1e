"""Kafka's rules for topic names, so a bad name is refused before it reaches a broker or a file.

Kafka (``org.apache.kafka.common.internals.Topic.validate``) accepts 1 to 249 characters of ASCII
letters, digits, ``.``, ``_`` and ``-``, except ``.`` and ``..``. Names that follow these rules
are also safe in a path, a shell word and a generated Python module.
"""

from __future__ import annotations

import re

MAX_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")

TOPIC_HINT = (
    "A Kafka topic name has 1 to 249 characters: ASCII letters, digits, '.', '_' and '-' "
    "(and is not '.' or '..')."
)


def topic_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a Kafka topic name, or None if Kafka accepts it."""
    if not name:
        return "is empty"
    if name in (".", ".."):
        return f"cannot be {name!r}"
    if len(name) > MAX_LENGTH:
        return f"is {len(name)} characters long; Kafka allows at most {MAX_LENGTH}"
    if not _LEGAL.fullmatch(name):
        bad = sorted({c for c in name if not _LEGAL.fullmatch(c)})
        return "contains " + ", ".join(repr(c) for c in bad) + ", which Kafka does not allow"
    return None
