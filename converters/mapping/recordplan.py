"""The fast road's plan: a mapping compiled to a record transform the JVM writer interprets.

The SQL road (``converters.mapping.sql``) runs every mapping: from_avro into Spark rows, the
mapping as Spark SQL, to_avro back. Most mappings need none of that: their rules copy a field,
widen a number or parse a string as a number. For those, the converter's JVM writer can convert
each message Avro to Avro in its Spark task (``dev.schemacli.converters.RecordPlan``), and Spark
keeps doing what it is there for (partitions, checkpoints, retries). :func:`record_plan` gives
that plan, one operation per v1 field, or says why the mapping takes the SQL road.

The operations have the SQL road's semantics exactly (a CI test compares the two roads' bytes
and dead-letter decisions on generated records):

* ``copy``: the v2 field as it is (the same primitive type);
* ``promote``: Avro's promotions (int -> long/float/double, long -> float/double, float ->
  double), Spark's ``CAST``;
* ``parse``: ``parse_number`` of a string into a float or double with ``on_error: fail``:
  Spark's ``try_cast`` (Java's parse, then ``inf``/``infinity``/``nan`` in any case), and only a
  finite number: NaN, ±Infinity and overflow fail, ``-0`` becomes 0.0; a failure dead-letters
  the record with the SQL road's reason, ``<field>: cannot convert <text> to <type>`` (reasons
  of several fields joined by ``; ``);
* ``literal``: ``convert: default`` with a number, boolean or string.

Everything else (nested records, unions and nullable fields, logical types, enums, narrowing,
parsing into int/long, ``on_error: default``, ``convert: sql``, a ``key:`` section) is the SQL
road's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType, view
from converters.mapping.sql import PROMOTIONS, compile_mapping, fits

COPYABLE = ("int", "long", "float", "double", "boolean", "string", "bytes")
LITERALS = ("int", "long", "float", "double", "boolean", "string")
PARSED = ("float", "double")


@dataclass(frozen=True)
class Road:
    """Which road a mapping takes: ``fields`` (the fast road's operations, in v1 order) when
    ``fast``, else ``why`` (the first thing only the SQL road does)."""

    fields: tuple[dict[str, Any], ...] = ()
    why: str | None = None

    @property
    def fast(self) -> bool:
        return self.why is None

    @property
    def name(self) -> str:
        return "fast" if self.fast else "sql"

    def describe(self) -> str:
        """One line for ``validate``/``plan`` output."""
        if self.fast:
            return (
                "fast road: Avro to Avro in the JVM writer (every rule is a copy, promotion, "
                "number parse or literal)"
            )
        return f"SQL road: {self.why}"


def record_plan(mapping: Mapping) -> Road:
    """The fast road's plan of ``mapping`` (schemas loaded), or the reason it takes the SQL road."""
    if mapping.key is not None:
        return Road(why="the mapping converts keys (a `key:` section)")
    compiled = compile_mapping(mapping)
    if any(f.severity == "error" for f in compiled.findings):
        return Road(why="the mapping has errors (`schemacli migrate validate`)")
    source = view(mapping.source.schema_json)
    target = view(mapping.target.schema_json)
    if source.kind != "record" or target.kind != "record":
        return Road(why="a side's schema is not a record")
    v2 = {f.name: f for f in source.fields}
    ops: list[dict[str, Any]] = []
    for f in target.fields:
        rule = mapping.rule(f.name)
        if rule is None:
            return Road(why=f"v1 field {f.name!r} has no rule")
        op = _operation(rule, f, v2)
        if isinstance(op, str):
            return Road(why=f"{f.name}: {op}")
        ops.append(op)
    if any("." in r.target for r in mapping.rules):
        return Road(why="rules for nested fields")
    return Road(fields=tuple(ops))


def _plain(t: AvroType) -> bool:
    return t.kind != "union" and t.logical is None


def _operation(rule: Rule, f: AvroField, v2: dict[str, AvroField]) -> dict[str, Any] | str:
    """The operation of v1 field ``f``, or why it needs the SQL road."""
    tk = f.type.kind
    if not _plain(f.type):
        return f"v1 type {f.type.describe()} (unions, nullable and logical types)"
    if rule.convert is Conversion.DEFAULT:
        value = rule.default if rule.has_default else f.default
        if tk not in LITERALS or not fits(value, f.type):
            return f"a default of type {f.type.describe()}"
        return {"op": "literal", "value": value}
    if rule.convert not in (Conversion.COPY, Conversion.PARSE_NUMBER):
        return f"convert: {rule.convert.value}"
    src = v2.get(rule.source or "")
    if src is None:
        return f"`from: {rule.source}` is not a top-level v2 field"
    if not _plain(src.type):
        return f"v2 type {src.type.describe()} (unions, nullable and logical types)"
    sk = src.type.kind
    if rule.convert is Conversion.COPY:
        if sk == tk and tk in COPYABLE:
            return {"op": "copy", "source": src.name}
        if (sk, tk) in PROMOTIONS:
            return {"op": "promote", "source": src.name, "to": tk}
        return f"copy of {src.type.describe()}"
    if rule.convert is Conversion.PARSE_NUMBER and sk == "string" and tk in PARSED:
        if rule.on_error is not Policy.FAIL:
            return "parse_number with on_error: default"
        return {
            "op": "parse",
            "source": src.name,
            "to": tk,
            "reason_head": f"{rule.target}: cannot convert ",
            "reason_tail": f" to {f.type.describe()}",
        }
    return f"convert: {rule.convert.value} from {src.type.describe()} to {f.type.describe()}"
