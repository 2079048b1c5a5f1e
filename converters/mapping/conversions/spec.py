"""What a conversion is: one spec carrying what it accepts, how it fails and what each road
makes of it.

A :class:`ValueSpec` turns one non-null v2 value into one v1 value. It says which pairs of
types it accepts (``accepts``: anything else is a ``TYPE_MISMATCH``), which pairs the planner
proposes it for (``propose``), and its emitters: the Spark SQL of the SQL road (``sql``), the
JSONata of the migration rules (``jsonata``, ``invert`` for UPGRADE), the Python preview of
``validate``'s dry run (``preview``), the fast road's operation (``fast``; interpreted by the
JVM writer's ``RecordPlan``) and a value the dry run's samples use (``sample``). Null handling
and the ``on_error`` policy are the same for every conversion, so each road writes them once
around the spec's value: a spec only says *when its conversion fails* (the condition ``sql``
and ``jsonata`` return, the :class:`Failed` ``preview`` raises, the ``reason_head`` of a fast
road operation).

The other conversions (``record``, ``default``, ``sql``, ``unresolved``) are shapes of the
mapping rather than functions of a value: each road's walker handles them, and their
:class:`Spec` carries their documentation and failure policy only.

Every emitter is called only with types ``accepts`` took, each without its null branch (the
SQL compiler reports the others as findings, and the other roads refuse a mapping with errors).
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from converters.mapping.model import Conversion, Rule
from converters.mapping.schemaview import AvroField, AvroType

NUMERIC = ("int", "long", "float", "double")
FLOAT_MAX = 3.4028234663852886e38
# the JSONata engine the migration rules are written for (what `jsonata` refusals name)
JSONATA_ENGINE = "jsonata-python (confluent-kafka's JSONata executor)"


class Failed(Exception):
    """The preview's conversion of one value failed: the SQL road's failure condition holds."""


@dataclass(frozen=True)
class Doc:
    """A conversion's row in docs/migration.md's table: which types, the Spark SQL of a field
    ``f``, when it fails."""

    from_to: str
    sql: str
    fails: str


@dataclass(frozen=True)
class Proposed:
    """The planner proposes the conversion, with a note for the person reading the plan."""

    note: str | None = None


@dataclass(frozen=True)
class Jsonata:
    """The DOWNGRADE JSONata of a non-null v2 value ``$v``: ``value``, and ``failed``, a
    condition true when the conversion failed. ``bind`` is evaluated first (``$n := ...``) and
    both read what it binds; ``helpers`` are the functions it calls (name, body of
    ``function($v)``), defined once at the top of the rule."""

    value: str
    failed: str | None = None
    bind: str | None = None
    helpers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Operand:
    """One rule on its two top-level fields, as the fast road plans it: ``source`` and
    ``target`` are the two fields' types, a nullable's value type (``["null", T]`` -> ``T``)."""

    rule: Rule
    v2: AvroField
    v1: AvroField
    source: AvroType
    target: AvroType


class Spec:
    """A conversion of the catalogue: its documentation row and whether ``on_error`` matters
    for it (``can_fail``). Subclasses set the class attributes."""

    conversion: ClassVar[Conversion]
    doc: ClassVar[Doc | None]  # None: not in the table (``unresolved``)
    can_fail: ClassVar[bool]

    def doc_row(self) -> str | None:
        """The conversion's row of docs/migration.md's table (a test keeps the two equal)."""
        if self.doc is None:
            return None
        d = self.doc
        return f"| `{self.conversion.value}` | {d.from_to} | {d.sql} | {d.fails} |"


class ValueSpec(Spec, ABC):
    """A conversion of one non-null v2 value into one v1 value, with every road's emitter.

    ``on_fast_road``: the JVM writer has an operation for it (``fast`` gives it, or why not for
    these types); else a rule using it takes the SQL road (``convert: <name>``)."""

    on_fast_road: ClassVar[bool] = False

    @abstractmethod
    def accepts(self, source: AvroType, target: AvroType) -> bool:
        """Whether it turns a v2 ``source`` value into a v1 ``target`` one."""
        raise NotImplementedError

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        """Whether ``migrate plan`` proposes it for these types (first in catalogue order)."""
        return None

    @abstractmethod
    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        """The Spark SQL of the v2 expression ``value`` (``spark``: the v1 type's Spark SQL
        name): the converted value, and the condition meaning "it failed" (None: never)."""
        raise NotImplementedError

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        """The DOWNGRADE JSONata, or why JSONata cannot express it (a refusal's words)."""
        return no_jsonata(source, target)

    def invert(self, v1: AvroType, v2: AvroType) -> str | None:
        """UPGRADE: the JSONata giving the v2 value back from the v1 value ``$v`` exactly, or
        None when the conversion has no exact inverse."""
        return None

    @abstractmethod
    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        """The v1 value of the v2 ``value`` as fastavro holds it; raises Failed."""
        raise NotImplementedError

    def fast(self, o: Operand) -> dict[str, Any] | str:
        """The fast road's operation (JSON for ``RecordPlan``), or why these types need the SQL
        road. Called only when ``on_fast_road``."""
        return f"convert: {self.conversion.value}"

    def sample(self, rng: random.Random, target: AvroType) -> Any:
        """A v2 value this conversion turns into a value of ``target`` (the dry run's every
        other sample holds one, so both outcomes show), or None: fastavro's random value."""
        return None


def jsonata_string(text: str) -> str:
    """A JSONata string literal (JSON's escapes are JSONata's)."""
    return json.dumps(text, ensure_ascii=False)


def no_jsonata(source: AvroType, target: AvroType) -> str:
    return f"no JSONata for {source.describe()} -> {target.describe()}"
