"""How deeply a schema may nest: exactly as deep as Apache Avro Java reads, and no shallower.

Java's ``Schema.Parser`` reads JSON with Jackson, whose ``StreamReadConstraints`` refuse a
document nested more than 1,000 levels (objects and arrays both count): "Document nesting depth
(1001) exceeds the maximum allowed (1000)". Anything up to that depth is valid Avro to Java (and
so to the registry), e.g. 1,000 nested arrays or 333 nested records (three JSON levels each).

Python's default recursion limit (1,000 frames; our walks take a few frames per level) is below
that. So JSON text is read with :func:`read` (deeper than Java reads: :class:`TooDeep`), the CLI
runs each command with room for :data:`MAX_DEPTH` levels (:func:`deep`), and the library, which
keeps Python's default, does a walk that hits the limit once more with that room
(:func:`call_deep`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import accumulate
from types import FrameType
from typing import Any, TypeVar

from schemacli.contracts.jsontext.numberlength import NumberTooLong, number_too_long

T = TypeVar("T")

MAX_DEPTH = 1000  # Jackson's default StreamReadConstraints.maxNestingDepth
# Python 3.12+ limits the C recursion of json.loads apart from sys.getrecursionlimit().
_CAN_READ_TOO_DEEP = sys.version_info >= (3, 12)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_FRAMES_PER_LEVEL = 6  # generous: the deepest walks take about 3 frames per JSON level


def text_depth(text: str) -> tuple[int, int]:
    """The JSON nesting depth of ``text`` and where it first passes :data:`MAX_DEPTH` (-1 if not).

    Brackets inside strings do not count. ``text`` need not be valid JSON.
    """
    depth = deepest = 0
    over = -1
    in_string = escaped = False
    for pos, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{" or ch == "[":
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > MAX_DEPTH and over < 0:
                    over = pos
        elif ch == "}" or ch == "]":
            depth -= 1
    return deepest, over


def too_deep(text: str) -> tuple[int, int] | None:
    """``(depth, position)`` if ``text`` nests deeper than Java reads, else None.

    Only measured when Python could read it: at Python 3.11's default recursion limit, JSON more
    than 1,000 levels deep already fails to load (and :func:`read` measures it then).
    """
    if not _CAN_READ_TOO_DEEP and sys.getrecursionlimit() <= MAX_DEPTH:
        return None
    if text.count("{") + text.count("[") <= MAX_DEPTH:  # the usual case: cannot be too deep
        return None
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))  # C speed: ~3 ms for 100 KB
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= MAX_DEPTH:
        return None
    deepest, over = text_depth(text)
    return (deepest, over) if over >= 0 else None


class TooDeep(Exception):
    """JSON text nested deeper than Java reads: how deep, and where it passes the limit."""

    def __init__(self, depth: int, position: int) -> None:
        super().__init__(too_deep_message(depth))
        self.depth, self.position = depth, position


def read(decode: Callable[..., T], text: str, *args: Any) -> T:
    """``decode(text, *args)`` for JSON text no deeper than Java reads; :class:`TooDeep` if deeper,
    :class:`~schemacli.contracts.jsontext.numberlength.NumberTooLong` if a number is longer than
    it reads.

    Within the limit, a decode that hits Python's recursion limit runs again with room.
    """
    found = too_deep(text)
    if found:
        raise TooDeep(*found)
    long_number = number_too_long(text)  # Jackson's other limit that Python does not share
    if long_number:
        raise NumberTooLong(*long_number)
    try:
        return decode(text, *args)
    except RecursionError:
        depth, over = text_depth(text)
        if over >= 0:
            raise TooDeep(depth, over) from None
        with deep():
            return decode(text, *args)


def call_deep(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, again with room for :data:`MAX_DEPTH` levels if Python's limit is hit.

    For walks over input no deeper than Java reads (text :func:`too_deep` has passed, or a schema
    parsed from it), so the retry is bounded.
    """
    try:
        return fn(*args)
    except RecursionError:
        with deep():
            return fn(*args)


def value_depth(value: Any) -> int:
    """The JSON nesting depth of parsed JSON (a scalar is 0), without recursing."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def too_deep_message(depth: int) -> str:
    return (
        f"the JSON is nested {depth} levels deep; Apache Avro Java (Jackson) reads at most "
        f"{MAX_DEPTH}"
    )


TOO_DEEP_HINT = (
    "Flatten it: define a deeply nested record once by name and refer to it by that name."
)


@contextmanager
def deep() -> Iterator[None]:
    """Room on Python's stack for a walk of :data:`MAX_DEPTH` levels (restored afterwards)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _stack_depth() + _FRAMES_PER_LEVEL * MAX_DEPTH + 200))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _stack_depth() -> int:
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth
