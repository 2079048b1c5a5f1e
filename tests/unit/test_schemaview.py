"""The converter's view of a schema (converters.mapping.schemaview) is a projection of the one
Avro model: names resolved by the parser, the JSON as written at each node, recursion refused."""

from __future__ import annotations

import pytest

from converters.mapping.schemaview import SPARK_TYPES, view
from schemacli.errors import InputError, SchemaParseError

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "billing", "type": "Address", "doc": "where the bill goes"},
        {
            "name": "shipping",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "zip", "type": ["null", "string"], "default": None}],
            },
            "aliases": ["delivery"],
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tags", "type": {"type": "map", "values": "string"}},
    ],
}


def test_a_forward_reference_is_the_same_type_as_its_definition():
    order = view(ORDER)
    billing, shipping = order.fields[0].type, order.fields[1].type
    assert billing is shipping
    assert billing.name == "shop.Address"
    assert billing.json is ORDER["fields"][1]["type"]  # the definition, as written


def test_fields_keep_pointers_aliases_defaults_and_docs():
    order = view(ORDER)
    zip_field = order.fields[1].type.fields[0]
    assert (zip_field.pointer, zip_field.has_default, zip_field.default) == (
        "/fields/1/type/fields/0",
        True,
        None,
    )
    assert zip_field.type.nullable and zip_field.type.non_null().kind == "string"
    assert order.fields[1].aliases == ("delivery",)
    assert order.fields[0].doc == "where the bill goes"
    assert (order.fields[2].type.kind, order.fields[2].type.logical) == ("int", "date")
    assert order.fields[3].type.element.kind == "string"


def test_a_recursive_record_is_an_input_error_where_it_refers_to_itself():
    node = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"], "default": None}],
    }
    with pytest.raises(InputError, match="recursive type 'Node'") as caught:
        view(node)
    assert caught.value.location.pointer == "/fields/0/type/1"


def test_a_schema_java_refuses_is_refused_with_the_parsers_error():
    with pytest.raises(SchemaParseError):
        view({"type": "record", "name": "R", "fields": [{"name": "a", "type": "Missing"}]})


def test_spark_sql_names_come_from_the_one_avro_to_spark_table():
    assert SPARK_TYPES["long"] == "BIGINT" and SPARK_TYPES["enum"] == "STRING"
