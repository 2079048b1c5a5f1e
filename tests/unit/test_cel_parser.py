"""The CEL parser: the spec's grammar with each node's offset, refusals with the offset of the
first thing wrong (never a RecursionError), and the checker's verdicts on Avro records."""

from __future__ import annotations

import pytest

from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.avrocel import record_type
from schemacli.contracts.rules.cel import ast
from schemacli.contracts.rules.cel.checker import check
from schemacli.contracts.rules.cel.evaluate import compile_expr
from schemacli.contracts.rules.cel.parser import MAX_DEPTH, CelSyntaxError, parse


@pytest.mark.parametrize(
    "text, shape",
    [
        ("a || b && c", "_||_(a, _&&_(b, c))"),
        ("a ? b : c ? d : e", "_?_:_(a, b, _?_:_(c, d, e))"),
        ("1 + 2 * 3 < 10", "_<_(_+_(1, _*_(2, 3)), 10)"),
        ("!!x", "!_(!_(x))"),
        ("-5", "-5"),
        ("--5", "-_(-5)"),
        ("x in [1, 2]", "@in(x, [1, 2])"),
        ("m.a.b[0]", "_[_](m.a.b, 0)"),
        ("has(m.a)", "has(m.a)"),
        ("l.all(x, x > 0)", "all(l, x, _>_(x, 0))"),
        ("l.map(x, x > 0, x * 2)", "map(l, x, _>_(x, 0), _*_(x, 2))"),
        ("s.startsWith('a')", "s.startsWith('a')"),
        ("{'a': 1}", "{'a': 1}"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("0xFFu", "255u"),
        ("1e3", "1000.0"),
        (".5", "0.5"),
        ("'''a\nb'''", "'a\\nb'"),
        ("r'\\d'", "'\\\\d'"),
        ("b'\\xff'", "b'\\xff'"),
        ("'\\u00e9'", "'é'"),
    ],
)
def test_parses_by_the_spec_grammar(text, shape):
    assert show(parse(text)) == shape


def show(n: ast.Expr) -> str:
    if isinstance(n, ast.Lit):
        if n.kind == "uint":
            return f"{n.value}u"
        return repr(n.value) if n.kind in ("string", "bytes") else str(n.value)
    if isinstance(n, ast.Ident):
        return n.name
    if isinstance(n, ast.Select):
        inner = f"{show(n.operand)}.{n.field}"
        return f"has({inner})" if n.test_only else inner
    if isinstance(n, ast.ListLit):
        return "[" + ", ".join(show(i) for i in n.items) + "]"
    if isinstance(n, ast.MapLit):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in n.entries) + "}"
    if isinstance(n, ast.Comprehension):
        parts = [show(n.range), n.var] + [show(e) for e in (n.body, n.transform) if e is not None]
        return f"{n.macro}({', '.join(parts)})"
    assert isinstance(n, ast.Call)
    if n.target is not None:
        return f"{show(n.target)}.{n.function}({', '.join(show(a) for a in n.args)})"
    return f"{n.function}({', '.join(show(a) for a in n.args)})"


@pytest.mark.parametrize(
    "text, pos, words",
    [
        ("message.total >= ", 17, "ends too early"),
        ("a +* b", 3, "unexpected '*'"),
        ("if > 1", 0, "reserved word"),
        ("9223372036854775808", 0, "out of range"),
        ("18446744073709551616u", 0, "out of range"),
        ("'abc", 0, "unterminated"),
        ("'a\nb'", 2, "newline"),
        ("'\\q'", 1, "invalid escape"),
        ("1.5.3", 3, "after a number"),
        ("a; b", 1, "unexpected character ';'"),
        ("has(a)", 0, "has() takes one field selection"),
        ("l.all(1, true)", 6, "variable name"),
        ("", 0, "empty"),
    ],
)
def test_refusals_say_where(text, pos, words):
    with pytest.raises(CelSyntaxError) as caught:
        parse(text)
    assert caught.value.pos == pos and words in caught.value.message


def test_deep_nesting_is_refused_by_name_not_a_recursion_error():
    with pytest.raises(CelSyntaxError, match="deeper than"):
        parse("(" * (MAX_DEPTH + 5) + "1" + ")" * (MAX_DEPTH + 5))
    assert parse("(" * 50 + "1" + ")" * 50)
    with pytest.raises(CelSyntaxError, match="operators"):
        parse(" && ".join(["true"] * 400))
    chain = " && ".join(["message.total > 0.0"] * 100)  # a long rule still checks and runs
    checked = check(parse(chain), {"message": record_type(ORDER)})
    assert not checked.issues
    assert compile_expr(parse(chain)).run({"message": {"total": 1.0}}) is True


def test_every_node_knows_where_it_starts():
    expr = parse("message.total >= 0.0")
    assert isinstance(expr, ast.Call) and expr.pos == 14
    select = expr.args[0]
    assert isinstance(select, ast.Select) and select.pos == 8


ORDER = parse_schema({"type": "record", "name": "Order", "fields": [
    {"name": "total", "type": "double"}, {"name": "n", "type": ["null", "long"]},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "price",
     "type": {"type": "bytes", "logicalType": "decimal", "precision": 5}}]})  # fmt: skip


@pytest.mark.parametrize(
    "text, codes",
    [
        ("message.total >= 0.0", []),
        ("message.total >= 0", ["type-mismatch"]),
        ("message.n > 0", []),
        ("message.n == null || message.n > 1", []),
        ("message.totl > 0.0", ["unknown-field"]),
        ("message.tags.all(t, t.size() > 0)", []),
        ("message.tags.all(t, t > 0)", ["type-mismatch"]),
        ("message.at > timestamp('2026-01-01T00:00:00Z')", []),
        ("message.price > 0", ["unsupported"]),
        ("nope > 1", ["unknown-name"]),
        ("frobnicate(message.total)", ["unknown-name"]),
        ("message.total.size()", ["type-mismatch"]),
        ("isEmail(message.tags[0])", []),
    ],
)
def test_the_checker_judges_against_the_record_the_executors_present(text, codes):
    checked = check(parse(text), {"message": record_type(ORDER)})
    assert [i.code for i in checked.issues] == codes
