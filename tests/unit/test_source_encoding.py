"""UTF-16 and UTF-32 schema files: read as Java reads them (Jackson's detection), with a warning
whose claim (fastavro and the Python avro package refuse the file) is checked here for real."""

from __future__ import annotations

from pathlib import Path

import avro.schema
import fastavro.schema
import pytest

from schemacli.contracts.jsontext.source import detect_encoding, load_json
from schemacli.contracts.lint.validate import validate_paths
from schemacli.errors import InputError
from schemacli.kinds import Kind

SCHEMA = (
    '{"type": "record", "name": "Position", "namespace": "com.acme", "fields": [\n'
    '  {"name": "x", "type": "int", "doc": "Ort \\u00e9"}]}'
)
ENCODINGS = ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]


def write(folder: Path, encoding: str, bom: bool) -> Path:
    path = folder / f"{encoding}{'-bom' if bom else ''}.avsc"
    path.write_bytes((("\ufeff" if bom else "") + SCHEMA).encode(encoding))
    return path


@pytest.mark.parametrize("bom", [False, True], ids=["no BOM", "BOM"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_utf16_or_utf32_file_is_read_with_a_warning_naming_the_readers_that_refuse_it(
    tmp_path: Path, encoding: str, bom: bool
) -> None:
    report = validate_paths([write(tmp_path, encoding, bom)])
    assert report.ok
    [finding] = report.findings
    assert finding.kind == Kind.ENCODING_NOT_UTF8 and finding.severity.value == "warning"
    assert encoding.upper().replace("-LE", "LE").replace("-BE", "BE") in finding.message
    assert "fastavro" in finding.message and "avro package" in finding.message
    assert (finding.location.line, finding.location.column) == (1, 1)


@pytest.mark.parametrize("bom", [False, True], ids=["no BOM", "BOM"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fastavro_and_the_avro_package_refuse_the_file_the_warning_names_them(
    tmp_path: Path, encoding: str, bom: bool
) -> None:
    path = write(tmp_path, encoding, bom)
    with pytest.raises(Exception):  # noqa: B017 - UnicodeDecodeError or a JSON error
        fastavro.schema.load_schema(str(path))
    with pytest.raises(Exception):  # noqa: B017
        avro.schema.parse(path.read_text(encoding="utf-8"))
    # ... while the same schema in UTF-8 is read by both
    assert fastavro.schema.load_schema(str(write_utf8(tmp_path)))["name"] == "com.acme.Position"
    assert avro.schema.parse(SCHEMA).fullname == "com.acme.Position"


def write_utf8(folder: Path) -> Path:
    path = folder / "utf8.avsc"
    path.write_text(SCHEMA, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"\x00\x00\xfe\xff", ("UTF-32BE", 4)),
        (b"\xff\xfe\x00\x00", ("UTF-32LE", 4)),
        (b"\xef\xbb\xbf{", ("UTF-8", 3)),
        (b"\xfe\xff\x00{", ("UTF-16BE", 2)),
        (b"\xff\xfe{\x00", ("UTF-16LE", 2)),
        (b"\x00\x00\x00{", ("UTF-32BE", 0)),
        (b"{\x00\x00\x00", ("UTF-32LE", 0)),
        (b"\x00{\x00\x22", ("UTF-16BE", 0)),
        (b"{\x00\x22\x00", ("UTF-16LE", 0)),
        (b'{"ty', ("UTF-8", 0)),
        (b"\x00", ("UTF-8", 0)),
    ],
)
def test_the_encoding_is_detected_as_jackson_detects_it(head: bytes, expected) -> None:
    assert detect_encoding(head) == expected


def test_a_utf8_file_has_no_encoding_warning(tmp_path: Path) -> None:
    assert load_json(write_utf8(tmp_path)).notes == ()


def test_a_binary_avro_data_file_is_still_refused_as_binary(tmp_path: Path) -> None:
    path = tmp_path / "data.avsc"
    path.write_bytes(b"Obj\x01\x04\x14avro.codec\x08null\x00\x00")
    with pytest.raises(InputError, match="binary"):
        load_json(path)


def test_a_truncated_utf16_file_says_which_byte_does_not_decode(tmp_path: Path) -> None:
    path = tmp_path / "cut.avsc"
    path.write_bytes('"int"'.encode("utf-16-le") + b"\x00")
    with pytest.raises(InputError, match="UTF-16LE") as caught:
        load_json(path)
    assert "UTF-8" in (caught.value.hint or "")
