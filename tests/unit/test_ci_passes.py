"""Every test that needs a registry keeping rule sets runs somewhere in CI.

A ``rule_sets`` test is deselected in the pass against Apicurio (tests/conftest.py), so it runs
only if scripts/test names its file in the AxonOps pass; a file left out of that list would never
run in CI, and nothing would say so.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def axonops_pass_files() -> set[str]:
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    command = re.search(r"--registry-impl axonops(.*?)\n(?!\s)", script, re.S)
    assert command is not None, "scripts/test has no AxonOps pass"
    return set(re.findall(r"tests/\S+\.py", command.group(1)))


def rule_sets_files() -> set[str]:
    marked = re.compile(r"pytest\.mark\.rule_sets\b")
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests" / "integration").glob("test_*.py")
        if marked.search(path.read_text(encoding="utf-8"))
    }


def test_every_rule_sets_integration_file_runs_in_the_axonops_pass():
    files = rule_sets_files()
    assert files, "no integration file is marked rule_sets"
    missing = files - axonops_pass_files()
    assert not missing, f"add to scripts/test's AxonOps pass: {sorted(missing)}"


def test_the_axonops_pass_names_only_files_that_exist():
    for name in axonops_pass_files():
        assert (ROOT / name).is_file(), name
