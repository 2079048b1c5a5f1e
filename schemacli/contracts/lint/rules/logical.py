"""Logical types: a decimal Java ignores (INVALID_DECIMAL), a logical type on a base type it does
not annotate (LOGICAL_TYPE_IGNORED), and one timestamp precision across a file and its subject
(T002).

Java (and so the registry and Spark) ignores an invalid logical type: readers see the plain
base type. INVALID_DECIMAL and LOGICAL_TYPE_IGNORED are ``validate``'s warnings too; each claim
about other readers was checked against fastavro 1.13 and the ``avro`` package 1.12
(tests/unit/test_validate_claims.py).
"""

from __future__ import annotations

from typing import Any

from schemacli.contracts.avro.facts import (
    LOGICAL_BASES,
    LOGICAL_FIXED_SIZES,
    TIMESTAMP_UNITS,
    DecimalProblem,
    decimal_problem,
    max_decimal_precision,
    min_fixed_size,
)
from schemacli.contracts.avro.schema import Field, FixedSchema, PrimitiveSchema, Schema
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run, describe, shown
from schemacli.kinds import Kind

INVALID_DECIMAL = Rule(
    Kind.INVALID_DECIMAL,
    "invalid-decimal",
    Category.TYPES,
    default=True,
    fixable=Fixable.NONE,
    summary="a decimal's precision is 1 or more, its scale 0 to it, its fixed big enough",
    validate=True,
)
T002 = Rule(
    Kind.T002,
    "mixed-timestamp-precision",
    Category.TYPES,
    default=True,
    fixable=Fixable.NONE,
    summary="one timestamp precision (millis or micros) across a file and its subject",
)
LOGICAL_TYPE_IGNORED = Rule(
    Kind.LOGICAL_TYPE_IGNORED,
    "logical-type-ignored",
    Category.PORTABILITY,
    default=False,
    fixable=Fixable.NONE,
    summary="a logical type sits on a type it annotates",
    validate=True,
)


def _field(run: Run, fld: Field) -> None:
    """A logicalType written on the field instead of on its type."""
    logical = fld.props.get("logicalType")
    if logical is None or not run.on(Kind.LOGICAL_TYPE_IGNORED):
        return
    inner = shown({"type": fld.type.type, "logicalType": logical})
    run.add(
        Kind.LOGICAL_TYPE_IGNORED,
        run.loaded.location(fld.pointer + "/logicalType"),
        f"logicalType {shown(logical)} is set on field {fld.name!r}, not on its type; Java "
        "(and so the registry and Spark) reads a logical type only on a type, so readers "
        f"see a plain {describe(fld.type)}",
        f'move it into the type: "type": {inner}',
    )


def _node(run: Run, node: Schema) -> None:
    logical = node.logical_type
    if logical is None:
        return
    if isinstance(node, PrimitiveSchema | FixedSchema):
        _applies(run, node, logical)
    if logical in TIMESTAMP_UNITS and run.on(Kind.T002):
        _timestamp(run, node, logical)


def _applies(run: Run, node: PrimitiveSchema | FixedSchema, logical: str) -> None:
    bases = LOGICAL_BASES.get(logical)
    if bases is None:
        return  # a custom logical type: every reader ignores it, by design
    size = LOGICAL_FIXED_SIZES.get(logical)
    if node.type not in bases or (
        size is not None and isinstance(node, FixedSchema) and node.size != size
    ):
        if not run.on(Kind.LOGICAL_TYPE_IGNORED):
            return
        need = " or ".join(
            f"fixed({size})" if (size is not None and b == "fixed") else b for b in bases
        )
        run.add(
            Kind.LOGICAL_TYPE_IGNORED,
            run.loaded.location(node.pointer + "/logicalType"),
            f"logicalType {logical!r} does not apply to {describe(node)} (it needs {need}); "
            "Java and the Python avro package ignore it, so readers see a plain "
            f"{node.type}",
            f'use {need} as the type, or remove "logicalType"',
        )
        return
    if logical == "decimal" and run.on(Kind.INVALID_DECIMAL):
        _decimal(run, node)


def _decimal(run: Run, node: PrimitiveSchema | FixedSchema) -> None:
    props = node.props
    size = node.size if isinstance(node, FixedSchema) else None
    problem = decimal_problem(props, size)
    if problem is None:
        return
    precision, scale = props.get("precision"), props.get("scale", 0)
    ignored = "Java and the Python avro package ignore the logical type (plain bytes)"
    at = node.pointer
    if problem is DecimalProblem.PRECISION:
        refusers = (
            "fastavro refuses the schema"
            if precision is not None and type(precision) is not int
            else "fastavro accepts it"
        )
        message = (
            f"decimal precision {shown(precision)} is not a positive integer; {ignored}; {refusers}"
        )
        where = at + ("/precision" if "precision" in props else "")
        hint = 'give "precision": the total number of digits, a positive integer'
        run.add(Kind.INVALID_DECIMAL, run.loaded.location(where), message, hint)
    elif problem is DecimalProblem.SCALE:
        run.add(
            Kind.INVALID_DECIMAL,
            run.loaded.location(at + "/scale"),
            f"decimal scale {shown(scale)} is not a non-negative integer; {ignored}; fastavro "
            "refuses the schema",
            'give "scale": the digits after the point, 0 <= scale <= precision',
        )
    elif problem is DecimalProblem.SCALE_ABOVE_PRECISION:
        run.add(
            Kind.INVALID_DECIMAL,
            run.loaded.location(at + "/scale"),
            f"decimal scale {scale} is greater than precision {precision}; {ignored}; fastavro "
            "refuses the schema",
            f"make scale at most {precision}, or raise precision to at least {scale}",
            old=precision,
            new=scale,
        )
    elif isinstance(node, FixedSchema):  # the fixed holds fewer digits than the precision
        most = max_decimal_precision(node.size)
        run.add(
            Kind.INVALID_DECIMAL,
            run.loaded.location(at + "/precision"),
            f"fixed {node.fullname} of {node.size} byte(s) holds at most {most} decimal "
            f"digits, not precision {precision}; {ignored.replace('bytes', 'fixed')}; "
            "fastavro refuses the schema",
            f"raise size to at least {min_fixed_size(props['precision'])} or lower precision "
            f"to {most}",
        )


def _timestamp(run: Run, node: Schema, logical: str) -> None:
    first = run.first_timestamp
    if first is None:
        run.first_timestamp = (logical, node.pointer or "/")
    elif TIMESTAMP_UNITS[first[0]] != TIMESTAMP_UNITS[logical]:
        run.report(
            Kind.T002,
            node.pointer,
            {
                "name": f"this {node.type}",
                "logical": logical,
                "first": first[0],
                "where": first[1],
            },
        )


def first_timestamp(value: Any) -> tuple[str, str] | None:
    """The first timestamp logical type in a schema's JSON, in text order, and its pointer
    (what T002 expects of the subject's later versions)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            logical = node.get("logicalType")
            if isinstance(logical, str) and logical in TIMESTAMP_UNITS:
                return logical, at
            stack.extend(reversed([(v, join_pointer(at, k)) for k, v in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(v, f"{at}/{i}") for i, v in enumerate(node)]))
    return None


FAMILY = Family((INVALID_DECIMAL, T002, LOGICAL_TYPE_IGNORED), field=_field, node=_node)
