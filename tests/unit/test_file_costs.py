"""The stack pass hands its files out dearest first (tests/filecosts.py, tests/file-costs.txt)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import filecosts

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_parses_and_names_only_files_that_exist():
    costs = filecosts.load_costs()
    assert costs, "tests/file-costs.txt names no file"
    missing = [path for path in costs if not (ROOT / path).is_file()]
    assert missing == []


@pytest.mark.parametrize(
    "line",
    ["12", "x tests/a.py", "-3 tests/a.py", "nan tests/a.py", "1 tests/a.py extra"],
)
def test_a_line_that_is_not_seconds_and_a_path_is_an_error_naming_its_line(line):
    with pytest.raises(filecosts.CostTableError, match=r"^costs\.txt:3: expected 'SECONDS PATH'"):
        filecosts.parse_costs(f"# comment\n\n{line}\n", "costs.txt")


def test_comments_and_blank_lines_are_skipped():
    text = "# head\n\n  5 tests/a.py  # the slow one\n0.5 tests/b.py\n"
    assert filecosts.parse_costs(text) == {"tests/a.py": 5.0, "tests/b.py": 0.5}


def test_files_go_dearest_first_each_whole_and_in_its_own_order():
    ids = [
        "tests/a.py::t1",
        "tests/b.py::t1",
        "tests/a.py::t2",
        "tests/c.py::t[1]",
        "tests/b.py::t2",
        "tests/d.py::t1",
    ]
    costs = {"tests/b.py": 10.0, "tests/c.py": 100.0}
    order = [ids[i] for i in filecosts.dearest_first(ids, costs)]
    assert order == [
        "tests/c.py::t[1]",
        "tests/b.py::t1",
        "tests/b.py::t2",
        "tests/a.py::t1",
        "tests/a.py::t2",
        "tests/d.py::t1",
    ]


def test_a_runs_seconds_are_summed_by_file_and_rendered_as_the_table_reads_them():
    seconds = filecosts.seconds_by_file(
        [("tests/a.py::t1", 1.25), ("tests/a.py::t1", 2.0), ("tests/b.py::t[x::y]", 7.6)]
    )
    assert seconds == {"tests/a.py": 3.25, "tests/b.py": 7.6}
    lines = filecosts.render_costs(seconds)
    assert lines == ["8 tests/b.py", "3 tests/a.py"]
    assert filecosts.parse_costs("\n".join(lines)) == {"tests/b.py": 8.0, "tests/a.py": 3.0}


def test_scripts_test_hands_the_stack_pass_out_in_collection_order_and_prints_its_costs():
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    stack_pass = script[script.index("--registry-impl apicurio") - 200 :]
    stack_pass = stack_pass[: stack_pass.index("--ignore=tests/fuzz")]
    assert "--no-loadscope-reorder" in stack_pass
    assert "--file-costs" in stack_pass


def test_xdist_without_reorder_starts_the_files_in_the_order_the_collection_gives(tmp_path):
    """The mechanism the stack pass leans on: with --no-loadscope-reorder, xdist's loadfile
    hands whole files out in collection order (by default it would sort them by test count,
    the one-test files last)."""
    log = tmp_path / "ran.log"
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(ROOT)!r})
            from tests import filecosts

            COSTS = {{"test_one.py": 50.0, "test_two.py": 20.0}}

            def pytest_collection_modifyitems(items):
                order = filecosts.dearest_first([item.nodeid for item in items], COSTS)
                items[:] = [items[i] for i in order]
            """
        )
    )
    body = "def test_{n}():\n    open({log!r}, 'a').write(__name__ + '\\n')\n"
    for name, count in (("many", 4), ("one", 1), ("two", 2)):
        (tmp_path / f"test_{name}.py").write_text(
            "".join(body.format(n=n, log=str(log)) for n in range(count))
        )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "1"]
        + ["--dist", "loadfile", "--no-loadscope-reorder", "-c", "/dev/null", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = log.read_text().split()
    assert ran == ["test_one"] + ["test_two"] * 2 + ["test_many"] * 4
