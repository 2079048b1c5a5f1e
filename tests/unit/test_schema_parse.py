"""The schema parser accepts and refuses what Apache Avro Java 1.12's Schema.Parser does."""

import gc
import json
from pathlib import Path

import pytest

from schemacli.contracts.avro.canonical import canonical_form, fingerprint
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    Names,
    RecordSchema,
    UnionSchema,
)
from schemacli.errors import SchemaParseError

ROOT = Path(__file__).resolve().parents[2]


def record(*fields, name="R", **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def test_taxi_ride_value_parses_with_pointers_and_defaults():
    text = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()
    schema = parse_schema(text)
    assert isinstance(schema, RecordSchema)
    tip = schema.field_map["tip_amount"]
    assert tip.has_default and tip.default == 0.0
    assert tip.pointer == f"/fields/{tip.position}"
    flag = schema.field_map["store_and_fwd_flag"]
    assert isinstance(flag.type, UnionSchema)
    assert flag.type.types[1].pointer == f"/fields/{flag.position}/type/1"


def test_nested_named_types_inherit_the_enclosing_namespace():
    schema = parse_schema(
        record(
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
            name="R",
            namespace="com.example",
        )
    )
    assert schema.field_map["e"].type.fullname == "com.example.E"


def test_recursive_reference_resolves_to_the_same_node():
    schema = parse_schema(
        record({"name": "next", "type": ["null", "Node"], "default": None}, name="Node")
    )
    assert schema.fields[0].type.types[1] is schema


def test_forward_reference_to_a_later_definition_is_accepted_like_java_1_12():
    schema = parse_schema(
        record(
            {"name": "b", "type": "B"},
            {"name": "c", "type": {"type": "fixed", "name": "B", "size": 2}},
        )
    )
    assert schema.fields[0].type is schema.fields[1].type


def test_names_from_other_files_resolve_references():
    money = parse_schema({"type": "fixed", "name": "Money", "namespace": "m", "size": 8})
    schema = parse_schema(
        record({"name": "amount", "type": "m.Money"}), names=Names().including(money)
    )
    assert schema.fields[0].type is money


def test_union_default_may_match_any_branch_as_java_1_12_accepts():
    schema = parse_schema(record({"name": "x", "type": ["null", "int"], "default": 3}))
    assert schema.fields[0].default == 3


def test_enum_field_default_need_not_be_a_symbol_as_java_accepts():
    enum = {"type": "enum", "name": "E", "symbols": ["A"]}
    schema = parse_schema(record({"name": "e", "type": enum, "default": "Z"}))
    assert schema.fields[0].default == "Z"


def test_textual_nan_default_of_a_double_becomes_a_number():
    schema = parse_schema(record({"name": "d", "type": "double", "default": "NaN"}))
    assert schema.fields[0].default != schema.fields[0].default  # NaN


def test_unicode_letters_are_valid_names_as_java_accepts():
    assert parse_schema(record(name="Fahrt\u00e9")).fullname == "Fahrt\u00e9"


REFUSED = {
    "undefined_name": (record({"name": "a", "type": "Nope"}), "/fields/0/type", "Undefined"),
    "invalid_name": (record(name="1R"), "/name", "Illegal initial character"),
    "invalid_namespace": (record(namespace="a.1b"), "", "Namespace part"),
    "duplicate_field": (
        record({"name": "a", "type": "int"}, {"name": "a", "type": "long"}),
        "/fields/1/name",
        "Duplicate field",
    ),
    "duplicate_symbol": (
        {"type": "enum", "name": "E", "symbols": ["A", "A"]},
        "/symbols/1",
        "Duplicate enum symbol",
    ),
    "fixed_without_size": ({"type": "fixed", "name": "F"}, "", "size"),
    "fixed_negative_size": ({"type": "fixed", "name": "F", "size": -1}, "/size", "negative"),
    "nested_union": (["int", ["long"]], "/1", "union"),
    "duplicate_union_branch": (["null", "string", "null"], "/2", "Duplicate in union"),
    "two_arrays_in_union": (
        [{"type": "array", "items": "int"}, {"type": "array", "items": "long"}],
        "/1",
        "Duplicate in union",
    ),
    "default_not_fitting": (
        record({"name": "a", "type": "int", "default": "x"}),
        "/fields/0/default",
        "Invalid default",
    ),
    "int_default_too_big": (
        record({"name": "a", "type": "int", "default": 2**31}),
        "/fields/0/default",
        "Invalid default",
    ),
    "null_default_for_string": (
        record({"name": "a", "type": "string", "default": None}),
        "/fields/0/default",
        "Invalid default",
    ),
    "record_without_fields": ({"type": "record", "name": "R"}, "", "fields"),
    "field_without_type": (record({"name": "a"}), "/fields/0", 'no "type"'),
    "redefined_name": (
        record(
            {"name": "a", "type": {"type": "fixed", "name": "F", "size": 1}},
            {"name": "b", "type": {"type": "fixed", "name": "F", "size": 2}},
        ),
        "/fields/1/type",
        "redefine",
    ),
    "named_after_primitive": (record(name="int"), "/name", "primitives"),
    "enum_default_not_a_symbol": (
        {"type": "enum", "name": "E", "symbols": ["A"], "default": "B"},
        "/default",
        "not one of the symbols",
    ),
    "bad_order": (record({"name": "a", "type": "int", "order": "up"}), "/fields/0/order", "order"),
    "not_a_schema": (42, "", "not supported"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_java_refusals_are_refused_with_pointer_and_hint(case):
    schema, pointer, words = REFUSED[case]
    with pytest.raises(SchemaParseError) as caught:
        parse_schema(schema)
    assert caught.value.location.pointer == pointer
    assert words.lower() in caught.value.message.lower()
    assert caught.value.hint


# The kind each refusal carries (SchemaParseError.kind, shown by `schemacli validate`).
REFUSED_KINDS = {
    "undefined_name": "UNDEFINED_NAME",
    "invalid_name": "INVALID_NAME",
    "invalid_namespace": "INVALID_NAME",
    "duplicate_field": "DUPLICATE_FIELD",
    "duplicate_symbol": "DUPLICATE_SYMBOL",
    "fixed_without_size": "INVALID_FIXED_SIZE",
    "fixed_negative_size": "INVALID_FIXED_SIZE",
    "nested_union": "NESTED_UNION",
    "duplicate_union_branch": "DUPLICATE_UNION_BRANCH",
    "two_arrays_in_union": "DUPLICATE_UNION_BRANCH",
    "default_not_fitting": "INVALID_DEFAULT",
    "int_default_too_big": "INVALID_DEFAULT",
    "null_default_for_string": "INVALID_DEFAULT",
    "record_without_fields": "MISSING_ATTRIBUTE",
    "field_without_type": "MISSING_ATTRIBUTE",
    "redefined_name": "REDEFINED_NAME",
    "named_after_primitive": "INVALID_NAME",
    "enum_default_not_a_symbol": "INVALID_DEFAULT",
    "bad_order": "INVALID_SCHEMA",
    "not_a_schema": "INVALID_SCHEMA",
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_each_refusal_carries_the_kind_of_rule_it_breaks(case):
    with pytest.raises(SchemaParseError) as caught:
        parse_schema(REFUSED[case][0])
    assert caught.value.kind == REFUSED_KINDS[case]


def test_an_error_re_raised_from_a_parse_error_keeps_its_kind():
    try:
        try:
            parse_schema(record({"name": "a", "type": "Nope"}))
        except SchemaParseError as err:
            raise SchemaParseError("placed", hint="h") from err
    except SchemaParseError as placed:
        assert placed.kind == "UNDEFINED_NAME"
    assert SchemaParseError("plain").kind == "INVALID_SCHEMA"


def test_invalid_json_text_reports_line_and_column():
    with pytest.raises(SchemaParseError) as caught:
        parse_schema('{"type": "record",\n  "name": }')
    assert (caught.value.location.line, caught.value.location.column) == (2, 11)


def test_canonical_form_strips_docs_defaults_and_resolves_full_names():
    schema = parse_schema(
        record(
            {"name": "a", "type": {"type": "array", "items": "R"}, "doc": "d", "default": []},
            name="R",
            namespace="n",
            doc="x",
        )
    )
    assert isinstance(schema.fields[0].type, ArraySchema)
    assert canonical_form(schema) == (
        '{"name":"n.R","type":"record","fields":[{"name":"a","type":{"type":"array","items":"n.R"}}]}'
    )


def test_fingerprint_matches_the_avro_specification_value_for_int():
    # CRC-64-AVRO of "int", as Java's SchemaNormalization.parsingFingerprint64 gives it.
    assert fingerprint(parse_schema('"int"')) == 0x7275D51A3F395C8F


def test_enum_symbols_and_default_are_kept():
    schema = parse_schema(
        json.dumps({"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "A"})
    )
    assert isinstance(schema, EnumSchema)
    assert (schema.symbols, schema.default) == (("A", "B"), "A")


def test_each_parse_builds_its_own_immutable_tree():
    # The parser keeps nothing between calls: a caller that wants one tree per text memoises.
    text = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'
    first = parse_schema(text)
    again = parse_schema(text)
    assert again is not first
    assert canonical_form(again) == canonical_form(first)
    with pytest.raises(AttributeError):
        first.fields[0].name = "b"  # frozen


def test_parsing_never_switches_the_garbage_collector_off(monkeypatch):
    # Process-wide switches belong to the command that owns the process, not to a library call.
    def refuse() -> None:
        raise AssertionError("parse_schema called gc.disable()")

    monkeypatch.setattr(gc, "disable", refuse)
    schema = parse_schema(record(*({"name": f"f{i}", "type": "long"} for i in range(50))))
    assert len(schema.fields) == 50


def test_names_including_collects_every_named_type_once():
    schema = parse_schema(
        record(
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
            {"name": "f", "type": "E"},
            {"name": "g", "type": {"type": "fixed", "name": "F", "size": 1}},
            name="R",
            namespace="n",
        )
    )
    assert sorted(Names().including(schema).types) == ["n.E", "n.F", "n.R"]
