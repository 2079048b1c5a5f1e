"""Text files that are not UTF-8: an input error at the bad byte, never a UnicodeDecodeError."""

from __future__ import annotations

import pytest

from schemacli.errors import ConfigError, InputError
from schemacli.textfile import (
    Root,
    UnreadableInput,
    decode_utf8,
    is_file,
    read_input,
    work_tree,
)


def test_a_utf8_byte_order_mark_is_skipped():
    assert decode_utf8(b"\xef\xbb\xbfversion: 1", "m.yaml", hint="h") == "version: 1"


def test_a_bad_byte_is_reported_at_its_line_and_character_column():
    with pytest.raises(InputError) as caught:
        decode_utf8("ab\ncé".encode() + b"\xff", "m.yaml", hint="save it as UTF-8")
    err = caught.value
    assert (err.location.source, err.location.line, err.location.column) == ("m.yaml", 2, 3)
    assert "0xff" in err.message and err.hint == "save it as UTF-8"


def test_the_caller_chooses_the_error_class():
    with pytest.raises(ConfigError):
        decode_utf8(b"\x80", "schemacli.toml", hint="h", error=ConfigError)


# -- input from another party stays inside its root --------------------------------------------


def test_a_link_inside_the_root_is_read(tmp_path):
    (tmp_path / "real.avsc").write_text('"int"')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/link.avsc").symlink_to("../real.avsc")
    assert read_input(tmp_path / "sub/link.avsc", limit=100, within=Root(tmp_path, "r")) == b'"int"'


@pytest.mark.parametrize("how", ["file-link", "folder-link", "dots"])
def test_a_path_that_resolves_outside_the_root_is_refused_before_it_is_opened(tmp_path, how):
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    path = {
        "file-link": root / "a.avsc",
        "folder-link": root / "dir" / "secret.txt",
        "dots": root / ".." / "secret.txt",
    }[how]
    if how == "file-link":
        path.symlink_to(secret)
    elif how == "folder-link":
        (root / "dir").symlink_to(tmp_path)
    with pytest.raises(UnreadableInput) as caught:
        read_input(path, limit=100, within=Root(root, "the store x"))
    assert caught.value.reason == "outside"
    assert "leads outside the store x" in caught.value.message
    assert caught.value.location.source == str(path)


def test_a_root_that_is_itself_a_link_is_the_folder_it_names(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real/v1.avsc").write_text('"int"')
    (tmp_path / "store").symlink_to(tmp_path / "real")
    root = Root(tmp_path / "store", "s")
    assert read_input(tmp_path / "store/v1.avsc", limit=100, within=root) == b'"int"'


def test_a_name_longer_than_the_file_system_allows_is_not_a_file():
    assert is_file("N" * 300 + ".avsc") is False


def test_the_work_tree_of_a_folder_is_the_nearest_holding_git(tmp_path):
    (tmp_path / "repo/.git").mkdir(parents=True)
    (tmp_path / "repo/a/b").mkdir(parents=True)
    assert work_tree(tmp_path / "repo/a/b") == (tmp_path / "repo").resolve()
    assert work_tree(tmp_path) is None or work_tree(tmp_path) != tmp_path / "repo"
