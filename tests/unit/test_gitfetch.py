"""gitfetch.cloned: a clone is bounded in size as well as in time (real git, a local bare repo)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from schemacli.gitfetch import GitFetchError, cloned

MIB = 1024 * 1024


def bare_repo(tmp_path: Path, files: dict[str, bytes]) -> Path:
    work, bare = tmp_path / "work", tmp_path / "repo.git"
    work.mkdir()
    for name, content in files.items():
        (work / name).write_bytes(content)
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env = {**os.environ, **who, "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "declarations"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def test_a_clone_within_the_bound_yields_its_tree(tmp_path):
    bare = bare_repo(tmp_path, {"reader.json": b"{}"})
    with cloned(f"file://{bare}", max_bytes=MIB) as tree:
        assert (tree / "reader.json").read_bytes() == b"{}"


def test_a_clone_growing_past_the_bound_is_stopped_and_removed(tmp_path):
    bare = bare_repo(tmp_path, {"big.bin": os.urandom(3 * MIB)})  # random: git cannot pack it small
    seen: list[Path] = []
    with pytest.raises(GitFetchError, match="wrote more than 1 MiB; stopped") as caught:
        with cloned(f"file://{bare}", max_bytes=MIB) as tree:
            seen.append(tree)
    assert not seen  # nothing was handed over
    assert "clone it yourself" in caught.value.hint
    assert int(caught.value.exit_code) == 3


def test_sigterm_during_a_clone_removes_the_partial_clone(tmp_path):
    """A clone that hangs (a git:// server that accepts and never answers), SIGTERM once its
    temporary folder exists: the process exits as SIGTERM asks (143) and leaves nothing in
    $TMPDIR. Waits for the events, never for a time."""
    import signal
    import socket
    import sys
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    temp = tmp_path / "tmp"
    temp.mkdir()
    code = (
        "from schemacli.gitfetch import cloned\n"
        f"with cloned('git://127.0.0.1:{port}/r.git', timeout=600):\n"
        "    pass\n"
    )
    env = {**os.environ, "TMPDIR": str(temp)}
    process = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        connection, _ = server.accept()  # git is connected: the clone's folder exists
        deadline = time.monotonic() + 120  # only a hang reaches it
        while not list(temp.glob("schemacli-readers-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(temp.glob("schemacli-readers-*"))
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) == 128 + signal.SIGTERM
        assert list(temp.iterdir()) == []
        connection.close()
    finally:
        if process.poll() is None:
            process.kill()
        server.close()
