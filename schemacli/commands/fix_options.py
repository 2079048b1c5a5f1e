"""``--fix``, ``--diff`` and ``--unsafe-fixes``: declared once for ``check``, ``gate`` and
``lint``, with the one rule they follow and the plumbing they share.

The rule (:func:`fix_mode`): ``--unsafe-fixes`` only chooses which fixes ``--fix`` or ``--diff``
apply; ``--fix`` writes and ``--diff`` only shows, so the two together are refused; a diff is
not a document, so ``--diff`` prints text only (``-o FORMAT`` other than text is refused: use
``--fix -o FORMAT``, whose report is the fixed files'). Every refusal is a usage error (exit 2,
the format's error document on stdout), raised before anything is read or written.

A fixed file is written by ``atomicwrite.edit`` (its own encoding and byte-order mark, only if
it still holds what was read); what was applied, and what is left, goes to stderr
(:func:`say_fixed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from schemacli.errors import UsageError
from schemacli.output import OutputFormat
from schemacli.output.terminal import echo

if TYPE_CHECKING:
    from schemacli.contracts.fixes.fixing import Fixed

Fix = Annotated[
    bool,
    typer.Option(
        "--fix",
        help="Apply the safe fixes (re-checked until nothing more applies) and write the files "
        "in place, atomically (all or none); the report is that of the fixed files.",
    ),
]
Diff = Annotated[
    bool,
    typer.Option(
        "--diff",
        help="Print the fixes --fix would make as a unified diff; write nothing. Exit 1 when "
        "there is something to fix.",
    ),
]
UnsafeFixes = Annotated[
    bool,
    typer.Option(
        "--unsafe-fixes",
        help="With --fix or --diff: apply unsafe fixes too (they change a type, a name or a "
        "size, or revert a change; read them first).",
    ),
]


def fix_mode(fix: bool, diff: bool, unsafe_fixes: bool, output: OutputFormat) -> bool:
    """Whether the command fixes (``--fix`` or ``--diff``); a UsageError when the flags break
    the rule (see the module's docstring)."""
    if unsafe_fixes and not (fix or diff):
        raise UsageError(
            "--unsafe-fixes only chooses which fixes --fix or --diff apply",
            hint="add --fix (write the files) or --diff (show the change)",
        )
    if fix and diff:
        raise UsageError(
            "--fix writes the files, --diff only shows the change: give one",
            hint="--diff first to read the change, then --fix to write it",
        )
    if diff and OutputFormat(output) is not OutputFormat.text:
        fmt = OutputFormat(output).value
        raise UsageError(
            f"--diff prints a unified diff, not a {fmt} document",
            hint=f"leave -o out to read the diff; --fix -o {fmt} writes the fixes and reports "
            f"the fixed files as {fmt}",
        )
    return fix or diff


def say_fixed(fixed: Sequence[tuple[str, Fixed]], *, written: bool) -> None:
    """On stderr: how many fixes were applied (and the files written), each fix, and how many
    problems with fixes are left. ``fixed``: (the file as shown, its outcome), one or many."""
    applied = [(name, fix) for name, outcome in fixed for fix in outcome.applied]
    changed = [name for name, outcome in fixed if outcome.changed]
    if applied:
        where = f"; wrote {', '.join(changed)}" if written and changed else ""
        echo(f"fixed {len(applied)} problem(s){where}", err=True)
    else:
        echo("nothing to fix", err=True)
    for name, fix in applied:
        file = f"{name}: " if len(fixed) > 1 else ""
        echo(f"  {file}applied ({fix.applicability.value}): {fix.title}", err=True)
    for name, outcome in fixed:  # refused: their result would not parse or check
        file = f"{name}: " if len(fixed) > 1 else ""
        for one in outcome.dropped:
            echo(f"  {file}not applied: {one.fix.title}: {one.reason}", err=True)
    left = sum(
        1
        for _, outcome in fixed
        if not outcome.report.compatible
        for finding in outcome.report.findings
        if finding.fixes and finding.severity == "error"
    )
    if left:
        echo(
            f"{left} problem(s) left: see their fixes (unsafe ones apply with --unsafe-fixes)",
            err=True,
        )
