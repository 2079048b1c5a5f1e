"""CEL text -> ``ast.Expr``, by the grammar of the CEL spec (langdef.md, "Syntax"), with every
node's offset. Refusals are ``CelSyntaxError`` with the offset of the first thing wrong.

Bounded: an expression longer than ``MAX_LENGTH`` characters, or nested deeper than
``MAX_DEPTH``, or whose tree (a chain of operators is a tree as deep as the chain) is deeper than
``MAX_TREE_DEPTH``, is refused by name, never a RecursionError in the walks that follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemacli.contracts.avro.facts import LONG_MAX, LONG_MIN
from schemacli.contracts.rules.cel.ast import (
    Call,
    Comprehension,
    Expr,
    Ident,
    ListLit,
    Lit,
    MapLit,
    Select,
    StructLit,
    children,
)

MAX_LENGTH = 100_000
MAX_DEPTH = 64  # brackets inside brackets: no rule comes near it
MAX_TREE_DEPTH = 150  # operators chained (a && b && ... is a tree this deep): the walks recurse
INT_MIN, INT_MAX = LONG_MIN, LONG_MAX  # CEL's int is a 64-bit signed integer, as Avro's long
UINT_MAX = 2**64 - 1

# langdef.md "Syntax": words that are not identifiers ("in" is an operator).
RESERVED = frozenset(
    "as break const continue else for function if import let loop package namespace return "
    "var void while".split()
)
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})


class CelSyntaxError(ValueError):
    """The text is not CEL: ``message`` and ``pos``, the offset it refers to."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


@dataclass(frozen=True)
class Token:
    tag: str  # INT UINT DOUBLE STRING BYTES IDENT, an operator or punctuation, EOF
    text: str
    pos: int
    value: object = None


_PUNCT = sorted(
    "== != <= >= && || < > + - * / % ! ? : . , ( ) [ ] { }".split(), key=len, reverse=True
)
_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F]+[uU]?"
    r"|(?:[0-9]*\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)"
    r"|[0-9]+[uU]?"
)
_IDENT = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_SPACE = re.compile(r"(?:[ \t\n\r\f]+|//[^\n]*)+")
_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with EOF; CelSyntaxError at the first bad character."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while True:
        space = _SPACE.match(text, i)
        if space:
            i = space.end()
        if i >= n:
            tokens.append(Token("EOF", "", n))
            return tokens
        c = text[i]
        prefix = re.match(r"(?:[rR][bB]?|[bB][rR]?)?(?='|\")", text[i : i + 3])
        if c in "'\"" or (prefix and prefix.group()):
            tokens.append(_string(text, i))
            i = tokens[-1].pos + len(tokens[-1].text)
            continue
        number = _NUMBER.match(text, i)
        if number and (c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit())):
            tokens.append(_number(number.group(), i))
            i = number.end()
            if i < n and (_IDENT.match(text, i) or text[i] == "."):
                if text[i] != "." or not (tokens[-1].tag != "DOUBLE" and _member_after(text, i)):
                    raise CelSyntaxError(f"unexpected {text[i]!r} after a number", i)
            continue
        word = _IDENT.match(text, i)
        if word:
            tokens.append(Token("IDENT", word.group(), i))
            i = word.end()
            continue
        for p in _PUNCT:
            if text.startswith(p, i):
                tokens.append(Token(p, p, i))
                i += len(p)
                break
        else:
            raise CelSyntaxError(f"unexpected character {c!r}", i)


def _member_after(text: str, i: int) -> bool:
    """``1.foo``: a number followed by ``.name`` (a member call on an int), not ``1.5``."""
    return i + 1 < len(text) and not text[i + 1].isdigit()


def _number(text: str, pos: int) -> Token:
    lower = text.lower()
    if lower.startswith("0x"):
        unsigned = lower.endswith("u")
        value = int(lower[2:].rstrip("u"), 16)
    elif "." in text or "e" in lower:
        return Token("DOUBLE", text, pos, float(text))
    else:
        unsigned = lower.endswith("u")
        value = int(lower.rstrip("u"))
    if unsigned:
        if value > UINT_MAX:
            raise CelSyntaxError(f"uint literal {text} is out of range (at most 2^64-1)", pos)
        return Token("UINT", text, pos, value)
    if value > INT_MAX + 1:  # 2^63 only as the operand of unary minus (checked there)
        raise CelSyntaxError(f"int literal {text} is out of range (64-bit signed)", pos)
    return Token("INT", text, pos, value)


def _string(text: str, start: int) -> Token:
    i = start
    raw = is_bytes = False
    while text[i] not in "'\"":
        raw = raw or text[i] in "rR"
        is_bytes = is_bytes or text[i] in "bB"
        i += 1
    quote = text[i : i + 3] if text[i : i + 3] in ("'''", '"""') else text[i]
    i += len(quote)
    out: list[str] = []
    data = bytearray()

    def put(s: str) -> None:
        if is_bytes:
            data.extend(s.encode("utf-8"))
        else:
            out.append(s)

    while True:
        if i >= len(text):
            raise CelSyntaxError("unterminated string literal", start)
        if text.startswith(quote, i):
            i += len(quote)
            break
        c = text[i]
        if c in "\r\n" and len(quote) == 1:
            raise CelSyntaxError("a newline inside a single-quoted string literal", i)
        if c == "\\" and not raw:
            i = _escape(text, i, is_bytes, put, data)
            continue
        if c == "\\" and raw and i + 1 < len(text) and text.startswith(quote[0], i + 1):
            put(text[i : i + 2])  # r"\"" keeps both characters and does not end the string
            i += 2
            continue
        put(c)
        i += 1
    literal = text[start:i]
    if is_bytes:
        return Token("BYTES", literal, start, bytes(data))
    return Token("STRING", literal, start, "".join(out))


def _escape(text: str, i: int, is_bytes: bool, put: object, data: bytearray) -> int:
    assert callable(put)
    if i + 1 >= len(text):
        raise CelSyntaxError("unterminated escape sequence", i)
    e = text[i + 1]
    if e in _ESCAPES:
        put(_ESCAPES[e])
        return i + 2
    octal = re.match(r"[0-3][0-7]{2}", text[i + 1 : i + 4])
    hexa = re.match(r"[xX][0-9a-fA-F]{2}", text[i + 1 : i + 4])
    if octal or hexa:
        code = int(octal.group(), 8) if octal else int(text[i + 2 : i + 4], 16)
        if is_bytes:
            data.append(code)
        else:
            put(chr(code))
        return i + 4
    width = {"u": 4, "U": 8}.get(e)
    if width and re.fullmatch(r"[0-9a-fA-F]+", text[i + 2 : i + 2 + width] or "-"):
        if is_bytes:
            raise CelSyntaxError("\\u and \\U escapes are not allowed in bytes literals", i)
        code = int(text[i + 2 : i + 2 + width], 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise CelSyntaxError(f"invalid code point \\{e}{text[i + 2 : i + 2 + width]}", i)
        put(chr(code))
        return i + 2 + width
    raise CelSyntaxError(f"invalid escape sequence \\{e}", i)


_RELOPS = {
    "<": "_<_",
    "<=": "_<=_",
    ">": "_>_",
    ">=": "_>=_",
    "==": "_==_",
    "!=": "_!=_",
    "in": "@in",
}
_ADDOPS = {"+": "_+_", "-": "_-_"}
_MULOPS = {"*": "_*_", "/": "_/_", "%": "_%_"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    # -- tokens ---------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def at(self, *kinds: str) -> bool:
        t = self.tok
        return t.tag in kinds or (t.tag == "IDENT" and t.text in kinds and t.text == "in")

    def take(self) -> Token:
        t = self.tokens[self.i]
        self.i += 1
        return t

    def expect(self, kind: str, what: str) -> Token:
        if self.tok.tag != kind:
            raise CelSyntaxError(f"expected {what}, found {self._found()}", self.tok.pos)
        return self.take()

    def _found(self) -> str:
        t = self.tok
        return "the end of the expression" if t.tag == "EOF" else repr(t.text)

    def _unexpected(self) -> str:
        t = self.tok
        return "the expression ends too early" if t.tag == "EOF" else f"unexpected {t.text!r}"

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CelSyntaxError(
                f"the expression nests deeper than {MAX_DEPTH} levels", self.tok.pos
            )

    # -- grammar --------------------------------------------------------------------------
    def parse(self) -> Expr:
        node = self.expr()
        if self.tok.tag != "EOF":
            raise CelSyntaxError(self._unexpected(), self.tok.pos)
        return node

    def expr(self) -> Expr:
        self.nest()
        node = self.cond_or()
        if self.tok.tag == "?":
            pos = self.take().pos
            then = self.cond_or()
            self.expect(":", "':' of the conditional")
            other = self.expr()
            node = Call(pos, "_?_:_", (node, then, other))
        self.depth -= 1
        return node

    def cond_or(self) -> Expr:
        node = self.cond_and()
        while self.tok.tag == "||":
            pos = self.take().pos
            node = Call(pos, "_||_", (node, self.cond_and()))
        return node

    def cond_and(self) -> Expr:
        node = self.relation()
        while self.tok.tag == "&&":
            pos = self.take().pos
            node = Call(pos, "_&&_", (node, self.relation()))
        return node

    def relation(self) -> Expr:
        node = self.addition()
        while self.tok.tag in _RELOPS or (self.tok.tag == "IDENT" and self.tok.text == "in"):
            t = self.take()
            node = Call(t.pos, _RELOPS[t.text], (node, self.addition()))
        return node

    def addition(self) -> Expr:
        node = self.multiplication()
        while self.tok.tag in _ADDOPS:
            t = self.take()
            node = Call(t.pos, _ADDOPS[t.tag], (node, self.multiplication()))
        return node

    def multiplication(self) -> Expr:
        node = self.unary()
        while self.tok.tag in _MULOPS:
            t = self.take()
            node = Call(t.pos, _MULOPS[t.tag], (node, self.unary()))
        return node

    def unary(self) -> Expr:
        if self.tok.tag == "!":
            ops = []
            while self.tok.tag == "!":
                ops.append(self.take().pos)
            node = self.member()
            for pos in reversed(ops):
                node = Call(pos, "!_", (node,))
            return node
        if self.tok.tag == "-":
            ops = []
            while self.tok.tag == "-":
                ops.append(self.take().pos)
            node = self.member()
            for n, pos in enumerate(reversed(ops)):
                if n == 0 and isinstance(node, Lit) and node.kind in ("int", "double"):
                    node = Lit(pos, node.kind, -node.value)  # type: ignore[operator]
                else:
                    node = Call(pos, "-_", (node,))
            return node
        return self.member()

    def member(self) -> Expr:
        node = self.primary()
        while True:
            if self.tok.tag == ".":
                self.take()
                name = self.expect("IDENT", "a field or function name after '.'")
                if self.tok.tag == "(":
                    self.take()
                    args = self.args(")")
                    node = self.receiver_call(node, name, args)
                else:
                    node = Select(name.pos, node, name.text)
            elif self.tok.tag == "[":
                pos = self.take().pos
                index = self.expr()
                self.expect("]", "']'")
                node = Call(pos, "_[_]", (node, index))
            else:
                return node

    def receiver_call(self, target: Expr, name: Token, args: list[Expr]) -> Expr:
        if name.text in MACROS and len(args) in (2, 3):
            var = args[0]
            if not isinstance(var, Ident):
                raise CelSyntaxError(
                    f"the first argument of {name.text}() is a variable name", _pos(var)
                )
            if len(args) == 3 and name.text != "map":
                raise CelSyntaxError(f"{name.text}() takes a variable and one expression", name.pos)
            if name.text == "map":
                if len(args) == 3:
                    return Comprehension(name.pos, "map", target, var.name, args[1], args[2])
                return Comprehension(name.pos, "map", target, var.name, None, args[1])
            return Comprehension(name.pos, name.text, target, var.name, args[1])  # type: ignore[arg-type]
        return Call(name.pos, name.text, tuple(args), target)

    def args(self, close: str) -> list[Expr]:
        out: list[Expr] = []
        if self.tok.tag != close:
            out.append(self.expr())
            while self.tok.tag == ",":
                self.take()
                out.append(self.expr())
        self.expect(close, f"',' or {close!r}")
        return out

    def primary(self) -> Expr:
        t = self.tok
        if t.tag in ("INT", "UINT", "DOUBLE", "STRING", "BYTES"):
            self.take()
            lit_kind = {"INT": "int", "UINT": "uint", "DOUBLE": "double"}.get(t.tag, t.tag.lower())
            if t.tag == "INT" and t.value == INT_MAX + 1 and not self._negating():
                raise CelSyntaxError(f"int literal {t.text} is out of range (64-bit signed)", t.pos)
            return Lit(t.pos, lit_kind, t.value)  # type: ignore[arg-type]
        if t.tag == "(":
            self.take()
            node = self.expr()
            self.expect(")", "')'")
            return node
        if t.tag == "[":
            self.take()
            items = self.trailing_list("]")
            return ListLit(t.pos, tuple(items))
        if t.tag == "{":
            self.take()
            return MapLit(t.pos, tuple(self.map_entries()))
        leading_dot = False
        if t.tag == ".":
            self.take()
            leading_dot = True
            t = self.tok
        if t.tag == "IDENT":
            self.take()
            if t.text in ("true", "false"):
                return Lit(t.pos, "bool", t.text == "true")
            if t.text == "null":
                return Lit(t.pos, "null", None)
            if t.text in RESERVED or t.text == "in":
                raise CelSyntaxError(f"{t.text!r} is a reserved word, not a name", t.pos)
            name = ("." if leading_dot else "") + t.text
            if self.tok.tag == "(":
                self.take()
                args = self.args(")")
                if t.text == "has" and not leading_dot:
                    return self.has_macro(t, args)
                return Call(t.pos, name, tuple(args))
            if self.tok.tag == "{" or (self.tok.tag == "." and self._struct_ahead()):
                return self.struct(t.pos, name)
            return Ident(t.pos, name)
        raise CelSyntaxError(self._unexpected(), t.pos)

    def _negating(self) -> bool:
        return self.i >= 2 and self.tokens[self.i - 2].tag == "-"

    def _struct_ahead(self) -> bool:
        j = self.i
        while self.tokens[j].tag == "." and self.tokens[j + 1].tag == "IDENT":
            j += 2
        return self.tokens[j].tag == "{"

    def struct(self, pos: int, name: str) -> Expr:
        while self.tok.tag == ".":
            self.take()
            name += "." + self.expect("IDENT", "a type name").text
        self.expect("{", "'{'")
        fields: list[tuple[str, Expr]] = []
        while self.tok.tag != "}":
            field = self.expect("IDENT", "a field name")
            self.expect(":", "':'")
            fields.append((field.text, self.expr()))
            if self.tok.tag != ",":
                break
            self.take()
        self.expect("}", "'}'")
        return StructLit(pos, name, tuple(fields))

    def has_macro(self, t: Token, args: list[Expr]) -> Expr:
        if len(args) != 1 or not isinstance(args[0], Select):
            raise CelSyntaxError("has() takes one field selection, as in has(message.field)", t.pos)
        sel = args[0]
        return Select(sel.pos, sel.operand, sel.field, test_only=True)

    def trailing_list(self, close: str) -> list[Expr]:
        items: list[Expr] = []
        while self.tok.tag != close:
            items.append(self.expr())
            if self.tok.tag != ",":
                break
            self.take()
        self.expect(close, f"',' or {close!r}")
        return items

    def map_entries(self) -> list[tuple[Expr, Expr]]:
        entries: list[tuple[Expr, Expr]] = []
        while self.tok.tag != "}":
            key = self.expr()
            self.expect(":", "':' between a map key and its value")
            entries.append((key, self.expr()))
            if self.tok.tag != ",":
                break
            self.take()
        self.expect("}", "',' or '}'")
        return entries


def _pos(node: Expr) -> int:
    return node.pos


def parse(text: str) -> Expr:
    """The AST of ``text``; CelSyntaxError (with the offset) when it is not CEL."""
    if len(text) > MAX_LENGTH:
        raise CelSyntaxError(f"the expression is longer than {MAX_LENGTH:,} characters", 0)
    if not text.strip():
        raise CelSyntaxError("the expression is empty", 0)
    tree = _Parser(text).parse()
    stack: list[tuple[Expr, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise CelSyntaxError(
                f"the expression nests deeper than {MAX_TREE_DEPTH} operators", node.pos
            )
        stack.extend((child, depth + 1) for child in children(node))
    return tree
