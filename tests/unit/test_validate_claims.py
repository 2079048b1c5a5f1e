"""Each warning says which readers refuse the schema: here those claims are checked for real.

fastavro and the Python ``avro`` package run in-process. The Java claims run the Apache Avro jar
bundled with pyspark through a tiny harness (marker ``oracle``; needs ``javac``).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import avro.errors
import avro.io
import avro.schema
import fastavro
import pytest

from tests.extras import require

WARN = Path(__file__).resolve().parents[1] / "fixtures" / "avsc" / "warn"


def _schema(name: str) -> dict[str, Any]:
    return json.loads((WARN / name).read_text(encoding="utf-8"))


def _fastavro_parses(value: Any) -> bool:
    try:
        fastavro.parse_schema(value, _write_hint=False)
    except Exception:  # fastavro raises SchemaParseException, KeyError, ... depending on the case
        return False
    return True


def _pyavro_parses(value: Any) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", avro.errors.IgnoredLogicalType)
            avro.schema.parse(json.dumps(value))
    except avro.errors.AvroException:
        return False
    return True


def _without_last_field(value: dict[str, Any]) -> dict[str, Any]:
    return {**value, "fields": value["fields"][:-1] + [{"name": "pad", "type": "int"}]}


def _read_default_fastavro(reader: dict[str, Any]) -> Any:
    writer = {"type": "record", "name": reader["name"], "fields": [{"name": "pad", "type": "int"}]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(writer), {"pad": 1})
    buf.seek(0)
    parsed_writer, parsed_reader = fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    return fastavro.schemaless_reader(buf, parsed_writer, parsed_reader)


def _read_default_pyavro(reader: dict[str, Any]) -> Any:
    writer = {"type": "record", "name": reader["name"], "fields": [{"name": "pad", "type": "int"}]}
    buf = io.BytesIO()
    avro.io.DatumWriter(avro.schema.parse(json.dumps(writer))).write(
        {"pad": 1}, avro.io.BinaryEncoder(buf)
    )
    buf.seek(0)
    datum_reader = avro.io.DatumReader(
        avro.schema.parse(json.dumps(writer)), avro.schema.parse(json.dumps(reader))
    )
    return datum_reader.read(avro.io.BinaryDecoder(buf))


def test_union_default_not_first_python_avro_fails_to_use_it_fastavro_does_not() -> None:
    reader = _schema("union_default_not_first.avsc")
    assert _fastavro_parses(reader) and _pyavro_parses(reader)
    assert _read_default_fastavro(reader)["flag"] == "N"
    with pytest.raises(avro.errors.InvalidDefaultException):
        _read_default_pyavro(reader)


def test_enum_default_not_symbol_python_readers_return_the_unknown_symbol() -> None:
    reader = _schema("enum_default_not_symbol.avsc")
    assert _fastavro_parses(reader) and _pyavro_parses(reader)
    assert _read_default_fastavro(reader)["payment"] == "UNKNOWN"
    assert _read_default_pyavro(reader)["payment"] == "UNKNOWN"


def test_fixed_default_size_python_readers_return_all_bytes() -> None:
    reader = _schema("fixed_default_size.avsc")
    assert len(_read_default_fastavro(reader)["code"]) == 3
    assert _read_default_pyavro(reader)["code"] == b"abc"


def test_bytes_default_above_latin1_python_readers_disagree() -> None:
    reader = _schema("bytes_default_not_latin1.avsc")
    assert _read_default_fastavro(reader)["marker"] == "\u0100x"
    assert _read_default_pyavro(reader)["marker"] == "\u0100x".encode()


@pytest.mark.parametrize(
    "name", ["decimal_scale_above_precision.avsc", "decimal_fixed_too_small.avsc"]
)
def test_invalid_decimal_fastavro_refuses_python_avro_ignores(name: str) -> None:
    value = _schema(name)
    assert not _fastavro_parses(value)
    with pytest.warns(avro.errors.IgnoredLogicalType):
        avro.schema.parse(json.dumps(value))


def test_decimal_precision_zero_fastavro_accepts_python_avro_ignores() -> None:
    value = _schema("decimal_precision_zero.avsc")
    assert _fastavro_parses(value)
    with pytest.warns(avro.errors.IgnoredLogicalType):
        avro.schema.parse(json.dumps(value))


def test_logical_type_on_wrong_base_python_avro_ignores_it() -> None:
    value = _schema("logical_type_ignored.avsc")
    with pytest.warns(avro.errors.IgnoredLogicalType, match="requires literal type int"):
        avro.schema.parse(json.dumps(value))


def test_non_ascii_record_name_python_avro_refuses_fastavro_accepts() -> None:
    value = _schema("non_ascii_record_name.avsc")
    assert _fastavro_parses(value)
    assert not _pyavro_parses(value)


def test_non_ascii_namespace_python_avro_refuses_fastavro_accepts() -> None:
    value = {"type": "record", "name": "R", "namespace": "d\u00e9.x", "fields": []}
    assert _fastavro_parses(value)
    assert not _pyavro_parses(value)


def test_non_ascii_enum_symbol_fastavro_and_python_avro_refuse() -> None:
    value = _schema("non_ascii_enum_symbol.avsc")
    assert not _fastavro_parses(value)
    assert not _pyavro_parses(value)


def test_non_ascii_field_name_every_python_reader_accepts() -> None:
    value = {"type": "record", "name": "R", "fields": [{"name": "pr\u00e9is", "type": "int"}]}
    assert _fastavro_parses(value) and _pyavro_parses(value)


def test_redefined_name_fastavro_and_python_avro_refuse() -> None:
    value = _schema("redefined_name.avsc")
    assert not _fastavro_parses(value)
    assert not _pyavro_parses(value)


# -- Java ------------------------------------------------------------------------------------

_HARNESS = r"""
import org.apache.avro.Schema;
import org.apache.avro.generic.*;
import org.apache.avro.io.*;
import java.io.ByteArrayOutputStream;
import java.nio.file.*;

public class Claims {
  public static void main(String[] args) throws Exception {
    for (String file : args) {
      String text = new String(Files.readAllBytes(Paths.get(file)), "UTF-8");
      try {
        Schema reader = new Schema.Parser().parse(text);
        String read = "-";
        if (reader.getType() == Schema.Type.RECORD) {
          Schema writer = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\""
              + reader.getFullName() + "\",\"fields\":[{\"name\":\"pad\",\"type\":\"int\"}]}");
          GenericRecord rec = new GenericData.Record(writer);
          rec.put("pad", 1);
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
          new GenericDatumWriter<GenericRecord>(writer).write(rec, enc);
          enc.flush();
          try {
            Object got = new GenericDatumReader<Object>(writer, reader)
                .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
            read = "READ " + got;
          } catch (Exception e) {
            read = "READ-FAILED " + e.getMessage();
          }
        }
        System.out.println(Paths.get(file).getFileName() + "\tPARSED\t" + read);
      } catch (Exception e) {
        System.out.println(Paths.get(file).getFileName() + "\tREFUSED\t" + e.getMessage());
      }
    }
  }
}
"""


@pytest.fixture(scope="module")
def java_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    if not shutil.which("javac"):
        pytest.fail("javac is needed for the Java claims (install a JDK)")
    jars = Path(require("pyspark", "spark").__file__).parent / "jars"
    wanted = ("avro-1", "jackson-core-", "jackson-databind-", "jackson-annotations-", "slf4j-api-")
    classpath = [
        str(j)
        for j in sorted(jars.glob("*.jar"))
        if j.name.startswith(wanted) and "ipc" not in j.name and "mapred" not in j.name
    ]
    work = tmp_path_factory.mktemp("claims")
    (work / "Claims.java").write_text(_HARNESS)
    cp = ":".join(classpath)
    subprocess.run(["javac", "-cp", cp, "Claims.java"], cwd=work, check=True)
    files = sorted(str(p) for p in WARN.glob("*.avsc"))
    out = subprocess.run(
        ["java", "-cp", f"{cp}:{work}", "Claims", *files],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    verdicts = {}
    for line in out.splitlines():
        name, verdict, detail = line.split("\t", 2)
        verdicts[name] = (verdict, detail)
    return verdicts


@pytest.mark.oracle
def test_java_accepts_every_warned_schema(java_verdicts: dict[str, tuple[str, str]]) -> None:
    assert sorted(java_verdicts) == sorted(p.name for p in WARN.glob("*.avsc"))
    assert {name: v[0] for name, v in java_verdicts.items()} == {
        name: "PARSED" for name in java_verdicts
    }


@pytest.mark.oracle
def test_java_reads_union_default_not_first(java_verdicts: dict[str, tuple[str, str]]) -> None:
    assert '"flag": "N"' in java_verdicts["union_default_not_first.avsc"][1]


@pytest.mark.oracle
def test_java_fails_reading_enum_default_not_symbol(
    java_verdicts: dict[str, tuple[str, str]],
) -> None:
    verdict, detail = java_verdicts["enum_default_not_symbol.avsc"]
    assert detail.startswith("READ-FAILED") and "not in the enum symbol set" in detail


@pytest.mark.oracle
def test_java_cuts_a_too_long_fixed_default(java_verdicts: dict[str, tuple[str, str]]) -> None:
    assert '"code": [97, 98]' in java_verdicts["fixed_default_size.avsc"][1]


@pytest.mark.oracle
def test_java_turns_a_non_latin1_bytes_default_into_question_marks(
    java_verdicts: dict[str, tuple[str, str]],
) -> None:
    assert '"marker": "?x"' in java_verdicts["bytes_default_not_latin1.avsc"][1]
