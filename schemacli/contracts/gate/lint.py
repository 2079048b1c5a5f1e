"""The gate's lint: with ``gate = true`` in ``[tool.schemacli.lint]``, the versions the gate
checked are linted too, and a lint error fails their subject's row as an incompatibility does.

Its own module so that a gate without lint configured loads no lint code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from schemacli.contracts.evolution.check import INPUT_KINDS
from schemacli.contracts.evolution.levels import SubjectLevels
from schemacli.contracts.gate.rows import GateReport
from schemacli.contracts.lint.engine import lint_paths
from schemacli.contracts.lint.ruleset import LintConfig


def lint_gate(
    report: GateReport,
    version_path: Callable[[str, int], Path],
    config: LintConfig,
    *,
    store: Path,
    levels: SubjectLevels,
    relative_to: Path | None = None,
) -> GateReport:
    """``report`` with the lint findings of every version the gate checked added to its
    subject's row (``gate = true`` in ``[tool.schemacli.lint]``): a lint error fails the row
    as an incompatibility does. ``version_path(subject, n)``: the file of version ``n``."""
    rows = []
    for row in report.subjects:
        if not row.checked or any(f.kind in INPUT_KINDS for f in row.findings):
            rows.append(row)
            continue
        paths = [version_path(row.subject, n) for n in row.checked]
        linted = lint_paths(paths, config, store=store, levels=levels, relative_to=relative_to)
        found = tuple(replace(f, subject=row.subject) for f in linted.findings)
        rows.append(replace(row, findings=row.findings + found))
    return replace(report, subjects=tuple(rows))
