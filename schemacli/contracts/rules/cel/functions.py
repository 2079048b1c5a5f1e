"""CEL's standard functions over our values: conversions, string tests, ``size``, ``in`` and
indexing, timestamps and durations (RFC 3339, time zones, getters), RE2 patterns; ``FUNCTIONS``
is the table the evaluator looks names up in."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from typing import Any

from schemacli.contracts.rules.cel.values import (
    INT_MIN,
    CelEvalError,
    CelType,
    UInt,
    check_int,
    check_uint,
    equal,
    kind,
    no_overload,
    type_name,
)


def re2_pattern(pattern: str, pos: int) -> re.Pattern[str]:
    """A pattern in RE2's syntax, run by Python's ``re``: refused when it uses what RE2 lacks
    (backreferences, lookaround), as RE2 refuses them. The subset both accept means the same."""
    if re.search(r"\\[1-9]|\(\?[=!<]|\(\?P=", pattern):
        raise CelEvalError(f"invalid RE2 pattern {pattern!r}: lookaround and backreferences", pos)
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CelEvalError(f"invalid pattern {pattern!r}: {err}", pos) from None


def contains(a: Any, b: Any, pos: int) -> bool:
    if isinstance(b, list | tuple):
        return any(kind(x) == kind(a) and equal(a, x, pos) for x in b)
    if isinstance(b, dict):
        return any(kind(k) == kind(a) and k == a for k in b)
    raise no_overload("@in", a, b, pos=pos)


def index(a: Any, b: Any, pos: int) -> Any:
    if isinstance(a, list | tuple):
        if kind(b) != "int":
            raise no_overload("_[_]", a, b, pos=pos)
        if b < 0 or b >= len(a):
            raise CelEvalError(f"index {b} out of range (size {len(a)})", pos)
        return a[b]
    if isinstance(a, dict):
        for k in a:
            if kind(k) == kind(b) and k == b:
                return a[k]
        raise CelEvalError(f"no such key: {b!r}", pos)
    raise no_overload("_[_]", a, b, pos=pos)


def _size(pos: int, v: Any) -> int:
    if isinstance(v, str | bytes | bytearray | list | tuple | dict):
        return len(v)
    raise no_overload("size", v, pos=pos)


def _strs(name: str, check: Callable[[str, str], bool]) -> Callable[..., bool]:
    def fn(pos: int, s: Any, t: Any) -> bool:
        if isinstance(s, str) and isinstance(t, str):
            return check(s, t)
        raise no_overload(name, s, t, pos=pos)

    return fn


def _to_int(pos: int, v: Any) -> int:
    k = kind(v)
    if k in ("int", "uint"):
        return check_int(int(v), pos)
    if k == "double":
        if math.isnan(v) or math.isinf(v) or not (INT_MIN <= v < -float(INT_MIN)):
            raise CelEvalError("int overflow", pos)
        return int(v)
    if k == "string":
        if not re.fullmatch(r"[+-]?[0-9]+", v):
            raise CelEvalError(f"cannot convert {v!r} to int", pos)
        return check_int(int(v), pos)
    if k == "google.protobuf.Timestamp":
        return int(v.timestamp())
    raise no_overload("int", v, pos=pos)


def _to_uint(pos: int, v: Any) -> UInt:
    k = kind(v)
    if k in ("int", "uint"):
        return check_uint(int(v), pos)
    if k == "double":
        if math.isnan(v) or not (0 <= v < 2.0**64):
            raise CelEvalError("uint overflow", pos)
        return UInt(int(v))
    if k == "string":
        if not re.fullmatch(r"[+]?[0-9]+", v):
            raise CelEvalError(f"cannot convert {v!r} to uint", pos)
        return check_uint(int(v), pos)
    raise no_overload("uint", v, pos=pos)


def _to_double(pos: int, v: Any) -> float:
    k = kind(v)
    if k in ("int", "uint", "double"):
        return float(v)
    if k == "string":
        try:
            return float(v)
        except ValueError:
            raise CelEvalError(f"cannot convert {v!r} to double", pos) from None
    raise no_overload("double", v, pos=pos)


def format_double(v: float) -> str:
    """A double as CEL's string() writes it (shortest round-trip digits)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def _to_string(pos: int, v: Any) -> str:
    k = kind(v)
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
    raise no_overload("string", v, pos=pos)


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
        raise no_overload("duration", v, pos=pos)
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
    if kind(v) == "int":
        return dt.datetime.fromtimestamp(v, dt.UTC)
    if not isinstance(v, str):
        raise no_overload("timestamp", v, pos=pos)
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
            raise no_overload(name, v, pos=pos)
        if zone is not None and not isinstance(zone, str):
            raise no_overload(name, v, zone, pos=pos)
        local = v.astimezone(_zone(pos, zone) if zone else dt.UTC)
        return pick(local)

    return fn


def _total_micros(d: dt.timedelta) -> int:
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _trunc(micros: int, unit: int) -> int:
    return int(micros / unit) if micros < 0 else micros // unit


def _type_of(pos: int, v: Any) -> CelType:
    return CelType(type_name(v))


FUNCTIONS: dict[str, Callable[..., Any]] = {
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
        else (_ for _ in ()).throw(no_overload("bytes", v, pos=pos))
    ),
    "bool": lambda pos, v: (
        v
        if isinstance(v, bool)
        else {"true": True, "false": False}[v]
        if v in ("true", "false")
        else (_ for _ in ()).throw(no_overload("bool", v, pos=pos))
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
