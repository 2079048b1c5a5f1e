"""CEL's abstract syntax: one frozen dataclass per node, each with ``pos``, the character offset
in the expression text where the node starts (an operator: where the operator is; a field
selection: where the field's name is), so every finding can say line:col.

Operators are calls with CEL's own function names (``_+_``, ``_&&_``, ``!_``, ``_[_]``,
``@in``, ``_?_:_``), as the CEL spec's AST has them. Macros are expanded by the parser:
``has(a.b)`` is a test-only ``Select``; ``all``, ``exists``, ``exists_one``, ``map`` and
``filter`` are ``Comprehension`` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LiteralKind = Literal["int", "uint", "double", "string", "bytes", "bool", "null"]
MacroKind = Literal["all", "exists", "exists_one", "map", "filter"]


@dataclass(frozen=True)
class Lit:
    pos: int
    kind: LiteralKind
    value: object  # int, float, str, bytes, bool or None; a uint is an int with kind "uint"


@dataclass(frozen=True)
class Ident:
    pos: int
    name: str


@dataclass(frozen=True)
class Select:
    pos: int  # where the field's name is
    operand: Expr
    field: str
    test_only: bool = False  # has(operand.field)


@dataclass(frozen=True)
class Call:
    pos: int
    function: str
    args: tuple[Expr, ...]
    target: Expr | None = None  # a receiver call: target.function(args)


@dataclass(frozen=True)
class ListLit:
    pos: int
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class MapLit:
    pos: int
    entries: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True)
class StructLit:
    pos: int
    type_name: str
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class Comprehension:
    """``range.macro(var, body)``; ``map(var, filter, transform)`` keeps its filter in
    ``body`` and its transform in ``transform``, a plain ``map`` has body None."""

    pos: int
    macro: MacroKind
    range: Expr
    var: str
    body: Expr | None
    transform: Expr | None = None


Expr = Lit | Ident | Select | Call | ListLit | MapLit | StructLit | Comprehension


def walk(node: Expr) -> list[Expr]:
    """Every node under ``node`` (itself first), depth first, in source order."""
    out: list[Expr] = []
    stack: list[Expr] = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(children(current)))
    return out


def children(node: Expr) -> list[Expr]:
    """The direct sub-expressions of ``node``, in source order."""
    if isinstance(node, Select):
        return [node.operand]
    if isinstance(node, Call):
        return ([node.target] if node.target is not None else []) + list(node.args)
    if isinstance(node, ListLit):
        return list(node.items)
    if isinstance(node, MapLit):
        return [part for entry in node.entries for part in entry]
    if isinstance(node, StructLit):
        return [value for _, value in node.fields]
    if isinstance(node, Comprehension):
        return [e for e in (node.range, node.body, node.transform) if e is not None]
    return []
