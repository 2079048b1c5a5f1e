"""How Spark SQL writes a name and a string: the lexical forms every generated expression uses."""

from __future__ import annotations


def ident(path: str) -> str:
    """``pickup.lat`` -> ```pickup`.`lat``` (backticks doubled inside names)."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in path.split("."))


def string_literal(text: str) -> str:
    # Spark processes backslash escapes in string literals (escapedStringLiterals=false).
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
