"""The Confluent wire format, in plain Python: magic byte 0x00, 4-byte big-endian schema id, body.

Spark code splits the header with SQL (``spark_avro.decode``); these helpers frame and unframe
single messages for tests, benchmarks and tools.
"""

from __future__ import annotations

import struct

MAGIC_BYTE = 0
HEADER = struct.Struct(">bi")  # magic byte, signed 32-bit schema id (as Confluent's Java reads it)


class NotConfluentFramed(ValueError):
    """The bytes do not start with a Confluent header."""


def frame(schema_id: int, body: bytes) -> bytes:
    """``body`` prefixed with the Confluent header for ``schema_id``."""
    return HEADER.pack(MAGIC_BYTE, schema_id) + body


def unframe(message: bytes) -> tuple[int, bytes]:
    """(schema id, Avro body) of a Confluent-framed message; raises NotConfluentFramed."""
    if len(message) < HEADER.size:
        raise NotConfluentFramed(
            f"{len(message)} bytes is too short for the Confluent header ({HEADER.size} bytes)"
        )
    magic, schema_id = HEADER.unpack_from(message)
    if magic != MAGIC_BYTE:
        raise NotConfluentFramed(f"wrong magic byte 0x{magic & 0xFF:02X} (expected 0x00)")
    return schema_id, message[HEADER.size :]
