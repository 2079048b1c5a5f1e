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
* ``parse_int``: ``parse_number`` of a string into an int or long, Spark's ``try_cast`` (ANSI),
  with ``on_error: fail`` (the same reason as ``parse``) or ``on_error: default``;
* ``literal``: ``convert: default`` with a number, boolean or string (or null);
* ``enum``: an enum copied into a v1 enum holding every v2 symbol (any name, any order);
* ``fixed``: a fixed copied into a v1 fixed of the same size;
* ``decimal``: a decimal copied into the same decimal (precision <= 38): Spark's DECIMAL(p, s)
  round trip, so a value with more digits than its precision (or no bytes) is undecodable (a
  dead letter at the decode stage, as from_avro's), and a bytes decimal is written in its
  shortest form.

A copy of another logical type (date, time-*, timestamp-*, local-timestamp-*, uuid on a string)
into the same logical type on the same Avro type is a plain ``copy``. Each operation reads a
nullable field (``["null", T]`` or ``[T, "null"]``) too; ``if_null`` says what a null becomes,
as the SQL road's null rule: null in a nullable v1 field, else a dead letter (``<field>: v2 value
is null, v1 field is not nullable``) with ``on_error: fail`` or the default with ``on_error:
default``.

A ``copy`` of a record, an array or a map of the same shape and names all the way down is a
plain ``copy`` too (no unions of several types inside): the JVM gives each decimal inside
Spark's DECIMAL(p, s) round trip and each map the entry order Spark's row round trip gives it
(two Java hash maps, the first reused from record to record). Everything else (records built
field by field, unions of several types, other logical type changes, narrowing, parsing into
float/double with ``on_error: default``, ``to_string``, bytes <-> string, ``to_enum``,
``convert: sql``, a ``key:`` section) is the SQL road's.

Each conversion's operation is its spec's (``converters.mapping.conversions``: ``on_fast_road``
and ``fast``); this module adds what every operation shares, the null rule and the default an
``on_error: default`` takes, and the ``literal`` of ``convert: default``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from converters.mapping.conversions import value_spec
from converters.mapping.conversions.spec import Operand
from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType, view
from converters.mapping.sql import compile_mapping, fits

LITERALS = ("int", "long", "float", "double", "boolean", "string")


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
    return t.kind != "union"


def _unwrap(t: AvroType) -> AvroType:
    """``["null", T]`` / ``[T, "null"]`` -> ``T`` (the fast road reads a nullable field's
    value or null); any other type as it is."""
    if t.kind == "union" and t.nullable and len(t.branches) == 2:
        return t.non_null()
    return t


def _operation(rule: Rule, f: AvroField, v2: dict[str, AvroField]) -> dict[str, Any] | str:
    """The operation of v1 field ``f``, or why it needs the SQL road."""
    target = _unwrap(f.type)
    if not _plain(target):
        return f"v1 type {f.type.describe()} (unions of several types and logical types)"
    tk = target.kind
    if rule.convert is Conversion.DEFAULT:
        value = rule.default if rule.has_default else f.default
        if tk not in LITERALS or target.logical is not None or not fits(value, f.type):
            return f"a default of type {f.type.describe()}"
        return {"op": "literal", "value": value}
    spec = value_spec(rule.convert)
    if spec is None or not spec.on_fast_road:
        return f"convert: {rule.convert.value}"
    src = v2.get(rule.source or "")
    if src is None:
        return f"`from: {rule.source}` is not a top-level v2 field"
    source = _unwrap(src.type)
    if not _plain(source):
        return f"v2 type {src.type.describe()} (unions of several types and logical types)"
    op = _on_fail(rule, f, spec.fast(Operand(rule, src, f, source, target)))
    if isinstance(op, str) or not src.type.nullable:
        return op
    return _on_null(rule, f, op)


def _on_fail(rule: Rule, f: AvroField, op: dict[str, Any] | str) -> dict[str, Any] | str:
    """An operation that takes the default when it fails (``on_fail``, the rule's
    ``on_error: default``) gets the rule's (or v1's) default, when that is a value of v1's type."""
    if isinstance(op, str) or op.get("on_fail") != "default":
        return op
    value = rule.default if rule.has_default else f.default
    if not fits(value, f.type):
        return f"a default of type {f.type.describe()}"
    return {**op, "fail_value": value}


def _on_null(rule: Rule, f: AvroField, op: dict[str, Any]) -> dict[str, Any] | str:
    """What a null v2 value becomes (the SQL road's ``_finish``): null in a nullable v1 field;
    else, with ``on_error: fail``, a dead letter (``<field>: v2 value is null, v1 field is not
    nullable``), with ``on_error: default``, the default."""
    if f.type.nullable:
        return {**op, "if_null": "null"}
    if rule.on_error is Policy.FAIL:
        reason = f"{rule.target}: v2 value is null, v1 field is not nullable"
        return {**op, "if_null": "fail", "null_reason": reason}
    value = rule.default if rule.has_default else f.default
    if f.type.kind not in LITERALS or not fits(value, f.type):
        return f"a default of type {f.type.describe()}"
    return {**op, "if_null": "default", "null_value": value}
