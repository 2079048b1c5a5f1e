"""The catalogue of conversions as specs (converters.mapping.conversions): every conversion has
one, the docs' table is the specs' own rows, the planner proposes only what a spec accepts,
and no road names a conversion of a value: each reads it from its spec."""

from __future__ import annotations

import ast
import itertools
import random
from pathlib import Path

import pytest

from converters.mapping.conversions import SPECS, VALUE_SPECS, value_spec
from converters.mapping.conversions.spec import Failed, Jsonata
from converters.mapping.model import Conversion
from converters.mapping.plan import plan
from converters.mapping.schemaview import AvroType, view

ROOT = Path(__file__).resolve().parents[2]
TYPES = {
    "boolean": "boolean",
    "int": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "bytes": "bytes",
    "enum AB": {"type": "enum", "name": "E", "symbols": ["A", "B"]},
    "enum ABC": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]},
    "fixed 4": {"type": "fixed", "name": "F", "size": 4},
    "fixed 8": {"type": "fixed", "name": "F", "size": 8},
    "date": {"type": "int", "logicalType": "date"},
    "uuid": {"type": "string", "logicalType": "uuid"},
    "array": {"type": "array", "items": "long"},
    "map": {"type": "map", "values": "string"},
}


def avro(name: str) -> AvroType:
    return view(TYPES[name])


def test_every_conversion_of_the_catalogue_has_one_spec_in_the_docs_order():
    assert list(SPECS) == list(Conversion)
    assert all(SPECS[c].conversion is c for c in Conversion)
    shapes = {Conversion.RECORD, Conversion.DEFAULT, Conversion.SQL, Conversion.UNRESOLVED}
    assert {s.conversion for s in VALUE_SPECS} == set(Conversion) - shapes
    assert all(value_spec(c) is None for c in shapes)


def test_the_docs_table_of_conversions_is_the_specs_rows():
    text = (ROOT / "docs/migration.md").read_text()
    table = text.split("### Conversions: what each becomes in Spark SQL", 1)[1].split("\n\n")[2]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert rows == [r for s in SPECS.values() if (r := s.doc_row()) is not None]


@pytest.mark.parametrize(("v2", "v1"), list(itertools.product(TYPES, TYPES)))
def test_the_planner_proposes_only_a_conversion_its_spec_accepts(v2, v1):
    def record(t: object) -> dict:
        return {"type": "record", "name": "R", "fields": [{"name": "a", "type": t}]}

    (rule,) = plan(record(TYPES[v2]), record(TYPES[v1])).rules
    spec = value_spec(rule.convert)
    if rule.convert is Conversion.UNRESOLVED:
        assert rule.reason
        return
    assert spec is not None and spec.accepts(avro(v2), avro(v1))


def test_a_value_spec_emits_for_every_pair_of_types_it_accepts():
    """Every road can take what a spec accepts: SQL always, JSONata or a refusal's words, the
    preview a value or Failed, the fast road an operation or why not."""
    rng = random.Random(1)
    for spec, (v2, v1) in itertools.product(VALUE_SPECS, itertools.product(TYPES, TYPES)):
        s, t = avro(v2), avro(v1)
        if not spec.accepts(s, t):
            continue
        value, _ = spec.sql("`f`", s, t, "T")
        assert "`f`" in value
        assert isinstance(spec.jsonata(s, t), (Jsonata, str))
        sample = spec.sample(rng, t)
        if sample is not None:
            spec.preview(sample, s, t)  # a sample converts


def test_a_conversion_has_a_failure_condition_exactly_when_its_spec_says_it_can_fail():
    for spec in VALUE_SPECS:
        for v2, v1 in itertools.product(TYPES, TYPES):
            s, t = avro(v2), avro(v1)
            if not spec.accepts(s, t):
                continue
            assert (spec.sql("`f`", s, t, "T")[1] is not None) is spec.can_fail, spec.conversion
            got = spec.jsonata(s, t)
            if isinstance(got, Jsonata):
                assert (got.failed is not None) is spec.can_fail, spec.conversion


def test_a_failing_preview_raises_failed():
    parse = value_spec(Conversion.PARSE_NUMBER)
    assert parse is not None
    with pytest.raises(Failed):
        parse.preview("n/a", avro("string"), avro("float"))


ROADS = ("sql", "jsonata", "recordplan", "preview", "check", "plan")
# the roads may name these: shapes of the mapping, and a copy where a whole record or union of
# the same type is copied (the planner's and the UPGRADE's structure, not a value's conversion)
SHAPES = {"RECORD", "DEFAULT", "SQL", "UNRESOLVED", "COPY"}


@pytest.mark.parametrize("road", ROADS)
def test_no_road_names_a_conversion_of_a_value_each_asks_its_spec(road):
    tree = ast.parse((ROOT / f"converters/mapping/{road}.py").read_text())
    named = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Conversion"
    }
    assert named <= SHAPES, named - SHAPES
