"""The columns a hand-written Spark SQL expression reads, found without Spark.

``migrate validate`` without ``--spark`` cannot run Spark's analyser, but a misspelt field in a
``convert: sql`` rule is the commonest mistake, and the job would only fail when it starts. This
finds the first segment of every column reference (``pickup.lat`` reads ``pickup``), skipping
what is not a column: function names (a word before ``(``), SQL keywords and literals, the
type after ``AS`` in a cast, lambda parameters (``x -> x + 1``), interval units, quoted strings
and numbers.
It is a heuristic, so what it finds is a warning; ``--spark`` is the real judge.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""
    (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z]*)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<arrow>->)
  | (?P<punct>\S)
    """,
    re.VERBOSE,
)

# Words that are not columns when they stand alone (Spark SQL keywords, literals, typed-literal
# prefixes, niladic functions written without parentheses). Interval units are recognised by
# position (after a number or string), so that fields named day or hour are still seen.
KEYWORDS = frozenset(
    """
    and or not null true false is in like ilike rlike regexp between case when then else end
    distinct interval date timestamp timestamp_ntz timestamp_ltz div escape exists any some all
    current_date current_timestamp current_timezone to
    """.split()
)


def column_names(expr: str) -> list[str]:
    """The top-level column names ``expr`` reads, in order of appearance, each once."""
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(expr)]
    params = _lambda_parameters(tokens)
    found: list[str] = []
    skip_to_depth: int | None = None  # inside a cast's type, after AS: until its ")"
    depth = 0
    for i, (kind, text) in enumerate(tokens):
        if text == "(":
            depth += 1
        elif text == ")":
            if skip_to_depth == depth:
                skip_to_depth = None
            depth -= 1
        if skip_to_depth is not None or kind not in ("word", "quoted"):
            continue
        if kind == "word" and text.lower() == "as":
            skip_to_depth = depth
            continue
        before = tokens[i - 1][1] if i else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if before == "." or (kind == "word" and after[1] == "("):
            continue  # a nested field, or a function
        if kind == "word" and (text.lower() in KEYWORDS or after[0] == "string"):
            continue  # a keyword, or a typed literal's prefix such as X'0A'
        if i and (tokens[i - 1][0] in ("number", "string") or before.lower() == "to"):
            continue  # an interval's unit: INTERVAL 1 DAY, INTERVAL '1-2' YEAR TO MONTH
        name = _unquote(text) if kind == "quoted" else text
        if name.lower() not in params and name not in found:
            found.append(name)
    return found


def _lambda_parameters(tokens: list[tuple[str | None, str]]) -> set[str]:
    params: set[str] = set()
    for i, (kind, _) in enumerate(tokens):
        if kind != "arrow" or i == 0:
            continue
        j = i - 1
        if tokens[j][1] == ")":  # (x, y) -> ...
            while j > 0 and tokens[j][1] != "(":
                j -= 1
                if tokens[j][0] in ("word", "quoted"):
                    params.add(_name(tokens[j]).lower())
        elif tokens[j][0] in ("word", "quoted"):
            params.add(_name(tokens[j]).lower())
    return params


def _name(token: tuple[str | None, str]) -> str:
    return _unquote(token[1]) if token[0] == "quoted" else token[1]


def _unquote(text: str) -> str:
    return text[1:-1].replace("``", "`")
