"""Field tags: which fields of an Avro schema carry which tags, as Confluent's serdes decide.

A field's full name is its record's full name, a dot and the field's name
(``com.acme.Order.email``). Its tags are the schema's own (``"confluent:tags": ["PII"]`` on the
field) plus every ``metadata.tags`` entry whose path matches the full name, where ``?`` is one
character, ``*`` any run within one dot-separated name and ``**`` any run across names
(Confluent's ``wildcard_match``). A CEL_FIELD rule runs on the fields sharing a tag with its
``tags`` (every field, when it has none).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from schemacli.contracts.avro.schema import (
    ArraySchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)

INLINE_TAGS = "confluent:tags"


@lru_cache(maxsize=1024)
def _wildcard(pattern: str) -> re.Pattern[str]:
    src = pattern.replace("**.*", "**")
    out: list[str] = []
    i = 0
    while i < len(src):
        c = src[i]
        i += 1
        if c == "*":
            if i < len(src) and src[i] == "*":
                out.append(".*")
                i += 1
            else:
                out.append("[^.]*")
        elif c == "?":
            out.append("[^.]")
        else:
            out.append(re.escape(c))
    return re.compile("".join(out))


def wildcard_match(text: str, pattern: str) -> bool:
    """Whether ``text`` (a field's full name) matches a metadata.tags path ``pattern``."""
    return _wildcard(pattern).fullmatch(text) is not None


@dataclass(frozen=True)
class TaggedField:
    """One field of the schema, wherever it nests: its full name, the record it is in, the
    field's own schema, the path of names from the top record, and its tags."""

    full_name: str
    record: RecordSchema
    name: str
    schema: Schema
    path: tuple[str, ...]
    pointer: str
    inline: frozenset[str]
    tags: frozenset[str]


def inline_tags(field_props: Mapping[str, object]) -> frozenset[str]:
    value = field_props.get(INLINE_TAGS)
    if isinstance(value, list):
        return frozenset(t for t in value if isinstance(t, str))
    return frozenset()


def fields(
    schema: Schema, metadata_tags: Mapping[str, tuple[str, ...]] = {}
) -> Iterator[TaggedField]:
    """Every field of every record reachable from ``schema`` (each record once), with its
    tags (inline and metadata)."""
    seen: set[str] = set()

    def walk(node: Schema, path: tuple[str, ...]) -> Iterator[TaggedField]:
        if isinstance(node, UnionSchema):
            for branch in node.types:
                yield from walk(branch, path)
        elif isinstance(node, ArraySchema):
            yield from walk(node.items, path)
        elif isinstance(node, MapSchema):
            yield from walk(node.values, path)
        elif isinstance(node, RecordSchema):
            if node.fullname in seen:
                return
            seen.add(node.fullname)
            for f in node.fields:
                full = f"{node.fullname}.{f.name}"
                own = inline_tags(f.props)
                meta = {t for p, ts in metadata_tags.items() if wildcard_match(full, p) for t in ts}
                yield TaggedField(
                    full, node, f.name, f.type, (*path, f.name), f.pointer, own, own | meta
                )
                yield from walk(f.type, (*path, f.name))

    yield from walk(schema, ())


def tags_of(
    record: RecordSchema, field_name: str, metadata_tags: Mapping[str, tuple[str, ...]]
) -> frozenset[str]:
    """The tags of one field of ``record``."""
    full = f"{record.fullname}.{field_name}"
    f = record.field_map.get(field_name)
    own = inline_tags(f.props) if f is not None else frozenset()
    return own | {t for p, ts in metadata_tags.items() if wildcard_match(full, p) for t in ts}


def selects(rule_tags: tuple[str, ...], field_tags: frozenset[str]) -> bool:
    """Whether a CEL_FIELD rule with ``rule_tags`` runs on a field with ``field_tags``."""
    return not rule_tags or not field_tags.isdisjoint(rule_tags)
