"""Loading schemas whose named types live in other files: convention, references, cycles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.contracts.avro.loader import (
    CircularReferenceError,
    Loader,
    SchemaReferenceError,
    collapse_primitives,
    load_schema_file,
    load_schema_text,
    scan_names,
)
from schemacli.contracts.avro.schema import RecordSchema
from schemacli.errors import InputError, SchemaParseError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "avsc"


def _write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def _record(name: str, fields: list, namespace: str | None = None) -> dict:
    out: dict = {"type": "record", "name": name, "fields": fields}
    if namespace:
        out["namespace"] = namespace
    return out


def test_type_from_namespace_name_file_in_same_folder_resolves() -> None:
    loaded = load_schema_file(FIXTURES / "refs" / "customer.avsc")
    assert [n.fullname for n in loaded.defines] == ["com.acme.Customer"]
    assert [p.name for p in loaded.referenced_files()] == ["com.acme.Address.avsc"]
    home = loaded.schema.field_map["home"].type
    assert isinstance(home, RecordSchema) and home.fullname == "com.acme.Address"
    # an enum defined inside the referenced record is visible too
    assert loaded.schema.field_map["born_in"].type.fullname == "com.acme.Country"


def test_declared_reference_with_path_resolves() -> None:
    loaded = load_schema_file(FIXTURES / "refs" / "invoice.avsc")
    assert loaded.schema.field_map["amount"].type.type == "fixed"
    assert [p.name for p in loaded.referenced_files()] == ["money.avsc"]


def test_declared_reference_by_subject_and_version_resolves_in_the_store() -> None:
    path = FIXTURES / "refs" / "store" / "subjects" / "customer-value" / "v1.avsc"
    loaded = load_schema_file(path)
    [ref] = loaded.referenced_files()
    assert ref.parts[-2:] == ("address-value", "v1.avsc")


def test_latest_version_reference_takes_the_highest_version(tmp_path: Path) -> None:
    subjects = tmp_path / "schemas" / "subjects"
    for version, fields in ((1, []), (2, [{"name": "x", "type": "int"}])):
        _write(subjects / "a-value" / f"v{version}.avsc", _record("A", fields, "ns"))
    _write(subjects / "b-value" / "v1.avsc", _record("B", [{"name": "a", "type": "ns.A"}], "ns"))
    (subjects / "b-value" / "v1.references.json").write_text(
        '[{"name": "ns.A", "subject": "a-value", "version": "latest"}]'
    )
    loaded = load_schema_file(subjects / "b-value" / "v1.avsc")
    assert loaded.referenced_files()[0].name == "v2.avsc"


def test_search_paths_are_used_after_the_schema_folder(tmp_path: Path) -> None:
    shared = _write(tmp_path / "shared" / "geo.Point.avsc", _record("Point", [], "geo"))
    fields = [{"name": "p", "type": "geo.Point"}]
    ride = _write(tmp_path / "app" / "ride.avsc", _record("Ride", fields))
    with pytest.raises(SchemaParseError):
        load_schema_file(ride)
    loaded = load_schema_file(ride, search_paths=[tmp_path / "shared"])
    assert loaded.referenced_files() == (shared,)


def test_simple_name_falls_back_to_the_null_namespace_file(tmp_path: Path) -> None:
    _write(tmp_path / "Money.avsc", {"type": "fixed", "name": "Money", "size": 8})
    ride = _write(tmp_path / "ride.avsc", _record("Ride", [{"name": "m", "type": "Money"}], "a.b"))
    loaded = load_schema_file(ride)
    assert loaded.schema.field_map["m"].type.fullname == "Money"


def test_transitive_references_are_loaded_dependencies_first(tmp_path: Path) -> None:
    _write(tmp_path / "n.C.avsc", {"type": "enum", "name": "C", "namespace": "n", "symbols": ["X"]})
    _write(tmp_path / "n.B.avsc", _record("B", [{"name": "c", "type": "C"}], "n"))
    a = _write(tmp_path / "a.avsc", _record("A", [{"name": "b", "type": "n.B"}], "n"))
    loaded = load_schema_file(a)
    assert [p.name for p in loaded.referenced_files()] == ["n.C.avsc", "n.B.avsc"]
    assert [n.fullname for n in loaded.defines] == ["n.A"]


def test_a_shared_dependency_is_loaded_once(tmp_path: Path) -> None:
    _write(tmp_path / "n.Shared.avsc", _record("Shared", [], "n"))
    one = _write(tmp_path / "one.avsc", _record("One", [{"name": "s", "type": "Shared"}], "n"))
    two = _write(tmp_path / "two.avsc", _record("Two", [{"name": "s", "type": "Shared"}], "n"))
    loader = Loader()
    first, second = loader.load(one), loader.load(two)
    assert first.references[0] is second.references[0]


def test_circular_file_references_name_the_cycle() -> None:
    with pytest.raises(CircularReferenceError) as caught:
        load_schema_file(FIXTURES / "cycle" / "com.acme.Node.avsc")
    err = caught.value
    assert "com.acme.Node.avsc -> " in err.message and err.message.count("->") == 2
    assert err.location.source.endswith("com.acme.Node.avsc")
    assert (err.location.line, err.location.column) == (6, 58)
    assert err.location.pointer == "/fields/0/type/items"
    assert "one file" in err.hint


def test_unresolved_name_hint_lists_the_files_looked_for() -> None:
    with pytest.raises(SchemaParseError) as caught:
        load_schema_file(FIXTURES / "bad" / "missing_reference" / "ride.avsc")
    err = caught.value
    assert (err.location.line, err.location.column) == (6, 32)
    assert "com.acme.geo.Point.avsc" in err.hint and ".references.json" in err.hint


def test_parse_error_gets_file_line_and_column_of_its_pointer() -> None:
    path = FIXTURES / "bad" / "duplicate_field.avsc"
    with pytest.raises(SchemaParseError) as caught:
        load_schema_file(path)
    loc = caught.value.location
    assert (loc.source, loc.pointer, loc.line, loc.column) == (str(path), "/fields/2/name", 7, 14)


def test_invalid_dependency_is_reported_at_the_reference(tmp_path: Path) -> None:
    (tmp_path / "n.Bad.avsc").write_text('{"type": "fixed", "name": "Bad", "namespace": "n"}')
    ride = _write(tmp_path / "ride.avsc", _record("Ride", [{"name": "b", "type": "Bad"}], "n"))
    with pytest.raises(SchemaReferenceError) as caught:
        load_schema_file(ride)
    err = caught.value
    assert err.location.source == str(ride) and err.location.pointer == "/fields/0/type"
    assert "n.Bad.avsc" in err.message and "size" in err.message


@pytest.mark.parametrize(
    "sidecar,pointer,words",
    [
        ('{"name": "x"}', "", "JSON array"),
        ('[{"subject": "s", "version": 1}]', "/0", '"name"'),
        ('[{"name": "n.M", "subjct": "s", "version": 1}]', "/0/subjct", "unknown key"),
        ('[{"name": "n.M", "subject": "s"}]', "/0", '"version"'),
        ('[{"name": "n.M", "subject": "s", "version": 1}]', "/0", "not in the local store"),
        ('[{"name": "n.Other", "path": "money.avsc"}]', "/0", "does not define n.Other"),
    ],
)
def test_bad_references_file_is_an_error_at_its_entry(
    tmp_path: Path, sidecar: str, pointer: str, words: str
) -> None:
    _write(tmp_path / "money.avsc", {"type": "fixed", "name": "M", "namespace": "n", "size": 8})
    ride = _write(tmp_path / "ride.avsc", _record("Ride", [{"name": "m", "type": "n.M"}]))
    (tmp_path / "ride.references.json").write_text(sidecar)
    with pytest.raises(InputError) as caught:
        load_schema_file(ride)
    err = caught.value
    assert err.location.source == str(tmp_path / "ride.references.json")
    assert err.location.pointer == pointer
    assert words in err.message
    assert err.hint


def test_scan_names_follows_namespace_rules() -> None:
    value = _record(
        "A",
        [
            {"name": "b", "type": _record("B", [{"name": "x", "type": "X"}], "other")},
            {"name": "c", "type": {"type": "array", "items": "com.y.C"}},
            {"name": "d", "type": ["null", "D"]},
        ],
        "n",
    )
    defined, uses = scan_names(value)
    assert defined == {"n.A": "", "other.B": "/fields/0/type"}
    assert [(u.candidates, u.pointer) for u in uses] == [
        (("other.X", "X"), "/fields/0/type/fields/0/type"),
        (("com.y.C",), "/fields/1/type/items"),
        (("n.D", "D"), "/fields/2/type/1"),
    ]


def _identity_by_walk(value: object) -> str:
    """What identity means, said the slow way: collapse every node, then encode."""
    return json.dumps(
        collapse_primitives(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


@pytest.mark.parametrize(
    "value",
    [
        "int",
        {"type": "int"},
        {"type": "string", "logicalType": "uuid"},
        {"type": "array", "items": {"type": "long"}},
        {"type": "map", "values": [{"type": "null"}, {"type": "string"}]},
        _record(
            "R",
            [
                {"name": "a", "type": {"type": "int"}, "default": 1},
                {"name": "b", "type": ["null", {"type": "bytes"}], "default": None},
                # text that looks like a collapsible node, inside strings
                {"name": "c", "type": "string", "doc": '{"type":"int"}', "default": '{"type":"x"}'},
                {"name": "d", "type": "string", "doc": "ends in a brace {", "x-p": "type"},
                {"name": "é", "type": "double", "default": 1.5e300, "doc": 'quote " and \\'},
                {"name": "e", "type": {"type": "record", "name": "In", "fields": []}},
                {"name": "f", "type": {"type": "fixed", "name": "F", "size": 2}},
            ],
            namespace="n",
        ),
        {"type": "record", "name": "R", "fields": [], "x": {"type": "int", "extra": True}},
        {"type": "record", "name": "R", "fields": [], "x": [{"type": "null"}, {"type": "nul"}]},
    ],
)
def test_identity_equals_collapsing_every_primitive_node_then_encoding(value: object) -> None:
    loaded = load_schema_text(json.dumps(value), "x.avsc")

    assert loaded.identity == _identity_by_walk(value)
