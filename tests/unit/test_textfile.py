"""Text files that are not UTF-8: an input error at the bad byte, never a UnicodeDecodeError."""

from __future__ import annotations

import pytest

from schemacli.errors import ConfigError, InputError
from schemacli.textfile import decode_utf8


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
