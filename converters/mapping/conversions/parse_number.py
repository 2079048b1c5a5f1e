"""``parse_number``: a string read as Spark's ``try_cast`` reads it, into an int, long, float or
double; into a float or double only a finite number (NaN, ±Infinity and overflow fail, -0 is 0).
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

from converters.mapping.conversions.spec import (
    FLOAT_MAX,
    NUMERIC,
    Doc,
    Failed,
    Jsonata,
    Operand,
    Proposed,
    ValueSpec,
    jsonata_string,
)
from converters.mapping.model import Conversion, Policy
from converters.mapping.schemaview import AvroType
from schemacli.contracts.avro.facts import INT_MAX, INT_MIN, RANGES

PARSED = ("float", "double")  # the fast road's `parse`; into int/long it is `parse_int`

# what Spark's try_cast(string AS INT/BIGINT) reads: control characters and spaces around, sign,
# digits; and AS FLOAT/DOUBLE: a decimal number with an optional exponent and Java's d/f suffix
# (NaN, Infinity and overflow are no finite number: they fail in the converter too)
_TRIM = r"[\x00-\x20]"
INTEGER_TEXT = rf"/^{_TRIM}*[+-]?[0-9]+{_TRIM}*$/"
DECIMAL_TEXT = rf"/^{_TRIM}*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?{_TRIM}*$/"
_STRIP = rf"/^{_TRIM}+|{_TRIM}+$|[fFdD]{_TRIM}*$/"
# 2^1024 - 2^970: the least value Java's Double.parseDouble reads as Infinity, as digits
_DOUBLE_OVERFLOW = str(2**1024 - 2**970)

# the preview's reading of a number (Python's regular expressions)
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(
    r"^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|nan|inf|infinity)[dDfF]?$", re.IGNORECASE
)


class ParseNumber(ValueSpec):
    conversion = Conversion.PARSE_NUMBER
    doc = Doc(
        "string → int/long/float/double",
        "`` try_cast(`f` AS INT) ``; `` try_cast(`f` AS FLOAT) + CAST(0 AS FLOAT) ``",
        "not a number in Spark's syntax, or out of range; into float/double also NaN, "
        "±Infinity and overflow (see below)",
    )
    can_fail = True
    on_fast_road = True

    def accepts(self, source: AvroType, target: AvroType) -> bool:
        return source.kind == "string" and target.kind in NUMERIC

    def propose(self, source: AvroType, target: AvroType) -> Proposed | None:
        if self.accepts(source, target):
            return Proposed(f"string -> {target.kind}: non-numbers fail")
        return None

    def sql(
        self, value: str, source: AvroType, target: AvroType, spark: str
    ) -> tuple[str, str | None]:
        if target.kind in PARSED:
            # a finite number: NaN, ±Infinity and overflow ("1e39" for a float) fail, -0 is 0.
            # x * 0 is 0 for a finite x and NaN for NaN or ±Infinity; nanvl makes that null.
            # (written small: a stage with five of these stays under HotSpot's 8,000-byte
            # method limit for JIT compilation)
            x = f"try_cast({value} AS {spark})"
            zero = f"CAST(0 AS {spark})"
            return f"{x} + {zero}", f"nanvl({x} * {zero}, NULL) IS NULL"
        return f"try_cast({value} AS {spark})", f"try_cast({value} AS {spark}) IS NULL"

    def jsonata(self, source: AvroType, target: AvroType) -> Jsonata | str:
        kind = target.kind
        if kind == "long":
            return (
                "JSONata reads numbers as doubles: a long above 2^53 "
                "would come out rounded, where Spark reads it exactly"
            )
        # `$n`: the number, or null when the text is no number in Spark's syntax or one too
        # large to read ($number would raise, failing the record under on_error: default)
        helper = (f"read_{kind}", _integer() if kind == "int" else _decimal(kind))
        bind = f"$n := $read_{kind}($v)"
        if kind == "int":
            return Jsonata("$n", f"$n = null or $n < {INT_MIN} or $n > {INT_MAX}", bind, (helper,))
        # a float beyond the largest float is Infinity in Spark, which the SQL refuses
        top = 3.4028235677973366e38
        over = f" or $n >= {top!r} or $n <= {-top!r}" if kind == "float" else ""
        return Jsonata("$n", f"$n = null{over}", bind, (helper,))

    def invert(self, v1: AvroType, v2: AvroType) -> str | None:
        return "$string($v)" if v1.kind == "int" else None

    def preview(self, value: Any, source: AvroType | None, target: AvroType) -> Any:
        return parse_number(value, target.kind)

    def fast(self, o: Operand) -> dict[str, Any] | str:
        sk, tk = o.source.kind, o.target.kind
        if o.source.logical or o.target.logical:
            return f"convert: parse_number of a logical type ({o.v2.type.describe()})"
        if sk == "string" and tk in ("int", "long"):
            # Spark's try_cast(s AS INT|BIGINT) (ANSI: ASCII whitespace and control characters
            # trimmed, an optional sign, ASCII digits only, in range); a failure dead-letters
            # the record (on_error: fail) or gives the default
            op: dict[str, Any] = {"op": "parse_int", "source": o.v2.name, "to": tk}
            op |= self._reason(o)
            if o.rule.on_error is Policy.DEFAULT:
                op["on_fail"] = "default"  # the road adds the default (``fail_value``)
            return op
        if sk == "string" and tk in PARSED:
            if o.rule.on_error is not Policy.FAIL:
                return "parse_number with on_error: default"
            return {"op": "parse", "source": o.v2.name, "to": tk} | self._reason(o)
        return (
            f"convert: {self.conversion.value} from {o.v2.type.describe()} "
            f"to {o.v1.type.describe()}"
        )

    def _reason(self, o: Operand) -> dict[str, str]:
        # the SQL road's reason: `<field>: cannot convert <text> to <type>`
        return {
            "reason_head": f"{o.rule.target}: cannot convert ",
            "reason_tail": f" to {o.target.describe()}",
        }

    def sample(self, rng: random.Random, target: AvroType) -> Any:
        if target.kind in ("int", "long"):
            return str(rng.randint(0, 500))
        return str(round(rng.uniform(0, 100), 2))


def parse_number(text: str, kind: str) -> Any:
    """Spark's ``try_cast(text AS INT|BIGINT|FLOAT|DOUBLE)`` (whitespace trimmed), or Failed;
    into a float or double only a finite number (NaN, ±Infinity, overflow fail; -0 is 0)."""
    s = text.strip()
    if kind in RANGES:
        if not _INT.match(s):
            raise Failed
        v = int(s)
        lo, hi = RANGES[kind]
        if not lo <= v <= hi:
            raise Failed
        return v
    if not _FLOAT.match(s):
        raise Failed
    if s.lower().lstrip("+-").rstrip("dDfF") in ("nan", "inf", "infinity", "in"):
        raise Failed  # NaN and ±Infinity are no finite number (the SQL's nanvl(x * 0))
    x = float(s.rstrip("dDfF"))
    if not math.isfinite(x) or (kind == "float" and abs(x) > FLOAT_MAX):
        raise Failed  # overflow: Spark reads it as Infinity
    if kind == "float" and abs(x) <= 2.0**-150:
        return 0.0  # rounds to a float zero: -0 is 0 (the SQL's x + 0)
    return x + 0.0  # -0 is 0 (the SQL's x + 0)


def _integer() -> str:
    """JSONata giving the int a text `$v` means in Spark's syntax, or null (more than 10 digits
    are out of range anyway, and never reach ``$number``)."""
    return (
        f"$contains($v, {INTEGER_TEXT}) and "
        f"$length($replace($replace($v, {_STRIP}, ''), /^[+-]?0*/, '')) <= 10 "
        f"? $number($replace($v, {_STRIP}, '')) : null"
    )


def _decimal(kind: str) -> str:
    """JSONata giving the number a decimal text `$v` means (float or double ``kind``), or null
    when it is no number or its magnitude is beyond ``kind``'s range (decided on the digits,
    before ``$number`` could overflow)."""
    most = 308 if kind == "double" else 38
    # the largest magnitude that rounds to zero: 2^-1075 for a double, 2^-150 for a float
    tiny = "0" if kind == "double" else repr(2.0**-150)
    return (
        f"$contains($v, {DECIMAL_TEXT}) ? ("
        f"$t := $replace($v, {_STRIP}, ''); "
        "$p := $split($lowercase($t), 'e'); "
        "$q := $split($replace($p[0], /^[+-]/, ''), '.'); "
        "$i := $replace($q[0], /^0+/, ''); "
        "$f := $count($q) > 1 ? $q[1] : ''; "
        "$d := $replace($i & $f, /^0+/, ''); "
        "$x := $count($p) > 1 ? $replace($p[1], /^([+-]?)0*([0-9])/, '$1$2') : '0'; "
        "$huge := $length($replace($x, /^[+-]/, '')) > 6; "
        "$e := $huge ? 0 : $number($x); "
        "$mag := $i != '' ? $length($i) - 1 + $e "
        ": $e - ($length($f) - $length($replace($f, /^0+/, '')) + 1); "
        "$over := $d != '' and ($huge ? $substring($x, 0, 1) != '-' "
        f": ($mag > {most}"
        + (
            f" or ($mag = {most} and $d >= {jsonata_string(_DOUBLE_OVERFLOW)})"
            if kind == "double"
            else ""
        )
        + ")); "
        # -0 is 0, and so is a negative number too small for the type (Spark: x + 0)
        f"$over ? null : ($huge or $d = '' ? 0 : ($r := $number($t); $abs($r) <= {tiny} ? 0 : $r))"
        ") : null"
    )
