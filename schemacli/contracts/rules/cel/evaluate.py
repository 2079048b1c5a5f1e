"""The CEL evaluator: an AST compiled once into Python closures, then run per record.

Values: CEL int is a Python ``int``, uint a ``UInt``, double a ``float``, bool a ``bool``,
string ``str``, bytes ``bytes``, null ``None``, list ``list``/``tuple``, map ``dict``,
timestamp an aware ``datetime`` (UTC), duration a ``timedelta``. An error is a ``CelEvalError``
raised and caught where CEL absorbs it: ``&&``/``||`` (commutatively: ``error && false`` is
false, ``error || true`` is true), ``?:`` (only the branch taken runs), the macros ``all`` /
``exists`` (like ``&&`` / ``||`` over the items).

Semantics follow the CEL spec (what CEL-Java runs). Where cel-python 0.5.0 differs on an
expression the checker passes, the difference is named in docs/rules.md
("Where the executors differ") and pinned by tests/unit/test_cel_vs_celpy.py.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from schemacli.contracts.avro.facts import LONG_MAX, LONG_MIN
from schemacli.contracts.rules.cel import ast

INT_MIN, INT_MAX = LONG_MIN, LONG_MAX  # CEL's int is a 64-bit signed integer, as Avro's long
UINT_MAX = 2**64 - 1
MAX_REGEX_CACHE = 256


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


def _no_overload(op: str, *args: Any, pos: int = 0) -> CelEvalError:
    shown = ", ".join(type_name(a) for a in args)
    return CelEvalError(f"no such overload: {op}({shown})", pos)


def _check_int(v: int, pos: int) -> int:
    if v < INT_MIN or v > INT_MAX:
        raise CelEvalError("int overflow", pos)
    return v


def _check_uint(v: int, pos: int) -> UInt:
    if v < 0 or v > UINT_MAX:
        raise CelEvalError("uint overflow", pos)
    return UInt(v)


def _kind(v: Any) -> str:
    return type_name(v)


def equal(a: Any, b: Any, pos: int = 0) -> bool:
    """CEL ``==``: null equals only null; values of different types are an error (no implicit
    conversion); lists and maps compare member by member."""
    if a is None or b is None:
        return a is None and b is None
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        raise _no_overload("_==_", a, b, pos=pos)
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


def _compare(op: str, a: Any, b: Any, pos: int) -> bool:
    ka, kb = _kind(a), _kind(b)
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
        raise _no_overload(op, a, b, pos=pos)
    if op == "_<_":
        return bool(a < b)
    if op == "_<=_":
        return bool(a <= b)
    if op == "_>_":
        return bool(a > b)
    return bool(a >= b)


def _arith(op: str, a: Any, b: Any, pos: int) -> Any:
    ka, kb = _kind(a), _kind(b)
    if ka == kb == "int":
        return _check_int(_int_op(op, a, b, pos), pos)
    if ka == kb == "uint":
        return _check_uint(_int_op(op, a, b, pos), pos)
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
    raise _no_overload(op, a, b, pos=pos)


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


class _Compiler:
    def __init__(self) -> None:
        self.regex: dict[str, re.Pattern[str]] = {}

    def compile(self, node: ast.Expr) -> Fn:
        if isinstance(node, ast.Lit):
            value: Any = UInt(node.value) if node.kind == "uint" else node.value  # type: ignore[call-overload]
            return lambda env: value
        if isinstance(node, ast.Ident):
            return self.ident(node)
        if isinstance(node, ast.Select):
            return self.select(node)
        if isinstance(node, ast.ListLit):
            items = [self.compile(i) for i in node.items]
            return lambda env: [f(env) for f in items]
        if isinstance(node, ast.MapLit):
            return self.map_lit(node)
        if isinstance(node, ast.Comprehension):
            return self.comprehension(node)
        if isinstance(node, ast.StructLit):
            pos = node.pos

            def struct(env: Env) -> Any:
                raise CelEvalError("message construction is not supported over Avro", pos)

            return struct
        return self.call(node)

    def ident(self, node: ast.Ident) -> Fn:
        name, pos = node.name, node.pos

        def ident(env: Env) -> Any:
            try:
                return env[name]
            except KeyError:
                if name in TYPE_NAMES:
                    return CelType(name)
                raise CelEvalError(f"undeclared reference to {name!r}", pos) from None

        return ident

    def select(self, node: ast.Select) -> Fn:
        operand = self.compile(node.operand)
        name, pos = node.field, node.pos
        if node.test_only:

            def has(env: Env) -> bool:
                m = operand(env)
                if isinstance(m, dict):
                    return name in m
                if m is None:
                    raise CelEvalError(f"has() on null: no field {name!r}", pos)
                raise CelEvalError(f"has() on a value of type {type_name(m)}", pos)

            return has

        def select(env: Env) -> Any:
            m = operand(env)
            if isinstance(m, dict):
                try:
                    return m[name]
                except KeyError:
                    raise CelEvalError(f"no such key: {name!r}", pos) from None
            raise CelEvalError(f"field selection .{name} on {type_name(m)}", pos)

        return select

    def map_lit(self, node: ast.MapLit) -> Fn:
        entries = [(self.compile(k), self.compile(v), k.pos) for k, v in node.entries]

        def build(env: Env) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for key, value, pos in entries:
                k = key(env)
                if not isinstance(k, str | int) or isinstance(k, float):
                    raise CelEvalError(f"a map key of type {type_name(k)}", pos)
                if k in out:
                    raise CelEvalError(f"repeated map key {k!r}", pos)
                out[k] = value(env)
            return out

        return build

    def comprehension(self, node: ast.Comprehension) -> Fn:
        rng = self.compile(node.range)
        body = self.compile(node.body) if node.body is not None else None
        transform = self.compile(node.transform) if node.transform is not None else None
        var, pos, macro = node.var, node.pos, node.macro

        def items(env: Env) -> list[Any]:
            r = rng(env)
            if isinstance(r, list | tuple):
                return list(r)
            if isinstance(r, dict):
                return list(r.keys())
            raise CelEvalError(f"{macro}() over a value of type {type_name(r)}", pos)

        def scoped(env: Env, value: Any) -> dict[str, Any]:
            inner = dict(env)
            inner[var] = value
            return inner

        if macro in ("all", "exists"):
            assert body is not None
            stop = macro == "exists"  # exists stops at true, all at false

            def quantify(env: Env) -> bool:
                error: CelEvalError | None = None
                for item in items(env):
                    try:
                        result = body(scoped(env, item))
                    except CelEvalError as err:
                        error = error or err
                        continue
                    if not isinstance(result, bool):
                        error = error or _no_overload(macro, result, pos=pos)
                        continue
                    if result is stop:
                        return stop
                if error is not None:
                    raise error
                return not stop

            return quantify
        if macro == "exists_one":
            assert body is not None

            def exactly_one(env: Env) -> bool:
                count = 0
                for item in items(env):
                    result = body(scoped(env, item))
                    if not isinstance(result, bool):
                        raise _no_overload(macro, result, pos=pos)
                    count += result
                return count == 1

            return exactly_one
        if macro == "filter":
            assert body is not None

            def keep(env: Env) -> list[Any]:
                out = []
                for item in items(env):
                    result = body(scoped(env, item))
                    if not isinstance(result, bool):
                        raise _no_overload(macro, result, pos=pos)
                    if result:
                        out.append(item)
                return out

            return keep
        assert transform is not None

        def mapped(env: Env) -> list[Any]:
            out = []
            for item in items(env):
                inner = scoped(env, item)
                if body is not None:
                    wanted = body(inner)
                    if not isinstance(wanted, bool):
                        raise _no_overload(macro, wanted, pos=pos)
                    if not wanted:
                        continue
                out.append(transform(inner))
            return out

        return mapped

    def call(self, node: ast.Call) -> Fn:
        fn, pos = node.function, node.pos
        args = [self.compile(a) for a in node.args]
        if fn == "_&&_":
            return _logic(args[0], args[1], False, pos)
        if fn == "_||_":
            return _logic(args[0], args[1], True, pos)
        if fn == "_?_:_":
            cond, then, other = args

            def choose(env: Env) -> Any:
                c = cond(env)
                if c is True:
                    return then(env)
                if c is False:
                    return other(env)
                raise _no_overload("_?_:_", c, pos=pos)

            return choose
        if fn == "!_":
            (a,) = args

            def negate(env: Env) -> bool:
                v = a(env)
                if isinstance(v, bool):
                    return not v
                raise _no_overload("!_", v, pos=pos)

            return negate
        if fn == "-_":
            (a,) = args

            def minus(env: Env) -> Any:
                v = a(env)
                k = _kind(v)
                if k == "int":
                    return _check_int(-v, pos)
                if k == "double":
                    return -v
                if k == "google.protobuf.Duration":
                    return -v
                raise _no_overload("-_", v, pos=pos)

            return minus
        if fn in ("_+_", "_-_", "_*_", "_/_", "_%_"):
            a, b = args
            return lambda env: _arith(fn, a(env), b(env), pos)
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            a, b = args
            return lambda env: _compare(fn, a(env), b(env), pos)
        if fn == "_==_":
            a, b = args
            return lambda env: equal(a(env), b(env), pos)
        if fn == "_!=_":
            a, b = args
            return lambda env: not equal(a(env), b(env), pos)
        if fn == "@in":
            a, b = args
            return lambda env: _contains(a(env), b(env), pos)
        if fn == "_[_]":
            a, b = args
            return lambda env: _index(a(env), b(env), pos)
        target = self.compile(node.target) if node.target is not None else None
        return self.function(fn, target, args, pos)

    def function(self, fn: str, target: Fn | None, args: list[Fn], pos: int) -> Fn:
        every = ([target] if target is not None else []) + args
        impl = _FUNCTIONS.get(fn)
        if fn == "matches":
            compiled = self.regex

            def matches(env: Env) -> bool:
                s, p = (f(env) for f in every)
                if not isinstance(s, str) or not isinstance(p, str):
                    raise _no_overload("matches", s, p, pos=pos)
                pattern = compiled.get(p)
                if pattern is None:
                    pattern = re2_pattern(p, pos)
                    if len(compiled) < MAX_REGEX_CACHE:
                        compiled[p] = pattern
                return pattern.search(s) is not None

            return matches
        if impl is None:

            def unknown(env: Env) -> Any:
                raise CelEvalError(f"no such function: {fn}", pos)

            return unknown

        def apply(env: Env) -> Any:
            return impl(pos, *(f(env) for f in every))

        return apply


def re2_pattern(pattern: str, pos: int) -> re.Pattern[str]:
    """A pattern in RE2's syntax, run by Python's ``re``: refused when it uses what RE2 lacks
    (backreferences, lookaround), as RE2 refuses them. The subset both accept means the same."""
    if re.search(r"\\[1-9]|\(\?[=!<]|\(\?P=", pattern):
        raise CelEvalError(f"invalid RE2 pattern {pattern!r}: lookaround and backreferences", pos)
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CelEvalError(f"invalid pattern {pattern!r}: {err}", pos) from None


def _logic(left: Fn, right: Fn, absorbing: bool, pos: int) -> Fn:
    """``&&`` (absorbing False) or ``||`` (absorbing True), commutative over errors."""
    op = "_||_" if absorbing else "_&&_"

    def run(env: Env) -> bool:
        error: CelEvalError | None = None
        try:
            a = left(env)
        except CelEvalError as err:
            a, error = err, err
        if a is absorbing:
            return bool(absorbing)
        b = right(env)
        if b is absorbing:
            return bool(absorbing)
        if error is not None:
            raise error
        if isinstance(a, bool) and isinstance(b, bool):
            return not absorbing
        raise _no_overload(op, a, b, pos=pos)

    return run


def _contains(a: Any, b: Any, pos: int) -> bool:
    if isinstance(b, list | tuple):
        return any(_kind(x) == _kind(a) and equal(a, x, pos) for x in b)
    if isinstance(b, dict):
        return any(_kind(k) == _kind(a) and k == a for k in b)
    raise _no_overload("@in", a, b, pos=pos)


def _index(a: Any, b: Any, pos: int) -> Any:
    if isinstance(a, list | tuple):
        if _kind(b) != "int":
            raise _no_overload("_[_]", a, b, pos=pos)
        if b < 0 or b >= len(a):
            raise CelEvalError(f"index {b} out of range (size {len(a)})", pos)
        return a[b]
    if isinstance(a, dict):
        for k in a:
            if _kind(k) == _kind(b) and k == b:
                return a[k]
        raise CelEvalError(f"no such key: {b!r}", pos)
    raise _no_overload("_[_]", a, b, pos=pos)


def _size(pos: int, v: Any) -> int:
    if isinstance(v, str | bytes | bytearray | list | tuple | dict):
        return len(v)
    raise _no_overload("size", v, pos=pos)


def _strs(name: str, check: Callable[[str, str], bool]) -> Callable[..., bool]:
    def fn(pos: int, s: Any, t: Any) -> bool:
        if isinstance(s, str) and isinstance(t, str):
            return check(s, t)
        raise _no_overload(name, s, t, pos=pos)

    return fn


def _to_int(pos: int, v: Any) -> int:
    k = _kind(v)
    if k in ("int", "uint"):
        return _check_int(int(v), pos)
    if k == "double":
        if math.isnan(v) or math.isinf(v) or not (INT_MIN <= v < -float(INT_MIN)):
            raise CelEvalError("int overflow", pos)
        return int(v)
    if k == "string":
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise CelEvalError(f"cannot convert {v!r} to int", pos)
        return _check_int(int(v), pos)
    if k == "google.protobuf.Timestamp":
        return int(v.timestamp())
    raise _no_overload("int", v, pos=pos)


def _to_uint(pos: int, v: Any) -> UInt:
    k = _kind(v)
    if k in ("int", "uint"):
        return _check_uint(int(v), pos)
    if k == "double":
        if math.isnan(v) or not (0 <= v < 2.0**64):
            raise CelEvalError("uint overflow", pos)
        return UInt(int(v))
    if k == "string":
        if not re.fullmatch(r"[+]?[0-9]+", v):
            raise CelEvalError(f"cannot convert {v!r} to uint", pos)
        return _check_uint(int(v), pos)
    raise _no_overload("uint", v, pos=pos)


def _to_double(pos: int, v: Any) -> float:
    k = _kind(v)
    if k in ("int", "uint", "double"):
        return float(v)
    if k == "string":
        try:
            return float(v)
        except ValueError:
            raise CelEvalError(f"cannot convert {v!r} to double", pos) from None
    raise _no_overload("double", v, pos=pos)


def format_double(v: float) -> str:
    """A double as CEL's string() writes it (shortest round-trip digits)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def _to_string(pos: int, v: Any) -> str:
    k = _kind(v)
    if k == "string":
        return str(v)
    if k in ("int", "uint"):
        return str(int(v))
    if k == "double":
        return format_double(v)
    if k == "bool":
        return "true" if v else "false"
    if k == "bytes":
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            raise CelEvalError("bytes are not valid UTF-8", pos) from None
    if k == "google.protobuf.Timestamp":
        return format_timestamp(v)
    if k == "google.protobuf.Duration":
        return format_duration(v)
    raise _no_overload("string", v, pos=pos)


def format_timestamp(v: dt.datetime) -> str:
    text = v.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if v.microsecond:
        text += f".{v.microsecond:06d}".rstrip("0")
    return text + "Z"


def format_duration(v: dt.timedelta) -> str:
    micros = (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
    seconds = micros / 1_000_000
    return f"{seconds:.6f}".rstrip("0").rstrip(".") + "s"


_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(h|m(?!s)|s|ms|us|µs|ns)")


def _to_duration(pos: int, v: Any) -> dt.timedelta:
    if isinstance(v, dt.timedelta):
        return v
    if not isinstance(v, str):
        raise _no_overload("duration", v, pos=pos)
    text = v
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    parts = _DURATION_PART.findall(body)
    if not parts or "".join(a + b for a, b in parts) != body:
        raise CelEvalError(f"invalid duration {v!r}", pos)
    unit = {"h": 3600e6, "m": 60e6, "s": 1e6, "ms": 1e3, "us": 1.0, "µs": 1.0, "ns": 1e-3}
    micros = sum(float(n) * unit[u] for n, u in parts)
    return dt.timedelta(microseconds=sign * micros)


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})"
)


def to_timestamp(pos: int, v: Any) -> dt.datetime:
    if isinstance(v, dt.datetime):
        return v
    if _kind(v) == "int":
        return dt.datetime.fromtimestamp(v, dt.UTC)
    if not isinstance(v, str):
        raise _no_overload("timestamp", v, pos=pos)
    m = _RFC3339.fullmatch(v)
    if not m:
        raise CelEvalError(f"invalid timestamp {v!r} (RFC 3339 expected)", pos)
    frac = (m.group(7) or ".0")[1:7].ljust(6, "0")
    zone = m.group(8)
    tz = (
        dt.UTC
        if zone in "Zz"
        else dt.timezone(
            (1 if zone[0] == "+" else -1)
            * dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        )
    )
    try:
        return dt.datetime(*(int(m.group(i)) for i in range(1, 7)), int(frac), tzinfo=tz)  # type: ignore[arg-type, misc]
    except ValueError:
        raise CelEvalError(f"invalid timestamp {v!r}", pos) from None


def _zone(pos: int, name: str) -> dt.tzinfo:
    m = re.fullmatch(r"([+-])?(\d{2}):(\d{2})", name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    if name == "UTC":
        return dt.UTC
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except Exception:
        raise CelEvalError(f"unknown time zone {name!r}", pos) from None


def _time_getter(
    name: str, pick: Callable[[dt.datetime], int], span: Callable[[dt.timedelta], int] | None
) -> Callable[..., int]:
    def fn(pos: int, v: Any, zone: Any = None) -> int:
        if isinstance(v, dt.timedelta) and span is not None and zone is None:
            return span(v)
        if not isinstance(v, dt.datetime):
            raise _no_overload(name, v, pos=pos)
        if zone is not None and not isinstance(zone, str):
            raise _no_overload(name, v, zone, pos=pos)
        local = v.astimezone(_zone(pos, zone) if zone else dt.UTC)
        return pick(local)

    return fn


def _total_micros(d: dt.timedelta) -> int:
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _trunc(micros: int, unit: int) -> int:
    return int(micros / unit) if micros < 0 else micros // unit


def _type_of(pos: int, v: Any) -> CelType:
    return CelType(type_name(v))


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "size": _size,
    "startsWith": _strs("startsWith", str.startswith),
    "endsWith": _strs("endsWith", str.endswith),
    "contains": _strs("contains", lambda s, t: t in s),
    "int": _to_int,
    "uint": _to_uint,
    "double": _to_double,
    "string": _to_string,
    "bytes": lambda pos, v: (
        bytes(v)
        if isinstance(v, bytes | bytearray)
        else v.encode("utf-8")
        if isinstance(v, str)
        else (_ for _ in ()).throw(_no_overload("bytes", v, pos=pos))
    ),
    "bool": lambda pos, v: (
        v
        if isinstance(v, bool)
        else {"true": True, "false": False}[v]
        if v in ("true", "false")
        else (_ for _ in ()).throw(_no_overload("bool", v, pos=pos))
    ),
    "timestamp": to_timestamp,
    "duration": _to_duration,
    "dyn": lambda pos, v: v,
    "type": _type_of,
    "getFullYear": _time_getter("getFullYear", lambda t: t.year, None),
    "getMonth": _time_getter("getMonth", lambda t: t.month - 1, None),
    "getDate": _time_getter("getDate", lambda t: t.day, None),
    "getDayOfMonth": _time_getter("getDayOfMonth", lambda t: t.day - 1, None),
    "getDayOfWeek": _time_getter("getDayOfWeek", lambda t: (t.weekday() + 1) % 7, None),
    "getDayOfYear": _time_getter("getDayOfYear", lambda t: t.timetuple().tm_yday - 1, None),
    "getHours": _time_getter(
        "getHours", lambda t: t.hour, lambda d: _trunc(_total_micros(d), 3600_000_000)
    ),
    "getMinutes": _time_getter(
        "getMinutes", lambda t: t.minute, lambda d: _trunc(_total_micros(d), 60_000_000)
    ),
    "getSeconds": _time_getter(
        "getSeconds", lambda t: t.second, lambda d: _trunc(_total_micros(d), 1_000_000)
    ),
    "getMilliseconds": _time_getter(
        "getMilliseconds",
        lambda t: t.microsecond // 1000,
        lambda d: _trunc(_total_micros(d), 1000) % 1000,
    ),
}


class Program:
    """A compiled expression: ``run(bindings)`` gives its value or raises CelEvalError."""

    def __init__(self, expr: ast.Expr) -> None:
        self.expr = expr
        self._fn = _Compiler().compile(expr)

    def run(self, bindings: Env) -> Any:
        try:
            return self._fn(bindings)
        except RecursionError:
            raise CelEvalError("the value nests too deeply", 0) from None


def compile_expr(expr: ast.Expr) -> Program:
    """``expr`` compiled into closures, once; run it per record."""
    return Program(expr)
