"""Two roads, one answer for v1's WRITE rules on what the converter writes: the converter's Kafka
rows (``pipeline.records.build_output``, v1's rule set with CEL_FIELD TRANSFORMs and CONDITIONs)
are, byte for byte, what the Python rules engine (``contracts.rules.execute``) and the v1 writer
(fastavro, Confluent-framed with v1's id) give for the same converted records (the converter's
own rows without the rules); a record v1's rules refuse is a dead letter naming the rule, stage
``rule``, whatever its action (ERROR or DLQ); an erring transform whose action is NONE leaves the
record as it was. What has no Spark SQL form is still refused, naming the rule (exit 2)."""

from __future__ import annotations

import io
import json
import random
from dataclasses import replace
from typing import Any

import fastavro
import pytest

from converters.pipeline.headers import ERROR_HEADER, STAGE_HEADER
from converters.pipeline.records import RegistryPlan, build_output
from converters.pipeline.v1rules import compile_v1_rules, contract_text
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.execute import RuleRunner
from schemacli.contracts.rules.model import parse_contract
from spark_avro.wire import frame
from tests.spark.test_converter_transform import kafka_frame, planned_mapping

pytestmark = pytest.mark.spark

V2_ID, V1_ID = 31, 8


def _field(name: str, type_: Any, *tags: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **({"confluent:tags": list(tags)} if tags else {}),
            **extra}  # fmt: skip


def _customer(v1: bool) -> dict[str, Any]:
    """The v2 customer (``age`` a long, a ``channel`` v1 has not) or v1 (tagged, ``age`` int)."""
    tag = (lambda *t: t) if v1 else (lambda *t: ())
    address = {"type": "record", "name": "Address", "fields": [
        _field("street", "string", *tag("PII")),
        _field("zip", ["null", "string"], default=None)]}  # fmt: skip
    return {"type": "record", "name": "Customer", "namespace": "acme", "fields": [
        _field("id", "string"),
        _field("email", ["null", "string"], *tag("PII"), default=None),
        _field("phone", "string", *tag("PII")),
        _field("age", "int" if v1 else "long", *tag("AGE")),
        _field("score", "double"),
        _field("home", ["null", address], default=None),
        _field("phones", {"type": "array", "items": "string"}, *tag("PII")),
        _field("div", "int", *tag("DIV")),
        _field("note", "string", *tag("NOTE")),
        *([] if v1 else [_field("channel", "string")]),
    ]}  # fmt: skip


V2 = _customer(v1=False)
V1 = _customer(v1=True)
METADATA = {"tags": {"acme.Address.zip": ["PII"]}}  # a metadata tag: zip is PII too


def _rule(name: str, kind: str, type_: str, expr: str, on_failure: str, **more: Any):
    return {"name": name, "kind": kind, "mode": "WRITE", "type": type_, "expr": expr,
            "onFailure": on_failure, **more}  # fmt: skip


# v1's WRITE rules in the order a v1 producer's serializer runs them
RULE_SET = {"domainRules": [
    _rule("maskPii", "TRANSFORM", "CEL_FIELD", "typeName == 'STRING' ; '***'", "ERROR",
          tags=["PII"]),
    _rule("masked", "CONDITION", "CEL_FIELD", "value == null || value == '***'", "ERROR",
          tags=["PII"]),  # reads what maskPii left: never fails
    _rule("adult", "CONDITION", "CEL", "message.age >= 18", "ERROR"),
    _rule("older", "TRANSFORM", "CEL_FIELD", "value + 1", "ERROR", tags=["AGE"]),
    _rule("ratio", "TRANSFORM", "CEL_FIELD", "100 / value", "ERROR", tags=["DIV"]),  # errs on 0
    _rule("suffix", "TRANSFORM", "CEL_FIELD", "value + string(10 / (value.size() - 3))", "NONE",
          tags=["NOTE"]),  # errs on a note of 3 characters: the record goes on as it was
    _rule("scored", "CONDITION", "CEL", "message.score < 100.0", "DLQ",
          params={"dlq.topic": "customers-rules-dlq"}),
    _rule("advisory", "CONDITION", "CEL", "message.age < 60", "NONE"),
    {"name": "readOnly", "kind": "CONDITION", "mode": "READ", "type": "CEL", "expr": "false"},
]}  # fmt: skip


def records(n: int) -> list[dict[str, Any]]:
    rng = random.Random(42)
    return [
        {
            "id": f"c{i}",
            "email": rng.choice([None, "a@b.com", "x@y.org"]),
            "phone": rng.choice(["555-0100", "", "12"]),
            "age": rng.choice([17, 18, 30, 65, 2**40]),  # 2**40: v1's int cannot hold it
            "score": rng.choice([0.5, 99.0, 150.0]),
            "home": rng.choice(
                [None, {"street": "Main", "zip": None}, {"street": "Elm", "zip": "0123"}]
            ),  # fmt: skip
            "phones": rng.choice([[], ["1"], ["2", "3"]]),
            "div": rng.choice([0, 3, 50]),
            "note": rng.choice(["abc", "abcd", "hello"]),
            "channel": "web",
        }
        for i in range(n)
    ]


def _mapping():
    return planned_mapping(
        V2,
        V1,
        "source: {subject: customers-v2-value, topic: customers-v2}\n"
        "target: {subject: customers-value, topic: customers}\n"
        "dead_letter_topic: customers-dlq\n",
    )


def _body(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(schema), record)
    return buffer.getvalue()


def _read(schema: dict[str, Any], body: bytes) -> dict[str, Any]:
    parsed = fastavro.parse_schema(schema)
    return fastavro.schemaless_reader(io.BytesIO(body), parsed, parsed)


def _rows(spark, values: list[bytes], reg: RegistryPlan) -> dict[bytes, Any]:
    raw = kafka_frame(spark, [(f"k{i}".encode(), v, []) for i, v in enumerate(values)])
    return {bytes(r["key"]): r for r in build_output(raw, _mapping(), reg).collect()}


def test_the_converter_writes_what_the_python_engine_and_the_v1_writer_give_byte_for_byte(spark):
    rows = records(300)
    values = [frame(V2_ID, _body(V2, r)) for r in rows]
    plain = RegistryPlan(V1_ID, json.dumps(V1), {V2_ID: json.dumps(V2)},
                         {V2_ID: "customers-v2-value/1"})  # fmt: skip
    ruled = replace(plain, target_rules=contract_text(METADATA, RULE_SET))
    without, with_rules = _rows(spark, values, plain), _rows(spark, values, ruled)
    contract = parse_contract(ruled.target_rules or "", "customers-value (the v1 rule set)")
    runner = RuleRunner(contract.rule_set, parse_schema(V1), contract.metadata)
    assert set(with_rules) == set(without) == {f"k{i}".encode() for i in range(len(rows))}
    mismatches: list[Any] = []
    tally = {"written": 0, "masked": 0, "convert": 0, "none-erred": 0}
    refused_by: dict[str, int] = {}
    for key, got in with_rules.items():
        before = without[key]
        headers = {h["key"]: bytes(h["value"]) for h in got["headers"]}
        if before["topic"] == "customers-dlq":  # the mapping refused it: the rules never ran
            tally["convert"] += 1
            if (got["topic"], got["value"], got["headers"]) != (
                before["topic"], before["value"], before["headers"]):  # fmt: skip
                mismatches.append(("dead before the rules", key))
            continue
        converted = _read(V1, bytes(before["value"])[5:])
        result = runner.run(converted, "WRITE")
        if result.refused_by is not None:
            name = result.refused_by.rule.name
            refused_by[name] = refused_by.get(name, 0) + 1
            failed = "failed" if result.refused_by.status == "fail" else "errored"
            if (
                got["topic"] != "customers-dlq"
                or not headers[ERROR_HEADER].decode().startswith(f"rule {name} {failed}: ")
                or headers[STAGE_HEADER] != b"rule"
                or bytes(got["value"]) != values[int(key[1:])]
            ):
                mismatches.append(("refused", key, got["topic"], headers, name))
            continue
        tally["written"] += 1
        tally["masked"] += result.record["phone"] == "***" != converted["phone"]
        tally["none-erred"] += any(o.rule.name == "suffix" and o.failed for o in result.outcomes)
        expected = frame(V1_ID, _body(V1, result.record))
        if got["topic"] != "customers" or bytes(got["value"]) != expected:
            mismatches.append(("written", key, converted, result.record, got["topic"]))
    assert not mismatches, mismatches[:3]
    # every road is met: written and masked, refused by an ERROR condition, an erring ERROR
    # transform and a DLQ condition, an erring NONE transform that lets the record go on, and
    # the mapping's own dead letters (an age v1's int cannot hold)
    assert all(tally.values()), tally
    assert set(refused_by) == {"adult", "ratio", "scored"}, refused_by
    print(f"\n{len(rows)} records: {tally}, refused by {refused_by}")


def test_without_transforms_the_v1_rules_stage_is_the_conditions_projection(spark):
    """With CONDITIONs alone the stage is the one it was before transforms were taken: one
    projection, no rule stage's columns in the plan."""
    from converters.pipeline.v1rules import apply_v1_rules

    conditions = {"domainRules": [r for r in RULE_SET["domainRules"] if r["kind"] == "CONDITION"
                                  and r["type"] == "CEL"]}  # fmt: skip
    compiled = compile_v1_rules(contract_text({}, conditions), json.dumps(V1), "customers-value")
    assert [c.rule.name for c in compiled] == ["adult", "scored", "advisory"]
    frame_ = spark.createDataFrame([], "v1 struct<age:int,score:double>, error string, "
                                       "error_stage string")  # fmt: skip
    plan = apply_v1_rules(frame_, compiled)._jdf.queryExecution().analyzed().toString()
    assert "_v1_rule" in plan and "_rule_at" not in plan


@pytest.mark.parametrize(
    "rule, words",
    [
        (_rule("whole", "TRANSFORM", "CEL", "message", "ERROR"), "rule whole: a CEL TRANSFORM"),
        (
            _rule("every", "TRANSFORM", "CEL_FIELD", "value", "ERROR", tags=[]),
            "field acme.Customer.home: a TRANSFORM of a null record",
        ),  # fmt: skip
    ],
    ids=["a CEL transform", "a transform of a null record"],
)
def test_a_v1_rule_spark_cannot_run_still_stops_the_converter_with_exit_2_naming_it(rule, words):
    from schemacli.errors import SchemacliError

    text = contract_text({}, {"domainRules": [rule]})
    with pytest.raises(SchemacliError) as caught:
        compile_v1_rules(text, json.dumps(V1), "customers-value")
    assert int(caught.value.exit_code) == 2
    assert f"rule {rule['name']}" in str(caught.value) and words in str(caught.value)
