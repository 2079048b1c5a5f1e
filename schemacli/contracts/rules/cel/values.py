"""CEL's values at run time: the error value, uint and type values, type names, equality,
ordering and arithmetic (with CEL's 64-bit overflow checks), as ``evaluate`` and ``functions``
apply them."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from typing import Any

from schemacli.contracts.avro.facts import LONG_MAX, LONG_MIN

INT_MIN, INT_MAX = LONG_MIN, LONG_MAX  # CEL's int is a 64-bit signed integer, as Avro's long
UINT_MAX = 2**64 - 1


class CelEvalError(Exception):
    """A CEL error value: ``message`` says what, ``pos`` where in the expression."""

    def __init__(self, message: str, pos: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


class UInt(int):
    """A CEL uint (an int that CEL keeps apart from int)."""

    def __repr__(self) -> str:
        return f"{int(self)}u"


class CelType:
    """A CEL type as a value (``type(x)``, ``int``, ``null_type``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


TYPE_NAMES = (
    "int uint double bool string bytes null_type list map type "
    "google.protobuf.Timestamp google.protobuf.Duration"
).split()
Env = Mapping[str, Any]
Fn = Callable[[Env], Any]


def type_name(v: Any) -> str:
    """The CEL type name of a runtime value."""
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, UInt):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes | bytearray):
        return "bytes"
    if isinstance(v, list | tuple):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, dt.datetime):
        return "google.protobuf.Timestamp"
    if isinstance(v, dt.timedelta):
        return "google.protobuf.Duration"
    if isinstance(v, CelType):
        return "type"
    return type(v).__name__


def no_overload(op: str, *args: Any, pos: int = 0) -> CelEvalError:
    shown = ", ".join(type_name(a) for a in args)
    return CelEvalError(f"no such overload: {op}({shown})", pos)


def check_int(v: int, pos: int) -> int:
    if v < INT_MIN or v > INT_MAX:
        raise CelEvalError("int overflow", pos)
    return v


def check_uint(v: int, pos: int) -> UInt:
    if v < 0 or v > UINT_MAX:
        raise CelEvalError("uint overflow", pos)
    return UInt(v)


def kind(v: Any) -> str:
    return type_name(v)


def equal(a: Any, b: Any, pos: int = 0) -> bool:
    """CEL ``==``: null equals only null; values of different types are an error (no implicit
    conversion); lists and maps compare member by member."""
    if a is None or b is None:
        return a is None and b is None
    ka, kb = kind(a), kind(b)
    if ka != kb:
        raise no_overload("_==_", a, b, pos=pos)
    if ka == "list":
        return len(a) == len(b) and all(equal(x, y, pos) for x, y in zip(a, b, strict=True))
    if ka == "map":
        if len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b:
                return False
            if not equal(v, b[k], pos):
                return False
        return True
    return bool(a == b)


def compare(op: str, a: Any, b: Any, pos: int) -> bool:
    ka, kb = kind(a), kind(b)
    if ka != kb or ka not in (
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "google.protobuf.Timestamp",
        "google.protobuf.Duration",
    ):
        raise no_overload(op, a, b, pos=pos)
    if op == "_<_":
        return bool(a < b)
    if op == "_<=_":
        return bool(a <= b)
    if op == "_>_":
        return bool(a > b)
    return bool(a >= b)


def arith(op: str, a: Any, b: Any, pos: int) -> Any:
    ka, kb = kind(a), kind(b)
    if ka == kb == "int":
        return check_int(_int_op(op, a, b, pos), pos)
    if ka == kb == "uint":
        return check_uint(_int_op(op, a, b, pos), pos)
    if ka == kb == "double" and op != "_%_":
        if op == "_+_":
            return a + b
        if op == "_-_":
            return a - b
        if op == "_*_":
            return a * b
        if b == 0.0:
            if a == 0.0 or math.isnan(a):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    if op == "_+_" and ka == kb and ka in ("string", "bytes"):
        return a + b
    if op == "_+_" and ka == kb == "list":
        return list(a) + list(b)
    stamp, span = "google.protobuf.Timestamp", "google.protobuf.Duration"
    if op == "_+_" and {ka, kb} == {stamp, span}:
        return a + b
    if op == "_+_" and ka == kb == span:
        return a + b
    if op == "_-_" and ka == stamp and kb in (stamp, span):
        return a - b
    if op == "_-_" and ka == kb == span:
        return a - b
    raise no_overload(op, a, b, pos=pos)


def _int_op(op: str, a: int, b: int, pos: int) -> int:
    if op == "_+_":
        return a + b
    if op == "_-_":
        return a - b
    if op == "_*_":
        return a * b
    if b == 0:
        raise CelEvalError("division by zero" if op == "_/_" else "modulus by zero", pos)
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b >= 0) else -q  # truncation toward zero, as CEL (and Java) divide
    return q if op == "_/_" else a - q * b
