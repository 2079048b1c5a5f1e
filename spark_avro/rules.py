"""Data-quality rules in Spark: a contract's CEL and CEL_FIELD CONDITIONs compiled into Spark
SQL (no Python UDF on the data path), and the table of SQL (``rule_table``) that
``spark_avro.rulestage``'s stage applies, turning a record breaking one into a bad record of
kind ``rule`` (docs/spark.md, docs/rules.md).

Each CEL node becomes two SQL expressions: its value, and a boolean "this is a CEL error" (never
NULL), so that CEL's error semantics hold in SQL: ``&&``/``||`` absorb an error from either side
(``error || true`` is true), ``?:`` runs one branch, a comparison with a null field is an error
(a CEL null never meets an int), ``==`` with null is null-safe, arithmetic that overflows or
divides by zero is an error (``try_*`` functions), ``all``/``exists`` over an array are
``exists()`` over the items' own (value, error) pairs. A rule's status is then ``pass``,
``fail`` or ``error``, as ``contracts.rules.execute`` decides it in Python; a test
(tests/spark/test_rules_sql_equals_python.py) feeds both roads the same records and compares.
A condition that is a chain of ``&&`` (or ``||``) becomes one CASE over its operands, so that
no operand's SQL is written twice (``_Compiler.code``).

A CEL_FIELD CONDITION (``_FieldSites``) is the serde's field walk done on the schema: each
field the rule's tags select (nested records, array items and map values included) gets the
condition compiled with its own ``value``, ``name``, ``fullName``, ``typeName``, ``tags`` and
``message`` (type-checked with that field's type), and the codes are folded in the walk's order
(the first that fails or errs decides; an array item's or map value's false does not fail).

A CEL_FIELD TRANSFORM (``compile_rules(..., transforms=True)``: the readers and the migration
converter's v1 WRITE rules, ``converters.pipeline.v1rules``) is the same walk
giving each selected field's new value (``_FieldSites.transform``): records rebuilt with
``named_struct``, arrays with ``transform``, maps with ``transform_values``, each value cast back
to its column's type; its code is 0, or 2 when it errs on any field (or gives a value the column
cannot hold), and ``rulestage`` replaces the columns of a good record where it is 0.

What has no SQL form here is refused when the reader is built (``RulesNotCompiled``, naming the
rule and the construct or field): a CEL TRANSFORM (the whole record), a CEL_FIELD TRANSFORM of a
field of another type than boolean, int, long, double, string or bytes, or reading ``message``,
a union of several types, timestamps' getters, string conversions of doubles, map construction,
... The Python road (``rules test``) runs them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from schemacli.contracts.avro.facts import (
    INT_MAX,
    INT_MIN,
    LONG_MIN,
    PRIMITIVE_TYPES,
    SPARK_TYPES,
    spark_sql_name,
)
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.rules import avrocel
from schemacli.contracts.rules.cel import ast
from schemacli.contracts.rules.cel.checker import Checked, check
from schemacli.contracts.rules.cel.evaluate import compile_expr
from schemacli.contracts.rules.cel.functions import re2_pattern, to_timestamp
from schemacli.contracts.rules.cel.parser import CelSyntaxError, parse
from schemacli.contracts.rules.cel.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    CelType,
    ListT,
    MapT,
    RecordT,
)
from schemacli.contracts.rules.cel.values import CelEvalError
from schemacli.contracts.rules.execute import active_rules, condition_message, serde_order, shadowed
from schemacli.contracts.rules.model import (
    DLQ_TOPIC,
    Contract,
    Rule,
    parse_contract,
    read_contract,
)
from schemacli.contracts.rules.tags import selects, tags_of
from schemacli.errors import InputError, Location, UsageError
from spark_avro.registry import with_registry

if TYPE_CHECKING:
    from schemacli.registry.schemas import RegistryVersion

FALSE, TRUE = "FALSE", "TRUE"


class RulesNotCompiled(InputError):
    """A rule this reader cannot run in Spark SQL (named, with the construct and its place)."""


@dataclass(frozen=True)
class Sql:
    value: str
    error: str  # a boolean SQL expression, never NULL: the CEL value is an error
    nullable: bool  # the value may be a CEL null (SQL NULL) where no error is


@dataclass(frozen=True)
class CompiledRule:
    rule: Rule
    status: str  # SQL giving 'pass', 'fail' or 'error'
    action_on_failure: str
    message: str
    code: str  # SQL giving 0 (pass), 1 (fail) or 2 (error)
    # a TRANSFORM's new value of each column it replaces (SQL over the record it reads)
    replaced: dict[str, str] = field(default_factory=dict)


def _or(*parts: str) -> str:
    kept = [p for p in parts if p != FALSE]
    if any(p == TRUE for p in kept):
        return TRUE
    if not kept:
        return FALSE
    return kept[0] if len(kept) == 1 else "(" + " OR ".join(kept) + ")"


def _and(*parts: str) -> str:
    kept = [p for p in parts if p != TRUE]
    if any(p == FALSE for p in kept):
        return FALSE
    if not kept:
        return TRUE
    return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"


def _not(p: str) -> str:
    return {TRUE: FALSE, FALSE: TRUE}.get(p, f"(NOT {p})")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string(text: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9 _.,:;@#%^&*+=<>!?/|~()\[\]{}-]*", text):
        return f"'{text}'"
    return f"decode(unhex('{text.encode('utf-8').hex()}'), 'UTF-8')"


def _null_error(s: Sql) -> str:
    """A value used where CEL takes no null: an error when it is null."""
    return _or(s.error, f"({s.value} IS NULL)") if s.nullable else s.error


class _Compiler:
    def __init__(self, rule: Rule, checked: Checked, root: str, contract: Contract | None):
        self.rule = rule
        self.checked = checked
        self.root = root
        self.contract = contract
        self.scopes: list[dict[str, str]] = []
        self.bindings: dict[str, Sql] = {}  # a CEL_FIELD rule's value, name, typeName, ...
        self.lambdas = 0
        self.offset = 0

    def refuse(self, node: ast.Expr, what: str) -> RulesNotCompiled:
        where = (
            self.contract.expr_location(self.rule, self.offset + node.pos)
            if self.contract is not None
            else Location(pointer=self.rule.pointer)
        )
        return RulesNotCompiled(
            f"rule {self.rule.label}: {what} has no Spark SQL form here",
            location=where,
            hint="Run it with `schemacli rules test` (the Python road), or write the condition "
            "with comparisons, size(), startsWith/endsWith/contains/matches, has(), in, and "
            "all/exists/filter/map over arrays (docs/rules.md#rules-in-spark).",
        )

    def type_of(self, node: ast.Expr) -> CelType:
        return self.checked.type_of(node)

    def compile(self, node: ast.Expr) -> Sql:
        if isinstance(node, ast.Lit):
            return self.literal(node)
        if isinstance(node, ast.Ident):
            for scope in reversed(self.scopes):
                if node.name in scope:
                    return Sql(scope[node.name], FALSE, True)
            if node.name in self.bindings:
                return self.bindings[node.name]
            if node.name == "message":
                return Sql(self.root, FALSE, False)
            raise self.refuse(node, f"the name {node.name!r}")
        if isinstance(node, ast.Select):
            return self.select(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Comprehension):
            return self.comprehension(node)
        if isinstance(node, ast.ListLit):
            items = [self.compile(i) for i in node.items]
            if not items:
                raise self.refuse(node, "an empty list literal")
            return Sql(
                "array(" + ", ".join(i.value for i in items) + ")",
                _or(*(i.error for i in items)),
                False,
            )
        raise self.refuse(node, type(node).__name__)

    def literal(self, node: ast.Lit) -> Sql:
        v = node.value
        if node.kind == "bool":
            return Sql(TRUE if v else FALSE, FALSE, False)
        if node.kind == "null":
            return Sql("NULL", FALSE, True)
        if node.kind == "int":
            return Sql(f"CAST({v} AS BIGINT)", FALSE, False)
        if node.kind == "double":
            assert isinstance(v, float)
            return Sql(f"CAST('{v!r}' AS DOUBLE)", FALSE, False)
        if node.kind == "string":
            assert isinstance(v, str)
            return Sql(_string(v), FALSE, False)
        if node.kind == "bytes":
            assert isinstance(v, bytes)
            return Sql(f"X'{v.hex()}'", FALSE, False)
        raise self.refuse(node, f"a {node.kind} literal")

    def select(self, node: ast.Select) -> Sql:
        operand_type = self.type_of(node.operand)
        base = self.compile(node.operand)
        if isinstance(operand_type, RecordT):
            field = operand_type.fields.get(node.field)
            if field is None:
                raise self.refuse(node, f"the unknown field {node.field!r}")
            error = _null_error(base)
            if node.test_only:
                return Sql(TRUE, error, False)
            if (
                field.note is not None
                or field.type not in _SQL_TYPES
                and not isinstance(field.type, ListT | MapT | RecordT)
            ):
                raise self.refuse(node, f"field {node.field!r} ({field.avro})")
            column = (
                _quote(node.field)
                if base.value == self.root == ""
                else f"{base.value}.{_quote(node.field)}"
            )
            if "(date)" in field.avro:
                column = f"unix_date({column})"
            if "local-timestamp" in field.avro:
                raise self.refuse(node, f"field {node.field!r} ({field.avro})")
            return Sql(column, error, field.nullable)
        if isinstance(operand_type, MapT):
            if node.test_only:
                return Sql(f"map_contains_key({base.value}, {_string(node.field)})",
                           _null_error(base), False)  # fmt: skip
            return Sql(
                f"element_at({base.value}, {_string(node.field)})",
                _or(
                    _null_error(base),
                    f"(NOT map_contains_key({base.value}, {_string(node.field)}))",
                ),
                True,
            )
        raise self.refuse(node, f"a field selection on {operand_type}")

    def call(self, node: ast.Call) -> Sql:
        fn = node.function
        if fn in ("_&&_", "_||_"):
            a, b = (self.compile(x) for x in node.args)
            ea, eb = _null_error(a), _null_error(b)
            if ea == eb == FALSE:  # no error on either side: SQL's own AND / OR
                op = "AND" if fn == "_&&_" else "OR"
                return Sql(f"({a.value} {op} {b.value})", FALSE, False)
            absorbing = "FALSE" if fn == "_&&_" else "TRUE"
            hit_a = _and(_not(ea), f"({a.value} = {absorbing})")
            hit_b = _and(_not(eb), f"({b.value} = {absorbing})")
            absorbed = _or(hit_a, hit_b)
            value = _not(absorbed) if fn == "_&&_" else absorbed
            return Sql(value, _and(_not(absorbed), _or(ea, eb)), False)
        if fn == "!_":
            a = self.compile(node.args[0])
            return Sql(_not(a.value), _null_error(a), False)
        if fn == "_?_:_":
            c, a, b = (self.compile(x) for x in node.args)
            ec = _null_error(c)
            return Sql(
                f"(CASE WHEN {c.value} THEN {a.value} ELSE {b.value} END)",
                _or(ec, _and(_not(ec), f"(CASE WHEN {c.value} THEN {a.error} ELSE {b.error} END)")),
                a.nullable or b.nullable,
            )
        if fn in ("_==_", "_!=_"):
            a, b = (self.compile(x) for x in node.args)
            ta, tb = (self.type_of(x) for x in node.args)
            if ta != tb and NULL not in (ta, tb):
                raise self.refuse(node, f"== between {ta} and {tb}")
            same = f"({a.value} <=> {b.value})"
            if DOUBLE in (ta, tb):  # Spark's NaN equals NaN; IEEE's (and CEL's) does not
                same = f"({same} AND NOT coalesce(isnan({a.value}) OR isnan({b.value}), FALSE))"
            return Sql(same if fn == "_==_" else _not(same), _or(a.error, b.error), False)
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            a, b = (self.compile(x) for x in node.args)
            ta, tb = (self.type_of(x) for x in node.args)
            if ta != tb or ta not in (INT, DOUBLE, STRING, BYTES, BOOL, TIMESTAMP):
                raise self.refuse(node, f"{fn} between {ta} and {tb}")
            op = fn.strip("_")
            value = f"({a.value} {op} {b.value})"
            if ta == DOUBLE:  # Spark orders NaN above every number; IEEE (and CEL) compare false
                value = f"({value} AND NOT isnan({a.value}) AND NOT isnan({b.value}))"
            return Sql(value, _or(_null_error(a), _null_error(b)), False)
        if fn in ("_+_", "_-_", "_*_", "_/_", "_%_"):
            return self.arith(node)
        if fn == "-_":
            a = self.compile(node.args[0])
            t = self.type_of(node.args[0])
            if t == INT:
                v = f"try_subtract(CAST(0 AS BIGINT), {a.value})"
                return Sql(v, _or(_null_error(a), f"({v} IS NULL)"), False)
            if t == DOUBLE:
                return Sql(f"(- {a.value})", _null_error(a), False)
            raise self.refuse(node, f"negation of {t}")
        if fn == "@in":
            a, b = (self.compile(x) for x in node.args)
            tb = self.type_of(node.args[1])
            if isinstance(tb, ListT):
                v = f"coalesce(array_contains({b.value}, {a.value}), FALSE)"
                return Sql(v, _or(a.error, _null_error(b)), False)
            if isinstance(tb, MapT):
                v = f"coalesce(map_contains_key({b.value}, {a.value}), FALSE)"
                return Sql(v, _or(a.error, _null_error(b)), False)
            raise self.refuse(node, f"`in` over {tb}")
        if fn == "_[_]":
            a, b = (self.compile(x) for x in node.args)
            ta = self.type_of(node.args[0])
            if isinstance(ta, ListT):
                out = _or(f"({b.value} < 0)", f"({b.value} >= size({a.value}))")
                return Sql(
                    f"(CASE WHEN {out} THEN NULL ELSE "
                    f"element_at({a.value}, CAST({b.value} + 1 AS INT)) END)",
                    _or(_null_error(a), _null_error(b), out),
                    True,
                )
            if isinstance(ta, MapT):
                return Sql(
                    f"try_element_at({a.value}, {b.value})",
                    _or(
                        _null_error(a),
                        _null_error(b),
                        f"(NOT map_contains_key({a.value}, {b.value}))",
                    ),
                    True,
                )
            raise self.refuse(node, f"indexing {ta}")
        return self.function(node)

    def arith(self, node: ast.Call) -> Sql:
        fn = node.function
        a, b = (self.compile(x) for x in node.args)
        ta, tb = (self.type_of(x) for x in node.args)
        errors = _or(_null_error(a), _null_error(b))
        if ta != tb:
            raise self.refuse(node, f"{fn} between {ta} and {tb}")
        if ta == STRING and fn == "_+_":
            return Sql(f"concat({a.value}, {b.value})", errors, False)
        if ta == INT:
            if fn in ("_+_", "_-_", "_*_"):
                name = {"_+_": "try_add", "_-_": "try_subtract", "_*_": "try_multiply"}[fn]
                v = f"{name}({a.value}, {b.value})"
                return Sql(v, _or(errors, _and(_not(errors), f"({v} IS NULL)")), False)
            zero = f"({b.value} = 0)"
            overflow = f"({a.value} = {LONG_MIN} AND {b.value} = -1)"
            op = "div" if fn == "_/_" else "%"
            return Sql(
                f"(CASE WHEN {b.value} = 0 THEN NULL ELSE {a.value} {op} {b.value} END)",
                _or(errors, zero, overflow if fn == "_/_" else FALSE),
                False,
            )
        if ta == DOUBLE and fn != "_%_":
            if fn != "_/_":
                op = fn.strip("_")
                return Sql(f"({a.value} {op} {b.value})", errors, False)
            return Sql(
                f"(CASE WHEN {b.value} = 0.0 THEN (CASE WHEN {a.value} = 0.0 OR isnan({a.value})"
                f" THEN CAST('NaN' AS DOUBLE) ELSE CAST('Infinity' AS DOUBLE) * signum({a.value})"
                f" * (CASE WHEN CAST({b.value} AS STRING) LIKE '-%' THEN -1 ELSE 1 END) END)"
                f" ELSE {a.value} / {b.value} END)",
                errors,
                False,
            )
        raise self.refuse(node, f"{fn} on {ta}")

    def function(self, node: ast.Call) -> Sql:
        fn = node.function
        parts = ([node.target] if node.target is not None else []) + list(node.args)
        compiled = [self.compile(p) for p in parts]
        types = [self.type_of(p) for p in parts]
        errors = _or(*(_null_error(c) for c in compiled))
        if fn == "size" and len(parts) == 1:
            t, c = types[0], compiled[0]
            if t == STRING:
                return Sql(f"CAST(char_length({c.value}) AS BIGINT)", errors, False)
            if t == BYTES:
                return Sql(f"CAST(octet_length({c.value}) AS BIGINT)", errors, False)
            if isinstance(t, ListT | MapT):
                return Sql(f"CAST(size({c.value}) AS BIGINT)", errors, False)
            raise self.refuse(node, f"size() of {t}")
        if fn in ("startsWith", "endsWith", "contains") and types == [STRING, STRING]:
            name = {"startsWith": "startswith", "endsWith": "endswith", "contains": "contains"}[fn]
            return Sql(f"{name}({compiled[0].value}, {compiled[1].value})", errors, False)
        if fn == "matches" and types == [STRING, STRING]:
            pattern = parts[1]
            if not (isinstance(pattern, ast.Lit) and isinstance(pattern.value, str)):
                raise self.refuse(node, "matches() with a pattern that is not a literal")
            try:
                re2_pattern(pattern.value, 0)
            except CelEvalError:
                raise self.refuse(node, f"the pattern {pattern.value!r}") from None
            return Sql(f"regexp_like({compiled[0].value}, {compiled[1].value})", errors, False)
        if fn == "double" and types == [INT]:
            return Sql(f"CAST({compiled[0].value} AS DOUBLE)", errors, False)
        if fn == "int" and types == [DOUBLE]:
            v = compiled[0].value
            bad = (
                f"(isnan({v}) OR {v} >= 9.223372036854775807E18 OR {v} < -9.223372036854775808E18)"
            )
            return Sql(f"CAST({v} AS BIGINT)", _or(errors, bad), False)
        if (
            fn in ("int", "double", "string", "dyn")
            and len(types) == 1
            and types[0]
            == {
                "int": INT,
                "double": DOUBLE,
                "string": STRING,
                "dyn": types[0],
            }[fn]
        ):
            return compiled[0]
        if fn == "string" and types == [INT]:
            return Sql(f"CAST({compiled[0].value} AS STRING)", errors, False)
        if fn == "timestamp" and isinstance(parts[0], ast.Lit) and types == [STRING]:
            try:
                instant = to_timestamp(0, parts[0].value)
            except CelEvalError:
                raise self.refuse(node, "an invalid timestamp literal") from None
            micros = (instant - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(
                microseconds=1
            )
            return Sql(f"timestamp_micros({micros})", FALSE, False)
        raise self.refuse(node, f"the function {fn}() on ({', '.join(map(str, types))})")

    def code(self, node: ast.Expr) -> str:
        """A condition's SQL giving 0 (true), 1 (false or null) or 2 (an error). A chain of
        ``&&`` (or of ``||``) is one CASE over its operands in their order: an operand that is
        false (true) without an error decides, else an error in any operand is the error, else
        the chain holds (fails). Each operand's value is written once; the node-by-node form
        would write the chain's value again inside its error (``x == null || x.matches(...)``
        ran the regular expression twice)."""
        fn = node.function if isinstance(node, ast.Call) else None
        if fn in ("_&&_", "_||_"):
            parts = [self.compile(operand) for operand in _chain(node, fn)]
            errors = [_null_error(part) for part in parts]
            if any(error != FALSE for error in errors):
                absorbing, decided = ("FALSE", 1) if fn == "_&&_" else ("TRUE", 0)
                whens = " ".join(
                    f"WHEN {_and(_not(error), f'({part.value} = {absorbing})')} THEN {decided}"
                    for part, error in zip(parts, errors, strict=True)
                )
                return f"(CASE {whens} WHEN {_or(*errors)} THEN 2 ELSE {1 - decided} END)"
        body = self.compile(node)
        if body.error == FALSE:  # a null body fails (the serde's `not result`)
            return f"(CASE WHEN {body.value} THEN 0 ELSE 1 END)"
        return f"(CASE WHEN {body.error} THEN 2 WHEN {body.value} THEN 0 ELSE 1 END)"

    def comprehension(self, node: ast.Comprehension) -> Sql:
        rng_type = self.type_of(node.range)
        if not isinstance(rng_type, ListT):
            raise self.refuse(node, f"{node.macro}() over {rng_type}")
        rng = self.compile(node.range)
        self.lambdas += 1
        var = f"_cel{self.lambdas}"
        self.scopes.append({node.var: var})
        try:
            body = self.compile(node.body) if node.body is not None else None
            transform = self.compile(node.transform) if node.transform is not None else None
        finally:
            self.scopes.pop()
        base = _null_error(rng)

        def lam(expr: str) -> str:
            return f"{var} -> {expr}"

        if node.macro in ("all", "exists"):
            assert body is not None
            e = _null_error(body)
            stop = FALSE if node.macro == "all" else TRUE
            hit = f"exists({rng.value}, {lam(_and(_not(e), f'({body.value} = {stop})'))})"
            errs = f"exists({rng.value}, {lam(e)})" if e != FALSE else FALSE
            value = _not(hit) if node.macro == "all" else hit
            return Sql(value, _or(base, _and(_not(hit), errs)), False)
        if node.macro == "exists_one":
            assert body is not None
            e = _null_error(body)
            errs = f"exists({rng.value}, {lam(e)})" if e != FALSE else FALSE
            return Sql(
                f"(size(filter({rng.value}, {lam(body.value)})) = 1)", _or(base, errs), False
            )
        if node.macro == "filter":
            assert body is not None
            e = _null_error(body)
            errs = f"exists({rng.value}, {lam(e)})" if e != FALSE else FALSE
            return Sql(f"filter({rng.value}, {lam(body.value)})", _or(base, errs), False)
        assert transform is not None
        if body is not None:
            raise self.refuse(node, "map() with a filter")
        errs = f"exists({rng.value}, {lam(transform.error)})" if transform.error != FALSE else FALSE
        return Sql(f"transform({rng.value}, {lam(transform.value)})", _or(base, errs), False)


_SQL_TYPES = (INT, DOUBLE, STRING, BYTES, BOOL, TIMESTAMP, DURATION)


def _chain(node: ast.Expr, fn: str) -> list[ast.Expr]:
    """The operands of a chain of one of CEL's commutative ``&&`` / ``||``, left to right."""
    if isinstance(node, ast.Call) and node.function == fn:
        return [leaf for arg in node.args for leaf in _chain(arg, fn)]
    return [node]


def _parts(
    rule: Rule, contract: Contract | None, where: Location
) -> list[tuple[ast.Expr, int, bool]]:
    """The rule's guard (if any) and body, parsed: (expression, offset in ``expr``, is body)."""
    guard_text, body_text, body_at = rule.guard_and_body
    out = []
    for text, offset in ([(guard_text, 0)] if guard_text is not None else []) + [
        (body_text, body_at)
    ]:
        try:
            out.append((parse(text), offset, offset == body_at))
        except CelSyntaxError as err:
            raise RulesNotCompiled(
                f"rule {rule.label}: the CEL does not parse: {err.message}",
                location=contract.expr_location(rule, offset + err.pos) if contract else where,
                hint="Fix the rule (`schemacli check` shows every problem).",
            ) from None
    return out


def _checked(
    rule: Rule,
    part: tuple[ast.Expr, int, bool],
    variables: dict[str, CelType],
    contract: Contract | None,
    where: Location,
    site: str = "",
    result: tuple[CelType, str] | None = None,
) -> Checked:
    """``part`` type-checked with ``variables``; RulesNotCompiled for a typing problem or a
    body that is not a bool (``site``: `` on field <full name>`` for a CEL_FIELD rule;
    ``result``: a TRANSFORM's, whose body must give that type (or null), named as given)."""
    expr, offset, is_body = part
    checked = check(expr, variables)
    if is_body and result is not None and checked.type not in (result[0], NULL):
        raise RulesNotCompiled(
            f"rule {rule.label}: a {rule.type} TRANSFORM gives {checked.type}{site}, which "
            f"holds {result[1]}",
            location=contract.expr_location(rule, offset) if contract else where,
            hint="Give a value of the field's type; select the fields of one type with the "
            "rule's tags or a guard (`typeName == 'STRING' ; ...`).",
        )
    if is_body and result is None and checked.type not in (BOOL, DYN):
        raise RulesNotCompiled(
            f"rule {rule.label}: a {rule.type} CONDITION gives {checked.type}{site}, not a bool",
            location=contract.expr_location(rule, offset) if contract else where,
            hint="Write a comparison.",
        )
    if checked.issues:
        issue = checked.issues[0]
        raise RulesNotCompiled(
            f"rule {rule.label}: {issue.message}{site}",
            location=contract.expr_location(rule, offset + issue.pos) if contract else where,
            hint=issue.hint,
        )
    return checked


def compile_rule(
    rule: Rule,
    schema: RecordSchema,
    *,
    root: str = "",
    contract: Contract | None = None,
    transforms: bool = False,
) -> CompiledRule:
    """A CEL or CEL_FIELD CONDITION as one SQL expression giving 'pass', 'fail' or 'error' over
    the decoded record (its fields top-level columns with ``root=""``, else ``root`` names the
    struct); with ``transforms``, a CEL_FIELD TRANSFORM too ('pass' or 'error', and the new
    value of each column it replaces). RulesNotCompiled for what has no SQL form here."""
    where = (
        contract.location(rule.pointer) if contract is not None else Location(pointer=rule.pointer)
    )
    if rule.type not in ("CEL", "CEL_FIELD") or not (
        rule.is_condition or transforms and rule.type == "CEL_FIELD"
    ):
        what = (
            "a CEL TRANSFORM (the whole record replaced by the expression's value)"
            if transforms and rule.type == "CEL"
            else f"a {rule.type} {rule.kind}"
        )
        applied = "CONDITION rules and CEL_FIELD TRANSFORMs" if transforms else "CONDITION rules"
        raise RulesNotCompiled(
            f"rule {rule.label}: {what} has no Spark SQL form here",
            location=where,
            hint=f"Spark applies CEL and CEL_FIELD {applied}; run the others with "
            "`schemacli rules test` (docs/rules.md#rules-in-spark).",
        )
    parts = _parts(rule, contract, where)
    replaced: dict[str, str] = {}
    if rule.type == "CEL_FIELD":
        tags = contract.metadata.tags if contract is not None else {}
        sites = _FieldSites(rule, parts, contract, where, tags)
        if rule.is_condition:
            code = sites.code(schema, root)
        else:
            code, replaced = sites.transform(schema, root)
    else:
        variables: dict[str, CelType] = {"message": avrocel.record_type(schema)}
        guard: Sql | None = None
        for part in parts:
            compiler = _Compiler(rule, _checked(rule, part, variables, contract, where), root,
                                 contract)  # fmt: skip
            compiler.offset = part[1]
            if part[2]:
                code = compiler.code(part[0])
            else:
                guard = compiler.compile(part[0])
        # a guard that errs is an error, one that is not true passes the record
        if guard is not None:
            code = _guarded(guard, code)
    # the status as a code: 0 pass, 1 fail, 2 error (ints are cheaper to carry than strings)
    status = f"element_at(array('pass', 'fail', 'error'), {code} + 1)"
    return CompiledRule(
        rule, status, rule.action("READ", True), condition_message(rule), code, replaced
    )


def _guarded(guard: Sql, code: str) -> str:
    """``code`` behind a guard: a guard that errs is an error, one not true passes."""
    return (
        f"(CASE WHEN {guard.error} THEN 2 WHEN NOT coalesce({guard.value}, FALSE) "
        f"THEN 0 ELSE {code} END)"
    )


def _first_refusal(codes: Sequence[str]) -> str:
    """The first of ``codes`` (each 0, 1 or 2) that is not 0, else 0: the walk's order decides,
    as the serde's walk stops at the first field that fails or errs."""
    kept = [c for c in codes if c != "0"]
    if not kept:
        return "0"
    if len(kept) == 1:
        return kept[0]
    return (
        f"aggregate(array({', '.join(kept)}), 0, "
        "(_acc, _code) -> CASE WHEN _acc > 0 THEN _acc ELSE _code END)"
    )


class _FieldSites:
    """A CEL_FIELD CONDITION as one code (0 pass, 1 fail, 2 error) over a record: the walk of
    ``contracts.rules.execute``'s ``_FieldWalk`` done on the schema, each field it runs the rule
    on compiled with its own bindings (``value``, ``name``, ``fullName``, ``typeName``,
    ``tags``; ``message`` the record holding the field), folded in the walk's order.

    As there: a field is run on when its tags meet the rule's (every field without ``tags``)
    and its value is of a primitive type, its record's fields walked when it is a record, its
    items (values) when an array (map); an enum or fixed value is passed over; a null value
    runs the rule with ``typeName`` NULL. A false result fails the rule on a record's own
    field, but not on an array item or a map value (the serde's walk only looks at a record
    field's result); an error anywhere is an error."""

    def __init__(
        self,
        rule: Rule,
        parts: list[tuple[ast.Expr, int, bool]],
        contract: Contract | None,
        where: Location,
        metadata_tags: Mapping[str, tuple[str, ...]],
    ) -> None:
        self.rule = rule
        self.parts = parts
        self.contract = contract
        self.where = where
        self.metadata_tags = metadata_tags
        self.lambdas = 0
        self.open_records: set[str] = set()  # the records the walk is in

    def code(self, schema: RecordSchema, root: str) -> str:
        return self.record(schema, root)

    def record(
        self, schema: RecordSchema, expr: str, ctx: tuple[RecordSchema, str, str] | None = None
    ) -> str:
        if schema.fullname in self.open_records:
            # the walk on the schema would not end (Spark's from_avro reads no recursive type)
            assert ctx is not None  # the top record is never re-entered before it is opened
            raise self.refuse(ctx, f"the recursive record {schema.fullname}")
        self.open_records.add(schema.fullname)
        codes = []
        for f in schema.fields:
            column = _quote(f.name) if expr == "" else f"{expr}.{_quote(f.name)}"
            codes.append(self.value(f.type, column, (schema, f.name, expr), item=False))
        self.open_records.discard(schema.fullname)
        return _first_refusal(codes)

    def value(
        self, schema: Schema, column: str, ctx: tuple[RecordSchema, str, str], *, item: bool
    ) -> str:
        """The code of one value at ``column`` (``item``: an array item or map value, whose
        false result does not fail the rule)."""
        if isinstance(schema, UnionSchema):
            branches = [b for b in schema.types if b.type != "null"]
            nullable = len(branches) < len(schema.types)
            if len(branches) != 1:
                codes = [self.value(b, column, ctx, item=item) for b in branches]
                if all(c == "0" for c in codes) and not (nullable and self.selected(ctx)):
                    return "0"
                raise self.refuse(ctx, f"a union of several types ({avrocel.avro_text(schema)})")
            (branch,) = branches
            if not nullable:
                return self.value(branch, column, ctx, item=item)
            on_null = self.site(ctx, branch, column, item=item, null=True)
            on_value = self.value(branch, column, ctx, item=item)
            if on_null == on_value == "0":
                return "0"
            return f"(CASE WHEN {column} IS NULL THEN {on_null} ELSE {on_value} END)"
        if isinstance(schema, RecordSchema):
            return self.record(schema, column, ctx)
        if isinstance(schema, ArraySchema | MapSchema):
            inner = schema.items if isinstance(schema, ArraySchema) else schema.values
            self.lambdas += 1
            var = f"_item{self.lambdas}"
            code = self.value(inner, var, ctx, item=True)
            if code == "0":
                return "0"
            values = column if isinstance(schema, ArraySchema) else f"map_values({column})"
            acc = f"_seen{self.lambdas}"
            return (
                f"aggregate({values}, 0, ({acc}, {var}) -> "
                f"CASE WHEN {acc} > 0 THEN {acc} ELSE {code} END)"
            )
        if not _is_primitive(schema):
            return "0"  # an enum or a fixed: the serde passes it over
        return self.site(ctx, schema, column, item=item)

    def selected(self, ctx: tuple[RecordSchema, str, str]) -> bool:
        record, name, _ = ctx
        return selects(self.rule.tags, tags_of(record, name, self.metadata_tags))

    def refuse(self, ctx: tuple[RecordSchema, str, str], what: str) -> RulesNotCompiled:
        record, name, _ = ctx
        return RulesNotCompiled(
            f"rule {self.rule.label}: field {record.fullname}.{name}: {what} has no Spark SQL "
            "form here",
            location=self.where,
            hint="Run it with `schemacli rules test` (the Python road), or select other fields "
            "with the rule's tags (docs/rules.md#rules-in-spark).",
        )

    def site(
        self,
        ctx: tuple[RecordSchema, str, str],
        schema: Schema,
        column: str,
        *,
        item: bool,
        null: bool = False,
    ) -> str:
        """The rule run on one value of ``schema`` at ``column`` (``null``: its null case, with
        ``typeName`` NULL)."""
        if not self.selected(ctx):
            # the serde's walk hands a field it does not select back as its own value, and a
            # record field's value that is exactly false fails the CONDITION (confluent-kafka's
            # field walk; contracts.rules.execute's _FieldWalk does the same)
            if schema.type == "boolean" and not item and not null:
                return f"(CASE WHEN {column} = FALSE THEN 1 ELSE 0 END)"
            return "0"
        record, name, record_expr = ctx
        t, _, note = avrocel.cel_type(schema)
        logical = schema.logical_type or ""
        if note is not None or logical.startswith("local-timestamp"):
            raise self.refuse(ctx, f"a value of {avrocel.avro_text(schema)}")
        if t not in _SQL_TYPES and not isinstance(t, ListT | MapT | RecordT):
            raise self.refuse(ctx, f"a value of {avrocel.avro_text(schema)}")
        known = _known(record, name, schema, null, self.metadata_tags)
        # the field's name, full name, type name and tags are known here (and its value, when
        # null): a guard or a body they decide alone (``typeName == 'STRING' ; size(value) < 9``
        # on a long field) is decided now, so the rest is never type-checked with a type it
        # does not run on
        parts = []
        for part in self.parts:
            decided = _decided(part[0], known)
            if decided is None:
                parts.append(part)
            elif not part[2] and decided is not True:
                return "0"  # the guard is not true: the serde passes the field
            elif part[2]:
                return ("0" if item else "1") if decided is False else "0"
        value = Sql(f"unix_date({column})" if logical == "date" else column, FALSE, null)
        bindings, variables = _scope(known, value, t, record)
        full_name = str(known["fullName"])
        guard: Sql | None = None
        body: Sql | None = None
        for part in parts:
            checked = _checked(self.rule, part, variables, self.contract, self.where,
                               f" on field {full_name}")  # fmt: skip
            compiler = _Compiler(self.rule, checked, record_expr, self.contract)
            compiler.offset = part[1]
            compiler.bindings = bindings
            if part[2]:
                body = compiler.compile(part[0])
            else:
                guard = compiler.compile(part[0])
        assert body is not None
        # the serde's walk fails a record's field on a result that is exactly false (an array
        # item's or a map value's result is never looked at: only its error counts)
        whens = [] if body.error == FALSE else [f"WHEN {body.error} THEN 2"]
        if not item:
            whens.append(f"WHEN NOT coalesce({body.value}, TRUE) THEN 1")
        code = f"(CASE {' '.join(whens)} ELSE 0 END)" if whens else "0"
        if guard is None:
            return code
        if code == "0":
            return "0" if guard.error == FALSE else f"(CASE WHEN {guard.error} THEN 2 ELSE 0 END)"
        return _guarded(guard, code)

    # --- a CEL_FIELD TRANSFORM: the new value of each column, and one code (0 pass, 2 error)

    def transform(self, schema: RecordSchema, root: str) -> tuple[str, dict[str, str]]:
        """The rule's code over the record (2 when it errs on any field, else 0) and the new
        value of each column it changes: each top-level field's with ``root=""``, else the
        struct column ``root`` names, rebuilt with ``named_struct``."""
        news = self.fields(schema, root, None)
        errors = _or(*(error for _, _, error in news))
        code = "0" if errors == FALSE else f"(CASE WHEN {errors} THEN 2 ELSE 0 END)"
        changed = [(name, new) for name, new, _ in news if new != _column(root, name)]
        if not changed:
            return code, {}
        if root == "":
            return code, dict(changed)
        return code, {root[1:-1].replace("``", "`"): _struct(news)}

    def fields(
        self, schema: RecordSchema, expr: str, ctx: tuple[RecordSchema, str, str] | None
    ) -> list[tuple[str, str, str]]:
        """(name, new value, error) of each field of the record at ``expr``."""
        if schema.fullname in self.open_records:
            assert ctx is not None  # the top record is never re-entered before it is opened
            raise self.refuse(ctx, f"the recursive record {schema.fullname}")
        self.open_records.add(schema.fullname)
        out = []
        for f in schema.fields:
            column = _column(expr, f.name)
            new, error = self.new(f.type, column, (schema, f.name, expr), nullable=False)
            out.append((f.name, new, error))
        self.open_records.discard(schema.fullname)
        return out

    def new(
        self, schema: Schema, column: str, ctx: tuple[RecordSchema, str, str], *, nullable: bool
    ) -> tuple[str, str]:
        """(the new value, an error) of the value of ``schema`` at ``column`` (``column`` itself
        and FALSE when the rule changes nothing there), as ``_FieldWalk`` transforms it."""
        unchanged = (column, FALSE)
        if isinstance(schema, UnionSchema):
            branches = [b for b in schema.types if b.type != "null"]
            has_null = len(branches) < len(schema.types)
            if len(branches) != 1:
                alone = [self.new(b, column, ctx, nullable=has_null) for b in branches]
                if all(n == unchanged for n in alone) and not (has_null and self.selected(ctx)):
                    return unchanged
                raise self.refuse(ctx, f"a union of several types ({avrocel.avro_text(schema)})")
            (branch,) = branches
            if not has_null:
                return self.new(branch, column, ctx, nullable=nullable)
            on_null = self.change(ctx, branch, column, nullable=True, null=True)
            on_value = self.new(branch, column, ctx, nullable=True)
            if on_null == on_value == unchanged:
                return unchanged
            value = f"(CASE WHEN {column} IS NULL THEN {on_null[0]} ELSE {on_value[0]} END)"
            if on_null[1] == on_value[1] == FALSE:
                return value, FALSE
            error = f"(CASE WHEN {column} IS NULL THEN {on_null[1]} ELSE {on_value[1]} END)"
            return value, error
        if isinstance(schema, RecordSchema):
            news = self.fields(schema, column, ctx)
            if all(new == _column(column, name) for name, new, _ in news):
                return unchanged
            return _struct(news), _or(*(error for _, _, error in news))
        if isinstance(schema, ArraySchema | MapSchema):
            inner = schema.items if isinstance(schema, ArraySchema) else schema.values
            self.lambdas += 1
            var = f"_item{self.lambdas}"
            new, error = self.new(inner, var, ctx, nullable=False)
            if (new, error) == (var, FALSE):
                return unchanged
            if isinstance(schema, ArraySchema):
                value, values = f"transform({column}, {var} -> {new})", column
            else:
                value = f"transform_values({column}, (_key{self.lambdas}, {var}) -> {new})"
                values = f"map_values({column})"
            if error == FALSE:
                return value, FALSE
            return value, f"coalesce(exists({values}, {var} -> {error}), FALSE)"
        if not _is_primitive(schema):
            return unchanged  # an enum or a fixed: the serde passes it over
        return self.change(ctx, schema, column, nullable=nullable)

    def change(
        self,
        ctx: tuple[RecordSchema, str, str],
        schema: Schema,
        column: str,
        *,
        nullable: bool,
        null: bool = False,
    ) -> tuple[str, str]:
        """(new value, error) of one value of ``schema`` at ``column`` the rule runs on
        (``null``: its null case, ``typeName`` NULL; ``nullable``: the place holds null)."""
        if not self.selected(ctx):
            return column, FALSE
        record, name, record_expr = ctx
        known = _known(record, name, schema, null, self.metadata_tags)
        # a guard the field's name, type name and tags decide alone is decided now: a field
        # it is not true on keeps its value, whatever its type
        parts = []
        for part in self.parts:
            decided = None if part[2] else _decided(part[0], known)
            if decided is None:
                parts.append(part)
            elif decided is not True:
                return column, FALSE
        if schema.type not in _TRANSFORMED or schema.logical_type or not _is_primitive(schema):
            what = f"a null {avrocel.avro_text(schema)}" if null else avrocel.avro_text(schema)
            raise self.refuse(ctx, f"a TRANSFORM of {what} (it transforms boolean, int, long, "
                              "double, string and bytes)")  # fmt: skip
        for part in parts:
            if _mentions(part[0], "message"):
                raise self.refuse(ctx, "a TRANSFORM reading `message` (the serde's walk shows "
                                  "it the fields it already transformed)")  # fmt: skip
        t = avrocel.cel_type(schema)[0]
        bindings, variables = _scope(known, Sql("NULL" if null else column, FALSE, null), t, record)
        full_name = str(known["fullName"])
        guard: Sql | None = None
        body: Sql | None = None
        for part in parts:
            result = (t, avrocel.avro_text(schema))
            checked = _checked(self.rule, part, variables, self.contract, self.where,
                               f" on field {full_name}", result)  # fmt: skip
            compiler = _Compiler(self.rule, checked, record_expr, self.contract)
            compiler.offset = part[1]
            compiler.bindings = bindings
            if part[2]:
                body = compiler.compile(part[0])
                if checked.type == NULL and not nullable:
                    raise self.refuse(
                        ctx, f"a TRANSFORM giving null to {avrocel.avro_text(schema)}"
                    )
            else:
                guard = compiler.compile(part[0])
        assert body is not None
        value = f"CAST({body.value} AS {spark_sql_name(SPARK_TYPES[schema.type])})"
        # a value the column cannot hold is an error: null where no null goes, an int out of
        # Avro int's range (the Python road would keep it, and no writer could write it)
        error = body.error if nullable else _null_error(body)
        if schema.type == "int":
            error = _or(error, f"coalesce({body.value} NOT BETWEEN {INT_MIN} AND {INT_MAX}, FALSE)")
        if guard is None:
            return value, error
        holds = f"coalesce({guard.value}, FALSE)"
        return (
            f"(CASE WHEN {holds} THEN {value} ELSE {column} END)",
            _or(guard.error, _and(holds, error)),
        )


def _known(
    record: RecordSchema,
    name: str,
    schema: Schema,
    null: bool,
    metadata_tags: Mapping[str, tuple[str, ...]],
) -> dict[str, object]:
    """What a CEL_FIELD rule knows of one field before its value: CEL's ``name``,
    ``fullName``, ``typeName`` (NULL in a union's null case, with ``value`` null) and ``tags``."""
    known: dict[str, object] = {
        "name": name,
        "fullName": f"{record.fullname}.{name}",
        "typeName": "NULL" if null else schema.type.upper(),
        "tags": sorted(tags_of(record, name, metadata_tags)),
    }
    if null:
        known["value"] = None
    return known


def _scope(
    known: Mapping[str, object], value: Sql, t: CelType, record: RecordSchema
) -> tuple[dict[str, Sql], dict[str, CelType]]:
    """The SQL and the CEL type of each variable a CEL_FIELD rule sees on one field: ``value``
    as given, the field's names and tags (:func:`_known`) as constants, and ``message``."""
    tags = cast("list[str]", known["tags"])
    bindings = {
        "value": value,
        "name": Sql(_string(str(known["name"])), FALSE, False),
        "fullName": Sql(_string(str(known["fullName"])), FALSE, False),
        "typeName": Sql(_string(str(known["typeName"])), FALSE, False),
        "tags": Sql(
            "array(" + ", ".join(_string(tag) for tag in tags) + ")"
            if tags
            else "CAST(array() AS ARRAY<STRING>)",
            FALSE,
            False,
        ),
    }
    variables: dict[str, CelType] = {
        "value": t, "name": STRING, "fullName": STRING, "typeName": STRING,
        "tags": ListT(STRING), "message": avrocel.record_type(record),
    }  # fmt: skip
    return bindings, variables


# the Avro types a CEL_FIELD TRANSFORM may give a new value (cast to the column's Spark type)
_TRANSFORMED = frozenset({"boolean", "int", "long", "double", "string", "bytes"})


def _column(expr: str, name: str) -> str:
    """The SQL of field ``name`` of the record at ``expr`` ("": the top-level columns)."""
    return _quote(name) if expr == "" else f"{expr}.{_quote(name)}"


def _struct(news: Sequence[tuple[str, str, str]]) -> str:
    """A record rebuilt from its fields' new values."""
    return "named_struct(" + ", ".join(f"{_string(name)}, {new}" for name, new, _ in news) + ")"


def _mentions(node: object, name: str) -> bool:
    """Whether the CEL tree ``node`` reads the variable ``name``."""
    if isinstance(node, ast.Ident):
        return node.name == name
    if isinstance(node, tuple):
        return any(_mentions(item, name) for item in node)
    if dataclasses.is_dataclass(node):
        return any(_mentions(getattr(node, f.name), name) for f in dataclasses.fields(node))
    return False


def _decided(expr: ast.Expr, known: Mapping[str, object]) -> object:
    """The value of ``expr`` when the bindings ``known`` decide it alone (CEL's ``&&``, ``||``
    and ``?:`` absorb what ``value`` or ``message`` would give), else None (undecided: a CEL
    null is compiled too, which is right, only not folded)."""
    try:
        decided: object = compile_expr(expr).run(known)
    except CelEvalError:
        return None
    return decided


def _is_primitive(schema: Schema) -> bool:
    return schema.type in PRIMITIVE_TYPES and not isinstance(schema, EnumSchema | FixedSchema)


def compile_rules(
    contract: Contract, schema: Schema, mode: str, *, root: str = "", transforms: bool = False
) -> list[CompiledRule]:
    """The contract's CEL and CEL_FIELD CONDITIONs (with ``transforms``, CEL_FIELD TRANSFORMs
    too) that run in ``mode`` (WRITE or READ), in the order the serde runs them (the rule
    selection is ``contracts.rules.execute``'s: ``active_rules``, a ``shadowed`` TRANSFORM left
    out), compiled; RulesNotCompiled for the first that cannot be."""
    if not isinstance(schema, RecordSchema):
        raise RulesNotCompiled(
            "rules need a record schema", location=Location(source=contract.source)
        )
    walked = serde_order(contract.rule_set, mode)
    out = []
    for rule in active_rules(contract.rule_set, mode):
        if rule.type == "CEL_FIELD" and shadowed(rule, walked, walked.index(rule), mode):
            continue
        compiled = compile_rule(rule, schema, root=root, contract=contract, transforms=transforms)
        out.append(replace(compiled, action_on_failure=rule.action(mode, True)))
    return out


def _reasons(compiled: CompiledRule) -> tuple[str, str, str]:
    """A rule's refusal as SQL literals: the reason a failure gives, the one an error gives
    (``rule <name> failed|errored: <doc or expr>``), its DLQ topic (a typed NULL without one)."""
    name = compiled.rule.label
    dlq = compiled.rule.params.get(DLQ_TOPIC) if compiled.action_on_failure == "DLQ" else None
    return (
        _string(f"rule {name} failed: {compiled.message}"),
        _string(f"rule {name} errored: {compiled.message}"),
        _string(dlq) if dlq is not None else "CAST(NULL AS STRING)",
    )


def rule_table(
    rules: Sequence[CompiledRule],
) -> tuple[tuple[str, str, str, str, bool, dict[str, str]], ...]:
    """The table ``spark_avro.rulestage`` applies (its ``RuleRow``): per rule a deserializer acts
    on (a CONDITION whose action is not NONE, every TRANSFORM), in the order the serde runs them,
    (its code SQL, its failed reason, its errored reason, its DLQ topic, whether its failure is
    acted on, a TRANSFORM's new value of each column it replaces), all Spark SQL."""
    return tuple(
        (c.code, *_reasons(c), c.action_on_failure != "NONE", dict(c.replaced))
        for c in rules
        if c.action_on_failure != "NONE" or not c.rule.is_condition
    )


def refusal_sql(rules: Sequence[CompiledRule]) -> tuple[str, str]:
    """(reason, dlq topic) SQL of the first rule whose failure a client acts on (its action is
    not NONE): the reason ``rule <name> failed: <doc or expr>`` (``errored`` for an error)."""
    reason, topic = [], []
    for compiled in rules:
        if compiled.action_on_failure == "NONE":
            continue
        status = compiled.status
        failed, errored, dlq = _reasons(compiled)
        reason.append(
            f"WHEN {status} = 'fail' THEN {failed} WHEN {status} = 'error' THEN {errored}"
        )
        topic.append(f"WHEN {status} <> 'pass' THEN {dlq}")
    if not reason:
        return "CAST(NULL AS STRING)", "CAST(NULL AS STRING)"
    return (
        "(CASE " + " ".join(reason) + " ELSE NULL END)",
        "(CASE " + " ".join(topic) + " ELSE NULL END)",
    )


def statuses(decoded: object, rules: Sequence[CompiledRule]) -> object:
    """Each rule's status as a column named after its position (``rule_0``...): what the
    equality test compares with the Python road."""
    from pyspark.sql import functions as F

    return decoded.select(  # type: ignore[attr-defined]
        "*", *(F.expr(c.status).alias(f"rule_{i}") for i, c in enumerate(rules))
    )


__all__ = [
    "CompiledRule",
    "RulesNotCompiled",
    "compile_rule",
    "compile_rules",
    "refusal_sql",
    "rule_table",
    "statuses",
]


def load_contract(rules: object, *, registry_url: str | None, subject: str | None,
                  version: int | str = "latest") -> Contract:  # fmt: skip
    """The contract ``read_topic(rules=...)`` applies: a contract file's path, a Contract, or
    ``True`` for the reader version's rule set and metadata in the registry."""
    if isinstance(rules, Contract):
        return rules
    if isinstance(rules, str | Path) and not isinstance(rules, bool):
        return read_contract(Path(rules))
    if rules is True:
        if registry_url is None or subject is None:
            raise UsageError(
                "rules=True reads the subject's rule set from the registry: give registry_url "
                "and subject",
                hint="Or pass rules=PATH, a contract file (v<N>.contract.json).",
            )
        return registry_contract(
            with_registry(registry_url, lambda road: road.version(subject, version))
        )
    raise UsageError(
        f"rules={rules!r} is not True, a contract file's path or a Contract",
        hint="rules=True reads the reader version's rule set from the registry.",
    )


def registry_contract(found: RegistryVersion) -> Contract:
    """The rule set and metadata registered with a version, as a Contract whose source is
    ``<subject>:<version> (the registry's rule set)``: ``rules=True``'s and ``spark codegen
    --rules``'s."""
    body = {"metadata": found.metadata or {}, "ruleSet": found.rule_set or {}}
    return parse_contract(
        json.dumps(body, indent=2), f"{found.subject}:{found.version} (the registry's rule set)"
    )
