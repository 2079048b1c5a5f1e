"""The parser's field memo (parse_schema's ``fields``) builds the tree a parse without it builds.

Both roads are fed the same inputs: the oracle generator's schema pairs (each pair parsed as a
history of two with one memo, then alone) and its broken schemas (refused with the same kind
and pointer after a memo has seen good ones); the engine's verdicts on the pairs are the same
whichever road built the models, and the field table the verdict memo builds from a memoised
field is the one it builds by walking the field itself.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from schemacli.contracts.avro.loader import LoadedSchema, _identity_by_fields, load_schema_text
from schemacli.contracts.avro.parse import FIELD_TEXT, FieldMemo, parse_schema
from schemacli.contracts.avro.schema import Field, Schema
from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.verdicts import _Record
from schemacli.contracts.jsontext.source import parse_text
from schemacli.errors import SchemaParseError
from tests.oracle.generator import broken_schemas, pairs


def _tree(node: Any, seen: dict[int, int] | None = None) -> Any:
    """A model as plain data: every node's class and attributes, fields included, the memo's
    text left out; a node met again (a named type used twice, recursion) as its first index."""
    seen = {} if seen is None else seen
    if isinstance(node, Schema | Field):
        if id(node) in seen:
            return ("seen", seen[id(node)])
        seen[id(node)] = len(seen)
        attrs = dict(node.__dict__)
        attrs.pop(FIELD_TEXT, None)
        if isinstance(node, Field):
            attrs.pop("_ptype", None)
            attrs["type"] = node.type  # the lazily built node, as a caller reads it
        return (type(node).__name__, {k: _tree(v, seen) for k, v in sorted(attrs.items())})
    if isinstance(node, tuple | list):
        return [_tree(v, seen) for v in node]
    if hasattr(node, "items") and not isinstance(node, str):
        return {k: _tree(v, seen) for k, v in node.items()}
    return node


def _memo_pairs() -> list[tuple[Any, Any]]:
    return list(pairs(20261128, 400))


def test_a_history_parsed_with_one_field_memo_is_the_tree_parsed_without_it() -> None:
    shared = 0
    for a, b in _memo_pairs():
        memo: FieldMemo = {}
        try:
            plain_a, plain_b = parse_schema(a), parse_schema(b)
        except SchemaParseError:
            continue
        memo_a, memo_b = parse_schema(a, fields=memo), parse_schema(b, fields=memo)
        assert _tree(memo_a) == _tree(plain_a)
        assert _tree(memo_b) == _tree(plain_b)
        shared += sum(
            1
            for x in getattr(memo_a, "fields", ())
            for y in getattr(memo_b, "fields", ())
            if x is y
        )
    assert shared > 100  # the pairs share fields, and the memo shared them


def test_the_engine_gives_the_same_verdicts_on_models_built_with_the_field_memo() -> None:
    compared = 0
    for a, b in _memo_pairs():
        memo: FieldMemo = {}
        try:
            plain = parse_schema(a), parse_schema(b)
        except SchemaParseError:
            continue
        memoised = parse_schema(a, fields=memo), parse_schema(b, fields=memo)
        for reader, writer in ((0, 1), (1, 0)):
            expected = compat.check(plain[reader], plain[writer])
            assert compat.check(memoised[reader], memoised[writer]) == expected
            compared += 1
    assert compared > 500  # most generated pairs parse: the comparison is not vacuous


def test_a_schema_refused_after_the_memo_saw_others_is_refused_the_same_way() -> None:
    memo: FieldMemo = {}
    seen = 0  # good schemas the memo has parsed before it meets the broken ones
    for a, _ in _memo_pairs()[:50]:
        with contextlib.suppress(SchemaParseError):  # a generated schema may be refused
            parse_schema(a, fields=memo)
            seen += 1
    assert seen > 30 and memo
    refused = 0
    for schema in broken_schemas(20261128, 300):
        try:
            parse_schema(schema)
        except SchemaParseError as expected:
            with pytest.raises(SchemaParseError) as got:
                parse_schema(schema, fields=memo)
            assert (got.value.kind, got.value.location, got.value.message) == (
                expected.kind,
                expected.location,
                expected.message,
            )
            refused += 1
        else:
            assert _tree(parse_schema(schema, fields=memo)) == _tree(parse_schema(schema))
    assert refused > 50


def test_a_field_with_aliases_or_a_named_type_is_parsed_every_time() -> None:
    fields = [
        {"name": "a", "type": "int", "aliases": ["old_a"]},
        {"name": "b", "type": {"type": "enum", "name": "E", "symbols": ["X"]}},
        {"name": "c", "type": ["null", "E"], "default": None},
        {"name": "d", "type": ["null", {"type": "array", "items": "long"}], "default": None},
    ]
    memo: FieldMemo = {}
    one = parse_schema({"type": "record", "name": "R", "fields": fields}, fields=memo)
    two = parse_schema({"type": "record", "name": "R", "fields": fields}, fields=memo)

    assert [x is y for x, y in zip(one.fields, two.fields, strict=True)] == [  # type: ignore[attr-defined]
        False,
        False,
        False,
        True,
    ]


def test_the_same_field_text_at_another_position_is_its_own_field() -> None:
    memo: FieldMemo = {}
    f = {"name": "x", "type": ["null", "string"], "default": None}
    one = parse_schema({"type": "record", "name": "R", "fields": [f]}, fields=memo)
    two = parse_schema(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, f]}, fields=memo
    )

    assert two.fields[1] is not one.fields[0]  # type: ignore[attr-defined]
    assert two.fields[1].pointer == "/fields/1"  # type: ignore[attr-defined]
    assert two.fields[1].type.pointer == "/fields/1/type"  # type: ignore[attr-defined]


def _loaded(value: Any, memo: FieldMemo | None) -> LoadedSchema:
    if memo is None:
        return load_schema_text(json.dumps(value), "x.avsc")
    document = parse_text(json.dumps(value), "x.avsc")
    schema = parse_schema(document.value, fields=memo)
    return LoadedSchema(source="x.avsc", document=document, schema=schema)


def _table(record: _Record | None) -> Any:
    """What the verdict memo reads of a record's field table."""
    if record is None:
        return None
    return {
        "name": (record.simple_name, record.fullname),
        "texts": record.texts,
        "raws": record.raws,
        "positions": record.positions,
        "items": {record.item_names[i] for i in record.items},
        "names": {record.id_names[i] for i in record.names},
        "numbers": (record.item_ids, record.name_ids),
        "defaulted": record.defaulted,
    }


def _both_roads(extra: tuple[Any, ...] = ()) -> Iterator[tuple[LoadedSchema, LoadedSchema]]:
    """Each schema of the pairs that parses, without the memo and with one memo per pair."""
    for a, b in [*_memo_pairs(), *extra]:
        memo: FieldMemo = {}
        for value in (a, b):
            try:
                plain = _loaded(value, None)
            except SchemaParseError:
                break
            yield plain, _loaded(value, memo)


def test_the_field_table_of_a_memoised_record_is_the_one_built_by_walking_its_fields() -> None:
    compared = 0
    for plain, memoised in _both_roads():
        ids: dict[Any, int] = {}
        expected = _table(_Record.of(plain, ids))
        assert _table(_Record.of(memoised, ids)) == expected
        assert _table(_Record.of(memoised, ids)) == expected  # its numbers kept
        compared += expected is not None
    assert compared > 100


def test_identity_of_a_memoised_record_is_its_whole_text_encoded() -> None:
    compared = by_fields = 0
    extra = (
        (  # a property spelled like the record's empty field list, and collapsible nodes
            {"type": "record", "name": "R", "x": {"fields": []}, "fields": [_INT]},
            {"type": "record", "name": "R", "x": {"fields": []}, "fields": [_INT, _LONG]},
        ),
        (
            {"type": "record", "name": "R", "doc": '"fields":[]', "fields": [_INT]},
            {"type": "record", "name": "R", "doc": '"fields":[]', "fields": [_INT, _LONG]},
        ),
    )
    for plain, memoised in _both_roads(extra):
        assert memoised.identity == plain.identity
        compared += 1
        by_fields += _identity_by_fields(memoised.value, memoised.schema) is not None
    assert compared > 500 and by_fields > 200


_INT = {"name": "a", "type": {"type": "int"}, "default": 1, "doc": '{"type":"int"}'}
_LONG = {"name": "b", "type": ["null", {"type": "long"}], "default": None}
