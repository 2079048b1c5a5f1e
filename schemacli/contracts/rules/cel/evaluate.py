"""The CEL evaluator: an AST compiled once into Python closures, then run per record.

Values: CEL int is a Python ``int``, uint a ``UInt``, double a ``float``, bool a ``bool``,
string ``str``, bytes ``bytes``, null ``None``, list ``list``/``tuple``, map ``dict``,
timestamp an aware ``datetime`` (UTC), duration a ``timedelta``. An error is a ``CelEvalError``
raised and caught where CEL absorbs it: ``&&``/``||`` (commutatively: ``error && false`` is
false, ``error || true`` is true), ``?:`` (only the branch taken runs), the macros ``all`` /
``exists`` (like ``&&`` / ``||`` over the items).

Semantics follow the CEL spec (what CEL-Java runs). Where cel-python 0.5.0 differs on an
expression the checker passes, the difference is named in docs/rules.md
("Where the executors differ") and pinned by tests/unit/test_cel_vs_celpy.py.
"""

from __future__ import annotations

import re
from typing import Any

from schemacli.contracts.rules.cel import ast
from schemacli.contracts.rules.cel.functions import FUNCTIONS, contains, index, re2_pattern
from schemacli.contracts.rules.cel.values import (
    TYPE_NAMES,
    CelEvalError,
    CelType,
    Env,
    Fn,
    UInt,
    arith,
    check_int,
    compare,
    equal,
    kind,
    no_overload,
    type_name,
)

MAX_REGEX_CACHE = 256


class _Compiler:
    def __init__(self) -> None:
        self.regex: dict[str, re.Pattern[str]] = {}

    def compile(self, node: ast.Expr) -> Fn:
        if isinstance(node, ast.Lit):
            value: Any = UInt(node.value) if node.kind == "uint" else node.value  # type: ignore[call-overload]
            return lambda env: value
        if isinstance(node, ast.Ident):
            return self.ident(node)
        if isinstance(node, ast.Select):
            return self.select(node)
        if isinstance(node, ast.ListLit):
            items = [self.compile(i) for i in node.items]
            return lambda env: [f(env) for f in items]
        if isinstance(node, ast.MapLit):
            return self.map_lit(node)
        if isinstance(node, ast.Comprehension):
            return self.comprehension(node)
        if isinstance(node, ast.StructLit):
            pos = node.pos

            def struct(env: Env) -> Any:
                raise CelEvalError("message construction is not supported over Avro", pos)

            return struct
        return self.call(node)

    def ident(self, node: ast.Ident) -> Fn:
        name, pos = node.name, node.pos

        def ident(env: Env) -> Any:
            try:
                return env[name]
            except KeyError:
                if name in TYPE_NAMES:
                    return CelType(name)
                raise CelEvalError(f"undeclared reference to {name!r}", pos) from None

        return ident

    def select(self, node: ast.Select) -> Fn:
        operand = self.compile(node.operand)
        name, pos = node.field, node.pos
        if node.test_only:

            def has(env: Env) -> bool:
                m = operand(env)
                if isinstance(m, dict):
                    return name in m
                if m is None:
                    raise CelEvalError(f"has() on null: no field {name!r}", pos)
                raise CelEvalError(f"has() on a value of type {type_name(m)}", pos)

            return has

        def select(env: Env) -> Any:
            m = operand(env)
            if isinstance(m, dict):
                try:
                    return m[name]
                except KeyError:
                    raise CelEvalError(f"no such key: {name!r}", pos) from None
            raise CelEvalError(f"field selection .{name} on {type_name(m)}", pos)

        return select

    def map_lit(self, node: ast.MapLit) -> Fn:
        entries = [(self.compile(k), self.compile(v), k.pos) for k, v in node.entries]

        def build(env: Env) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for key, value, pos in entries:
                k = key(env)
                if not isinstance(k, str | int) or isinstance(k, float):
                    raise CelEvalError(f"a map key of type {type_name(k)}", pos)
                if k in out:
                    raise CelEvalError(f"repeated map key {k!r}", pos)
                out[k] = value(env)
            return out

        return build

    def comprehension(self, node: ast.Comprehension) -> Fn:
        rng = self.compile(node.range)
        body = self.compile(node.body) if node.body is not None else None
        transform = self.compile(node.transform) if node.transform is not None else None
        var, pos, macro = node.var, node.pos, node.macro

        def items(env: Env) -> list[Any]:
            r = rng(env)
            if isinstance(r, list | tuple):
                return list(r)
            if isinstance(r, dict):
                return list(r.keys())
            raise CelEvalError(f"{macro}() over a value of type {type_name(r)}", pos)

        def scoped(env: Env, value: Any) -> dict[str, Any]:
            inner = dict(env)
            inner[var] = value
            return inner

        if macro in ("all", "exists"):
            assert body is not None
            stop = macro == "exists"  # exists stops at true, all at false

            def quantify(env: Env) -> bool:
                error: CelEvalError | None = None
                for item in items(env):
                    try:
                        result = body(scoped(env, item))
                    except CelEvalError as err:
                        error = error or err
                        continue
                    if not isinstance(result, bool):
                        error = error or no_overload(macro, result, pos=pos)
                        continue
                    if result is stop:
                        return stop
                if error is not None:
                    raise error
                return not stop

            return quantify
        if macro == "exists_one":
            assert body is not None

            def exactly_one(env: Env) -> bool:
                count = 0
                for item in items(env):
                    result = body(scoped(env, item))
                    if not isinstance(result, bool):
                        raise no_overload(macro, result, pos=pos)
                    count += result
                return count == 1

            return exactly_one
        if macro == "filter":
            assert body is not None

            def keep(env: Env) -> list[Any]:
                out = []
                for item in items(env):
                    result = body(scoped(env, item))
                    if not isinstance(result, bool):
                        raise no_overload(macro, result, pos=pos)
                    if result:
                        out.append(item)
                return out

            return keep
        assert transform is not None

        def mapped(env: Env) -> list[Any]:
            out = []
            for item in items(env):
                inner = scoped(env, item)
                if body is not None:
                    wanted = body(inner)
                    if not isinstance(wanted, bool):
                        raise no_overload(macro, wanted, pos=pos)
                    if not wanted:
                        continue
                out.append(transform(inner))
            return out

        return mapped

    def call(self, node: ast.Call) -> Fn:
        fn, pos = node.function, node.pos
        args = [self.compile(a) for a in node.args]
        if fn == "_&&_":
            return _logic(args[0], args[1], False, pos)
        if fn == "_||_":
            return _logic(args[0], args[1], True, pos)
        if fn == "_?_:_":
            cond, then, other = args

            def choose(env: Env) -> Any:
                c = cond(env)
                if c is True:
                    return then(env)
                if c is False:
                    return other(env)
                raise no_overload("_?_:_", c, pos=pos)

            return choose
        if fn == "!_":
            (a,) = args

            def negate(env: Env) -> bool:
                v = a(env)
                if isinstance(v, bool):
                    return not v
                raise no_overload("!_", v, pos=pos)

            return negate
        if fn == "-_":
            (a,) = args

            def minus(env: Env) -> Any:
                v = a(env)
                k = kind(v)
                if k == "int":
                    return check_int(-v, pos)
                if k == "double":
                    return -v
                if k == "google.protobuf.Duration":
                    return -v
                raise no_overload("-_", v, pos=pos)

            return minus
        if fn in ("_+_", "_-_", "_*_", "_/_", "_%_"):
            a, b = args
            return lambda env: arith(fn, a(env), b(env), pos)
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            a, b = args
            return lambda env: compare(fn, a(env), b(env), pos)
        if fn == "_==_":
            a, b = args
            return lambda env: equal(a(env), b(env), pos)
        if fn == "_!=_":
            a, b = args
            return lambda env: not equal(a(env), b(env), pos)
        if fn == "@in":
            a, b = args
            return lambda env: contains(a(env), b(env), pos)
        if fn == "_[_]":
            a, b = args
            return lambda env: index(a(env), b(env), pos)
        target = self.compile(node.target) if node.target is not None else None
        return self.function(fn, target, args, pos)

    def function(self, fn: str, target: Fn | None, args: list[Fn], pos: int) -> Fn:
        every = ([target] if target is not None else []) + args
        impl = FUNCTIONS.get(fn)
        if fn == "matches":
            compiled = self.regex

            def matches(env: Env) -> bool:
                s, p = (f(env) for f in every)
                if not isinstance(s, str) or not isinstance(p, str):
                    raise no_overload("matches", s, p, pos=pos)
                pattern = compiled.get(p)
                if pattern is None:
                    pattern = re2_pattern(p, pos)
                    if len(compiled) < MAX_REGEX_CACHE:
                        compiled[p] = pattern
                return pattern.search(s) is not None

            return matches
        if impl is None:

            def unknown(env: Env) -> Any:
                raise CelEvalError(f"no such function: {fn}", pos)

            return unknown

        def apply(env: Env) -> Any:
            return impl(pos, *(f(env) for f in every))

        return apply


def _logic(left: Fn, right: Fn, absorbing: bool, pos: int) -> Fn:
    """``&&`` (absorbing False) or ``||`` (absorbing True), commutative over errors."""
    op = "_||_" if absorbing else "_&&_"

    def run(env: Env) -> bool:
        error: CelEvalError | None = None
        try:
            a = left(env)
        except CelEvalError as err:
            a, error = err, err
        if a is absorbing:
            return bool(absorbing)
        b = right(env)
        if b is absorbing:
            return bool(absorbing)
        if error is not None:
            raise error
        if isinstance(a, bool) and isinstance(b, bool):
            return not absorbing
        raise no_overload(op, a, b, pos=pos)

    return run


class Program:
    """A compiled expression: ``run(bindings)`` gives its value or raises CelEvalError."""

    def __init__(self, expr: ast.Expr) -> None:
        self.expr = expr
        self._fn = _Compiler().compile(expr)

    def run(self, bindings: Env) -> Any:
        try:
            return self._fn(bindings)
        except RecursionError:
            raise CelEvalError("the value nests too deeply", 0) from None


def compile_expr(expr: ast.Expr) -> Program:
    """``expr`` compiled into closures, once; run it per record."""
    return Program(expr)
