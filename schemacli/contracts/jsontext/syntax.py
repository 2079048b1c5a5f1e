"""JSON text that Apache Avro Java would refuse, in words: the syntax error (what is wrong at
which line:col, and how to fix it), the tokens a scan of the text meets, and comments blanked
to spaces (same offsets) so the ``json`` module can read the rest."""

from __future__ import annotations

import re

from schemacli.errors import InputError, Location
from schemacli.kinds import Kind
from schemacli.textfile import line_column


class JsonSyntaxError(InputError):
    """The text is not JSON that Apache Avro Java would read."""

    kind = Kind.INVALID_JSON


# Strings, structural characters, comments, and bare words (numbers, true/false/null, junk).
TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|/\*.*?(?:\*/|\Z)|//[^\n]*|[^\s{}\[\]:,"/]+|/', re.S
)
# Strings (kept) or comments (blanked); used only when the text contains "/*" or "//".
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|//[^\n]*', re.S)
NON_NUMBERS = re.compile(r"-?(?:NaN|Infinity)\b")


class NonNumber(ValueError):
    pass


def first_non_number(text: str) -> re.Match[str] | None:
    for match in TOKEN.finditer(text):
        if NON_NUMBERS.fullmatch(match.group()):
            return match
    return None


def blank_comments(text: str, source: str) -> str:
    """Replace comments by spaces (keeping newlines), so offsets stay those of the original."""

    def blank(match: re.Match[str]) -> str:
        tok = match.group()
        if tok[0] == '"':
            return tok
        return re.sub(r"[^\n]", " ", tok)

    clean = _STRING_OR_COMMENT.sub(blank, text)
    if "/*" in clean:
        # an unterminated block comment (a terminated one would have been blanked)
        for match in TOKEN.finditer(clean):
            if match.group().startswith("/*"):
                raise JsonSyntaxError(
                    "comment opened with /* is never closed",
                    location=location_at(clean, match.start(), source),
                    hint="close it with */ (or delete it: strict JSON readers refuse comments)",
                )
    return clean


def location_at(text: str, pos: int, source: str) -> Location:
    line, column = line_column(text, pos)
    return Location(source=source, line=line, column=column)


def _prev_significant(text: str, pos: int) -> str:
    stripped = text[:pos].rstrip()
    return stripped[-1] if stripped else ""


def syntax_error(text: str, msg: str, pos: int, source: str) -> JsonSyntaxError:
    """Translate a json.JSONDecodeError into what is wrong and how to fix it."""
    at_end = not text[pos:].strip()
    char = text[pos] if pos < len(text) else ""
    prev = _prev_significant(text, pos)
    loc = location_at(text, pos, source)
    truncated = JsonSyntaxError(
        "the file ends before the JSON is complete (truncated, or a bracket is missing)",
        location=loc,
        hint="close every { with } and every [ with ]; check the file was saved completely",
    )
    if msg.startswith("Unterminated string"):
        return JsonSyntaxError(
            "string is never closed",
            location=loc,
            hint='add the closing double quote (")',
        )
    if at_end and not msg.startswith("Invalid"):
        return truncated
    if msg.startswith("Expecting property name"):
        if prev == ",":
            return JsonSyntaxError(
                "trailing comma before '}'",
                location=location_at(text, text.rindex(",", 0, pos), source),
                hint="remove the comma after the last member of the object",
            )
        if char == "'":
            return JsonSyntaxError(
                "key in single quotes",
                location=loc,
                hint="JSON strings use double quotes: write \"key\" instead of 'key'",
            )
        return JsonSyntaxError(
            f"expected a key in double quotes, found {found_at(text, pos)}",
            location=loc,
            hint='write each member as "key": value (keys must be double-quoted strings)',
        )
    if msg.startswith("Expecting value"):
        if prev == "," and char == "]":
            return JsonSyntaxError(
                "trailing comma before ']'",
                location=location_at(text, text.rindex(",", 0, pos), source),
                hint="remove the comma after the last item of the array",
            )
        if char == "'":
            return JsonSyntaxError(
                "string in single quotes",
                location=loc,
                hint="JSON strings use double quotes: write \"text\" instead of 'text'",
            )
        return JsonSyntaxError(
            f"expected a JSON value, found {found_at(text, pos)}",
            location=loc,
            hint='a value is a "string", a number, {...}, [...], true, false or null; '
            'type names must be quoted ("string", not string)',
        )
    if msg.startswith("Expecting ',' delimiter"):
        return JsonSyntaxError(
            f"expected ',' or a closing bracket, found {found_at(text, pos)}",
            location=loc,
            hint="separate members and items with commas; check for a missing comma on the "
            "previous line",
        )
    if msg.startswith("Expecting ':' delimiter"):
        return JsonSyntaxError(
            f"expected ':' after the key, found {found_at(text, pos)}",
            location=loc,
            hint='write each member as "key": value',
        )
    if msg.startswith("Invalid control character"):
        return JsonSyntaxError(
            "raw control character (newline, tab, ...) inside a string",
            location=loc,
            hint="escape it (\\n, \\t) or remove it; JSON strings cannot span lines",
        )
    if msg.startswith("Invalid"):
        return JsonSyntaxError(
            "invalid escape sequence in a string",
            location=loc,
            hint='valid escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX',
        )
    return JsonSyntaxError(
        f"invalid JSON: {msg}", location=loc, hint="fix the JSON syntax at this position"
    )


def found_at(text: str, pos: int) -> str:
    """What stands at ``pos``, by its kind, never its text: a file that is not JSON may hold
    anything (a token, a password line), and an error may be printed into a CI log. The
    position and the kind are what the reader of the error needs."""
    if pos >= len(text):
        return "the end of the file"
    char = text[pos]
    if char in _STRUCTURAL:
        return repr(char)
    if char == '"':
        return "a string"
    if char in "-0123456789":
        return "a number"
    if char.isalnum() or char == "_":
        return "a word without quotes"
    if char.isascii() and char.isprintable():
        return f"the character {char!r}"
    return f"the character U+{ord(char):04X}"


_STRUCTURAL = frozenset("{}[]:,")
