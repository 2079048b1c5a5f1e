"""Docs (D001, D002; off by default): every named type and every field says what it is."""

from __future__ import annotations

from schemacli.contracts.avro.schema import NamedSchema, RecordSchema
from schemacli.contracts.lint.rule import Category, Family, Fixable, Rule, Run
from schemacli.kinds import Kind

D = Category.DOCS

D001 = Rule(
    Kind.D001,
    "record-without-doc",
    D,
    default=False,
    fixable=Fixable.NONE,
    summary="every record, enum and fixed has a doc",
)
D002 = Rule(
    Kind.D002,
    "field-without-doc",
    D,
    default=False,
    fixable=Fixable.NONE,
    summary="every field has a doc",
)


def _named(run: Run, node: NamedSchema) -> None:
    if run.on(Kind.D001) and not node.doc:
        what = node.type if not isinstance(node, RecordSchema) or not node.is_error else "error"
        run.report(Kind.D001, node.pointer + "/name", {"type": what, "name": node.simple_name})


def _record(run: Run, node: RecordSchema) -> None:
    if run.on(Kind.D002):
        for fld in node.fields:
            if not fld.doc:
                values = {"name": fld.name, "record": node.simple_name}
                run.report(Kind.D002, fld.pointer + "/name", values)


FAMILY = Family((D001, D002), named=_named, record=_record)
