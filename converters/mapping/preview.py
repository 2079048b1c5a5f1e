"""A Python preview of the catalogue conversions, for ``validate``'s fast dry run without Spark.

Each function mirrors the Spark SQL that ``converters.mapping.sql`` writes for the same conversion
(``try_cast`` under ANSI rules: a value that does not fit is a failure, not a wrap-around), so a
dry run on sample records shows what each field becomes in milliseconds. It is a preview: the
job runs the Spark SQL, and ``validate --spark`` runs that same SQL on the same samples and
reports any record where the two disagree. Custom ``convert: sql`` rules need ``--spark``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType
from converters.mapping.sql import FLOAT_MAX, field_at
from schemacli.contracts.avro.facts import RANGES

_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(
    r"^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|nan|inf|infinity)[dDfF]?$", re.IGNORECASE
)


class NeedsSpark(Exception):
    """A rule (custom SQL) that only Spark can evaluate."""


@dataclass(frozen=True)
class Outcome:
    """One record through the preview: the v1 record, or the reasons it is dead-lettered."""

    value: dict[str, Any] | None
    errors: tuple[str, ...]


class _Failed(Exception):
    pass


def parse_number(text: str, kind: str) -> Any:
    """Spark's ``try_cast(text AS INT|BIGINT|FLOAT|DOUBLE)`` (whitespace trimmed), or _Failed;
    into a float or double only a finite number (NaN, ±Infinity, overflow fail; -0 is 0)."""
    s = text.strip()
    if kind in RANGES:
        if not _INT.match(s):
            raise _Failed
        v = int(s)
        lo, hi = RANGES[kind]
        if not lo <= v <= hi:
            raise _Failed
        return v
    if not _FLOAT.match(s):
        raise _Failed
    if s.lower().lstrip("+-").rstrip("dDfF") in ("nan", "inf", "infinity", "in"):
        raise _Failed  # NaN and ±Infinity are no finite number (the SQL's nanvl(x * 0))
    x = float(s.rstrip("dDfF"))
    if not math.isfinite(x) or (kind == "float" and abs(x) > FLOAT_MAX):
        raise _Failed  # overflow: Spark reads it as Infinity
    if kind == "float" and abs(x) <= 2.0**-150:
        return 0.0  # rounds to a float zero: -0 is 0 (the SQL's x + 0)
    return x + 0.0  # -0 is 0 (the SQL's x + 0)


def to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    return str(value)


def _get(record: dict[str, Any] | None, path: str) -> Any:
    cur: Any = record
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def convert_record(
    mapping: Mapping, source: AvroType, target: AvroType, record: dict[str, Any]
) -> Outcome:
    """Apply ``mapping`` to one v2 ``record`` (as fastavro reads it). Raises NeedsSpark for
    custom SQL rules."""
    errors: list[str] = []
    value = _record(mapping, source, target, record, "", errors)
    return Outcome(None if errors else value, tuple(errors))


def _record(
    mapping: Mapping,
    source: AvroType,
    target: AvroType,
    record: dict[str, Any] | None,
    prefix: str,
    errors: list[str],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in target.non_null().fields:
        out[f.name] = _field(mapping, source, f, record, prefix + f.name, errors)
    return out


def _default(rule: Rule | None, f: AvroField) -> Any:
    value = rule.default if rule is not None and rule.has_default else f.default
    kind = f.type.non_null().kind if value is not None else None
    if kind in ("bytes", "fixed") and isinstance(value, str):
        return value.encode("latin-1")
    return value


def _field(
    mapping: Mapping,
    source: AvroType,
    f: AvroField,
    record: dict[str, Any] | None,
    path: str,
    errors: list[str],
) -> Any:
    rule = mapping.rule(path)
    if rule is None or rule.convert is Conversion.RECORD:
        src = _get(record, rule.source) if rule is not None and rule.source else record
        if rule is not None and rule.source and src is None:
            if f.type.nullable:
                return None
            errors.append(f"{path}: v2 value is null, v1 field is not nullable")
            return None
        return _record(mapping, source, f.type, record, path + ".", errors)
    if rule.convert is Conversion.DEFAULT:
        return _default(rule, f)
    if rule.convert is Conversion.SQL:
        raise NeedsSpark(path)
    if rule.convert is Conversion.UNRESOLVED:
        errors.append(f"{path}: unresolved")
        return None
    value = _get(record, rule.source or "")
    src_field = field_at(source, rule.source or "")
    reason = None
    if value is None:
        if not f.type.nullable:
            reason = f"{path}: v2 value is null, v1 field is not nullable"
        result = None
    else:
        try:
            result = _apply(
                rule, f.type.non_null(), src_field.type.non_null() if src_field else None, value
            )
        except _Failed:
            reason = f"{path}: cannot convert {to_string(value)} to {f.type.non_null().describe()}"
            result = None
    if reason is None:
        return result
    if rule.on_error is Policy.DEFAULT:
        return _default(rule, f)
    errors.append(reason)
    return None


def _apply(rule: Rule, t: AvroType, s: AvroType | None, value: Any) -> Any:
    conv, tk = rule.convert, t.kind
    if conv is Conversion.COPY:
        if tk in ("float", "double"):
            return float(value)
        return value
    if conv is Conversion.PARSE_NUMBER:
        return parse_number(value, tk)
    if conv is Conversion.NARROW:
        if tk == "int":
            if not RANGES["int"][0] <= value <= RANGES["int"][1]:
                raise _Failed
            return value
        if not (math.isnan(value) or math.isinf(value)) and abs(value) > FLOAT_MAX:
            raise _Failed
        return value
    if conv is Conversion.TO_STRING:
        return to_string(value)
    if conv is Conversion.TO_ENUM:
        if value not in t.symbols:
            raise _Failed
        return value
    if conv is Conversion.BYTES_TO_STRING:
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise _Failed from None
    if conv is Conversion.STRING_TO_BYTES:
        return value.encode("utf-8")
    raise _Failed
