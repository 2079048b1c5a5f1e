"""Which subject a schema file belongs to.

A file in a store's ``subjects/<subject>/v<N>.avsc`` belongs to the subject its folder names
(``store_version``). For a file outside the store, Confluent's subject name strategies: a
producer's serializer derives the subject from the topic, the record's full name, or both;
``subject_for_file`` derives it from the file's name and its record the same way.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from schemacli.contracts.jsontext.source import STDIN_SOURCE, is_stdin
from schemacli.errors import UsageError


class NamingStrategy(StrEnum):
    """How a schema maps to a subject (Confluent's ``*.subject.name.strategy`` classes)."""

    TOPIC = "TopicNameStrategy"  # <topic>-key / <topic>-value
    RECORD = "RecordNameStrategy"  # <record full name>
    TOPIC_RECORD = "TopicRecordNameStrategy"  # <topic>-<record full name>


_STORE_VERSION = re.compile(r"v([1-9][0-9]{0,9})\.avsc")  # as the store names versions


def store_version(path: Path) -> tuple[str, int] | None:
    """``.../subjects/<subject>/v<N>.avsc`` -> (subject, N): a version file of a store (the
    path as given, made absolute, so ``v2.avsc`` run inside the subject's folder counts);
    None for any other path and for standard input."""
    if is_stdin(path):
        return None
    parts = Path(os.path.abspath(path)).parts
    if len(parts) < 3 or parts[-3] != "subjects":
        return None
    match = _STORE_VERSION.fullmatch(parts[-1])
    if match is None or not parts[-2]:
        return None
    return parts[-2], int(match.group(1))


def subject_for_file(path: Path, value: Any, strategy: NamingStrategy) -> str:
    """The subject a schema file belongs to: the folder's, for a store's version file (see
    ``store_version``); otherwise by the naming strategy.

    TopicNameStrategy: the file is named ``<topic>-key.avsc`` or ``<topic>-value.avsc``.
    RecordNameStrategy: the record's full name. TopicRecordNameStrategy: the file is named
    ``<topic>-<record full name>.avsc``. Raises UsageError (with the way out) otherwise.
    """
    in_store = store_version(path)
    if in_store is not None:
        return in_store[0]
    stem = path.name.removesuffix(".avsc")
    if is_stdin(path) and strategy is not NamingStrategy.RECORD:
        raise UsageError(
            f"cannot tell the subject of a schema on {STDIN_SOURCE}: {strategy.value} takes it "
            "from the file name",
            hint="pass --subject SUBJECT",
        )
    if strategy is NamingStrategy.TOPIC:
        if stem.endswith(("-key", "-value")):
            return stem
        raise UsageError(
            f"cannot tell the subject of {path}: with TopicNameStrategy the file must be named "
            "<topic>-key.avsc or <topic>-value.avsc",
            hint="pass --subject SUBJECT, or rename the file",
        )
    full_name = _full_name(value)
    if full_name is None:
        raise UsageError(
            f"cannot tell the subject of {path}: {strategy.value} needs a named schema "
            "(record, enum or fixed)",
            hint="pass --subject SUBJECT",
        )
    if strategy is NamingStrategy.RECORD:
        return full_name
    if stem.endswith("-" + full_name) and len(stem) > len(full_name) + 1:
        return stem
    raise UsageError(
        f"cannot tell the subject of {path}: with TopicRecordNameStrategy the file must be "
        f"named <topic>-{full_name}.avsc",
        hint="pass --subject SUBJECT, or rename the file",
    )


def _full_name(value: Any) -> str | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    name: str = value["name"]
    namespace = value.get("namespace")
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"
