"""Spark (S001): unions Spark reads by position."""

from __future__ import annotations

from schemacli.contracts.avro.schema import UnionSchema
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run, union_text
from schemacli.kinds import Kind

S001 = Rule(
    Kind.S001,
    "positional-union",
    Category.SPARK,
    default=True,
    fixable=Fixable.NONE,
    summary="a union has at most one non-null branch (Spark names the others by position)",
)


def _union(run: Run, node: UnionSchema) -> None:
    branches = [t for t in node.types if t.type != "null"]
    if len(branches) > 1:
        run.report(Kind.S001, node.pointer, {"type": union_text(node), "count": len(branches)})


FAMILY = Family((S001,), union=_union)
