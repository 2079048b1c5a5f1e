"""The suite's own layout: the test folders have no __init__.py, so pytest imports every test
module by its basename, and two modules of one name in different folders stop the whole run at
collection (it happened twice: test_census, test_census_jvm)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_basename():
    where: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
