"""Two roads, one answer for CEL_FIELD rules: a CEL_FIELD CONDITION's status in Spark SQL
(spark_avro.rules, one SQL expression per field the rule's tags select) equals our Python
field walk's (contracts.rules.execute) on the same records, over a schema with nested records,
arrays of records and of strings, maps, nullable fields, enums, dates, timestamps, inline
``confluent:tags`` and metadata tags; what has no SQL form is refused naming the rule."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.execute import RuleRunner
from schemacli.contracts.rules.model import parse_contract
from spark_avro.decode import decode_confluent
from spark_avro.rules import RulesNotCompiled, compile_rules, rule_table, statuses
from spark_avro.rulestage import VALUE_COLUMN, apply_rules
from tests.spark.framing import confluent, kafka_frame
from tests.spark.rules_readers import assert_generated_reader_gives_read_topics_rows


def _tagged(name: str, type_: Any, *tags: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **({"confluent:tags": list(tags)} if tags else {}),
            **extra}  # fmt: skip


ADDRESS = {"type": "record", "name": "Address", "fields": [
    _tagged("street", "string", "PII", "GEO"),
    _tagged("zip", ["null", "string"], default=None),  # PII and GEO by metadata tags
]}  # fmt: skip
VISIT = {"type": "record", "name": "Visit", "fields": [  # AUDIT by metadata tags
    _tagged("place", "string"),
    _tagged("count", "long", "COUNT"),
    _tagged("when", {"type": "long", "logicalType": "timestamp-millis"}),
]}  # fmt: skip
SCHEMA = {"type": "record", "name": "Customer", "namespace": "acme", "fields": [
    _tagged("id", "string"),
    _tagged("email", ["null", "string"], "PII", default=None),
    _tagged("age", "int", "COUNT"),
    _tagged("score", ["null", "double"], "RATIO", default=None),
    _tagged("level", {"type": "enum", "name": "Level", "symbols": ["LOW", "HIGH"]}, "PII"),
    _tagged("phones", {"type": "array", "items": "string"}, "PII"),
    _tagged("notes", {"type": "map", "values": ["null", "string"]}, "PII"),
    _tagged("home", ["null", ADDRESS], "HOME", default=None),
    _tagged("visits", {"type": "array", "items": VISIT}),
    _tagged("born", {"type": "int", "logicalType": "date"}, "DAY"),
]}  # fmt: skip
METADATA_TAGS = {"acme.Address.zip": ["PII"], "acme.Address.*": ["GEO"], "acme.Visit.*": ["AUDIT"]}

# (tags, expression): every rule a CEL_FIELD CONDITION
RULES: list[tuple[list[str], str]] = [
    (["PII"], "value == null || value.size() > 2"),  # items and map values never fail
    (["PII"], "value.matches('^[a-z0-9@.]+$')"),  # an error on a null value
    (["PII"], "typeName != 'NULL' ; value.size() < 10"),  # a guard
    (["COUNT"], "value >= 0"),  # age (int) and Visit.count (long, in an array of records)
    (["COUNT"], "100 / value > 1"),  # an error on 0
    (["RATIO"], "value == null || value <= 1.0"),
    (["HOME"], "value != null"),  # a null record runs the rule; a record's fields are walked
    (["GEO"], "message.street.size() > 0 && name != ''"),  # message: the record holding it
    (["AUDIT"], "typeName == 'STRING' || name == 'count'"),  # fails on Visit.when
    (["AUDIT"], "fullName.startsWith('acme.Visit.') && 'AUDIT' in tags && name != 'place'"),
    (["AUDIT"], "typeName == 'STRING' ; value.size() > 0"),  # the guard decides count, when
    ([], "typeName == 'STRING' ? value.size() < 8 : true"),  # the ?: decides every other field
    (["DAY"], "value > 19000 && typeName == 'INT'"),
    ([], "typeName != 'NULL'"),  # every field: fails on the first null one
    ([], "name.size() < 5 || typeName != 'DOUBLE'"),  # fails on a score that is not null
]


def records(n: int) -> list[dict[str, Any]]:
    rng = random.Random(41)
    visits = [
        [],
        [{"place": "Oslo", "count": 3, "when": 1767225600000}],
        [{"place": "", "count": 0, "when": 0}, {"place": "Rome", "count": -2, "when": 5}],
        [{"place": "x", "count": 200, "when": 7}],
    ]
    return [
        {
            "id": rng.choice(["c1", "c22", ""]),
            "email": rng.choice([None, "ab", "a@b.com", "A@B.COM", "averyveryverylong@b.com"]),
            "age": rng.choice([0, 5, 42, -1, 150]),
            "score": rng.choice([None, 0.5, 1.5]),
            "level": rng.choice(["LOW", "HIGH"]),
            "phones": rng.choice([[], ["12"], ["123", "4567"], ["BAD!"]]),
            "notes": rng.choice([{}, {"a": None}, {"a": "ok", "b": "x"}, {"c": "UPPER"}]),
            "home": rng.choice(
                [
                    None,
                    {"street": "Main", "zip": None},
                    {"street": "", "zip": "1"},
                    {"street": "Elm", "zip": "0123"},
                ]
            ),
            "visits": rng.choice(visits),
            "born": rng.choice([0, 19500, 20000]),
        }  # fmt: skip
        for _ in range(n)
    ]


def _contract(rules: list[tuple[list[str], str]], mode: str = "READ"):
    body = {
        "metadata": {"tags": METADATA_TAGS},
        "ruleSet": {"domainRules": [
            {"name": f"f{i}", "kind": "CONDITION", "mode": mode, "type": "CEL_FIELD",
             "tags": tags, "expr": expr, "onFailure": "ERROR"}
            for i, (tags, expr) in enumerate(rules)
        ]},
    }  # fmt: skip
    return parse_contract(json.dumps(body), "customer.contract.json")


def _decoded(spark, rows: list[dict[str, Any]], *, flatten: bool = True):
    text = json.dumps(SCHEMA)
    raw = kafka_frame(spark, [confluent(1, text, r) for r in rows])
    raw = raw.withColumn(VALUE_COLUMN, raw["value"])
    return decode_confluent(
        raw, writer_schemas={1: text}, reader_schema=text, passthrough=(VALUE_COLUMN,),
        flatten=flatten,
    )  # fmt: skip


def _as_decoded(record: dict[str, Any]) -> dict[str, Any]:
    """What fastavro's deserializer hands the executors for ``record``."""
    import io

    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, record)
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, parsed, parsed)


def test_every_field_rule_has_a_sql_form():
    compiled = compile_rules(_contract(RULES), parse_schema(SCHEMA), "READ")
    assert len(compiled) == len(RULES)


@pytest.mark.parametrize("flatten", [True, False])
def test_the_sql_road_gives_the_python_field_walks_status_on_every_record(spark, flatten):
    rows = records(200)
    contract = _contract(RULES)
    schema = parse_schema(SCHEMA)
    compiled = compile_rules(contract, schema, "READ", root="" if flatten else "`record`")
    frame = statuses(_decoded(spark, rows, flatten=flatten), compiled).orderBy("offset").collect()
    runner = RuleRunner(contract.rule_set, schema, contract.metadata)
    mismatches = []
    tally: dict[str, dict[str, int]] = {c.rule.name: {} for c in compiled}
    for row, record in zip(frame, rows, strict=True):
        by_rule = {o.rule.name: o.status for o in runner.run(_as_decoded(record), "READ").outcomes}
        for i, c in enumerate(compiled):
            sql = row[f"rule_{i}"]
            counts = tally[c.rule.name]
            counts[sql] = counts.get(sql, 0) + 1
            if sql != by_rule[c.rule.name]:
                mismatches.append((c.rule.name, c.rule.expr, record, sql, by_rule[c.rule.name]))
    assert not mismatches, mismatches[:5]
    # every status is met somewhere, and every rule both passes and refuses some record
    assert {s for counts in tally.values() for s in counts} == {"pass", "fail", "error"}
    assert all("pass" in counts and len(counts) > 1 for counts in tally.values()), tally


def test_a_record_a_field_rule_refuses_is_a_bad_record_naming_the_rule(spark):
    rows = records(40)
    contract = _contract([(["PII"], "value == null || value.size() > 2")])
    compiled = compile_rules(contract, parse_schema(SCHEMA), "READ")
    checked = apply_rules(_decoded(spark, rows), rule_table(compiled)).orderBy("offset").collect()
    runner = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata)
    for row, record in zip(checked, rows, strict=True):
        refused = runner.run(_as_decoded(record), "READ").refused_by
        assert (row["decode_error_kind"] == "rule") == (refused is not None)
        if refused is not None:
            assert row["decode_error"].startswith("rule f0 failed")
    assert any(r["decode_error_kind"] == "rule" for r in checked)


@pytest.mark.parametrize(
    "tags, expr, words",
    [
        ([], "value.size() > 0", "field acme.Customer.age"),  # size() of an int
        (["COUNT"], "value >= 0.0", "field acme.Customer.age"),
        (["PII"], "value", "gives"),  # not a bool
    ],
)
def test_a_field_rule_with_no_sql_form_is_refused_naming_the_rule_and_the_field(tags, expr, words):
    with pytest.raises(RulesNotCompiled, match="rule f0") as caught:
        compile_rules(_contract([(tags, expr)]), parse_schema(SCHEMA), "READ")
    assert words in str(caught.value)


def test_a_field_rule_on_a_union_of_several_types_is_refused_naming_the_field():
    schema = {"type": "record", "name": "R", "fields": [
        _tagged("either", ["null", "string", "long"], "PII")]}  # fmt: skip
    with pytest.raises(RulesNotCompiled, match="field R.either: a union of several types"):
        compile_rules(_contract([(["PII"], "value != null")]), parse_schema(schema), "READ")


def test_a_field_rule_on_a_recursive_record_is_refused_naming_the_field():
    node = {"type": "record", "name": "Node", "fields": [
        _tagged("label", "string", "PII"),
        _tagged("next", ["null", "Node"], default=None)]}  # fmt: skip
    with pytest.raises(RulesNotCompiled, match="field Node.next: the recursive record Node"):
        compile_rules(_contract([(["PII"], "value != ''")]), parse_schema(node), "READ")


def test_a_field_transform_is_still_refused():
    body = {"ruleSet": {"domainRules": [
        {"name": "mask", "kind": "TRANSFORM", "mode": "READ", "type": "CEL_FIELD",
         "tags": ["PII"], "expr": "'***'"}]}}  # fmt: skip
    contract = parse_contract(json.dumps(body), "mask.contract.json")
    with pytest.raises(RulesNotCompiled, match="rule mask: a CEL_FIELD TRANSFORM"):
        compile_rules(contract, parse_schema(SCHEMA), "READ")


def test_a_generated_reader_with_field_rules_gives_read_topics_rows(spark, tmp_path, monkeypatch):
    """``spark codegen --rules`` over a contract file with CEL_FIELD rules (and metadata tags)
    embeds the same SQL: its rows equal ``read_topic(rules=PATH)``'s, in both layouts."""
    body = {"metadata": {"tags": METADATA_TAGS}, "ruleSet": {"domainRules": [
        {"name": "piiLong", "kind": "CONDITION", "mode": "READ", "type": "CEL_FIELD",
         "tags": ["PII"], "expr": "value == null || value.size() > 2", "onFailure": "DLQ",
         "params": {"dlq.topic": "pii-dlq"}},
        {"name": "street", "kind": "CONDITION", "mode": "READ", "type": "CEL_FIELD",
         "tags": ["GEO"], "expr": "name != 'street' || value != ''"},
        {"name": "counts", "kind": "CONDITION", "mode": "READ", "type": "CEL_FIELD",
         "tags": ["COUNT"], "expr": "100 / value > 1"},
    ]}}  # fmt: skip
    raw = kafka_frame(spark, [confluent(1, json.dumps(SCHEMA), r) for r in records(60)])
    both = assert_generated_reader_gives_read_topics_rows(
        spark, tmp_path, monkeypatch, schema=SCHEMA, subject="customers-value",
        topic="customers", body=body, raw=raw,
    )  # fmt: skip
    for ours, _ in both.frames.values():
        reasons = {(r["decode_error"] or "").split(" ")[1] for r in ours.collect()
                   if r["decode_error_kind"] == "rule"}  # fmt: skip
        assert reasons == {"piiLong", "street", "counts"}
