"""The levels' one table: which versions and directions a level checks; per-subject levels."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.levels import (
    BACKWARD,
    FORWARD,
    Level,
    SubjectLevels,
    compared_versions,
    comparisons,
)


def record(*fields: dict) -> dict:
    return {"type": "record", "name": "R", "fields": list(fields)}


V1 = record({"name": "a", "type": "int"})
V2 = record({"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": "x"})
RENAMED = record({"name": "z", "type": "int"})


@pytest.mark.parametrize("level", list(Level))
def test_an_empty_history_is_compared_with_nothing(level):
    assert comparisons(level, 0) == ()
    assert list(compared_versions(level, 0)) == []


def test_none_compares_with_nothing():
    assert comparisons(Level.NONE, 3) == ()


@pytest.mark.parametrize("level", [Level.BACKWARD, Level.FORWARD, Level.FULL])
def test_plain_levels_compare_with_the_latest_version_only(level):
    assert list(compared_versions(level, 3)) == [2]
    assert {index for index, _ in comparisons(level, 3)} == {2}


@pytest.mark.parametrize(
    "level", [Level.BACKWARD_TRANSITIVE, Level.FORWARD_TRANSITIVE, Level.FULL_TRANSITIVE]
)
def test_transitive_levels_compare_with_every_version(level):
    assert list(compared_versions(level, 3)) == [0, 1, 2]


def test_full_transitive_checks_newest_first_backward_before_forward():
    assert comparisons(Level.FULL_TRANSITIVE, 2) == (
        (1, BACKWARD),
        (1, FORWARD),
        (0, BACKWARD),
        (0, FORWARD),
    )


def test_backward_makes_the_candidate_the_reader():
    [pair] = compat.check_pairs(Level.BACKWARD, RENAMED, [V1])
    assert (pair.index, pair.direction) == (0, BACKWARD)
    assert [f.kind for f in pair.result.findings] == [compat.READER_FIELD_MISSING_DEFAULT_VALUE]
    assert pair.result.findings[0].subject == "version 1"


def test_check_level_is_the_sum_of_its_pairs():
    pairs = compat.check_pairs(Level.FULL_TRANSITIVE, RENAMED, [V1, V2], labels=["v1", "v2"])
    result = compat.check_level(Level.FULL_TRANSITIVE, RENAMED, [V1, V2], labels=["v1", "v2"])
    assert [(p.index, p.direction) for p in pairs] == list(comparisons(Level.FULL_TRANSITIVE, 2))
    assert result.findings == tuple(f for p in pairs for f in p.result.findings)
    assert not result.compatible


def test_a_subject_has_its_own_level_else_the_default():
    levels = SubjectLevels(Level.BACKWARD, MappingProxyType({"a-value": Level.FULL}))
    assert levels.level_for("a-value") is Level.FULL
    assert levels.level_for("b-value") is Level.BACKWARD
