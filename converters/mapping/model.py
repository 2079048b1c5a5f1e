"""The mapping's model: which v2 value becomes each v1 field, and what happens when it cannot.

The dataclasses a mapping file reads into (``converters.mapping.reader``) and is written from
(``converters.mapping.dump``), and the catalogue of conversions. Imports nothing heavy: the CLI's
renderers use it without loading YAML, Spark or Kafka.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from schemacli.contracts.jsontext.positions import Positions
from schemacli.errors import Location, UsageError

FORMAT_VERSION = 1
MAX_VERSION = 2**31 - 1  # registry versions are Java ints


class Policy(StrEnum):
    """What a field does when its conversion fails for a record."""

    FAIL = "fail"  # the whole record goes to the dead-letter topic, with the reason in a header
    DEFAULT = "default"  # the field takes its default (the rule's ``default``, else v1's default)


class Conversion(StrEnum):
    """The catalogue of conversions. Each becomes a Spark SQL expression (``converters.sql``)."""

    COPY = "copy"  # same type (or an Avro promotion: int->long/float/double, float->double ...)
    PARSE_NUMBER = "parse_number"  # string -> int/long/float/double; fails on non-numbers
    NARROW = "narrow"  # long -> int (fails on overflow), double -> float (fails on overflow)
    TO_STRING = "to_string"  # enum/boolean/number -> string
    TO_ENUM = "to_enum"  # string/enum -> enum; fails when the value is not a v1 symbol
    BYTES_TO_STRING = "bytes_to_string"  # UTF-8 decode; fails on invalid UTF-8
    STRING_TO_BYTES = "string_to_bytes"  # UTF-8 encode
    RECORD = "record"  # a nested record built field by field (its fields are ``path.sub`` rules)
    DEFAULT = "default"  # v2 has no such field: the default value
    SQL = "sql"  # a hand-written Spark SQL expression (``expr``, optional ``error_when``)
    UNRESOLVED = "unresolved"  # no safe conversion: the mapping is not deployable until resolved


NO_DEFAULT = object()  # a rule without a `default:` (None is a default: null)


def _written(
    key: str | None = None,
    *,
    when: Callable[[Any], bool] | None = None,
    inline: bool = False,
    top_only: bool = False,
) -> dict[str, Any]:
    """A field's place in the mapping file (``dump``): its key there (default: the field's name),
    when it is written (``when(owner)``; default: when its value is not None), ``inline`` for an
    embedded schema (written only when asked for), ``top_only`` for what a ``key:`` section does
    not repeat. Fields are written in their declaration order."""
    return {"key": key, "when": when, "inline": inline, "top_only": top_only}


_SKIP: dict[str, Any] = {"skip": True}  # not part of the file format


def _resolved(when: Callable[[Rule], bool]) -> Callable[[Rule], bool]:
    # an `unresolved` marker is written as from + unresolved (+ note): nothing else applies
    return lambda r: r.convert is not Conversion.UNRESOLVED and when(r)


_POLICY_IMPLIED = (Conversion.COPY, Conversion.DEFAULT, Conversion.RECORD)  # cannot fail


@dataclass(frozen=True)
class Endpoint:
    """One side of the migration: where its schema comes from and which topic carries it."""

    subject: str | None = None
    version: int | str | None = None  # registry version or "latest"
    schema: str | None = None  # path of an .avsc file, relative to the mapping file
    topic: str | None = None
    schema_json: Any = field(  # loaded schema (file or inline)
        default=None, compare=False, metadata=_written(inline=True)
    )


@dataclass(frozen=True, kw_only=True)
class Rule:
    """How one v1 (target) field is produced. ``target`` and ``source`` are dotted paths.

    Fields are declared in the order the mapping file writes a rule's keys."""

    target: str = field(metadata=_SKIP)  # the rule's key under `fields:`
    source: str | None = field(default=None, metadata=_written("from"))
    convert: Conversion = field(
        metadata=_written(when=lambda r: r.convert is not Conversion.UNRESOLVED)
    )
    # convert=unresolved: why no safe conversion exists
    reason: str | None = field(
        default=None,
        metadata=_written("unresolved", when=lambda r: r.convert is Conversion.UNRESOLVED),
    )
    expr: str | None = field(  # convert=sql only
        default=None, metadata=_written(when=_resolved(lambda r: r.expr is not None))
    )
    error_when: str | None = field(  # convert=sql only: SQL condition meaning "conversion failed"
        default=None, metadata=_written(when=_resolved(lambda r: r.error_when is not None))
    )
    # written where a conversion can fail, or when it is not the default policy
    on_error: Policy = field(
        default=Policy.FAIL,
        metadata=_written(
            when=_resolved(
                lambda r: r.convert not in _POLICY_IMPLIED or r.on_error is Policy.DEFAULT
            )
        ),
    )
    # explicit default for policy=default / convert=default
    default: Any = field(
        default=NO_DEFAULT, metadata=_written(when=_resolved(lambda r: r.has_default))
    )
    note: str | None = field(  # planner's remark (lossy, alias used, ...)
        default=None, metadata=_written(when=lambda r: bool(r.note))
    )

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True, kw_only=True)
class Mapping:
    """A mapping file's content; fields are declared in the order the file writes them."""

    version: int = field(metadata=_written(top_only=True))
    source: Endpoint
    target: Endpoint
    dead_letter_topic: str | None = field(
        default=None, metadata=_written(when=lambda m: bool(m.dead_letter_topic), top_only=True)
    )
    rules: tuple[Rule, ...] = field(metadata=_written("fields"))
    origin: str | None = field(default=None, compare=False, metadata=_SKIP)  # the file it came from
    positions: Positions = field(
        default_factory=Positions, compare=False, repr=False, metadata=_SKIP
    )
    key: Mapping | None = None  # the key's own mapping; None: the key is copied byte for byte
    prefix: str = field(default="", metadata=_SKIP)  # "/key" for the key's mapping

    def rule(self, target: str) -> Rule | None:
        return next((r for r in self.rules if r.target == target), None)

    @property
    def unresolved(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.convert is Conversion.UNRESOLVED)

    def topics(self) -> tuple[str, str]:
        """``(v2 topic, v1 topic)``: the topic the converter reads and the one it writes. Raises
        UsageError when the mapping leaves either out (a plan may; the job needs both)."""
        v2, v1 = self.source.topic, self.target.topic
        if v2 is None or v1 is None:
            side = "source" if v2 is None else "target"
            raise UsageError(
                f"the mapping's {side} needs `topic:` for the converter",
                location=self.location(f"/{side}"),
                hint="The converter reads source.topic and writes target.topic.",
            )
        return v2, v1

    def location(self, pointer: str) -> Location:
        """Location of a key path (``/fields/total_amount/convert``) in the mapping file."""
        return self.positions.location(self.origin, self.prefix + pointer)

    def with_schemas(self, source_json: Any, target_json: Any) -> Mapping:
        return replace(
            self,
            source=replace(self.source, schema_json=source_json),
            target=replace(self.target, schema_json=target_json),
        )
