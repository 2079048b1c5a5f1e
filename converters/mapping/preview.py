"""A Python preview of the catalogue conversions, for ``validate``'s fast dry run without Spark.

Each conversion's ``preview`` (its spec, ``converters.mapping.conversions``) mirrors the Spark SQL
its ``sql`` writes (``try_cast`` under ANSI rules: a value that does not fit is a failure, not a
wrap-around); this module walks the record, with the null rule and the ``on_error`` policy, so a
dry run on sample records shows what each field becomes in milliseconds. It is a preview: the
job runs the Spark SQL, and ``validate --spark`` runs that same SQL on the same samples and
reports any record where the two disagree. Custom ``convert: sql`` rules need ``--spark``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from converters.mapping.conversions import value_spec
from converters.mapping.conversions.spec import Failed
from converters.mapping.conversions.to_string import to_string
from converters.mapping.model import Conversion, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType
from converters.mapping.sql import field_at


class NeedsSpark(Exception):
    """A rule (custom SQL) that only Spark can evaluate."""


@dataclass(frozen=True)
class Outcome:
    """One record through the preview: the v1 record, or the reasons it is dead-lettered."""

    value: dict[str, Any] | None
    errors: tuple[str, ...]


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
        except Failed:
            reason = f"{path}: cannot convert {to_string(value)} to {f.type.non_null().describe()}"
            result = None
    if reason is None:
        return result
    if rule.on_error is Policy.DEFAULT:
        return _default(rule, f)
    errors.append(reason)
    return None


def _apply(rule: Rule, t: AvroType, s: AvroType | None, value: Any) -> Any:
    spec = value_spec(rule.convert)
    if spec is None:
        raise Failed
    return spec.preview(value, s, t)
