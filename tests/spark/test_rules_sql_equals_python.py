"""Two roads, one answer: a rule's status in Spark SQL (spark_avro.rules) equals our Python
evaluator's (contracts.rules.execute) on the same records, nulls and errors included, and
read-side rule refusals become bad records of kind ``rule`` naming the rule; a reader written by
``spark codegen --rules`` gives read_topic(rules=PATH)'s rows on the same records."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.execute import RuleRunner
from schemacli.contracts.rules.model import parse_contract
from spark_avro.decode import decode_confluent, split_bad_records
from spark_avro.rules import compile_rules, rule_table, statuses
from spark_avro.rulestage import AT_COLUMN, VALUE_COLUMN, apply_rules, rule_codes
from tests.spark.framing import confluent, kafka_frame
from tests.spark.rules_readers import assert_generated_reader_gives_read_topics_rows

SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "acme",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "total", "type": "double"},
        {"name": "count", "type": "long"},
        {"name": "small", "type": "int"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "discount", "type": ["null", "double"], "default": None},
        {"name": "paid", "type": "boolean"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "scores", "type": {"type": "map", "values": "long"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "ship",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "city", "type": "string"},
                        {"name": "zip", "type": ["null", "string"], "default": None},
                    ],
                },
            ],
            "default": None,
        },
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}],
                },
            },
        },
    ],
}
EXPRESSIONS = [
    "message.total >= 0.0",
    "message.count > 0 && message.small < 100",
    "message.count / message.small > 1",  # errors on small == 0
    "message.count % 3 == 0 || message.total > 10.0",
    "message.count * 4611686018427387904 > 0",  # overflows for |count| >= 2
    "message.count + 9223372036854775000 > 0",  # overflows for count > 807
    "-message.count < 0",
    "message.total / 0.0 > 0.0",
    "message.id.size() > 2",
    "message.id.startsWith('A') || message.id.endsWith('9')",
    "message.id.contains('-')",
    "message.id.matches('^[A-Z][0-9]+$')",
    "message.email == null || message.email.contains('@')",
    "message.email.contains('@')",  # an error when email is null
    "message.email != null && message.email.endsWith('.com')",
    "message.discount == null || message.discount < message.total",
    "message.discount > 0.0 || true",
    "message.discount > 0.0 && false",
    "!(message.discount > 0.0)",
    "message.paid ? message.total > 0.0 : message.total == 0.0",
    "message.status == 'PAID' ; message.paid",
    "message.status in ['NEW', 'PAID']",
    "'x' in message.tags",
    "size(message.tags) <= 2",
    "message.tags.all(t, t.size() > 0)",
    "message.tags.exists(t, t == 'b')",
    "message.tags.exists_one(t, t == 'a')",
    "size(message.tags.filter(t, t != 'a')) == 1",
    "message.tags[0] == 'a'",  # an error for an empty list
    "'k' in message.scores",
    "message.scores['k'] > 0",  # an error when k is missing
    "message.scores.k > 0",
    "message.day > 20000",
    "message.at > timestamp('2026-01-01T00:00:00Z')",
    "message.ship.city != ''",  # an error when ship is null
    "message.ship == null || message.ship.city.size() > 0",
    "has(message.ship.zip)",
    "message.ship.zip == null",
    "message.lines.all(l, l.qty > 0)",
    "message.lines.exists(l, l.sku.startsWith('A'))",
    "message.lines.all(l, 10 / l.qty > 1)",  # an error for qty 0 unless a false wins
    "size(message.lines.map(l, l.qty)) == size(message.lines)",
    "double(message.small) < message.total",
    "int(message.total) == message.count",
    "string(message.count) == '3'",
    "message.id + '!' == 'A1!'",
    # chains of && / || with operands that err: one CASE over the operands (compile_rule's code)
    "message.email == null || message.email.size() > 3 || message.email.contains('@')",
    "message.email.size() > 3 || message.discount > 1.0 || message.count > 0",
    "message.count > 0 && message.email.endsWith('.com') && message.discount < 10.0",
    "message.count / message.small > 1 || message.ship.city == 'Oslo'",
    "message.count / message.small > 1 && (message.ship == null || message.ship.city != '')",
    "message.count > 1 ; message.email == null || message.email.contains('@')",
]


def records(n: int) -> list[dict[str, Any]]:
    rng = random.Random(40)
    out = []
    for _ in range(n):
        out.append(
            {
                "id": rng.choice(["A1", "B-22", "c3", "", "Z9", "A99"]),
                "total": rng.choice([0.0, 12.5, -1.0, 999.0, 3.25, -0.0]),
                "count": rng.choice([0, 1, 3, 7, -2, 900, 2**62]),
                "small": rng.choice([0, 1, 3, 150, -4]),
                "email": rng.choice([None, "a@b.com", "nobody", ""]),
                "discount": rng.choice([None, 0.0, 5.0, 2000.0]),
                "paid": rng.choice([True, False]),
                "status": rng.choice(["NEW", "PAID"]),
                "tags": rng.choice([[], ["a"], ["a", "b"], ["", "x", "a"]]),
                "scores": rng.choice([{}, {"k": 1}, {"k": -1, "j": 2}]),
                "day": rng.choice([0, 20000, 20500]),
                "at": rng.choice([0, 1767225600000, 1767225600001, 1800000000000]),
                "ship": rng.choice([None, {"city": "Oslo", "zip": None}, {"city": "", "zip": "1"}]),
                "lines": rng.choice(
                    [
                        [],
                        [{"sku": "A1", "qty": 2}],
                        [{"sku": "B", "qty": 0}, {"sku": "A", "qty": -1}],
                    ]
                ),
            }
        )
    return out


def _contract(exprs: list[str], mode: str = "READ"):
    rules = [
        {
            "name": f"r{i}",
            "kind": "CONDITION",
            "mode": mode,
            "type": "CEL",
            "expr": e,
            "onFailure": "ERROR",
        }  # fmt: skip
        for i, e in enumerate(exprs)
    ]
    return parse_contract(json.dumps({"ruleSet": {"domainRules": rules}}), "t.contract.json")


def _decoded(spark, rows: list[dict[str, Any]]):
    text = json.dumps(SCHEMA)
    raw = kafka_frame(spark, [confluent(1, text, r) for r in rows])
    raw = raw.withColumn(VALUE_COLUMN, raw["value"])
    return decode_confluent(
        raw, writer_schemas={1: text}, reader_schema=text, passthrough=(VALUE_COLUMN,)
    )


def test_every_expression_has_a_sql_form():
    compiled = compile_rules(_contract(EXPRESSIONS), parse_schema(SCHEMA), "READ")
    assert len(compiled) == len(EXPRESSIONS)


def test_the_sql_road_gives_the_python_evaluators_status_on_every_record(spark):
    rows = records(300)
    contract = _contract(EXPRESSIONS)
    schema = parse_schema(SCHEMA)
    compiled = compile_rules(contract, schema, "READ")
    # READ runs the rules in reverse order: name them by rule, not by place
    frame = statuses(_decoded(spark, rows), compiled).orderBy("offset").collect()
    runner = RuleRunner(contract.rule_set, schema, contract.metadata)
    mismatches = []
    tally = {"pass": 0, "fail": 0, "error": 0}
    for row, record in zip(frame, rows, strict=True):
        decoded_record = _as_decoded(record)
        by_rule = {o.rule.name: o.status for o in runner.run(decoded_record, "READ").outcomes}
        for i, c in enumerate(compiled):
            sql = row[f"rule_{i}"]
            tally[sql] += 1
            if sql != by_rule[c.rule.name]:
                mismatches.append((c.rule.expr, record, sql, by_rule[c.rule.name]))
    assert not mismatches, mismatches[:5]
    assert all(tally.values()), tally  # every status was met
    print(f"{len(rows)} records x {len(compiled)} rules: {tally}")


def _as_decoded(record: dict[str, Any]) -> dict[str, Any]:
    """What fastavro's deserializer hands the executors for ``record`` (a date as a date, a
    timestamp as an aware datetime)."""
    import io

    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, record)
    buffer.seek(0)
    return fastavro.schemaless_reader(buffer, parsed, parsed)


def test_a_record_a_read_rule_refuses_is_a_bad_record_of_kind_rule_naming_it(spark):
    rows = records(40)
    contract = _contract(
        ["message.total >= 0.0", "message.email == null || message.email.contains('@')"]
    )
    dlq = contract.rule_set.domain_rules[0]
    assert dlq.name == "r0"
    compiled = compile_rules(contract, parse_schema(SCHEMA), "READ")
    checked = apply_rules(_decoded(spark, rows), rule_table(compiled))
    good, bad = split_bad_records(checked)
    bad_rows = bad.collect()
    runner = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata)
    expected = [runner.run(_as_decoded(r), "READ").refused_by for r in rows]
    assert good.count() + len(bad_rows) == len(rows)
    assert len(bad_rows) == sum(1 for e in expected if e is not None) > 0
    for row in bad_rows:
        refused = expected[row["offset"]]
        assert refused is not None
        assert row["decode_error_kind"] == "rule"
        assert row["decode_error"].startswith(f"rule {refused.rule.name} ")
        assert row["raw_value"] is not None
    assert VALUE_COLUMN not in checked.columns


def test_the_refusing_rule_is_the_python_engines_on_every_record(spark):
    """The rule that refuses a record, whether it failed or erred, and its DLQ topic, as the
    Python engine's ``refused_by`` says, on every record: in ``apply_rules``' bad-record
    columns and in ``rule_codes``' ``_rule_at`` (which the converter's v1 rules read), over
    every expression with onFailure NONE, ERROR and DLQ mixed, in both orders, so that the
    refusing rule varies from record to record."""
    rows = records(300)
    decoded = _decoded(spark, rows)
    schema = parse_schema(SCHEMA)
    refusing, words = set(), set()
    for exprs in (EXPRESSIONS, EXPRESSIONS[::-1]):
        rules = [
            {"name": f"r{i}", "kind": "CONDITION", "mode": "READ", "type": "CEL", "expr": e,
             "onFailure": ("NONE", "ERROR", "DLQ")[i % 3],
             **({"params": {"dlq.topic": f"dlq-{i}"}} if i % 3 == 2 else {})}
            for i, e in enumerate(exprs)
        ]  # fmt: skip
        body = json.dumps({"ruleSet": {"domainRules": rules}})
        contract = parse_contract(body, "t.contract.json")
        compiled = compile_rules(contract, schema, "READ")
        table = rule_table(compiled)
        acting = [c.rule.name for c in compiled if c.action_on_failure != "NONE"]
        assert len(acting) == len(table) < len(exprs)
        applied = apply_rules(decoded, table).orderBy("offset").collect()
        coded = rule_codes(decoded, table).orderBy("offset").collect()
        runner = RuleRunner(contract.rule_set, schema, contract.metadata)
        for row, coded_row, record in zip(applied, coded, rows, strict=True):
            result = runner.run(_as_decoded(record), "READ")
            refused = result.refused_by
            if refused is None:
                assert row["decode_error"] is None and row["decode_error_kind"] is None, record
                assert coded_row[AT_COLUMN] is None, record
                continue
            code = 2 if refused.status == "error" else 1
            word = ("failed", "errored")[code - 1]
            refusing.add(refused.rule.expr)
            words.add(word)
            assert row["decode_error"].startswith(f"rule {refused.rule.name} {word}: "), record
            assert row["decode_error_kind"] == "rule" and row["raw_value"] is not None
            assert row["rule_dlq_topic"] == result.dlq_topic, (row, record)
            assert coded_row[AT_COLUMN] == 2 * acting.index(refused.rule.name) + code, record
    assert len(refusing) >= 6 and words == {"failed", "errored"}, (refusing, words)


def test_twenty_rules_keep_every_generated_method_small_enough_for_the_jit(spark):
    """HotSpot never compiles a method over 8,000 bytes of bytecode (HugeMethodLimit): a
    whole-stage method past it runs in the bytecode interpreter. The rules' codes are computed
    in a projection of their own (apply_rules), outside the decode's generated method."""
    simple = [e for e in EXPRESSIONS if not any(m in e for m in (".all(", ".exists", ".filter(",
                                                                     ".map("))][:20]  # fmt: skip
    assert len(simple) == 20
    compiled = compile_rules(_contract(simple), parse_schema(SCHEMA), "READ")
    checked = apply_rules(_decoded(spark, records(3)), rule_table(compiled))
    stages = checked._jdf.queryExecution().debug().codegenToSeq()  # type: ignore[attr-defined]
    sizes = [stages.apply(i)._3().maxMethodCodeSize() for i in range(stages.size())]
    assert len(sizes) >= 2, sizes  # the decode's stage and the stage after the rules' codes
    assert max(sizes) <= 8000, sizes


def test_a_filter_over_the_rules_result_decodes_each_record_once(spark):
    """Spark pushes a filter down through deterministic projections, writing each column it
    names as the expression that made it: a filter on ``decode_error`` over the rules' result
    (``split_bad_records``, a ``where`` on the kind) became one condition holding the decode's
    ``from_avro`` hundreds of times (391 for 20 rules), decoding each record as often and
    costing 20-150x the unfiltered read (bench/README.md). The rules' first projection is
    nondeterministic, so a filter stops above it: the plan decodes each record once."""
    simple = [e for e in EXPRESSIONS if not any(m in e for m in (".all(", ".exists", ".filter(",
                                                                     ".map("))][:20]  # fmt: skip
    compiled = compile_rules(_contract(simple), parse_schema(SCHEMA), "READ")
    rows = records(60)
    checked = apply_rules(_decoded(spark, rows), rule_table(compiled))
    good, bad = split_bad_records(checked)
    refused = checked.where("decode_error_kind = 'rule'")
    before = spark.conf.get("spark.sql.debug.maxToStringFields")
    spark.conf.set("spark.sql.debug.maxToStringFields", "100000")  # the whole plan, untruncated
    try:
        for frame in (good, bad, refused):
            plan = frame._jdf.queryExecution().optimizedPlan().toString()  # type: ignore[attr-defined]
            assert plan.count("from_avro(") == 1, plan.count("from_avro(")
    finally:
        spark.conf.set("spark.sql.debug.maxToStringFields", before)
    counts = good.count(), bad.count(), refused.count()
    assert counts[0] + counts[1] == len(rows) and counts[2] == counts[1] > 0, counts


def test_a_dlq_rule_names_its_topic_on_the_bad_record(spark):
    body = {"ruleSet": {"domainRules": [
        {"name": "positive", "kind": "CONDITION", "mode": "WRITEREAD", "type": "CEL",
         "expr": "message.total >= 0.0", "onFailure": "ERROR,DLQ",
         "params": {"dlq.topic": "orders-dlq"}}]}}  # fmt: skip
    contract = parse_contract(json.dumps(body), "dlq.contract.json")
    compiled = compile_rules(contract, parse_schema(SCHEMA), "READ")
    rows = [dict(records(1)[0], total=-5.0), dict(records(1)[0], total=5.0)]
    out = apply_rules(_decoded(spark, rows), rule_table(compiled)).orderBy("offset").collect()
    assert out[0]["rule_dlq_topic"] == "orders-dlq" and out[0]["decode_error_kind"] == "rule"
    assert out[1]["rule_dlq_topic"] is None and out[1]["decode_error"] is None


@pytest.mark.parametrize(
    "expr, words",
    [
        ("message.at.getHours() > 1", "function getHours()"),
        ("message.total >= 0", "compares double >= int"),
        ("string(message.total) == '1.0'", "function string()"),
    ],
)
def test_what_has_no_sql_form_is_refused_naming_the_rule(expr, words):
    from spark_avro.rules import RulesNotCompiled

    with pytest.raises(RulesNotCompiled, match="rule r0") as caught:
        compile_rules(_contract([expr]), parse_schema(SCHEMA), "READ")
    assert words in str(caught.value)


def test_read_topic_with_rules_from_a_contract_file_marks_refused_records(
    spark, tmp_path, monkeypatch
):
    import spark_avro.reader as reader

    rows = records(30)
    text = json.dumps(SCHEMA)
    path = tmp_path / "v1.contract.json"
    body = {"ruleSet": {"domainRules": [
        {"name": "positive", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
         "expr": "message.total >= 0.0", "onFailure": "DLQ", "params": {"dlq.topic": "dlq"}},
        {"name": "readOnly", "kind": "CONDITION", "mode": "READ", "type": "CEL",
         "expr": "false"}]}}  # fmt: skip
    path.write_text(json.dumps(body))
    monkeypatch.setattr(
        reader, "kafka_source",
        lambda *a, **k: kafka_frame(spark, [confluent(1, text, r) for r in rows]),
    )  # fmt: skip
    frame = reader.read_topic(
        spark, "unused:9092", "orders", schemas={1: text}, reader_schema=text,
        rules=path, rules_mode="write",
    )  # fmt: skip
    bad = frame.where("decode_error_kind = 'rule'").collect()
    assert {r["offset"] for r in bad} == {i for i, r in enumerate(rows) if r["total"] < 0}
    assert all(r["decode_error"].startswith("rule positive failed") for r in bad)
    assert all(r["rule_dlq_topic"] == "dlq" for r in bad)
    nested = reader.read_topic(
        spark, "unused:9092", "orders", schemas={1: text}, reader_schema=text,
        rules=path, rules_mode="write", flatten=False,
    )  # fmt: skip
    assert nested.where("decode_error_kind = 'rule'").count() == len(bad)


def test_the_converter_dead_letters_a_record_breaking_v1s_write_rules(spark):
    from converters.pipeline.v1rules import apply_v1_rules, compile_v1_rules, contract_text

    v1 = {"type": "record", "name": "Ride", "fields": [
        {"name": "total", "type": "double"},
        {"name": "flag", "type": ["null", "string"]}]}  # fmt: skip
    rules = {"domainRules": [
        {"name": "positive", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
         "expr": "message.total >= 0.0", "onFailure": "ERROR"},
        {"name": "advisory", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
         "expr": "message.flag != null", "onFailure": "NONE"},
        {"name": "readOnly", "kind": "CONDITION", "mode": "READ", "type": "CEL",
         "expr": "false"}]}  # fmt: skip
    text = contract_text({}, rules)
    compiled = compile_v1_rules(text, json.dumps(v1), "rides-value")
    assert [c.rule.name for c in compiled] == ["positive", "advisory"]
    frame = spark.createDataFrame(
        [((5.0, None), None, None), ((-1.0, "Y"), None, None), (None, "x: bad", "convert")],
        "v1 struct<total:double,flag:string>, error string, error_stage string",
    )
    out = apply_v1_rules(frame, compiled).collect()
    assert (out[0]["error"], out[0]["v1"]["total"]) == (None, 5.0)  # NONE does not refuse
    assert out[1]["error"].startswith("rule positive failed") and out[1]["v1"] is None
    assert out[1]["error_stage"] == "rule"
    assert (out[2]["error"], out[2]["error_stage"]) == ("x: bad", "convert")
    assert compile_v1_rules(None, json.dumps(v1), "rides-value") == []
    assert contract_text({}, {"migrationRules": []}) is None


def test_a_generated_reader_with_rules_gives_read_topics_rows_on_the_same_records(
    spark, tmp_path, monkeypatch
):
    text = json.dumps(SCHEMA)
    acting = {
        "positive": ("message.total >= 0.0", "READ", "DLQ"),
        "email": ("message.email.contains('@')", "READ", "ERROR"),  # errors on null
        "firstTag": ("message.tags[0] == 'a'", "READ", "NONE"),  # not acted on
        "ship": ("message.ship.city != ''", "WRITEREAD", "ERROR,DLQ"),  # DLQ on READ
    }
    rules = [
        {"name": name, "kind": "CONDITION", "mode": mode, "type": "CEL", "expr": expr,
         "onFailure": action, "params": {"dlq.topic": f"{name}-dlq"}}
        for name, (expr, mode, action) in acting.items()
    ]  # fmt: skip
    rules.append({"name": "writeOnly", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
                  "expr": "false"})  # fmt: skip
    rows = records(60)
    raw = kafka_frame(spark, [confluent(1, text, r) for r in rows] + [None, b"\x01junk"])
    both = assert_generated_reader_gives_read_topics_rows(
        spark, tmp_path, monkeypatch, schema=SCHEMA, subject="orders-value", topic="orders",
        body={"ruleSet": {"domainRules": rules}}, raw=raw,
    )  # fmt: skip
    for ours, _ in both.frames.values():
        found = ours.collect()
        kinds = {(r["decode_error_kind"], r["rule_dlq_topic"]) for r in found}
        # refusals by a DLQ rule, an ERROR rule and an ERROR,DLQ one; a tombstone; a bad frame
        assert {("rule", "positive-dlq"), ("rule", None), ("rule", "ship-dlq")} <= kinds
        assert {(None, None), ("not_framed", None)} <= kinds
        assert any(r["decode_error"].startswith("rule email errored") for r in found
                   if r["decode_error_kind"] == "rule")  # fmt: skip
        assert not any("firstTag" in (r["decode_error"] or "") for r in found)
