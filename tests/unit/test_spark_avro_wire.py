"""The Confluent wire format helpers: magic byte 0, 4-byte big-endian schema id, body."""

import pytest

from spark_avro.wire import NotConfluentFramed, frame, unframe


def test_frame_prefixes_magic_byte_and_big_endian_id():
    assert frame(258, b"body") == b"\x00\x00\x00\x01\x02body"


def test_unframe_returns_id_and_body():
    assert unframe(frame(7, b"\x02\x04")) == (7, b"\x02\x04")


def test_unframe_refuses_a_wrong_magic_byte():
    with pytest.raises(NotConfluentFramed, match="magic byte 0x01"):
        unframe(b"\x01\x00\x00\x00\x07body")


def test_unframe_refuses_bytes_shorter_than_the_header():
    with pytest.raises(NotConfluentFramed, match="too short"):
        unframe(b"\x00\x00")
