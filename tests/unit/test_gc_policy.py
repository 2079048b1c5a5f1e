"""The cyclic collector is the process's: library calls leave it alone, the CLI's entry point
(which owns its process) makes it run rarely."""

from __future__ import annotations

import gc
import json

import pytest

from schemacli import app
from schemacli.contracts.evolution.check import Verdict
from schemacli.contracts.evolution.compat import check, clear_caches
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.store.tree import FileTree
from schemacli.gcpolicy import THRESHOLDS


@pytest.fixture
def no_switching(monkeypatch):
    def refuse(*_args: object) -> None:
        raise AssertionError("a library call switched the garbage collector")

    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    monkeypatch.setattr(gc, "set_threshold", refuse)


def _record(*types: str) -> str:
    fields = [{"name": f"f{i}", "type": t} for i, t in enumerate(types)]
    return json.dumps({"type": "record", "name": "R", "fields": fields})


def test_a_compatibility_check_leaves_the_collector_alone(no_switching):
    clear_caches()
    assert not check(_record("string"), _record("int")).compatible
    assert check(_record("long"), _record("int")).compatible


def test_a_gate_leaves_the_collector_alone(no_switching, tmp_path):
    folder = tmp_path / "subjects" / "rides-value"
    folder.mkdir(parents=True)
    (folder / "v1.avsc").write_text(_record("int"))
    (folder / "v2.avsc").write_text(_record("string"))
    report = gate(FileTree(tmp_path), SubjectLevels(default=Level.BACKWARD))
    assert report.verdict is Verdict.INCOMPATIBLE


def test_the_cli_entry_point_makes_the_collector_run_rarely(monkeypatch):
    before = gc.get_threshold()
    monkeypatch.setattr(app, "app", lambda: 0)
    try:
        with pytest.raises(SystemExit) as exit_:
            app.main()
        assert exit_.value.code == 0
        assert gc.get_threshold() == THRESHOLDS
        assert gc.isenabled()
    finally:
        gc.set_threshold(*before)


def test_the_console_script_makes_the_collector_run_rarely_before_it_runs_the_app(monkeypatch):
    """click, typer and the command's core are imported under the policy too."""
    from schemacli import entry, toplevel

    before = gc.get_threshold()
    seen = []
    monkeypatch.setattr(toplevel, "answers_help", lambda *_: False)
    monkeypatch.setattr(app, "main", lambda: seen.append(gc.get_threshold()))
    try:
        entry.main()
        assert seen == [THRESHOLDS]
    finally:
        gc.set_threshold(*before)
