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

A ``copy`` of a record or an array of the same shape and names all the way down (nothing inside
that Spark's row round trip would change: no decimals, maps or unions of several types) is a
plain ``copy`` too. Everything else (records built field by field, maps, unions of several
types, other logical type changes, narrowing, parsing into float/double with ``on_error:
default``, ``to_string``, bytes <-> string, ``to_enum``, ``convert: sql``, a ``key:`` section)
is the SQL road's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType, same_type, view
from converters.mapping.sql import PROMOTIONS, compile_mapping, fits

COPYABLE = ("int", "long", "float", "double", "boolean", "string", "bytes")
LITERALS = ("int", "long", "float", "double", "boolean", "string")
PARSED = ("float", "double")
MAX_DECIMAL_PRECISION = 38
# logical types copied as they are (the same logical type on the same Avro type both sides)
COPIED_LOGICAL = (
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "local-timestamp-millis",
    "local-timestamp-micros",
    "uuid",
    "decimal",
)


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
    if rule.convert not in (Conversion.COPY, Conversion.PARSE_NUMBER):
        return f"convert: {rule.convert.value}"
    src = v2.get(rule.source or "")
    if src is None:
        return f"`from: {rule.source}` is not a top-level v2 field"
    source = _unwrap(src.type)
    if not _plain(source):
        return f"v2 type {src.type.describe()} (unions of several types and logical types)"
    op = _value_operation(rule, f, src, source, target)
    if isinstance(op, str) or not src.type.nullable:
        return op
    return _on_null(rule, f, op)


def _value_operation(
    rule: Rule, f: AvroField, src: AvroField, source: AvroType, target: AvroType
) -> dict[str, Any] | str:
    """The operation on a non-null v2 value."""
    sk, tk = source.kind, target.kind
    if rule.convert is Conversion.COPY and (source.logical or target.logical):
        return _logical_copy(src, source, target)
    if rule.convert is Conversion.COPY and sk == tk and sk in ("record", "array", "map"):
        why = _nested_why(source, target, set())
        if why is not None:
            return f"copy of {source.describe()}: {why}"
        return {"op": "copy", "source": src.name}
    if rule.convert is Conversion.COPY and sk == tk == "enum":
        if not set(source.symbols) <= set(target.symbols):
            return f"copy of {source.describe()}: v1's enum lacks some of its symbols"
        return {"op": "enum", "source": src.name}
    if rule.convert is Conversion.COPY and sk == tk == "fixed":
        if source.json.get("size") != target.json.get("size"):
            return f"copy of {source.describe()} into a fixed of another size"
        return {"op": "fixed", "source": src.name}
    if source.logical or target.logical:
        return f"convert: {rule.convert.value} of a logical type ({src.type.describe()})"
    if rule.convert is Conversion.COPY:
        if sk == tk and tk in COPYABLE:
            return {"op": "copy", "source": src.name}
        if (sk, tk) in PROMOTIONS:
            return {"op": "promote", "source": src.name, "to": tk}
        return f"copy of {src.type.describe()}"
    if rule.convert is Conversion.PARSE_NUMBER and sk == "string" and tk in ("int", "long"):
        return _parse_integral(rule, f, src, target)
    if rule.convert is Conversion.PARSE_NUMBER and sk == "string" and tk in PARSED:
        if rule.on_error is not Policy.FAIL:
            return "parse_number with on_error: default"
        return {
            "op": "parse",
            "source": src.name,
            "to": tk,
            "reason_head": f"{rule.target}: cannot convert ",
            "reason_tail": f" to {target.describe()}",
        }
    return f"convert: {rule.convert.value} from {src.type.describe()} to {f.type.describe()}"


def _logical_copy(src: AvroField, source: AvroType, target: AvroType) -> dict[str, Any] | str:
    """A copy of a logical type: the same logical type on the same Avro type (decimals of the
    same precision and scale, fixed of the same size): the value's bytes as they are."""
    same = (
        source.kind == target.kind
        and source.logical == target.logical
        and all(source.json.get(k) == target.json.get(k) for k in ("precision", "scale", "size"))
    )
    if not same or source.logical not in COPIED_LOGICAL:
        return (
            f"copy of {source.describe()} into {target.describe()} (the fast road copies a "
            "logical type only into the same logical type)"
        )
    if source.logical == "decimal":
        precision = source.json.get("precision")
        if not isinstance(precision, int) or not 0 < precision <= MAX_DECIMAL_PRECISION:
            return f"a decimal of precision {precision} (Spark's decimals hold up to 38 digits)"
        # Spark reads a decimal into its DECIMAL(p, s): one with more digits than its precision
        # (or no bytes) fails the decode (the dead letter "undecodable Avro body"); to_avro writes
        # a bytes decimal's unscaled value in its shortest form
        return {"op": "decimal", "source": src.name, "precision": precision}
    if source.kind == "fixed":  # a uuid on a fixed(16): Spark's reading of it is not proven
        return f"copy of {source.describe()} (a logical type on a fixed other than decimal)"
    return {"op": "copy", "source": src.name}


def _nested_why(s: AvroType, t: AvroType, seen: set[str]) -> str | None:
    """Why a record or array of v2 type ``s`` cannot be copied as it is into v1 type ``t``
    (None when it can): the same shape all the way down (``same_type``: field names, order,
    union branches), the same names (Avro resolves a union's branch by name), and nothing whose
    bytes Spark's row round trip would change (decimals, maps, unions of several types) or that
    the SQL road cannot read (a recursive type)."""
    if s.kind == "map":
        return "maps (Spark's row round trip may reorder their entries)"
    if s.kind == "union":
        if not (s.nullable and len(s.branches) == 2 and same_type(s, t)):
            return "unions of several types"
        return _nested_why(s.non_null(), t.non_null(), seen)
    if s.logical == "decimal" or (s.logical is not None and s.logical not in COPIED_LOGICAL):
        return f"a nested {s.describe()}"
    if s.kind in ("record", "enum", "fixed") and s.name != t.name:
        return f"a nested {s.describe()} named {t.name} in v1"
    if not same_type(s, t) if s.kind != "record" else len(s.fields) != len(t.fields):
        return f"a nested {s.describe()} that is not v1's {t.describe()}"
    if s.kind == "array" and s.items is not None and t.items is not None:
        return _nested_why(s.items, t.items, seen)
    if s.kind == "record":
        if s.name in seen:
            return f"a recursive {s.describe()}"
        inner = seen | {s.name or ""}
        for x, y in zip(s.fields, t.fields, strict=True):
            if x.name != y.name:
                return f"a nested {s.describe()} that is not v1's {t.describe()}"
            why = _nested_why(x.type, y.type, inner)
            if why is not None:
                return why
    return None


def _parse_integral(
    rule: Rule, f: AvroField, src: AvroField, target: AvroType
) -> dict[str, Any] | str:
    """``parse_number`` of a string into an int or long: Spark's ``try_cast(s AS INT|BIGINT)``
    (ANSI: ASCII whitespace and control characters trimmed, an optional sign, ASCII digits only, in
    range); a failure dead-letters the record (``on_error: fail``) or gives the default."""
    op: dict[str, Any] = {
        "op": "parse_int",
        "source": src.name,
        "to": target.kind,
        "reason_head": f"{rule.target}: cannot convert ",
        "reason_tail": f" to {target.describe()}",
    }
    if rule.on_error is Policy.DEFAULT:
        value = rule.default if rule.has_default else f.default
        if not fits(value, f.type):
            return f"a default of type {f.type.describe()}"
        op["on_fail"] = "default"
        op["fail_value"] = value
    return op


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
