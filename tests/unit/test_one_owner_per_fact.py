"""Each fact of Avro and of JSON Pointers is written in one module; every other module imports it.

Read from the shipped source (schemacli, spark_avro, converters): the owner of each fact is the
only module that spells it out, so a copy that creeps back in fails here, naming where.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACTS = "schemacli/contracts/avro/facts.py"
POINTER = "schemacli/contracts/jsontext/pointer.py"
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


@functools.cache
def shipped() -> tuple[tuple[str, tuple[ast.AST, ...]], ...]:
    """Each shipped module's path and every node of its syntax tree (parsed once)."""
    return tuple(
        (
            path.relative_to(ROOT).as_posix(),
            tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8")))),
        )
        for package in ("schemacli", "spark_avro", "converters")
        for path in sorted((ROOT / package).rglob("*.py"))
    )


def _strings(node: ast.AST) -> set[str]:
    return {
        e.value
        for e in getattr(node, "elts", ())
        if isinstance(e, ast.Constant) and isinstance(e.value, str)
    }


def _power(node: ast.AST, exponent: int) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 2
        and isinstance(node.right, ast.Constant)
        and node.right.value == exponent
    )


def _spark_name_map(node: ast.AST) -> bool:
    if not isinstance(node, ast.Dict):
        return False
    pairs = {
        (k.value, v.value)
        for k, v in zip(node.keys, node.values, strict=True)
        if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
    }
    return bool(pairs & {("int", "integer"), ("long", "BIGINT"), ("int", "INT"), ("long", "long")})


FACTS_AND_OWNERS: list[tuple[str, Callable[[ast.AST], bool], str]] = [
    (
        "the JSON Pointer escapes (~0, ~1)",
        lambda n: isinstance(n, ast.Constant) and n.value in ("~0", "~1"),
        POINTER,
    ),
    (
        "the set of Avro's primitive types",
        # (a table keyed by every primitive, such as defaults' zeros, is another fact)
        lambda n: isinstance(n, (ast.Set, ast.List, ast.Tuple)) and PRIMITIVES <= _strings(n),
        FACTS,
    ),
    (
        "the ranges of Avro's int and long",
        lambda n: (
            _power(n, 63)
            or (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and _power(n.operand, 31))
        ),
        FACTS,
    ),
    ("Avro's type names as Spark spells them", _spark_name_map, FACTS),
    (
        "the decimal digits a fixed holds (no float log10 anywhere)",
        lambda n: (
            (isinstance(n, ast.Attribute) and n.attr == "log10")
            or (isinstance(n, ast.FunctionDef) and "precision" in n.name and "max" in n.name)
        ),
        FACTS,
    ),
    (
        "the value a JSON Pointer names",
        lambda n: isinstance(n, ast.FunctionDef) and n.name.strip("_") == "value_at",
        POINTER,
    ),
]


@pytest.mark.parametrize(
    ("fact", "spells", "owner"), FACTS_AND_OWNERS, ids=[f[0] for f in FACTS_AND_OWNERS]
)
def test_one_module_spells_out_each_fact(fact, spells, owner):
    found = sorted({path for path, nodes in shipped() for node in nodes if spells(node)} - {owner})
    assert found == [], f"{fact} is written again outside {owner}"


def test_every_owner_still_spells_out_its_fact():
    trees = dict(shipped())
    for fact, spells, owner in FACTS_AND_OWNERS:
        if "log10" in fact:
            continue  # the owner computes it in integers: nothing to spell
        assert any(spells(n) for n in trees[owner]), fact
