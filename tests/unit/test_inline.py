"""Self-contained schemas: referenced named types defined inline at their first use, so that
one schema text (what Spark's from_avro takes) parses to the same types."""

from __future__ import annotations

import json

import pytest

from schemacli.contracts.avro.canonical import fingerprints
from schemacli.contracts.avro.inline import definitions, self_contained
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import Names
from schemacli.errors import InputError

ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "com.acme.common",
    "fields": [
        {"name": "street", "type": "string"},
        {"name": "country", "type": {"type": "enum", "name": "Country", "symbols": ["NL", "DE"]}},
    ],
}
MONEY = {"type": "fixed", "name": "Money", "namespace": "com.acme.common", "size": 8}
# references Address (one level) which itself nests Country; Money is a second reference
CUSTOMER = {
    "type": "record",
    "name": "Customer",
    "namespace": "com.acme.crm",
    "fields": [
        {"name": "home", "type": "com.acme.common.Address"},
        {"name": "work", "type": ["null", "com.acme.common.Address"], "default": None},
        {"name": "balance", "type": {"type": "com.acme.common.Money"}},
        {"name": "born_in", "type": "com.acme.common.Country"},
    ],
}


def parsed_with_references(schema, *referenced):
    names = Names()
    for ref in referenced:
        names = names.including(parse_schema(ref, names=names))
    return parse_schema(schema, names=names)


def test_a_self_contained_schema_parses_alone_to_the_same_canonical_form():
    inlined = self_contained(CUSTOMER, [ADDRESS, MONEY])
    alone = parse_schema(json.loads(json.dumps(inlined)))
    expected = parsed_with_references(CUSTOMER, ADDRESS, MONEY)
    assert fingerprints(alone).crc64 == fingerprints(expected).crc64


def test_each_referenced_type_is_defined_once_at_its_first_use_and_named_afterwards():
    inlined = self_contained(CUSTOMER, [ADDRESS, MONEY])
    home, work, balance, born_in = (f["type"] for f in inlined["fields"])
    assert home["name"] == "Address" and home["namespace"] == "com.acme.common"
    assert work == ["null", "com.acme.common.Address"]
    assert balance["type"] == "fixed" and balance["namespace"] == "com.acme.common"
    assert born_in == "com.acme.common.Country"  # defined inside Address, already seen


def test_the_enclosing_namespace_cannot_change_what_an_inlined_type_names():
    # Address sits inside com.acme.crm.Customer: without its namespace written out, its nested
    # Country would become com.acme.crm.Country
    inlined = self_contained(CUSTOMER, [ADDRESS, MONEY])
    alone = parse_schema(inlined)
    names = {n.fullname for n in _named(alone)}
    assert "com.acme.common.Country" in names and "com.acme.crm.Country" not in names


def test_a_short_name_resolves_in_the_null_namespace_as_java_falls_back():
    plain = {"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}
    user = {
        "type": "record",
        "name": "Shape",
        "namespace": "geo",
        "fields": [{"name": "origin", "type": "Point"}],
    }
    inlined = self_contained(user, [plain])
    assert inlined["fields"][0]["type"]["name"] == "Point"
    assert inlined["fields"][0]["type"]["namespace"] == ""
    parse_schema(inlined)


def test_a_name_defined_nowhere_is_an_input_error_at_its_use():
    with pytest.raises(InputError) as caught:
        self_contained(CUSTOMER, [ADDRESS], source="customers-value:3")
    err = caught.value
    assert "com.acme.common.Money" in err.message
    assert err.location.source == "customers-value:3"
    assert err.location.pointer == "/fields/2/type/type"  # {"type": "com.acme.common.Money"}


def test_a_schema_without_references_is_unchanged():
    assert self_contained(ADDRESS, []) == ADDRESS


def test_definitions_lists_nested_named_types_by_full_name():
    assert sorted(definitions(ADDRESS)) == ["com.acme.common.Address", "com.acme.common.Country"]


def _named(schema):
    from schemacli.contracts.avro.schema import named_types

    return named_types(schema)
