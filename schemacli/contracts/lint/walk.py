"""The one walk of the rules over a loaded schema: ``lint`` and ``validate`` both come here.

Only the types the file defines are walked (types it takes from other files get their own
turn); each node once, in definition order. At each node the families whose rules are on are
called in ``rules.FAMILIES``' order; what the schema silences (``suppress``) is dropped last.
"""

from __future__ import annotations

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.findings import Finding
from schemacli.contracts.lint.rule import Family, Run, Styles, SubjectContext
from schemacli.contracts.lint.rules import FAMILIES
from schemacli.contracts.lint.suppress import suppressed
from schemacli.kinds import Kind


def check(
    loaded: LoadedSchema,
    rules: frozenset[Kind],
    styles: Styles,
    context: SubjectContext | None = None,
) -> list[Finding]:
    """The findings of the rules ``rules`` names over ``loaded``, in the order the walk meets
    them (the file's text first, then node by node), less what the schema silences."""
    run = Run(loaded, rules, styles, context)
    families = [f for f in FAMILIES if any(r.kind in rules for r in f.rules)]
    if families:
        for family in families:
            if family.start is not None:
                family.start(run)
        own = {id(n) for n in loaded.defines}
        imported = {id(n) for n in loaded.names.types.values()} - own
        _walk(run, families, loaded.schema, imported)
        for family in families:
            if family.end is not None:
                family.end(run)
    return suppressed(run.findings, loaded.document)


def _walk(run: Run, families: list[Family], root: Schema, imported: set[int]) -> None:
    named = [f.named for f in families if f.named is not None]
    records = [f.record for f in families if f.record is not None]
    fields = [f.field for f in families if f.field is not None]
    unions = [f.union for f in families if f.union is not None]
    nodes = [f.node for f in families if f.node is not None]
    seen: set[int] = set()
    stack: list[Schema] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in imported:
            continue
        seen.add(id(node))
        if isinstance(node, NamedSchema):
            for on_named in named:
                on_named(run, node)
        if isinstance(node, RecordSchema):
            for on_record in records:
                on_record(run, node)
            for fld in node.fields if fields else ():
                for on_field in fields:
                    on_field(run, fld)
            stack.extend(reversed([f.type for f in node.fields]))
        elif isinstance(node, ArraySchema):
            stack.append(node.items)
        elif isinstance(node, MapSchema):
            stack.append(node.values)
        elif isinstance(node, UnionSchema):
            for on_union in unions:
                on_union(run, node)
            stack.extend(reversed(node.types))
        for on_node in nodes:
            on_node(run, node)
