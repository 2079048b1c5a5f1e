"""The compatibility engine: one fixture per incompatibility kind, Avro's rules, and the levels.

Every expected (kind, location) here was confirmed against Apache Avro Java 1.12 (the oracle in
tests/oracle checks thousands more pairs).
"""

from pathlib import Path

import pytest

from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.compat import KINDS, Level, check, check_level

ROOT = Path(__file__).resolve().parents[2]


def record(*fields, name="R", **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def enum(*symbols, name="E", **extra):
    return {"type": "enum", "name": name, "symbols": list(symbols), **extra}


# kind -> (reader, writer, expected location)
KIND_FIXTURES = {
    compat.TYPE_MISMATCH: (
        record({"name": "total_amount", "type": "string"}),
        record({"name": "total_amount", "type": "float"}),
        "/fields/0/type",
    ),
    compat.NAME_MISMATCH: (record(name="Ride"), record(name="Trip"), "/name"),
    compat.FIXED_SIZE_MISMATCH: (
        {"type": "fixed", "name": "Id", "size": 16},
        {"type": "fixed", "name": "Id", "size": 8},
        "/size",
    ),
    compat.MISSING_ENUM_SYMBOLS: (enum("CASH"), enum("CASH", "CARD"), "/symbols"),
    compat.READER_FIELD_MISSING_DEFAULT_VALUE: (
        record({"name": "a", "type": "int"}, {"name": "tip", "type": "float"}),
        record({"name": "a", "type": "int"}),
        "/fields/1",
    ),
    compat.MISSING_UNION_BRANCH: (["null", "int"], ["null", "string"], "/1"),
    compat.AMBIGUOUS_FIELD_MATCH: (
        record({"name": "a", "type": "int", "aliases": ["b"]}),
        record({"name": "a", "type": "int"}, {"name": "b", "type": "int"}),
        "/fields/0",
    ),
}


@pytest.mark.parametrize("kind", sorted(KIND_FIXTURES))
def test_each_incompatibility_kind_is_found_with_java_location_message_and_hint(kind):
    reader, writer, location = KIND_FIXTURES[kind]
    result = check(reader=reader, writer=writer)
    assert not result.compatible
    assert [(f.kind, f.location.pointer) for f in result.findings] == [(kind, location)]
    finding = result.findings[0]
    assert finding.message and finding.hint
    assert "{" not in finding.message  # every template field was filled


def test_every_kind_has_a_fixture_and_a_catalogue_entry():
    assert set(KINDS) == set(KIND_FIXTURES)
    for kind in KINDS:
        assert "{where}" in kind.template and kind.hint


def test_type_mismatch_message_names_field_values_and_the_way_out():
    reader, writer, _ = KIND_FIXTURES[compat.TYPE_MISMATCH]
    finding = check(reader, writer).findings[0]
    assert "total_amount" in finding.message
    assert (finding.old, finding.new) == ("float", "string")
    assert "default" in finding.hint


@pytest.mark.parametrize(
    ("reader", "writer"),
    [
        ("long", "int"),
        ("float", "int"),
        ("float", "long"),
        ("double", "int"),
        ("double", "long"),
        ("double", "float"),
    ],
)
def test_numeric_promotions_widen_only(reader, writer):
    assert check(reader, writer).compatible
    assert not check(writer, reader).compatible


def test_string_and_bytes_read_each_other():
    assert check("string", "bytes").compatible and check("bytes", "string").compatible


def test_logical_types_are_ignored_like_java_does():
    date = {"type": "int", "logicalType": "date"}
    assert check(date, "int").compatible and check("int", date).compatible


def test_namespaces_are_ignored_when_names_match_like_java_1_12():
    assert check(record(name="a.Ride"), record(name="b.Ride")).compatible


def test_reader_alias_of_the_writer_full_name_matches_a_renamed_record():
    reader = record(name="n.Trip", aliases=["m.Ride"])
    assert check(reader, record(name="m.Ride")).compatible
    assert not check(record(name="n.Trip", aliases=["Ride"]), record(name="m.Ride")).compatible


def test_field_alias_reads_a_renamed_field():
    reader = record({"name": "fare", "type": "float", "aliases": ["total_amount"]})
    assert check(reader, record({"name": "total_amount", "type": "float"})).compatible


def test_reader_enum_default_absorbs_unknown_writer_symbols():
    assert check(enum("CASH", "OTHER", default="OTHER"), enum("CASH", "CARD")).compatible


def test_enum_with_default_missing_from_writer_is_compared_with_the_writer_record():
    # Java's quirk: the reader field's enum is checked against the writer *record*.
    reader = record({"name": "kind", "type": enum("A", default="A")})
    result = check(reader, record())
    assert [(f.kind, f.location.pointer) for f in result.findings] == [
        (compat.TYPE_MISMATCH, "/fields/0/type")
    ]


def test_writer_union_needs_every_branch_readable():
    result = check("string", ["null", "string"])
    assert [(f.kind, f.location.pointer) for f in result.findings] == [(compat.TYPE_MISMATCH, "/0")]
    assert check(["null", "string"], "string").compatible


def test_recursive_types_terminate_and_compare_structurally():
    def linked(value_type):
        return record(
            {"name": "value", "type": value_type},
            {"name": "next", "type": ["null", "Node"], "default": None},
            name="Node",
        )

    assert check(linked("long"), linked("int")).compatible
    result = check(linked("int"), linked("long"))
    assert [(f.kind, f.location.pointer) for f in result.findings] == [
        (compat.TYPE_MISMATCH, "/fields/0/type")
    ]


def test_schemas_are_accepted_as_json_text_parsed_json_or_schema():
    from schemacli.contracts.avro.parse import parse_schema

    text = '{"type": "record", "name": "R", "fields": []}'
    assert check(text, parse_schema(text)).compatible
    assert check(record(), text).compatible


def test_breaking_taxi_ride_is_a_type_mismatch_on_total_amount():
    breaking = (ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text()
    v2 = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()
    result = check(reader=breaking, writer=v2)
    assert [(f.kind, f.location.pointer) for f in result.findings] == [
        (compat.TYPE_MISMATCH, "/fields/4/type")
    ]


# ---------------------------------------------------------------------------- levels

V1 = record({"name": "a", "type": "int"})
V2 = record({"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": "x"})
B_WITHOUT_DEFAULT = record({"name": "a", "type": "int"}, {"name": "b", "type": "string"})


@pytest.mark.parametrize("level", list(Level))
def test_first_registration_passes_at_every_level(level):
    assert check_level(level, B_WITHOUT_DEFAULT, []).compatible


def test_none_accepts_anything():
    assert check_level(Level.NONE, "string", [V1]).compatible


def test_backward_checks_the_latest_version_only():
    assert check_level(Level.BACKWARD, B_WITHOUT_DEFAULT, [V1, V2]).compatible


def test_backward_transitive_checks_every_earlier_version():
    result = check_level(Level.BACKWARD_TRANSITIVE, B_WITHOUT_DEFAULT, [V1, V2])
    assert not result.compatible
    assert [(f.kind, f.subject) for f in result.findings] == [
        (compat.READER_FIELD_MISSING_DEFAULT_VALUE, "version 1")
    ]
    assert "BACKWARD" in result.findings[0].message


def test_forward_means_the_old_schema_reads_the_new_one():
    new_without_a = record({"name": "b", "type": "string", "default": "x"})
    assert check_level(Level.BACKWARD, new_without_a, [V1]).compatible
    assert check_level(Level.FORWARD, V2, [V1]).compatible
    result = check_level(Level.FORWARD, new_without_a, [V1])
    assert [f.kind for f in result.findings] == [compat.READER_FIELD_MISSING_DEFAULT_VALUE]
    assert "FORWARD" in result.findings[0].message


def test_full_is_both_directions():
    adds_required = record({"name": "a", "type": "int"}, {"name": "c", "type": "int"})
    assert check_level(Level.FORWARD, adds_required, [V1]).compatible
    assert not check_level(Level.BACKWARD, adds_required, [V1]).compatible
    assert not check_level(Level.FULL, adds_required, [V1]).compatible
    assert check_level(Level.FULL, V2, [V1]).compatible


def test_full_transitive_reports_each_version_and_direction():
    result = check_level(
        Level.FULL_TRANSITIVE,
        record({"name": "z", "type": "int"}),
        [V1, V2],
        labels=["taxi:1", "taxi:2"],
    )
    assert {f.subject for f in result.findings} == {"taxi:1", "taxi:2"}


def test_level_names_parse_case_insensitively_and_unknown_ones_say_which_exist():
    assert Level.parse("backward_transitive") is Level.BACKWARD_TRANSITIVE
    with pytest.raises(ValueError, match="FULL_TRANSITIVE"):
        Level.parse("sideways")
