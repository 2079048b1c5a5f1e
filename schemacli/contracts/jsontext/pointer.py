"""JSON Pointers (RFC 6901): the one codec, and the value a pointer names.

A pointer is ``""`` (the whole document) or ``/`` followed by reference tokens joined by ``/``;
in a token, ``~`` is written ``~0`` and ``/`` is written ``~1``. Every place that builds a
pointer from keys, or walks one back to keys, goes through here: the positions of a schema
file, the compatibility engine's locations, the fixes, the readers' manifests.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "escape_token",
    "join_pointer",
    "parent_pointer",
    "split_pointer",
    "unescape_token",
    "value_at",
]


def escape_token(token: str) -> str:
    """One reference token as a pointer spells it (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """One reference token of a pointer as the key it names (``~1`` -> ``/``, ``~0`` -> ``~``:
    in that order, so ``~01`` stays the key ``~1``)."""
    return token.replace("~1", "/").replace("~0", "~")


def join_pointer(pointer: str, *tokens: str | int, escape: bool = True) -> str:
    """``join_pointer("/fields", 3, "type") == "/fields/3/type"``.

    ``escape=False`` joins the tokens as written (a key ``a/b`` stays ``/a/b``): the mapping
    file's key paths are printed that way."""
    if not escape:
        return pointer + "".join(f"/{t}" for t in tokens)
    return pointer + "".join("/" + escape_token(str(t)) for t in tokens)


def parent_pointer(pointer: str) -> str:
    """The pointer one level up: ``parent_pointer("/fields/3/type") == "/fields/3"``."""
    return pointer.rsplit("/", 1)[0]


def split_pointer(pointer: str) -> list[str]:
    """The keys and indexes (as text) a pointer names, unescaped: ``"/a~1b/0"`` ->
    ``["a/b", "0"]``; ``""`` (the whole document) -> ``[]``; ``"/"`` -> ``[""]`` (the key "")."""
    if not pointer:
        return []
    if "~" not in pointer:  # nothing escaped (nearly every pointer)
        return pointer[1:].split("/")
    return [unescape_token(t) for t in pointer[1:].split("/")]


def value_at(value: Any, pointer: str, default: Any = None) -> Any:
    """The JSON value ``pointer`` names inside ``value``; ``default`` where it names nothing
    (a missing key, an index past the end or not a number, a step into a scalar)."""
    for token in split_pointer(pointer):
        if isinstance(value, dict):
            if token not in value:
                return default
            value = value[token]
        elif isinstance(value, list):
            if not token.isdigit() or int(token) >= len(value):
                return default
            value = value[int(token)]
        else:
            return default
    return value
