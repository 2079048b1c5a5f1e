"""The mapping compiled into Confluent migration rules (converters.mapping.jsonata): what each
conversion becomes in JSONata, run by jsonata-python (confluent-kafka's engine); what is refused,
by name and line:col; UPGRADE where the mapping inverts; the register body."""

from __future__ import annotations

import json

import pytest

from converters.mapping.jsonata import compile_rules, register_body
from converters.mapping.reader import loads
from schemacli.errors import InputError
from tests.extras import require_jsonata

jsonata = require_jsonata()


def record(name: str, *fields: tuple[str, object]) -> dict:
    return {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}


def mapping(v2: dict, v1: dict, rules: str):
    text = "version: 1\nsource: {subject: s-v2}\ntarget: {subject: s}\nfields:\n" + rules
    return loads(text, source="m.yaml").with_schemas(v2, v1)


def down(m, value: dict):
    return jsonata.Jsonata(compile_rules(m).downgrade).evaluate(value)


def test_copy_rename_and_defaults_build_the_v1_record():
    v2 = record("R", ("a", "long"), ("b", "string"), ("gone", "int"))
    v1 = {**record("R", ("x", "long"), ("b", "string")),
          "fields": [{"name": "x", "type": "long"}, {"name": "b", "type": "string"},
                     {"name": "c", "type": {"type": "map", "values": "int"}, "default": {"k": 1}},
                     {"name": "d", "type": ["null", "string"], "default": None}]}  # fmt: skip
    m = mapping(v2, v1, "  x: {from: a}\n  b: {from: b}\n  c: {convert: default}\n"
                        "  d: {convert: default}\n")  # fmt: skip
    big = 2**63 - 1  # a long copied stays exact (no double in between)
    assert down(m, {"a": big, "b": "é", "gone": 1}) == {
        "x": big,
        "b": "é",
        "c": {"k": 1},
        "d": None,
    }


@pytest.mark.parametrize(
    ("text", "want"),
    [("12", 12), (" 7\t", 7), ("+3", 3), ("-0", 0), ("12.0", None), ("2147483648", None),
     ("x", None), ("", None), ("9" * 400, None)],
)  # fmt: skip
def test_parse_number_to_int_reads_what_spark_reads_and_fails_the_rest(text, want):
    m = mapping(record("R", ("n", "string")), record("R", ("n", "int")),
                "  n: {from: n, convert: parse_number, on_error: fail}\n")  # fmt: skip
    if want is None:
        with pytest.raises(Exception, match="n: cannot convert"):
            down(m, {"n": text})
    else:
        assert down(m, {"n": text}) == {"n": want}


@pytest.mark.parametrize("text", ["NaN", "Infinity", "1e39", "1e400", "1" * 400, "0x10"])
def test_parse_number_to_float_with_default_policy_defaults_what_is_no_finite_float(text):
    v1 = {"type": "record", "name": "R", "fields": [{"name": "n", "type": "float", "default": -1}]}
    m = mapping(record("R", ("n", "string")), v1,
                "  n: {from: n, convert: parse_number, on_error: default}\n")  # fmt: skip
    assert down(m, {"n": text}) == {"n": -1}
    assert down(m, {"n": "1.5d"}) == {"n": 1.5}


@pytest.mark.parametrize("kind", ["float", "double"])
@pytest.mark.parametrize("text", ["-0", "-0.0", " -0d ", "-1e-400", "-0e5"])
def test_parse_number_reads_negative_zero_as_positive_zero(kind, text):
    import math

    m = mapping(record("R", ("n", "string")), record("R", ("n", kind)),
                "  n: {from: n, convert: parse_number, on_error: fail}\n")  # fmt: skip
    got = down(m, {"n": text})["n"]
    assert got == 0 and math.copysign(1.0, got) == 1.0


def test_parse_number_to_float_reads_a_negative_underflow_as_positive_zero():
    import math

    m = mapping(record("R", ("n", "string")), record("R", ("n", "float")),
                "  n: {from: n, convert: parse_number, on_error: fail}\n")  # fmt: skip
    got = down(m, {"n": "-1e-50"})["n"]
    assert got == 0 and math.copysign(1.0, got) == 1.0
    assert down(m, {"n": "-1e-44"})["n"] == -1e-44  # a float subnormal stays


def test_nullable_v2_into_non_null_v1_fails_the_record_or_takes_the_default():
    v2 = record("R", ("a", ["null", "long"]), ("b", ["null", "string"]))
    v1 = {"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": "?"}]}  # fmt: skip
    m = mapping(v2, v1, "  a: {from: a, convert: narrow}\n  b: {from: b, on_error: default}\n")
    with pytest.raises(Exception, match="a: v2 value is null, v1 field is not nullable"):
        down(m, {"a": None, "b": "x"})
    assert down(m, {"a": 5, "b": None}) == {"a": 5, "b": "?"}
    with pytest.raises(Exception, match="a: cannot convert 2147483648 to int"):
        down(m, {"a": 2**31, "b": None})


def test_enums_strings_booleans_and_nested_records():
    zone2 = {"type": "enum", "name": "Z", "symbols": ["A", "B", "C"]}
    zone1 = {"type": "enum", "name": "Z", "symbols": ["A", "B"]}
    v2 = record("R", ("z", zone2), ("s", "string"), ("f", "boolean"), ("i", "int"),
                ("loc", ["null", record("L", ("lat", "double"))]))  # fmt: skip
    v1 = record("R", ("z", zone1), ("s", zone1), ("f", "string"), ("i", "string"),
                ("loc", ["null", record("L1", ("lat", "float"))]))  # fmt: skip
    m = mapping(v2, v1, "  z: {from: z, convert: to_enum}\n  s: {from: s, convert: to_enum}\n"
                "  f: {from: f, convert: to_string}\n  i: {from: i, convert: to_string}\n"
                "  loc: {from: loc, convert: record}\n"
                "  loc.lat: {from: loc.lat, convert: narrow}\n")  # fmt: skip
    good = {"z": "A", "s": "B", "f": False, "i": -12, "loc": {"lat": 1.5}}
    assert down(m, good) == {"z": "A", "s": "B", "f": "false", "i": "-12", "loc": {"lat": 1.5}}
    assert down(m, good | {"loc": None})["loc"] is None
    with pytest.raises(Exception, match="z: cannot convert C to enum Z"):
        down(m, good | {"z": "C"})
    with pytest.raises(Exception, match="loc.lat: cannot convert"):
        down(m, good | {"loc": {"lat": 1e300}})


def _refusal(v2: dict, v1: dict, rules: str) -> InputError:
    with pytest.raises(InputError) as err:
        compile_rules(mapping(v2, v1, rules))
    return err.value


@pytest.mark.parametrize(
    ("v2type", "v1type", "rule", "words"),
    [
        ("string", "long", "{from: f, convert: parse_number}", "parse_number"),
        ("double", "string", "{from: f, convert: to_string}", "to_string"),
        ("long", "string", "{from: f, convert: to_string}", "to_string"),
        ("string", "int", "{convert: sql, expr: 'length(f)'}", "convert: sql"),
    ],
)
def test_a_conversion_without_an_exact_jsonata_form_is_refused_by_name_and_line(
    v2type, v1type, rule, words
):
    err = _refusal(record("R", ("f", v2type)), record("R", ("f", v1type)), f"  f: {rule}\n")
    assert words in err.message and "no JSONata form" in err.message
    assert err.location is not None and err.location.source == "m.yaml"
    assert (err.location.line, err.location.column) is not None and err.location.line == 5


@pytest.mark.parametrize(
    "opaque",
    ["bytes", {"type": "fixed", "name": "F", "size": 2},
     {"type": "long", "logicalType": "timestamp-millis"},
     {"type": "int", "logicalType": "date"}, ["null", {"type": "string", "logicalType": "uuid"}]],
)  # fmt: skip
def test_a_v2_schema_jsonata_python_cannot_take_is_refused_naming_the_field(opaque):
    err = _refusal(record("R", ("a", "int"), ("blob", opaque)), record("R", ("a", "int")),
                   "  a: {from: a}\n")  # fmt: skip
    assert "'blob'" in err.message and "jsonata-python" in err.message


def test_an_undeployable_mapping_is_refused_with_its_first_problem():
    err = _refusal(record("R", ("a", "int")), record("R", ("a", "int")), "  a: {unresolved: why}\n")
    assert "unresolved" in err.message and err.location.line == 5


def test_upgrade_inverts_copies_renames_narrowing_and_integer_parsing():
    v2 = {"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "long"}, {"name": "n", "type": "string"},
        {"name": "extra", "type": "string", "default": "x"}]}  # fmt: skip
    v1 = record("R", ("ident", "int"), ("n", "int"))
    m = mapping(v2, v1, "  ident: {from: id, convert: narrow}\n"
                        "  n: {from: n, convert: parse_number}\n")  # fmt: skip
    rules = compile_rules(m)
    assert rules.upgrade is not None and rules.no_upgrade is None
    up = jsonata.Jsonata(rules.upgrade).evaluate({"ident": 7, "n": -3})
    assert up == {"id": 7, "n": "-3", "extra": "x"}
    assert down(m, up) == {"ident": 7, "n": -3}  # and back


def test_no_upgrade_when_a_v2_field_has_no_source_nor_default():
    m = mapping(record("R", ("a", "int"), ("b", "int")), record("R", ("a", "int")),
                "  a: {from: a}\n")  # fmt: skip
    rules = compile_rules(m)
    assert rules.upgrade is None and "'b'" in (rules.no_upgrade or "")


def test_the_register_body_carries_schema_metadata_and_the_rule_set():
    v2 = record("R", ("a", "int"))
    m = mapping(v2, record("R", ("a", "int")), "  a: {from: a}\n")
    body = register_body(m, compile_rules(m), major_version=3, property_name="app.major")
    assert json.loads(body["schema"]) == v2 and body["schemaType"] == "AVRO"
    assert body["metadata"] == {"properties": {"app.major": "3"}}
    modes = [
        (r["mode"], r["type"], r["kind"], r["onFailure"]) for r in body["ruleSet"]["migrationRules"]
    ]
    assert modes == [("DOWNGRADE", "JSONATA", "TRANSFORM", "ERROR"),
                     ("UPGRADE", "JSONATA", "TRANSFORM", "ERROR")]  # fmt: skip


def test_java_client_reads_unions_wrapped_and_writes_them_wrapped_with_v1_names():
    # Confluent's Java deserializer hands the rule Avro's JSON encoding of the record and reads
    # the result with Avro's JSON decoder: {"<branch>": value} for a union's non-null value
    d2 = {"type": "record", "name": "D2", "namespace": "v2", "fields": [
        {"name": "lat", "type": "double"}]}  # fmt: skip
    d1 = {"type": "record", "name": "D1", "namespace": "v1", "fields": [
        {"name": "lat", "type": "float"}]}  # fmt: skip
    v2 = record("R", ("n", ["null", "long"]), ("s", ["null", "string"]), ("d", ["null", d2]),
                ("t", "string"))  # fmt: skip
    v1 = record("R", ("n", "int"), ("s", ["null", "string"]), ("d", ["null", d1]),
                ("t", ["null", "string"]))  # fmt: skip
    m = mapping(v2, v1, "  n: {from: n, convert: narrow, on_error: fail}\n  s: {from: s}\n"
                        "  d: {from: d, convert: record}\n"
                        "  d.lat: {from: d.lat, convert: narrow, on_error: fail}\n"
                        "  t: {from: t}\n")  # fmt: skip
    java = jsonata.Jsonata(compile_rules(m, client="java").downgrade)
    assert java.evaluate(
        {"n": {"long": 5}, "s": {"string": "x"}, "d": {"v2.D2": {"lat": 1.5}}, "t": "y"}
    ) == {"n": 5, "s": {"string": "x"}, "d": {"v1.D1": {"lat": 1.5}}, "t": {"string": "y"}}
    assert java.evaluate({"n": {"long": 5}, "s": None, "d": None, "t": "y"}) == {
        "n": 5, "s": None, "d": None, "t": {"string": "y"}}  # fmt: skip
    with pytest.raises(Exception, match="n: v2 value is null"):
        java.evaluate({"n": None, "s": None, "d": None, "t": "y"})
    # the python client's rule for the same mapping reads and writes bare values
    assert down(m, {"n": 5, "s": "x", "d": {"lat": 1.5}, "t": "y"}) == {
        "n": 5, "s": "x", "d": {"lat": 1.5}, "t": "y"}  # fmt: skip


def test_java_client_refuses_copying_a_value_that_holds_a_union():
    v2 = record("R", ("xs", {"type": "array", "items": ["null", "string"]}))
    m = mapping(v2, v2, "  xs: {from: xs}\n")
    with pytest.raises(InputError, match="keeps v2's branch names") as err:
        compile_rules(m, client="java")
    assert err.value.location is not None and "m.yaml:" in str(err.value.location)
    compile_rules(m)  # the python client copies it as it is


def test_an_unknown_client_is_a_programming_error():
    m = mapping(record("R", ("a", "long")), record("R", ("a", "long")), "  a: {from: a}\n")
    with pytest.raises(ValueError, match="client 'go'"):
        compile_rules(m, client="go")
