"""`lint --fix`, `check --fix` and `gate --fix` write a user's file only as it was read
(atomicwrite.edit): an edit made while they run is never overwritten, and the file keeps its
owner and its hard links (or the fix is refused, saying why).

"While they run" is made exact: the core call that read the file is wrapped so that the file
changes right after it returns, before the command writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.cli.test_check_fix_cli import BROKEN, SUBJECT
from tests.cli.test_lint_cli import CLEAN, OPTIONAL

EDITED = OPTIONAL.replace('"Ride"', '"RideEditedMeanwhile"')


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def after(monkeypatch, module: str, name: str, change) -> None:
    """Make ``module.name`` (the core call that reads the file) call ``change`` once it
    returns: the file changes while the command runs, after the read, before the write."""
    import importlib

    owner = importlib.import_module(module)
    real = getattr(owner, name)

    def wrapped(*args, **kwargs):
        result = real(*args, **kwargs)
        change()
        return result

    monkeypatch.setattr(owner, name, wrapped)


# Each command: the call (module, attribute) that runs after the file was read and before the
# write, the file it fixes and what that file holds.
CORE = {
    "lint": ("schemacli.contracts.lint.engine", "lint_paths"),
    "check": ("schemacli.commands.check", "fix_candidate"),
    "gate": ("schemacli.commands.gate", "fix_store"),
}
GATE_FILE = Path("schemas/subjects") / SUBJECT / "v3.avsc"


def _case(project: Path, which: str) -> tuple[Path, tuple[object, ...]]:
    """The file ``which`` fixes (written, broken) and the command line that fixes it."""
    if which == "lint":
        path = project / "ride.avsc"
        path.write_text(OPTIONAL)
        return path, ("lint", "--fix", path)
    if which == "check":
        path = project / "v3.avsc"
        path.write_text(BROKEN)
        return path, ("check", path, "-s", SUBJECT, "--fix")
    path = project / GATE_FILE
    path.write_text(BROKEN)
    return path, ("gate", "--fix")


# A file swapped for a FIFO while --fix runs: test_fix_swapped_for_a_fifo_cli (all three).


@pytest.mark.parametrize("which", list(CORE))
def test_an_edit_made_while_fix_runs_is_never_overwritten(monkeypatch, project, which):
    path, command = _case(project, which)
    edited = EDITED if which == "lint" else BROKEN.replace("TaxiRide", "EditedMeanwhile")
    after(monkeypatch, *CORE[which], lambda: path.write_text(edited))
    result = run(*command)
    assert result.exit_code == 2, result.output
    assert "changed since schemacli read it" in result.output
    assert path.read_text() == edited


def test_a_change_between_the_plan_and_the_rename_is_refused_too(monkeypatch, project):
    """The last look, just before the rename (atomicwrite's commit)."""
    from schemacli import atomicwrite

    real = atomicwrite._Transaction.stage

    def stage(self, write):
        temp = real(self, write)
        write.path.write_text(EDITED)
        return temp

    monkeypatch.setattr(atomicwrite._Transaction, "stage", stage)
    lint_file, command = _case(project, "lint")
    result = run(*command)
    assert result.exit_code == 2, result.output
    assert "changed since schemacli read it" in result.output
    assert lint_file.read_text() == EDITED
    assert sorted(p.name for p in lint_file.parent.glob(".ride.avsc.*")) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
@pytest.mark.parametrize("which", list(CORE))
def test_root_fixing_another_users_file_leaves_it_that_users(project, which):
    path, command = _case(project, which)
    os.chown(path, 4321, 4322)
    path.chmod(0o640)
    result = run(*command)
    assert result.exit_code == 0, result.output
    info = path.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (4321, 4322, 0o640)
    if which == "lint":
        assert path.read_text() == CLEAN


@pytest.mark.parametrize("which", list(CORE))
def test_a_file_with_hard_links_is_refused_and_every_name_keeps_it(project, which):
    path, command = _case(project, which)
    other = project / "other-name.link"  # outside the store: no version of the gate
    os.link(path, other)
    before = path.read_bytes()
    result = run(*command)
    assert result.exit_code == 2, result.output
    assert "2 hard links" in result.output
    assert path.read_bytes() == before == other.read_bytes()
    assert path.stat().st_ino == other.stat().st_ino
