"""Does a rule's hand-written expression parse as Spark SQL? Answered without Spark.

``migrate validate`` without ``--spark`` used to check only that brackets and quotes balance, so
``total_amount +`` was called deployable and the job failed when it started. This parses the
expression with sqlglot's Spark dialect, a real SQL parser in pure Python: an expression it
cannot parse is a SQL_SYNTAX finding (the mapping is not deployable). sqlglot reads a little
more than Spark does (``SELECT 1`` passes), so ``--spark`` (Spark's own parser and analyser)
stays the final judge; what sqlglot refuses, Spark refuses too.
"""

from __future__ import annotations

import re


def parse_problem(expr: str) -> str | None:
    """What keeps ``expr`` from parsing as one Spark SQL expression (with the character where
    the parser stopped), or None."""
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    try:
        sqlglot.parse_one(expr, read="spark")
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        said = _plain(str(first.get("description") or exc).splitlines()[0])
        col = first.get("col")
        line = first.get("line") or 1
        if col:
            where = f"line {line}, character {col}" if "\n" in expr else f"character {col}"
            return f"Spark SQL cannot parse it at {where}: {said}"
        return f"Spark SQL cannot parse it: {said}"
    except TokenError as exc:
        return f"Spark SQL cannot read it: {_plain(str(exc).splitlines()[0])}"
    return None


def _plain(message: str) -> str:
    """sqlglot's message without its Python class names: ``missing for <class
    'sqlglot.expressions.core.Add'>`` -> ``missing for Add``."""
    return re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", r"\1", message)
