"""``copy``: the v2 value as it is, or widened by one of Avro's promotions."""

from __future__ import annotations

from typing import Any

from converters.mapping.conversions.spec import NUMERIC, Doc, Jsonata, Operand, Proposed, ValueSpec
from converters.mapping.model import Conversion
from converters.mapping.schemaview import AvroType, same_type
from schemacli.contracts.avro import facts

# Avro's own numeric promotions (what a v1 reader would accept from a v2 writer), as (v2, v1)
# pairs: copy with a cast
PROMOTIONS = frozenset(
    (writer, reader)
    for reader, writers in facts.PROMOTIONS.items()
    if reader in NUMERIC
    for writer in writers
)
_CONTAINERS = ("record", "array", "map", "union")
# what the fast road copies as it is
COPYABLE = ("int", "long", "float", "double", "boolean", "string", "bytes")
MAX_DECIMAL_PRECISION = 38
# logical types the fast road copies as they are (the same logical type on the same Avro type)
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


class Copy(ValueSpec):
    conversion = Conversion.COPY
    doc = Doc(
        "same type, or an Avro promotion (int→long/float/double, long→float/double, float→double)",
        "`` `f` `` or `` CAST(`f` AS BIGINT) ``",
        "never (a null into a non-null v1 field fails)",
    )
    can_fail = False
    on_fast_road = True

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        sk, tk = source.kind, target.kind
        if sk == tk and (sk != "enum" or set(source.symbols) <= set(target.symbols)):
            return sk not in _CONTAINERS or same_type(source, target)
        return (sk, tk) in PROMOTIONS

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        sk, tk = source.kind, target.kind
        if sk == tk == "enum":
            return Proposed() if set(source.symbols) <= set(target.symbols) else None
        if sk == tk:
            same = sk not in ("array", "map", "fixed") or same_type(source, target)
            return Proposed() if same and source.logical == target.logical else None
        if (sk, tk) in PROMOTIONS:
            return Proposed(f"Avro promotion {sk} -> {tk}")
        return None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        if source.kind == target.kind:
            return value, None
        return f"CAST({value} AS {spark})", None

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        # long -> float: Spark rounds once, fastavro twice (to double, then float)
        return Jsonata("$v")

    def invert(self, v1: AvroType, v2: AvroType) -> str | None:
        return copy_back(v1, v2)

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        return float(value) if target.kind in ("float", "double") else value

    def fast(self, o: Operand) -> dict[str, Any] | str:
        source, target, name = o.source, o.target, o.v2.name
        sk, tk = source.kind, target.kind
        if source.logical or target.logical:
            return _logical_copy(name, source, target)
        if sk == tk and sk in ("record", "array", "map"):
            why = _nested_why(source, target, set())
            if why is not None:
                return f"copy of {source.describe()}: {why}"
            return {"op": "copy", "source": name}
        if sk == tk == "enum":
            if not set(source.symbols) <= set(target.symbols):
                return f"copy of {source.describe()}: v1's enum lacks some of its symbols"
            return {"op": "enum", "source": name}
        if sk == tk == "fixed":
            if source.json.get("size") != target.json.get("size"):
                return f"copy of {source.describe()} into a fixed of another size"
            return {"op": "fixed", "source": name}
        if sk == tk and tk in COPYABLE:
            return {"op": "copy", "source": name}
        if (sk, tk) in PROMOTIONS:
            return {"op": "promote", "source": name, "to": tk}
        return f"copy of {o.v2.type.describe()}"


def copy_back(v1: AvroType, v2: AvroType) -> str | None:
    """UPGRADE of a value v2 -> v1 copied unchanged (the same type, or an enum into a wider
    one): ``$v``; None for anything else."""
    if v1.kind == v2.kind and (v1.kind != "enum" or set(v1.symbols) <= set(v2.symbols)):
        return "$v" if v1.kind not in _CONTAINERS or same_type(v1, v2) else None
    return None


def _logical_copy(name: str, source: AvroType, target: AvroType) -> dict[str, Any] | str:
    """A copy of a logical type: the same logical type on the same Avro type (decimals of the
    same precision and scale, fixed of the same size): the value's bytes as they are."""
    if not _same_logical(source, target) or source.logical not in COPIED_LOGICAL:
        return (
            f"copy of {source.describe()} into {target.describe()} (the fast road copies a "
            "logical type only into the same logical type)"
        )
    if source.logical == "decimal":
        why = _decimal_why(source)
        if why is not None:
            return why
        # Spark reads a decimal into its DECIMAL(p, s): one with more digits than its precision
        # (or no bytes) fails the decode (the dead letter "undecodable Avro body"); to_avro writes
        # a bytes decimal's unscaled value in its shortest form
        return {"op": "decimal", "source": name, "precision": source.json.get("precision")}
    if source.kind == "fixed":  # a uuid on a fixed(16): Spark's reading of it is not proven
        return f"copy of {source.describe()} (a logical type on a fixed other than decimal)"
    return {"op": "copy", "source": name}


def _same_logical(s: AvroType, t: AvroType) -> bool:
    """The same logical type on the same Avro type (decimals of the same precision and scale,
    fixed of the same size)."""
    return (
        s.kind == t.kind
        and s.logical == t.logical
        and all(s.json.get(k) == t.json.get(k) for k in ("precision", "scale", "size"))
    )


def _decimal_why(s: AvroType) -> str | None:
    precision = s.json.get("precision")
    if not isinstance(precision, int) or not 0 < precision <= MAX_DECIMAL_PRECISION:
        return f"a decimal of precision {precision} (Spark's decimals hold up to 38 digits)"
    return None


def _nested_why(s: AvroType, t: AvroType, seen: set[str]) -> str | None:
    """Why a record or array of v2 type ``s`` cannot be copied as it is into v1 type ``t``
    (None when it can): the same shape all the way down (``same_type``: field names, order,
    union branches), the same names (Avro resolves a union's branch by name), decimals of the
    same precision and scale (the JVM takes each through Spark's DECIMAL(p, s) round trip, and a
    map through its hash maps), and nothing whose bytes Spark's row round trip changes in a way
    the JVM does not reproduce (unions of several types) or that the SQL road cannot read (a
    recursive type)."""
    if s.kind == "union":
        if not (s.nullable and len(s.branches) == 2 and same_type(s, t)):
            return "unions of several types"
        return _nested_why(s.non_null(), t.non_null(), seen)
    if s.logical == "decimal":
        if not _same_logical(s, t):
            return f"a nested {s.describe()} that is not v1's {t.describe()}"
        return _decimal_why(s)
    if s.logical is not None and s.logical not in COPIED_LOGICAL:
        return f"a nested {s.describe()}"
    if s.kind in ("record", "enum", "fixed") and s.name != t.name:
        return f"a nested {s.describe()} named {t.name} in v1"
    if not same_type(s, t) if s.kind != "record" else len(s.fields) != len(t.fields):
        return f"a nested {s.describe()} that is not v1's {t.describe()}"
    if s.kind in ("array", "map") and s.items is not None and t.items is not None:
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
