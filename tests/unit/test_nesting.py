"""Java's JSON nesting limit, measured without recursing, and room to walk up to it."""

import contextlib
import json
import sys

import pytest

from schemacli.contracts.jsontext.nesting import (
    MAX_DEPTH,
    TooDeep,
    call_deep,
    deep,
    read,
    text_depth,
    too_deep,
    value_depth,
)


def test_brackets_inside_strings_and_escapes_do_not_count():
    assert text_depth('{"a": "[[{{", "b": ["x\\"]{"]}') == (2, -1)


def test_the_position_is_where_the_depth_first_passes_the_limit():
    text = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    assert text_depth(text) == (MAX_DEPTH + 5, MAX_DEPTH)
    with deep():  # where Python could read it (at the default limit json.loads fails first)
        assert too_deep(text) == (MAX_DEPTH + 5, MAX_DEPTH)


@pytest.mark.parametrize("room", [False, True])
def test_reading_text_deeper_than_java_reads_fails_at_any_recursion_limit(room):
    text = "[" * 1500 + "]" * 1500
    with deep() if room else contextlib.nullcontext(), pytest.raises(TooDeep) as err:
        read(json.loads, text)
    assert (err.value.depth, err.value.position) == (1500, MAX_DEPTH)
    assert read(json.loads, "[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


def test_text_at_the_limit_or_with_few_brackets_is_not_too_deep():
    with deep():
        assert too_deep("[" * MAX_DEPTH + "]" * MAX_DEPTH) is None
        assert too_deep('{"type": "record", "name": "R", "fields": []}') is None
        assert too_deep('["' + "[" * 2000 + '"]') is None  # brackets in a string


def test_value_depth_counts_objects_and_arrays_and_handles_any_depth():
    assert value_depth("int") == 0
    assert value_depth({"type": "array", "items": {"type": "map", "values": ["null"]}}) == 3
    value: list = []
    for _ in range(5000):
        value = [value]
    assert value_depth(value) == 5001


def test_a_walk_that_hits_pythons_limit_runs_again_with_room_and_the_limit_is_restored():
    before = sys.getrecursionlimit()

    def down(n: int) -> int:
        return 0 if n == 0 else 1 + down(n - 1)

    assert call_deep(down, before + 500) == before + 500
    assert sys.getrecursionlimit() == before
    with deep():
        assert sys.getrecursionlimit() > before + 5 * MAX_DEPTH
    assert sys.getrecursionlimit() == before
