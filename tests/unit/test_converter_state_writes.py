"""The converter's own state files (pids, deploy.json, the resolved mapping, reports) are written
through a temporary file and a rename: a reader or a killed run never leaves half of one."""

from __future__ import annotations

import os

import pytest

from converters import state


def test_a_state_file_is_replaced_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "deploy.json"
    target.write_text('{"old": true}')
    state.write_text(target, '{"new": true}')
    assert target.read_text() == '{"new": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deploy.json"]


def test_a_write_cut_before_its_rename_keeps_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "submit.pid"
    target.write_text("4242")

    def killed(src, dst):
        raise KeyboardInterrupt  # the run stopped between writing and renaming

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        state.write_text(target, "5151")
    assert target.read_text() == "4242"
