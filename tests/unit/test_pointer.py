"""JSON Pointers (schemacli.contracts.jsontext.pointer): RFC 6901's escapes, both ways, and the
value a pointer names."""

from __future__ import annotations

import pytest

from schemacli.contracts.jsontext.pointer import (
    escape_token,
    join_pointer,
    parent_pointer,
    split_pointer,
    unescape_token,
    value_at,
)

DOCUMENT = {
    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": ["null", "string"]}],
    "a/b": {"~x": 1},
    "": "empty key",
    "n": None,
}


@pytest.mark.parametrize(
    ("key", "token"),
    [("plain", "plain"), ("a/b", "a~1b"), ("~x", "~0x"), ("~1", "~01"), ("/~", "~1~0"), ("", "")],
)
def test_a_key_escapes_to_its_token_and_back(key, token):
    assert escape_token(key) == token
    assert unescape_token(token) == key


def test_pointers_join_and_split_into_the_same_keys():
    pointer = join_pointer("/fields", 1, "a/b", "~x")
    assert pointer == "/fields/1/a~1b/~0x"
    assert split_pointer(pointer) == ["fields", "1", "a/b", "~x"]
    assert split_pointer("") == []
    assert split_pointer("/") == [""]
    assert join_pointer("", "a/b", escape=False) == "/a/b"
    assert parent_pointer("/fields/3/type") == "/fields/3"
    assert parent_pointer("/fields") == ""


def test_value_at_follows_keys_indexes_and_escapes():
    assert value_at(DOCUMENT, "") is DOCUMENT
    assert value_at(DOCUMENT, "/fields/1/type/1") == "string"
    assert value_at(DOCUMENT, "/a~1b/~0x") == 1
    assert value_at(DOCUMENT, "/") == "empty key"


@pytest.mark.parametrize(
    "pointer",
    ["/missing", "/fields/2", "/fields/x", "/fields/-1", "/fields/0/name/0", "/n/deeper"],
)
def test_value_at_a_pointer_that_names_nothing_is_the_default(pointer):
    assert value_at(DOCUMENT, pointer) is None
    marker = object()
    assert value_at(DOCUMENT, pointer, marker) is marker


def test_a_null_that_is_there_is_not_the_default():
    assert value_at(DOCUMENT, "/n", "absent") is None
