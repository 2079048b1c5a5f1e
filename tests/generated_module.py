"""What every module ``schemacli spark codegen`` writes must be: ruff-clean and laid out as
``ruff format`` lays it out (the project's own configuration), and standalone (it imports only
pyspark and the standard library)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).parent / "ruff"
STANDALONE_IMPORTS = {"__future__", "argparse", "json", "collections", "typing", "pyspark"}
needs_ruff = pytest.mark.skipif(not RUFF.exists(), reason="ruff is not installed in the venv")


def assert_ruff_clean(path: Path) -> None:
    """``ruff check`` and ``ruff format --check`` pass on the module at ``path``."""
    config = ["--config", str(ROOT / "pyproject.toml")]
    lint = subprocess.run([RUFF, "check", *config, path], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run([RUFF, "format", "--check", *config, path], capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout


def imported_modules(source: str) -> set[str]:
    """The top-level packages ``source`` imports."""
    return {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
