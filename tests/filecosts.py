"""The order in which a pass hands its test files to its workers: the slowest first.

The stack pass (scripts/test) runs whole files on two xdist workers (``--dist loadfile``). xdist
hands the files out in collection order when ``--no-loadscope-reorder`` is given (by default it
sorts them by how many tests they hold, which sends the long one-test files, the fault
injection and the demo, out last, where one worker runs them alone while the other waits).
Sorting the collection by each file's cost, dearest first, is the longest-processing-time rule:
the long files start at once and the short ones fill in around them.

The costs are seconds a file took in a measured run, kept in ``tests/file-costs.txt``
(``SECONDS PATH`` a line). A run with ``--file-costs`` prints this run's table in the same
format at its end, to refresh the file from a CI log. A file the table does not name counts as
costing nothing: it keeps its place after the files it names. The order only decides when each
file starts, never what a test checks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

TABLE = Path(__file__).with_name("file-costs.txt")


class CostTableError(ValueError):
    """A line of the cost table that is not ``SECONDS PATH``."""


def parse_costs(text: str, source: str = str(TABLE)) -> dict[str, float]:
    """The table's costs by file path (relative to the checkout, ``/``-separated). Blank lines
    and ``#`` comments are skipped; a line that is not ``SECONDS PATH`` is an error naming it."""
    costs: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        parts = body.split()
        try:
            seconds = float(parts[0])
        except ValueError:
            seconds = -1.0
        if len(parts) != 2 or not seconds >= 0:
            raise CostTableError(
                f"{source}:{number}: expected 'SECONDS PATH' (seconds >= 0), got {line!r}"
            )
        costs[parts[1]] = seconds
    return costs


def load_costs(path: Path = TABLE) -> dict[str, float]:
    if not path.is_file():
        return {}
    return parse_costs(path.read_text(encoding="utf-8"), str(path))


def file_of(nodeid: str) -> str:
    """The file part of a pytest node id (``tests/x/test_y.py::test_z[1]`` -> the path)."""
    return nodeid.split("::", 1)[0]


def dearest_first(nodeids: Iterable[str], costs: Mapping[str, float]) -> list[int]:
    """The positions of ``nodeids`` reordered so that files go dearest first. The sort is
    stable and keys on the file alone: a file's tests keep their order and stay together, and
    files of equal cost (those the table does not name among them) keep theirs."""
    ids = list(nodeids)
    return sorted(range(len(ids)), key=lambda i: -costs.get(file_of(ids[i]), 0.0))


def seconds_by_file(reports: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Each file's seconds, summed over its tests' set-up, call and tear-down reports."""
    total: dict[str, float] = defaultdict(float)
    for nodeid, duration in reports:
        total[file_of(nodeid)] += duration
    return dict(total)


def render_costs(seconds: Mapping[str, float]) -> list[str]:
    """The table's lines, dearest first (ties by path), whole seconds."""
    rows = sorted(seconds.items(), key=lambda row: (-row[1], row[0]))
    return [f"{value:.0f} {path}" for path, value in rows]
