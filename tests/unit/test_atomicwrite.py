"""The one writer of users' files: it refuses before writing anything, and writes all or none."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from schemacli import atomicwrite
from schemacli.atomicwrite import Write, WriteError, refusals, write_all
from tests.folderstate import folder_state

HINT = "a hint"


def test_writes_new_files_and_folders_and_leaves_no_temporary_file(tmp_path):
    write_all([Write(tmp_path / "a/b/c.txt", b"c"), Write(tmp_path / "d.txt", b"d")], hint=HINT)
    assert (tmp_path / "a/b/c.txt").read_bytes() == b"c"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "d.txt"]
    assert [p.name for p in (tmp_path / "a/b").iterdir()] == ["c.txt"]


def test_a_new_file_gets_the_mode_open_would_give_and_a_replaced_one_keeps_its_own(tmp_path):
    kept = tmp_path / "kept.toml"
    kept.write_text("old")
    kept.chmod(0o640)
    write_all([Write(kept, b"new", replace=True), Write(tmp_path / "new", b"n")], hint=HINT)
    assert kept.read_bytes() == b"new" and (kept.stat().st_mode & 0o777) == 0o640
    umask = os.umask(0)
    os.umask(umask)
    assert ((tmp_path / "new").stat().st_mode & 0o777) == 0o666 & ~umask


def test_replacing_through_a_symbolic_link_keeps_the_link(tmp_path):
    real = tmp_path / "real.toml"
    real.write_text("old")
    (tmp_path / "link.toml").symlink_to("real.toml")
    write_all([Write(tmp_path / "link.toml", b"new", replace=True)], hint=HINT)
    assert (tmp_path / "link.toml").is_symlink() and real.read_bytes() == b"new"


@pytest.mark.parametrize(
    ("make", "write", "says"),
    [
        (lambda root: (root / "f").write_text("x"), Write(Path("f"), b""), "f exists"),
        (lambda root: (root / "f").symlink_to("nowhere"), Write(Path("f"), b""), "f exists"),
        (lambda root: (root / "f").mkdir(), Write(Path("f"), b"", replace=True), "is a folder"),
        (
            lambda root: (root / ".github").write_text(""),
            Write(Path(".github/workflows/x.yml"), b""),
            ".github is not a folder",
        ),
        (
            lambda root: os.mkfifo(root / "fifo"),
            Write(Path("fifo"), b"", replace=True),
            "not a regular file",
        ),
        (
            lambda root: (root / "f").symlink_to("f"),
            Write(Path("f"), b"", replace=True),
            "loops",
        ),
        (
            lambda root: ((root / "f").write_text(""), (root / "f").chmod(0o444)),
            Write(Path("f"), b"", replace=True),
            "f is read-only",
        ),
        (
            lambda root: ((root / "ro").mkdir(), (root / "ro").chmod(0o555)),
            Write(Path("ro/sub/f"), b""),
            "cannot create ro/sub: the folder ro is read-only",
        ),
    ],
    ids=[
        "exists",
        "dangling-link",
        "folder",
        "file-as-parent",
        "fifo",
        "loop",
        "ro-file",
        "ro-dir",
    ],
)
def test_every_refusal_is_found_before_anything_is_written(
    tmp_path, monkeypatch, make, write, says
):
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    before = folder_state(tmp_path)
    planned = [Write(Path("first.txt"), b"1"), write]
    assert [str(r) for r in refusals(planned)] and says in str(refusals(planned)[0])
    with pytest.raises(WriteError, match="nothing was written"):
        write_all(planned, hint=HINT)
    assert folder_state(tmp_path) == before


def _fail_on(monkeypatch, name: str, target: str) -> None:
    """Make os.<name> fail with ENOSPC when it moves a file onto ``target``."""
    real = getattr(os, name)

    def failing(src, dst, *args, **kwargs):
        if Path(dst).name == target:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(atomicwrite.os, name, failing)


def test_a_write_failing_midway_undoes_the_earlier_ones(tmp_path, monkeypatch):
    """New files and folders go, a replaced file comes back with its bytes and mode."""
    edited = tmp_path / "pyproject.toml"
    edited.write_text("[project]\n")
    edited.chmod(0o600)
    before = folder_state(tmp_path)
    _fail_on(monkeypatch, "link", "last.yml")
    planned = [
        Write(tmp_path / "store/subjects/.gitkeep", b""),
        Write(edited, b"[project]\n[tool.schemacli]\n", replace=True),
        Write(tmp_path / ".github/workflows/last.yml", b"x"),
    ]
    with pytest.raises(WriteError) as caught:
        write_all(planned, hint=HINT)
    assert "no space left" in caught.value.message and "nothing was written" in caught.value.message
    assert caught.value.location.source.endswith("last.yml")
    assert folder_state(tmp_path) == before


def test_a_file_appearing_after_the_check_is_not_overwritten(tmp_path, monkeypatch):
    """The check and the write are apart in time: a new file is linked into place, which fails
    where a rename would clobber what appeared meanwhile."""
    target = tmp_path / "out.yaml"
    real_stage = atomicwrite._Transaction.stage

    def stage_then_someone_writes(self, write):
        temp = real_stage(self, write)
        target.write_text("theirs")
        return temp

    monkeypatch.setattr(atomicwrite._Transaction, "stage", stage_then_someone_writes)
    with pytest.raises(WriteError, match="something of that name exists"):
        write_all([Write(target, b"ours")], hint=HINT)
    assert target.read_text() == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


def test_an_interrupt_between_two_writes_undoes_the_first(tmp_path, monkeypatch):
    before = folder_state(tmp_path)
    real = atomicwrite._Transaction.commit
    calls = []

    def commit_then_interrupt(self, write, temp):
        calls.append(write.path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, write, temp)

    monkeypatch.setattr(atomicwrite._Transaction, "commit", commit_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_all([Write(tmp_path / "a/1", b"1"), Write(tmp_path / "a/2", b"2")], hint=HINT)
    assert folder_state(tmp_path) == before


def test_a_link_not_to_be_followed_is_replaced_and_comes_back_on_undo(tmp_path, monkeypatch):
    """A store pulled from a registry never writes through a link: the link itself is replaced,
    the file it named is untouched, and an undo puts the link back."""
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    store = tmp_path / "store"
    store.mkdir()
    (store / "v1.avsc").symlink_to(outside)
    write_all([Write(store / "v1.avsc", b"{}", replace=True, follow_link=False)], hint=HINT)
    assert not (store / "v1.avsc").is_symlink() and (store / "v1.avsc").read_bytes() == b"{}"
    assert outside.read_text() == "not yours"

    (store / "v2.avsc").symlink_to(outside)
    before = folder_state(tmp_path)
    _fail_on(monkeypatch, "link", "v3.avsc")
    with pytest.raises(WriteError):
        write_all(
            [
                Write(store / "v2.avsc", b"{}", replace=True, follow_link=False),
                Write(store / "v3.avsc", b"{}"),
            ],
            hint=HINT,
        )
    assert folder_state(tmp_path) == before


# -- what a replaced file keeps: owner, links; and what a command read ---------------------------


def test_a_user_replacing_another_users_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "theirs.avsc"
    path.write_text("old")
    owner = path.stat().st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    found = refusals([Write(path, b"new", replace=True)])
    assert len(found) == 1 and "owned by another user" in found[0].reason
    assert path.read_text() == "old"


def test_a_file_with_two_names_is_refused(tmp_path):
    path = tmp_path / "a.avsc"
    path.write_text("old")
    os.link(path, tmp_path / "b.avsc")
    found = refusals([Write(path, b"new", replace=True)])
    assert len(found) == 1 and "2 hard links" in found[0].reason


def test_an_edit_keeps_the_byte_order_mark_and_expects_what_was_read(tmp_path):
    path = tmp_path / "a.avsc"
    path.write_bytes(b"\xef\xbb\xbf" + b'"int"')
    write = atomicwrite.edit(path, '"int"', '"long"')
    assert write.content == b'\xef\xbb\xbf"long"' and write.expected == b'\xef\xbb\xbf"int"'
    write_all([write], hint=HINT)
    assert path.read_bytes() == b'\xef\xbb\xbf"long"'


@pytest.mark.parametrize("now", ["changed", "longer", "fifo", "gone"])
def test_an_edit_of_a_file_that_is_no_longer_what_was_read_is_refused(tmp_path, now):
    path = tmp_path / "a.avsc"
    path.write_text('"int"')
    if now == "changed":
        path.write_text('"str"')
    elif now == "longer":
        path.write_text('"int" and more')
    elif now == "fifo":
        path.unlink()
        os.mkfifo(path)
    else:
        path.unlink()
    with pytest.raises(WriteError) as caught:
        atomicwrite.edit(path, '"int"', '"long"')
    assert "nothing was written" in caught.value.message
