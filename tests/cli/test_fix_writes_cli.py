"""`lint --fix` and `check --fix` write a user's file only as it was read: an edit made while
they run is never overwritten, a file swapped for a FIFO is refused by name (never a hang),
and the file keeps its owner and its hard links (or the fix is refused, saying why).

"While they run" is made exact: the core call that read the file is wrapped so that the file
changes right after it returns, before the command writes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.cli.test_check_fix_cli import BROKEN, SUBJECT
from tests.cli.test_lint_cli import CLEAN, OPTIONAL

EDITED = OPTIONAL.replace('"Ride"', '"RideEditedMeanwhile"')


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def run_bounded(*args: object):
    """``run``, in a thread: a command that blocks (a FIFO opened for reading) fails the test
    at the deadline instead of hanging it. Only a hang reaches the deadline."""
    done: list = []
    thread = threading.Thread(target=lambda: done.append(run(*args)), daemon=True)
    thread.start()
    thread.join(timeout=120)
    assert done, "the command blocked"
    return done[0]


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


LINT = ("schemacli.contracts.lint.engine", "lint_paths")
CHECK = ("schemacli.contracts.fixes.fixing", "fix_candidate")


@pytest.fixture
def lint_file(project) -> Path:
    path = project / "ride.avsc"
    path.write_text(OPTIONAL)
    return path


@pytest.fixture
def check_file(project) -> Path:
    path = project / "v3.avsc"
    path.write_text(BROKEN)
    return path


def _command(which: str, path: Path) -> tuple[object, ...]:
    if which == "lint":
        return ("lint", "--fix", path)
    return ("check", path, "-s", SUBJECT, "--fix")


@pytest.mark.parametrize("which", ["lint", "check"])
def test_an_edit_made_while_fix_runs_is_never_overwritten(
    monkeypatch, lint_file, check_file, which
):
    path = lint_file if which == "lint" else check_file
    edited = EDITED if which == "lint" else BROKEN.replace("TaxiRide", "EditedMeanwhile")
    after(monkeypatch, *(LINT if which == "lint" else CHECK), lambda: path.write_text(edited))
    result = run(*_command(which, path))
    assert result.exit_code == 2, result.output
    assert "changed since schemacli read it" in result.output
    assert path.read_text() == edited


@pytest.mark.parametrize("which", ["lint", "check"])
def test_a_file_swapped_for_a_fifo_while_fix_runs_is_refused_not_waited_on(
    monkeypatch, lint_file, check_file, which
):
    path = lint_file if which == "lint" else check_file

    def swap() -> None:
        path.unlink()
        os.mkfifo(path)

    after(monkeypatch, *(LINT if which == "lint" else CHECK), swap)
    result = run_bounded(*_command(which, path))
    assert result.exit_code == 2, result.output
    assert "FIFO" in result.output
    assert Path(path).is_fifo()


def test_a_change_between_the_plan_and_the_rename_is_refused_too(monkeypatch, lint_file):
    """The last look, just before the rename (atomicwrite's commit)."""
    from schemacli import atomicwrite

    real = atomicwrite._Transaction.stage

    def stage(self, write):
        temp = real(self, write)
        write.path.write_text(EDITED)
        return temp

    monkeypatch.setattr(atomicwrite._Transaction, "stage", stage)
    result = run("lint", "--fix", lint_file)
    assert result.exit_code == 2, result.output
    assert "changed since schemacli read it" in result.output
    assert lint_file.read_text() == EDITED
    assert sorted(p.name for p in lint_file.parent.glob(".ride.avsc.*")) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
@pytest.mark.parametrize("which", ["lint", "check"])
def test_root_fixing_another_users_file_leaves_it_that_users(lint_file, check_file, which):
    path = lint_file if which == "lint" else check_file
    os.chown(path, 4321, 4322)
    path.chmod(0o640)
    result = run(*_command(which, path))
    assert result.exit_code == 0, result.output
    info = path.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (4321, 4322, 0o640)
    if which == "lint":
        assert path.read_text() == CLEAN


@pytest.mark.parametrize("which", ["lint", "check"])
def test_a_file_with_hard_links_is_refused_and_every_name_keeps_it(lint_file, check_file, which):
    path = lint_file if which == "lint" else check_file
    other = path.with_name("other-name.avsc")
    os.link(path, other)
    before = path.read_bytes()
    result = run(*_command(which, path))
    assert result.exit_code == 2, result.output
    assert "2 hard links" in result.output
    assert path.read_bytes() == before == other.read_bytes()
    assert path.stat().st_ino == other.stat().st_ino
