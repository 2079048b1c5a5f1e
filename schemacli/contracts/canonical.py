"""Parsing Canonical Form and the fingerprints schemacli shows for a schema.

The canonical form is printed from the parsed model by ``schemacli.contracts.schema``; this module
computes it once and derives every fingerprint a user compares against other tools from it:

* ``crc64``: CRC-64-AVRO as an unsigned integer. ``crc64_hex`` is that integer in 16 hex digits,
  what Java's ``SchemaNormalization.parsingFingerprint64`` prints with ``Long.toHexString``
  (modulo leading zeros). ``crc64_le_hex`` is the same 8 bytes little-endian, as they appear in
  Avro's single-object encoding header and as ``fastavro.schema.fingerprint`` prints them.
* ``md5`` / ``sha256``: of the canonical form's UTF-8 bytes (Java's ``"MD5"`` / ``"SHA-256"``).

A schema that uses types from other files has them inlined at first use, as Java's
``toParsingForm`` does for a schema parsed with those types known.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from schemacli.contracts.schema import Schema, canonical_form, rabin64

__all__ = ["Fingerprints", "canonical_form", "fingerprints", "rabin64"]


@dataclass(frozen=True)
class Fingerprints:
    """The fingerprints of one Parsing Canonical Form."""

    canonical: str
    crc64: int
    md5: str
    sha256: str

    @property
    def crc64_hex(self) -> str:
        return f"{self.crc64:016x}"

    @property
    def crc64_le_hex(self) -> str:
        return self.crc64.to_bytes(8, "little").hex()

    @property
    def crc64_signed(self) -> int:
        """The fingerprint as Java's signed ``long``."""
        return self.crc64 - (1 << 64) if self.crc64 >= 1 << 63 else self.crc64


def fingerprints(schema: Schema) -> Fingerprints:
    """Canonical form and fingerprints of a parsed schema."""
    text = canonical_form(schema)
    data = text.encode("utf-8")
    return Fingerprints(
        canonical=text,
        crc64=rabin64(data),
        md5=hashlib.md5(data).hexdigest(),
        sha256=hashlib.sha256(data).hexdigest(),
    )
