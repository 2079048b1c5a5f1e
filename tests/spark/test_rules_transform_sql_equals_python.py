"""Two roads, one answer for CEL_FIELD TRANSFORMs: the values a rule set's transforms leave in
Spark (spark_avro.rules' SQL, run by rulestage in the serde's order, each rule reading what the
ones before it left) equal our Python engine's (contracts.rules.execute) on the same records, as
do each rule's pass / fail / error and the record's verdict, over a schema with a nested record,
arrays of strings and of records, a map, nullable unions, enums, bytes and tags (inline and
metadata), transforms and conditions mixed; what has no SQL form is refused naming the rule."""

from __future__ import annotations

import io
import json
import random
from typing import Any

import fastavro
import pytest

from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.execute import RuleRunner
from schemacli.contracts.rules.model import parse_contract
from spark_avro.decode import decode_confluent
from spark_avro.rules import RulesNotCompiled, compile_rules, rule_table
from spark_avro.rulestage import VALUE_COLUMN, apply_rules, code_column, rule_codes
from tests.spark.framing import confluent, kafka_frame
from tests.spark.rules_readers import assert_generated_reader_gives_read_topics_rows


def _tagged(name: str, type_: Any, *tags: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **({"confluent:tags": list(tags)} if tags else {}),
            **extra}  # fmt: skip


ADDRESS = {"type": "record", "name": "Address", "fields": [
    _tagged("street", "string", "PII"),
    _tagged("zip", ["null", "string"], default=None),  # PII by metadata tags
]}  # fmt: skip
ITEM = {"type": "record", "name": "Item", "fields": [
    _tagged("sku", "string", "SKU"),
    _tagged("qty", "int", "COUNT"),
]}  # fmt: skip
SCHEMA = {"type": "record", "name": "Order", "namespace": "acme", "fields": [
    _tagged("id", "string"),
    _tagged("email", ["null", "string"], "PII", default=None),
    _tagged("qty", "int", "COUNT"),
    _tagged("total", "long", "BIG"),
    _tagged("ratio", ["null", "double"], "RATIO", default=None),
    _tagged("ok", "boolean", "FLAG"),
    _tagged("level", {"type": "enum", "name": "Level", "symbols": ["LOW", "HIGH"]}, "PII"),
    _tagged("phones", {"type": "array", "items": "string"}, "PII"),
    _tagged("notes", {"type": "map", "values": ["null", "string"]}, "PII"),
    _tagged("home", ["null", ADDRESS], "HOME", default=None),
    _tagged("items", {"type": "array", "items": ITEM}),
    _tagged("blob", "bytes", "BLOB"),
    _tagged("div", "int", "DIV"),
]}  # fmt: skip
METADATA_TAGS = {"acme.Address.zip": ["PII"]}

# (name, kind, tags, expr, onFailure), in the order a deserializer runs them (the contract
# lists them reversed: READ runs the domain rules last to first)
RULES: list[tuple[str, str, list[str], str, str]] = [
    ("mask", "TRANSFORM", ["PII"], "typeName == 'STRING' ; value + '!'", "ERROR"),
    (
        "masked",
        "CONDITION",
        ["PII"],
        "value == null || value.endsWith('!') && value.size() > 3",
        "ERROR",
    ),  # fmt: skip
    ("double", "TRANSFORM", ["COUNT"], "value * 2", "ERROR"),  # Order.qty and Item.qty
    ("small", "CONDITION", ["COUNT"], "value < 100", "ERROR"),  # reads the doubled values
    ("grow", "TRANSFORM", ["BIG"], "value * 4", "ERROR"),  # overflows: an error in both
    ("half", "TRANSFORM", ["RATIO"], "value == null ? -1.0 : value / 2.0", "ERROR"),
    ("negate", "TRANSFORM", ["FLAG"], "!value", "ERROR"),
    ("negateAgain", "TRANSFORM", ["FLAG"], "!value", "ERROR"),  # shadowed: the serde skips one
    ("sku", "TRANSFORM", ["SKU"], "value + string(10 / (value.size() - 3))", "NONE"),
    ("blob", "TRANSFORM", ["BLOB"], "size(value) > 1 ? b'big' : value", "ERROR"),
    ("div", "TRANSFORM", ["DIV"], "100 / value", "DLQ"),  # an error on 0
    ("whole", "CONDITION", [], "typeName != 'STRING' || value.size() < 12", "ERROR"),
]


def _body(rules: list[tuple[str, str, list[str], str, str]]) -> dict[str, Any]:
    return {
        "metadata": {"tags": METADATA_TAGS},
        "ruleSet": {"domainRules": [
            {"name": name, "kind": kind, "mode": "READ", "type": "CEL_FIELD", "tags": tags,
             "expr": expr, "onFailure": on_failure,
             **({"params": {"dlq.topic": "orders-dlq"}} if on_failure == "DLQ" else {})}
            for name, kind, tags, expr, on_failure in reversed(rules)
        ]},
    }  # fmt: skip


def _contract(rules: list[tuple[str, str, list[str], str, str]]):
    return parse_contract(json.dumps(_body(rules)), "order.contract.json")


def records(n: int) -> list[dict[str, Any]]:
    rng = random.Random(40)
    return [
        {
            "id": rng.choice(["o1", "o22"]),
            "email": rng.choice([None, "ab", "a@b.com", "averyverylong@b.com"]),
            "qty": rng.choice([0, 5, 42, -1]),
            "total": rng.choice([1, -7, 2**62]),
            "ratio": rng.choice([None, 0.5, 3.0]),
            "ok": rng.choice([True, False]),
            "level": rng.choice(["LOW", "HIGH"]),
            "phones": rng.choice([[], ["12"], ["123", "4567"]]),
            "notes": rng.choice([{}, {"a": None}, {"a": "ok", "b": "x"}]),
            "home": rng.choice([None, {"street": "Main", "zip": None}, {"street": "", "zip": "1"}]),
            "items": rng.choice(
                [
                    [],
                    [{"sku": "abc", "qty": 3}],
                    [{"sku": "abcd", "qty": 1}, {"sku": "x", "qty": 60}],
                ]
            ),
            "blob": rng.choice([b"", b"z", b"zz"]),
            "div": rng.choice([0, 3, 7]),
        }  # fmt: skip
        for _ in range(n)
    ]


def _as_decoded(record: dict[str, Any]) -> dict[str, Any]:
    """What fastavro's deserializer hands the executors for ``record``."""
    parsed = fastavro.parse_schema(SCHEMA)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, record)
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, parsed, parsed)


def _decoded(spark, rows: list[dict[str, Any]], *, flatten: bool):
    text = json.dumps(SCHEMA)
    raw = kafka_frame(spark, [confluent(1, text, r) for r in rows])
    raw = raw.withColumn(VALUE_COLUMN, raw["value"])
    return decode_confluent(
        raw, writer_schemas={1: text}, reader_schema=text, passthrough=(VALUE_COLUMN,),
        flatten=flatten,
    )  # fmt: skip


def _plain(value: Any) -> Any:
    """A Spark row's value as fastavro gives it (bytes for binary, dicts for structs)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _record(row: Any, flatten: bool) -> dict[str, Any]:
    names = [f["name"] for f in SCHEMA["fields"]]
    fields = row.asDict(recursive=True) if flatten else row["record"].asDict(recursive=True)
    return {name: _plain(fields[name]) for name in names}


CODES = {"pass": 0, "fail": 1, "error": 2}


def test_every_rule_of_the_mixed_set_has_a_sql_form_and_the_shadowed_one_is_left_out():
    compiled = compile_rules(_contract(RULES), parse_schema(SCHEMA), "READ", transforms=True)
    assert [c.rule.name for c in compiled] == [r[0] for r in RULES if r[0] != "negate"]


@pytest.mark.parametrize("flatten", [True, False])
def test_spark_transforms_and_judges_every_record_as_the_python_engine_does(spark, flatten):
    rows = records(240)
    contract = _contract(RULES)
    schema = parse_schema(SCHEMA)
    compiled = compile_rules(
        contract, schema, "READ", root="" if flatten else "`record`", transforms=True
    )
    table = rule_table(compiled)
    acting = [c for c in compiled if c.action_on_failure != "NONE" or not c.rule.is_condition]
    assert len(acting) == len(table)
    decoded = _decoded(spark, rows, flatten=flatten)
    coded = rule_codes(decoded, table).orderBy("offset").collect()
    applied = apply_rules(decoded, table).orderBy("offset").collect()
    runner = RuleRunner(contract.rule_set, schema, contract.metadata)
    mismatches: list[Any] = []
    seen: dict[str, set[int]] = {c.rule.name: set() for c in acting}
    verdicts = {"good": 0, "rule": 0, "dlq": 0}
    for coded_row, row, record in zip(coded, applied, rows, strict=True):
        result = runner.run(_as_decoded(record), "READ")
        by_rule = {o.rule.name: o for o in result.outcomes}
        refusing = result.refused_by.rule.name if result.refused_by is not None else None
        # each rule's code, up to the one that refused the record (a deserializer stops there)
        for place, c in enumerate(acting):
            got, want = coded_row[code_column(place)], CODES[by_rule[c.rule.name].status]
            seen[c.rule.name].add(got)
            if got != want:
                mismatches.append((c.rule.name, record, got, want))
            if c.rule.name == refusing:
                break
        if result.refused_by is None:
            verdicts["good"] += 1
            if row["decode_error"] is not None or _record(row, flatten) != result.record:
                mismatches.append(("values", record, _record(row, flatten), result.record))
        else:
            verdicts["dlq" if result.dlq_topic else "rule"] += 1
            failed = "failed" if result.refused_by.status == "fail" else "errored"
            reason = f"rule {refusing} {failed}: "
            if row["decode_error_kind"] != "rule" or not row["decode_error"].startswith(reason):
                mismatches.append(("verdict", record, row["decode_error"], reason))
            if row["rule_dlq_topic"] != result.dlq_topic:
                mismatches.append(("dlq", record, row["rule_dlq_topic"], result.dlq_topic))
    assert not mismatches, mismatches[:3]
    # the records meet every verdict; every rule passes somewhere, and those that can fail or
    # err do (the transforms that err: an overflow, a division by zero, onFailure NONE and DLQ)
    assert all(verdicts.values()), verdicts
    assert all(0 in codes for codes in seen.values()), seen
    assert {1} <= seen["masked"] and {1} <= seen["small"] and {1} <= seen["whole"], seen
    assert all({2} <= seen[name] for name in ("grow", "sku", "div")), seen


def test_a_transform_that_errs_with_on_failure_none_leaves_the_values_and_the_record_good(spark):
    rules = [("sku", "TRANSFORM", ["SKU"], "value + string(10 / (value.size() - 3))", "NONE")]
    rows = [{**records(1)[0], "items": [{"sku": "abc", "qty": 1}, {"sku": "abcd", "qty": 2}]}]
    compiled = compile_rules(_contract(rules), parse_schema(SCHEMA), "READ", transforms=True)
    (row,) = apply_rules(_decoded(spark, rows, flatten=True), rule_table(compiled)).collect()
    assert row["decode_error"] is None
    assert [i["sku"] for i in row["items"]] == ["abc", "abcd"]  # abc errs: the whole rule did


def test_a_transform_result_an_avro_int_cannot_hold_is_an_error_naming_the_rule(spark):
    """The one place the roads part: the Python engine keeps 2**32 in an int field (no writer
    could write it back); Spark's int column cannot hold it, so the rule errs (docs/rules.md)."""
    rules = [("big", "TRANSFORM", ["COUNT"], "value * 4294967296", "ERROR")]
    rows = [{**records(1)[0], "qty": 1, "items": []}]
    compiled = compile_rules(_contract(rules), parse_schema(SCHEMA), "READ", transforms=True)
    (row,) = apply_rules(_decoded(spark, rows, flatten=True), rule_table(compiled)).collect()
    assert row["decode_error_kind"] == "rule"
    assert row["decode_error"].startswith("rule big errored")
    assert row["qty"] == 1  # a refused record keeps the values it had


def test_a_generated_reader_with_transforms_gives_read_topics_rows(spark, tmp_path, monkeypatch):
    """``spark codegen --rules`` over a contract file with transforms and conditions embeds the
    same SQL: its rows equal ``read_topic(rules=PATH)``'s, in both layouts."""
    raw = kafka_frame(spark, [confluent(1, json.dumps(SCHEMA), r) for r in records(60)])
    both = assert_generated_reader_gives_read_topics_rows(
        spark, tmp_path, monkeypatch, schema=SCHEMA, subject="orders-value", topic="orders",
        body=_body(RULES), raw=raw,
    )  # fmt: skip
    assert "TRANSFORMs" in both.source and "named_struct" in both.source
    for flatten, (_, library) in both.frames.items():
        good = [_record(r, flatten) for r in library.collect() if r["decode_error"] is None]
        assert good and all(r["email"] is None or r["email"].endswith("!") for r in good)


def _refused(rules, schema=SCHEMA) -> str:
    with pytest.raises(RulesNotCompiled) as caught:
        compile_rules(_contract(rules), parse_schema(schema), "READ", transforms=True)
    return str(caught.value)


@pytest.mark.parametrize(
    "tags, expr, words",
    [
        (["COUNT"], "'x'", "gives string on field acme.Order.qty, which holds int"),
        (["PII"], "value.size()", "gives int on field acme.Order.email, which holds string"),
        (["COUNT"], "null", "field acme.Order.qty: a TRANSFORM giving null to int"),
        (["PII"], "typeName == 'STRING' ; message.id", "a TRANSFORM reading `message`"),
        ([], "value", "field acme.Order.home: a TRANSFORM of a null record acme.Address"),
    ],
    ids=["wrong type", "wrong type on a string", "null", "message", "null record"],
)
def test_a_field_transform_with_no_sql_form_is_refused_naming_the_rule_and_why(tags, expr, words):
    text = _refused([("t", "TRANSFORM", tags, expr, "ERROR")])
    assert "rule t" in text and words in text, text


def test_a_field_transform_of_a_logical_type_is_refused_naming_the_field():
    schema = {"type": "record", "name": "R", "fields": [
        _tagged("day", {"type": "int", "logicalType": "date"}, "DAY")]}  # fmt: skip
    text = _refused([("t", "TRANSFORM", ["DAY"], "value + 1", "ERROR")], schema)
    assert "field R.day: a TRANSFORM of int (date)" in text, text


def test_a_field_transform_a_guard_passes_over_is_not_refused():
    schema = {"type": "record", "name": "R", "fields": [
        _tagged("day", {"type": "int", "logicalType": "date"}, "X"),
        _tagged("name", "string", "X")]}  # fmt: skip
    body = {"ruleSet": {"domainRules": [{"name": "t", "kind": "TRANSFORM", "mode": "READ",
            "type": "CEL_FIELD", "tags": ["X"],
            "expr": "typeName == 'STRING' ; '***'"}]}}  # fmt: skip
    contract = parse_contract(json.dumps(body), "r.contract.json")
    (compiled,) = compile_rules(contract, parse_schema(schema), "READ", transforms=True)
    assert list(compiled.replaced) == ["name"]


def test_a_field_transform_on_a_union_of_several_types_is_refused_naming_the_field():
    schema = {"type": "record", "name": "R", "fields": [
        _tagged("either", ["null", "string", "long"], "PII")]}  # fmt: skip
    text = _refused([("t", "TRANSFORM", ["PII"], "value", "ERROR")], schema)
    assert "field R.either: a union of several types" in text, text


def test_a_cel_transform_of_the_whole_record_is_refused_naming_the_rule():
    body = {"ruleSet": {"domainRules": [{"name": "whole", "kind": "TRANSFORM", "mode": "READ",
            "type": "CEL", "expr": "message"}]}}  # fmt: skip
    contract = parse_contract(json.dumps(body), "r.contract.json")
    with pytest.raises(RulesNotCompiled, match="rule whole: a CEL TRANSFORM \\(the whole record"):
        compile_rules(contract, parse_schema(SCHEMA), "READ", transforms=True)


def test_a_road_that_does_not_take_transforms_still_refuses_them():
    """``topics check`` compiles without ``transforms`` (the converter's v1 rules take them:
    tests/spark/test_converter_v1_transforms.py)."""
    with pytest.raises(RulesNotCompiled, match="rule mask: a CEL_FIELD TRANSFORM"):
        compile_rules(_contract(RULES[:1]), parse_schema(SCHEMA), "READ")
