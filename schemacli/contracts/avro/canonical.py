"""Parsing Canonical Form and the fingerprints schemacli shows for a schema.

:func:`canonical_form` prints Avro's Parsing Canonical Form from the parsed model (as Java's
``SchemaNormalization.toParsingForm`` does); every fingerprint a user compares against other
tools is derived from it:

* ``crc64``: CRC-64-AVRO as an unsigned integer (:func:`rabin64`, the one implementation in
  schemacli). ``crc64_hex`` is that integer in 16 hex digits, what Java's
  ``SchemaNormalization.parsingFingerprint64`` prints with ``Long.toHexString`` (modulo leading
  zeros). ``crc64_le_hex`` is the same 8 bytes little-endian, as they appear in Avro's
  single-object encoding header and as ``fastavro.schema.fingerprint`` prints them.
* ``md5`` / ``sha256``: of the canonical form's UTF-8 bytes (Java's ``"MD5"`` / ``"SHA-256"``),
  computed when asked (``validate`` prints them only with ``-o json``; ``hashlib`` is not
  loaded for the rest).

A schema that uses types from other files has them inlined at first use, as Java's
``toParsingForm`` does for a schema parsed with those types known.
"""

from __future__ import annotations

import json

from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.jsontext import nesting
from schemacli.frozen import frozen_dataclass


@frozen_dataclass
class Fingerprints:
    """The fingerprints of one Parsing Canonical Form."""

    canonical: str
    crc64: int

    @property
    def md5(self) -> str:
        """MD5 of the canonical form's UTF-8 bytes, in hex."""
        import hashlib  # start-up: validate's text output never needs it

        return hashlib.md5(self.canonical.encode("utf-8")).hexdigest()

    @property
    def sha256(self) -> str:
        """SHA-256 of the canonical form's UTF-8 bytes, in hex."""
        import hashlib

        return hashlib.sha256(self.canonical.encode("utf-8")).hexdigest()

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
    return Fingerprints(canonical=text, crc64=rabin64(text.encode("utf-8")))


def canonical_form(schema: Schema) -> str:
    """Avro's Parsing Canonical Form of ``schema`` (as Java's SchemaNormalization prints it)."""
    return nesting.call_deep(_canonical_text, schema)


def _canonical_text(schema: Schema) -> str:
    out: list[str] = []
    _canonical(schema, set(), out)
    return "".join(out)


def _canonical(schema: Schema, seen: set[str], out: list[str]) -> None:
    t = schema.type
    if isinstance(schema, UnionSchema):
        out.append("[")
        for i, branch in enumerate(schema.types):
            if i:
                out.append(",")
            _canonical(branch, seen, out)
        out.append("]")
        return
    if isinstance(schema, NamedSchema):
        full = schema.fullname
        quoted = json.dumps(full, ensure_ascii=False)
        if full in seen:
            out.append(quoted)
            return
        seen.add(full)
        out.append(f'{{"name":{quoted},"type":"{t}"')
        if isinstance(schema, RecordSchema):
            out.append(',"fields":[')
            for i, fld in enumerate(schema.fields):
                if i:
                    out.append(",")
                out.append(f'{{"name":{json.dumps(fld.name, ensure_ascii=False)},"type":')
                _canonical(fld.type, seen, out)
                out.append("}")
            out.append("]}")
        elif isinstance(schema, EnumSchema):
            symbols = ",".join(json.dumps(s, ensure_ascii=False) for s in schema.symbols)
            out.append(f',"symbols":[{symbols}]}}')
        elif isinstance(schema, FixedSchema):
            out.append(f',"size":{schema.size}}}')
        return
    if isinstance(schema, ArraySchema):
        out.append('{"type":"array","items":')
        _canonical(schema.items, seen, out)
        out.append("}")
        return
    if isinstance(schema, MapSchema):
        out.append('{"type":"map","values":')
        _canonical(schema.values, seen, out)
        out.append("}")
        return
    out.append(f'"{t}"')


_CRC64_EMPTY = 0xC15D213AA4D7A795  # the CRC-64-AVRO "empty" value from the specification


def _crc64_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_CRC64_EMPTY & -(fp & 1))
        table.append(fp)
    return tuple(table)


_CRC64_TABLE = _crc64_table()


def rabin64(data: bytes) -> int:
    """CRC-64-AVRO of ``data`` as an unsigned integer (the specification's algorithm)."""
    fp = _CRC64_EMPTY
    table = _CRC64_TABLE
    for byte in data:
        fp = (fp >> 8) ^ table[(fp ^ byte) & 0xFF]
    return fp


def fingerprint(schema: Schema) -> int:
    """The CRC-64-AVRO fingerprint of the schema's Parsing Canonical Form (unsigned 64-bit)."""
    return rabin64(canonical_form(schema).encode("utf-8"))


def fingerprint_hex(schema: Schema) -> str:
    """The fingerprint as 16 hex digits, little-endian bytes as Avro's single-object encoding."""
    return fingerprint(schema).to_bytes(8, "little").hex()
