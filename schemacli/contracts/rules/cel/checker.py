"""The CEL type checker: an AST and the variables' types -> each node's type, the issues found
(each with its offset) and the record fields the expression reads.

It follows the CEL spec's overloads with no implicit conversion: ``int`` and ``double`` never
meet in one operator (``message.total >= 0`` on a double is an issue: cel-python fails it at
run time, "no matching overload", on every record). ``dyn`` meets anything. A comparison with
``null`` is allowed against any type (an Avro ``["null", T]`` field is null or a T).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from schemacli.contracts.rules.cel import ast
from schemacli.contracts.rules.cel.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    NULL,
    NUMBERS,
    ORDERED,
    STRING,
    TIMESTAMP,
    TYPE,
    UINT,
    CelType,
    FieldT,
    ListT,
    MapT,
    Prim,
    RecordT,
    assignable,
    join,
)

IssueCode = Literal["unknown-field", "type-mismatch", "unknown-name", "unsupported"]


@dataclass(frozen=True)
class Issue:
    """One thing wrong with an expression: where (``pos``), what, and the way out."""

    pos: int
    code: IssueCode
    message: str
    hint: str


@dataclass(frozen=True)
class FieldUse:
    """A record field the expression reads: its path from the variable (``("message",
    "pickup", "lat")``), the record that holds it, and the field as the schema has it."""

    pos: int
    path: tuple[str, ...]
    record: str
    field: FieldT


@dataclass
class Checked:
    expr: ast.Expr
    type: CelType
    issues: list[Issue] = field(default_factory=list)
    uses: list[FieldUse] = field(default_factory=list)
    types: dict[int, CelType] = field(default_factory=dict)  # id(node) -> its type

    def type_of(self, node: ast.Expr) -> CelType:
        return self.types.get(id(node), DYN)


# receiver or global functions: name -> list of (receiver, args, result); receiver None for a
# global function. The standard library of langdef.md that both executors ship.
_STRING_METHODS = {
    "startsWith": STRING,
    "endsWith": STRING,
    "contains": STRING,
    "matches": STRING,
}
_TIME_GETTERS = (
    "getFullYear getMonth getDate getDayOfMonth getDayOfWeek getDayOfYear getHours getMinutes "
    "getSeconds getMilliseconds"
).split()
_DURATION_GETTERS = "getHours getMinutes getSeconds getMilliseconds".split()
_CONVERSIONS: dict[str, tuple[CelType, tuple[CelType, ...]]] = {
    "int": (INT, (INT, UINT, DOUBLE, STRING, TIMESTAMP)),
    "uint": (UINT, (INT, UINT, DOUBLE, STRING)),
    "double": (DOUBLE, (INT, UINT, DOUBLE, STRING)),
    "string": (STRING, (INT, UINT, DOUBLE, STRING, BYTES, BOOL, TIMESTAMP, DURATION)),
    "bytes": (BYTES, (BYTES, STRING)),
    "bool": (BOOL, (BOOL, STRING)),
    "timestamp": (TIMESTAMP, (STRING, TIMESTAMP, INT)),
    "duration": (DURATION, (STRING, DURATION)),
}
KNOWN_FUNCTIONS = frozenset(
    {"size", "matches", "dyn", "type", *_STRING_METHODS, *_TIME_GETTERS, *_CONVERSIONS}
)
# Confluent's executors add these (cel-python: confluent_kafka...cel.extra_func); our
# evaluator does not run them yet, so a rule using one is judged but `rules test` refuses it.
CONFLUENT_EXTRAS = frozenset(
    {"isEmail", "isHostname", "isIpv4", "isIpv6", "isUri", "isUriRef", "isUuid", "format"}
)

_ARITH = {"_+_", "_-_", "_*_", "_/_", "_%_"}
_ORDER = {"_<_", "_<=_", "_>_", "_>=_"}
_SYMBOL = {
    "_+_": "+",
    "_-_": "-",
    "_*_": "*",
    "_/_": "/",
    "_%_": "%",
    "_<_": "<",
    "_<=_": "<=",
    "_>_": ">",
    "_>=_": ">=",
    "_==_": "==",
    "_!=_": "!=",
}


def _literal_hint(a: CelType, b: CelType) -> str:
    if {a, b} == {INT, DOUBLE}:
        return (
            "CEL never converts int and double implicitly: write the number as the field's "
            "type (0.0 for a double, 0 for an int/long), or convert with double(...) / int(...)."
        )
    if {a, b} <= {INT, UINT}:
        return (
            "Write the literal with the field's type (a uint literal ends in u), or convert "
            "with int(...)/uint(...)."
        )
    return "Compare values of one type; convert one side (string(...), int(...), double(...))."


class _Checker:
    def __init__(self, variables: Mapping[str, CelType]) -> None:
        self.scopes: list[dict[str, CelType]] = [dict(variables)]
        self.issues: list[Issue] = []
        self.uses: list[FieldUse] = []
        self.types: dict[int, CelType] = {}

    def issue(self, pos: int, code: IssueCode, message: str, hint: str) -> CelType:
        self.issues.append(Issue(pos, code, message, hint))
        return DYN

    def lookup(self, name: str) -> CelType | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def check(self, node: ast.Expr) -> CelType:
        t = self._check(node)
        self.types[id(node)] = t
        return t

    def _check(self, node: ast.Expr) -> CelType:
        if isinstance(node, ast.Lit):
            return {
                "int": INT,
                "uint": UINT,
                "double": DOUBLE,
                "string": STRING,
                "bytes": BYTES,
                "bool": BOOL,
                "null": NULL,
            }[node.kind]
        if isinstance(node, ast.Ident):
            found = self.lookup(node.name)
            if found is None:
                known = ", ".join(sorted(self.scopes[0])) or "none"
                return self.issue(
                    node.pos,
                    "unknown-name",
                    f"undeclared name {node.name!r}",
                    f"A rule's expression sees these names: {known}.",
                )
            return found
        if isinstance(node, ast.Select):
            return self.select(node)
        if isinstance(node, ast.ListLit):
            elem: CelType | None = None
            for item in node.items:
                t = self.check(item)
                elem = t if elem is None else join(elem, t)
            return ListT(elem or DYN)
        if isinstance(node, ast.MapLit):
            key: CelType | None = None
            value: CelType | None = None
            for k, v in node.entries:
                kt, vt = self.check(k), self.check(v)
                if kt not in (INT, UINT, STRING, BOOL, DYN):
                    self.issue(
                        k.pos,
                        "type-mismatch",
                        f"a map key of type {kt}",
                        "Map keys are int, uint, string or bool.",
                    )
                key = kt if key is None else join(key, kt)
                value = vt if value is None else join(value, vt)
            return MapT(key or DYN, value or DYN)
        if isinstance(node, ast.StructLit):
            for _, v in node.fields:
                self.check(v)
            return self.issue(
                node.pos,
                "unsupported",
                f"a message construction ({node.type_name}{{...}}) over an Avro record",
                "Avro rules build records as maps: {'field': value}.",
            )
        if isinstance(node, ast.Comprehension):
            return self.comprehension(node)
        return self.call(node)

    def select(self, node: ast.Select) -> CelType:
        operand = self.check(node.operand)
        result: CelType = DYN
        if isinstance(operand, RecordT):
            found = operand.fields.get(node.field)
            if found is None:
                names = ", ".join(operand.fields) or "none"
                self.issue(
                    node.pos,
                    "unknown-field",
                    f"record {operand.name} has no field {node.field!r}",
                    f"Its fields: {names}. Rules see the schema's field names, case-sensitive.",
                )
            else:
                path = _path(node)
                if path is not None:
                    self.uses.append(FieldUse(node.pos, path, operand.name, found))
                if found.note and not node.test_only:
                    self.issue(node.pos, "unsupported", found.note, _UNSUPPORTED_HINT)
                result = found.type
        elif isinstance(operand, MapT):
            if operand.key not in (STRING, DYN):
                self.issue(
                    node.pos,
                    "type-mismatch",
                    f"field selection .{node.field} on a map keyed by {operand.key}",
                    "Use m[key] for maps whose keys are not strings.",
                )
            result = operand.value
        elif operand != DYN:
            self.issue(
                node.pos,
                "type-mismatch",
                f"field selection .{node.field} on a value of type {operand}",
                "Only records and maps have fields.",
            )
        return BOOL if node.test_only else result

    def comprehension(self, node: ast.Comprehension) -> CelType:
        rng = self.check(node.range)
        if isinstance(rng, ListT):
            var: CelType = rng.elem
        elif isinstance(rng, MapT):
            var = rng.key
        elif isinstance(rng, RecordT):
            var = STRING
        elif rng == DYN:
            var = DYN
        else:
            self.issue(
                node.pos,
                "type-mismatch",
                f"{node.macro}() over a value of type {rng}",
                "Macros range over lists and maps.",
            )
            var = DYN
        self.scopes.append({node.var: var})
        try:
            body = self.check(node.body) if node.body is not None else None
            transform = self.check(node.transform) if node.transform is not None else None
        finally:
            self.scopes.pop()
        if body is not None and node.macro != "map" or (node.macro == "map" and body is not None):
            self.expect_bool(node.body, body, f"the predicate of {node.macro}()")  # type: ignore[arg-type]
        if node.macro in ("all", "exists", "exists_one"):
            return BOOL
        if node.macro == "filter":
            return ListT(var) if not isinstance(rng, MapT) else ListT(rng.key)
        return ListT(transform or DYN)

    def expect_bool(self, node: ast.Expr, t: CelType, what: str) -> None:
        if t not in (BOOL, DYN):
            self.issue(
                node.pos,
                "type-mismatch",
                f"{what} is of type {t}, not bool",
                "Write a condition: a comparison, has(...), or a bool field.",
            )

    def call(self, node: ast.Call) -> CelType:
        fn = node.function
        if fn in ("_&&_", "_||_"):
            for arg in node.args:
                self.expect_bool(arg, self.check(arg), f"an operand of {fn.strip('_')}")
            return BOOL
        if fn == "!_":
            self.expect_bool(node.args[0], self.check(node.args[0]), "the operand of !")
            return BOOL
        if fn == "_?_:_":
            cond, a, b = node.args
            self.expect_bool(cond, self.check(cond), "the condition of ?:")
            ta, tb = self.check(a), self.check(b)
            if not assignable(ta, tb) and NULL not in (ta, tb):
                self.issue(
                    node.pos,
                    "type-mismatch",
                    f"the branches of ?: have types {ta} and {tb}",
                    "Give both branches one type.",
                )
            return join(ta, tb)
        target = self.check(node.target) if node.target is not None else None
        args = [self.check(a) for a in node.args]
        if fn == "-_":
            return self.overload(node, args, ((INT,), (DOUBLE,), (DURATION,)), "negation")
        if fn in _ARITH:
            return self.arith(node, fn, args[0], args[1])
        if fn in _ORDER or fn in ("_==_", "_!=_"):
            return self.compare(node, fn, args[0], args[1])
        if fn == "@in":
            return self.membership(node, args[0], args[1])
        if fn == "_[_]":
            return self.index(node, args[0], args[1])
        return self.function(node, fn, target, args)

    def overload(
        self,
        node: ast.Call,
        args: list[CelType],
        options: tuple[tuple[CelType, ...], ...],
        what: str,
    ) -> CelType:
        if any(a == DYN for a in args):
            return args[0] if all(a == args[0] for a in args) and args[0] != DYN else DYN
        for option in options:
            if tuple(args) == option:
                return option[0]
        shown = ", ".join(str(a) for a in args)
        return self.issue(
            node.pos,
            "type-mismatch",
            f"no {what} for ({shown})",
            "CEL has no implicit conversions: convert one side with int(), double(), string().",
        )

    def arith(self, node: ast.Call, fn: str, a: CelType, b: CelType) -> CelType:
        if DYN in (a, b):
            return a if b == DYN and a != DYN and fn != "_-_" else (b if a == DYN else DYN)
        sym = _SYMBOL[fn]
        if a == b and a in NUMBERS and (fn != "_%_" or a != DOUBLE):
            return a
        if fn == "_+_" and a == b and a in (STRING, BYTES, DURATION):
            return a
        if fn == "_+_" and isinstance(a, ListT) and isinstance(b, ListT):
            return ListT(join(a.elem, b.elem))
        if fn == "_+_" and {a, b} == {TIMESTAMP, DURATION}:
            return TIMESTAMP
        if fn == "_-_" and (a, b) in ((TIMESTAMP, TIMESTAMP), (DURATION, DURATION)):
            return DURATION
        if fn == "_-_" and (a, b) == (TIMESTAMP, DURATION):
            return TIMESTAMP
        return self.issue(
            node.pos,
            "type-mismatch",
            f"{a} {sym} {b}: no such operator",
            _literal_hint(a, b),
        )

    def compare(self, node: ast.Call, fn: str, a: CelType, b: CelType) -> CelType:
        sym = _SYMBOL[fn]
        if fn in ("_==_", "_!=_"):
            if assignable(a, b) or NULL in (a, b):
                return BOOL
        elif DYN in (a, b) or (a == b and a in ORDERED):
            return BOOL
        self.issue(
            node.pos,
            "type-mismatch",
            f"compares {a} {sym} {b}: the executors fail this on every record",
            _literal_hint(a, b),
        )
        return BOOL

    def membership(self, node: ast.Call, a: CelType, b: CelType) -> CelType:
        if isinstance(b, ListT):
            ok = assignable(a, b.elem)
        elif isinstance(b, MapT):
            ok = assignable(a, b.key)
        elif isinstance(b, RecordT):
            ok = assignable(a, STRING)
        else:
            ok = b == DYN
        if not ok:
            self.issue(
                node.pos,
                "type-mismatch",
                f"{a} in {b}: no such operator",
                "`in` looks for a value in a list, or a key in a map, of the same type.",
            )
        return BOOL

    def index(self, node: ast.Call, a: CelType, b: CelType) -> CelType:
        if isinstance(a, ListT):
            if b not in (INT, DYN):
                self.issue(
                    node.pos, "type-mismatch", f"a list indexed by {b}", "Index lists by int."
                )
            return a.elem
        if isinstance(a, MapT):
            if not assignable(a.key, b):
                self.issue(
                    node.pos,
                    "type-mismatch",
                    f"a map keyed by {a.key} indexed by {b}",
                    "Index a map by its key type.",
                )
            return a.value
        if isinstance(a, RecordT):
            return DYN
        if a != DYN:
            self.issue(
                node.pos,
                "type-mismatch",
                f"[] on a value of type {a}",
                "Only lists and maps index.",
            )
        return DYN

    def function(
        self, node: ast.Call, fn: str, target: CelType | None, args: list[CelType]
    ) -> CelType:
        every = ([target] if target is not None else []) + args
        if fn == "size" and len(every) == 1:
            t = every[0]
            if t in (STRING, BYTES, DYN) or isinstance(t, ListT | MapT | RecordT):
                return INT
            return self.issue(
                node.pos,
                "type-mismatch",
                f"size() of {t}",
                "size() takes a string, bytes, list or map.",
            )
        if fn in _STRING_METHODS and target is not None and len(args) == 1:
            return self._typed(node, fn, every, (STRING, STRING), BOOL)
        if fn == "matches" and target is None and len(args) == 2:
            return self._typed(node, fn, every, (STRING, STRING), BOOL)
        if fn in _TIME_GETTERS and target is not None and len(args) <= 1:
            if target == DURATION and fn in _DURATION_GETTERS and not args:
                return INT
            return self._typed(node, fn, every, (TIMESTAMP, STRING)[: len(every)], INT)
        if fn in _CONVERSIONS and target is None and len(args) == 1:
            result, accepted = _CONVERSIONS[fn]
            if args[0] in (*accepted, DYN):
                return result
            return self.issue(
                node.pos,
                "type-mismatch",
                f"{fn}() of {args[0]}",
                f"{fn}() converts from {', '.join(str(t) for t in accepted)}.",
            )
        if fn == "dyn" and target is None and len(args) == 1:
            return DYN
        if fn == "type" and target is None and len(args) == 1:
            return TYPE
        if fn in CONFLUENT_EXTRAS:
            return BOOL if fn != "format" else STRING
        shape = f"{'x.' if target is not None else ''}{fn}({', '.join(str(a) for a in args)})"
        if fn in KNOWN_FUNCTIONS:
            return self.issue(
                node.pos,
                "type-mismatch",
                f"no overload {shape}",
                "See docs/rules.md for the functions and their arguments.",
            )
        return self.issue(
            node.pos,
            "unknown-name",
            f"unknown function {fn!r}",
            "Confluent's executors ship CEL's standard functions (size, startsWith, endsWith, "
            "contains, matches, int, double, string, timestamp, duration, ...) and isEmail, "
            "isUuid, ... (docs/rules.md).",
        )

    def _typed(
        self, node: ast.Call, fn: str, got: list[CelType], want: tuple[CelType, ...], result: Prim
    ) -> CelType:
        if len(got) == len(want) and all(g in (w, DYN) for g, w in zip(got, want, strict=True)):
            return result
        return self.issue(
            node.pos,
            "type-mismatch",
            f"{fn}() on ({', '.join(str(g) for g in got)})",
            f"{fn}() takes ({', '.join(str(w) for w in want)}).",
        )


_UNSUPPORTED_HINT = (
    "Compare it through a field the executors present as a CEL value, or leave this field "
    "out of rules (docs/rules.md#how-a-record-looks-to-cel)."
)


def _path(node: ast.Select) -> tuple[str, ...] | None:
    parts = [node.field]
    current: ast.Expr = node.operand
    while isinstance(current, ast.Select):
        parts.append(current.field)
        current = current.operand
    if isinstance(current, ast.Ident):
        parts.append(current.name)
        return tuple(reversed(parts))
    return None


def check(expr: ast.Expr, variables: Mapping[str, CelType]) -> Checked:
    """Type-check ``expr`` with ``variables`` declared; never raises for a typing problem (each
    is an Issue; the node's type becomes dyn and checking goes on)."""
    checker = _Checker(variables)
    t = checker.check(expr)
    return Checked(expr, t, checker.issues, checker.uses, checker.types)
