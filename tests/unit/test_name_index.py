"""Named types defined in other files, found by the names the files define (not their names),
as Java's parser finds them when it reads several files (avro-maven-plugin's ``imports``)."""

from __future__ import annotations

import json
from pathlib import Path

import avro.errors
import avro.schema
import fastavro
import pytest

from schemacli.contracts.avro import loader as loader_module
from schemacli.contracts.avro.loader import (
    CircularReferenceError,
    DuplicateDefinitionError,
    Loader,
    load_schema_file,
)
from schemacli.contracts.lint.validate import validate_paths
from schemacli.errors import SchemaParseError
from schemacli.kinds import Kind

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "avsc"
INDEX = FIXTURES / "index"


def test_types_in_files_named_anything_resolve_by_the_names_they_define() -> None:
    report = validate_paths([INDEX])
    assert report.ok and report.findings == ()
    by_name = {Path(r.source).name: r.loaded for r in report.files}
    needed = {p.name for p in by_name["order.avsc"].referenced_files()}
    assert needed == {"order-item.avsc", "position.avsc", "_b.avsc"}


def test_a_schema_alone_finds_types_under_its_own_folder() -> None:
    # check and diff load one file: its folder (recursively) and the search paths are searched
    loaded = load_schema_file(INDEX / "order.avsc")
    assert "com.acme.Position" in loaded.names and "com.acme.Status" in loaded.names


def test_the_search_paths_are_indexed_too(tmp_path: Path) -> None:
    (tmp_path / "uses.avsc").write_text(
        '{"type": "record", "name": "U", "fields": [{"name": "p", "type": "com.acme.Position"}]}'
    )
    with pytest.raises(SchemaParseError, match="com.acme.Position"):
        load_schema_file(tmp_path / "uses.avsc")
    loaded = load_schema_file(tmp_path / "uses.avsc", search_paths=[INDEX / "model"])
    assert [p.name for p in loaded.referenced_files()] == ["position.avsc"]


def test_resolution_does_not_depend_on_the_order_files_are_loaded_in() -> None:
    files = [
        INDEX / "order.avsc",
        INDEX / "model" / "order-item.avsc",
        INDEX / "model" / "position.avsc",
        INDEX / "enums" / "_b.avsc",
    ]
    forward, backward = Loader(roots=[INDEX]), Loader(roots=[INDEX])
    first = {f.name: forward.load(f) for f in files}
    second = {f.name: backward.load(f) for f in reversed(files)}
    for name in first:
        assert set(first[name].names.types) == set(second[name].names.types)


def test_a_full_name_is_also_looked_up_as_name_dot_avsc(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "Position.avsc").write_text((INDEX / "model" / "position.avsc").read_text())
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "uses.avsc").write_text(
        '{"type": "record", "name": "U", "fields": [{"name": "p", "type": "com.acme.Position"}]}'
    )
    loader = Loader(search_paths=[tmp_path / "lib"])
    found, _ = loader._find_by_convention(tmp_path / "app" / "uses.avsc", ["com.acme.Position"])
    assert found == tmp_path / "lib" / "Position.avsc"


def test_a_type_defined_in_two_files_is_an_error_naming_both_with_line_and_column() -> None:
    report = validate_paths([FIXTURES / "dup"])
    [error] = [f for f in report.findings if f.kind == DuplicateDefinitionError.kind]
    assert error.location.source == str(FIXTURES / "dup" / "payment.avsc")
    assert (error.location.line, error.location.pointer) == (2, "/fields/0/type")
    assert error.message == (
        f"com.acme.Money is defined in 2 files: {FIXTURES / 'dup' / 'money-v1.avsc'}:1:28, "
        f"{FIXTURES / 'dup' / 'money-v2.avsc'}:3:11"
    )


def test_files_that_need_each_other_through_the_index_name_the_cycle(tmp_path: Path) -> None:
    def record(name: str, uses: str) -> str:
        return json.dumps(
            {
                "type": "record",
                "name": name,
                "namespace": "g",
                "fields": [{"name": "x", "type": ["null", uses]}],
            }
        )

    (tmp_path / "a-thing.avsc").write_text(record("A", "B"))
    (tmp_path / "b-thing.avsc").write_text(record("B", "A"))
    with pytest.raises(CircularReferenceError) as caught:
        load_schema_file(tmp_path / "a-thing.avsc")
    assert "a-thing.avsc -> " in caught.value.message
    assert "b-thing.avsc -> " in caught.value.message


def test_each_folder_is_scanned_once_however_many_names_are_looked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5):
        (tmp_path / f"t{i}.avsc").write_text(
            json.dumps({"type": "enum", "name": f"ns.E{i}", "symbols": ["A"]})
        )
    fields = [{"name": f"f{i}", "type": f"ns.E{i}"} for i in range(5)]
    for j in range(3):
        (tmp_path / f"user{j}.avsc").write_text(
            json.dumps({"type": "record", "name": f"U{j}", "fields": fields})
        )
    reads: list[Path] = []
    real = loader_module.load_json

    def counting(path, **kw):
        reads.append(path)
        return real(path, **kw)

    monkeypatch.setattr(loader_module, "load_json", counting)
    report = validate_paths([tmp_path])
    assert report.ok
    assert len(reads) == len(set(reads)) == 8  # each file read once, for the index and the load


def test_a_name_found_only_in_the_null_namespace_is_a_warning_naming_fastavro() -> None:
    report = validate_paths([FIXTURES / "fallback"])
    assert report.ok
    [warning] = report.findings
    assert warning.kind == Kind.NULL_NAMESPACE_FALLBACK
    assert (warning.location.line, warning.location.pointer) == (5, "/fields/0/type")
    assert "fastavro" in warning.message and "'com.acme.Money'" in warning.message


def test_the_null_namespace_fallback_in_one_file_is_warned_too(tmp_path: Path) -> None:
    path = tmp_path / "one.avsc"
    path.write_text(json.dumps(_ONE_FILE))
    [warning] = validate_paths([path]).findings
    assert warning.kind == Kind.NULL_NAMESPACE_FALLBACK and warning.location.pointer == (
        "/fields/1/type/fields/0/type"
    )


_ONE_FILE = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "a", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
        {
            "name": "p",
            "type": {
                "type": "record",
                "name": "P",
                "namespace": "n",
                "fields": [{"name": "e", "type": "E"}],
            },
        },
    ],
}


def test_fastavro_and_the_avro_package_refuse_what_only_the_fallback_resolves() -> None:
    money = json.loads((FIXTURES / "fallback" / "money.avsc").read_text())
    price = json.loads((FIXTURES / "fallback" / "price.avsc").read_text())
    named: dict = {}
    fastavro.parse_schema(money, named)
    with pytest.raises(fastavro.schema.UnknownType):
        fastavro.parse_schema(price, named)
    with pytest.raises(fastavro.schema.UnknownType):
        fastavro.parse_schema(_ONE_FILE)
    names = avro.schema.Names()
    avro.schema.make_avsc_object(money, names)
    with pytest.raises(avro.errors.SchemaParseException):
        avro.schema.make_avsc_object(price, names)
