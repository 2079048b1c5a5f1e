"""The one bounded reader (schemacli.textfile): every user-supplied file and standard input is
read up to a cap, and what is no regular file is refused by name before anything blocks."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from schemacli.textfile import (
    DOCUMENT_LIMIT,
    SCHEMA_LIMIT,
    SETTINGS_LIMIT,
    UnreadableInput,
    read_input,
    read_stdin,
    read_utf8,
)

HANG = 60  # seconds: only a hang reaches it


def refused(path: Path | str, **kwargs) -> UnreadableInput:
    with pytest.raises(UnreadableInput) as caught:
        read_input(path, limit=kwargs.pop("limit", 1024), **kwargs)
    assert caught.value.location.source == str(path)
    return caught.value


def test_a_regular_file_is_read_whole(tmp_path):
    path = tmp_path / "s.avsc"
    path.write_bytes(b'"int"')
    assert read_input(path, limit=5) == b'"int"'


def test_a_file_one_byte_over_the_cap_is_refused_naming_the_cap(tmp_path):
    path = tmp_path / "s.avsc"
    path.write_bytes(b"x" * 2049)
    err = refused(path, limit=2048, what="schema file")
    assert err.reason == "too-large"
    assert err.message == "is larger than 2 KiB, the most schemacli reads of a schema file"


def test_a_directory_is_named_as_one(tmp_path):
    err = refused(tmp_path, what="mapping file")
    assert (err.reason, err.message) == ("directory", "is a directory, not a mapping file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_named_as_one_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "kafka.properties"
    os.mkfifo(fifo)
    # In a child process: were the FIFO opened for a blocking read, only the timeout would end it.
    code = (
        "import sys; from schemacli.textfile import read_input, UnreadableInput\n"
        "try:\n    read_input(sys.argv[1], limit=1024)\n"
        "except UnreadableInput as err:\n    print(err.reason, err.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=HANG
    )
    assert done.stdout.startswith("fifo is a FIFO (named pipe)"), done.stderr


def test_a_device_is_named_as_one():
    err = refused("/dev/zero")
    assert err.reason == "device" and err.message.startswith("is a device")


def test_a_socket_is_named_as_one(tmp_path):
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert refused(path).reason == "socket"


def test_a_symlink_loop_is_named_as_one(tmp_path):
    loop = tmp_path / "v2.avsc"
    loop.symlink_to(loop)
    err = refused(loop)
    assert err.reason == "loop" and "symbolic links in a loop" in err.message


def test_a_missing_file_is_an_input_error_not_an_oserror(tmp_path):
    assert refused(tmp_path / "s.avsc").reason == "missing"


def test_a_path_through_a_file_is_an_input_error_not_an_oserror(tmp_path):
    (tmp_path / "f").write_text("")
    err = refused(tmp_path / "f" / "s.avsc")
    assert err.reason == "not-a-directory" and "is a file, not a directory" in err.message


def test_permission_denied_is_an_input_error(tmp_path, monkeypatch):
    import schemacli.textfile

    path = tmp_path / "locked.avsc"
    path.write_text('"int"')

    def refuse(name, flags, *args):  # root ignores chmod 000: refuse as the OS would
        raise PermissionError(13, "Permission denied", str(name))

    monkeypatch.setattr(schemacli.textfile.os, "open", refuse)
    err = refused(path)
    assert err.reason == "permission" and "chmod" in err.hint


def test_stdin_stops_at_the_cap_instead_of_reading_an_endless_stream():
    class Endless(io.RawIOBase):
        read_so_far = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            buffer[:] = bytes(len(buffer))
            self.read_so_far += len(buffer)
            return len(buffer)

    endless = Endless()
    with pytest.raises(UnreadableInput) as caught:
        read_stdin(limit=4096, what="schema", stream=io.BufferedReader(endless))
    assert caught.value.reason == "too-large" and caught.value.location.source == "<stdin>"
    assert endless.read_so_far < 4096 + 2 * io.DEFAULT_BUFFER_SIZE  # stopped at the cap


def test_stdin_up_to_the_cap_is_read_whole():
    assert read_stdin(limit=3, stream=io.BytesIO(b"abc")) == b"abc"


def test_read_utf8_reads_through_the_bounded_reader(tmp_path):
    err = refused(tmp_path, what="config file")
    with pytest.raises(UnreadableInput) as caught:
        read_utf8(tmp_path, hint="h", what="config file")
    assert caught.value.message == err.message


def test_the_caps_are_ordered_by_kind_of_input():
    assert SETTINGS_LIMIT == 1024 * 1024 < SCHEMA_LIMIT == 8 * 1024 * 1024 < DOCUMENT_LIMIT


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_planted_in_the_verdict_cache_is_skipped_not_waited_on(tmp_path):
    code = (
        "import os, sys, warnings\n"
        "from schemacli.contracts.evolution.diskcache import DiskCache\n"
        "cache = DiskCache(sys.argv[1])\n"
        "path = cache.path('k' * 64)\n"
        "path.parent.mkdir(parents=True, exist_ok=True)\n"
        "os.mkfifo(path)\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    print(cache.load('k' * 64), [str(w.message) for w in seen])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=HANG
    )
    assert done.stdout.startswith("None") and "FIFO" in done.stdout, done.stderr
