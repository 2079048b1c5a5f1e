"""Data-quality rules on a stream: ``stream_topic(..., rules=PATH)`` over the real broker and
registry applies a contract's CONDITIONs to each micro-batch as ``read_topic(rules=)`` does (one
stage, ``spark_avro.rulestage.decode_with_rules``): a record breaking a rule becomes a bad record
of kind ``rule`` naming the rule (with the rule's DLQ topic when its action is DLQ), the others
pass as good rows. The query runs with ``availableNow`` and is awaited to its end: no sleep.
"""

from __future__ import annotations

import json
import uuid

import pytest

from tests.integration.test_spark_reader import V2, _bootstrap, _url, create_topic, produce, ride

pytestmark = [pytest.mark.integration, pytest.mark.spark]

RULES = [
    {"name": "tipped", "kind": "CONDITION", "mode": "READ", "type": "CEL",
     "expr": "message.tip_amount > 0.0", "onFailure": "DLQ", "params": {"dlq.topic": "untipped"}},
    {"name": "few_passengers", "kind": "CONDITION", "mode": "READ", "type": "CEL",
     "expr": "message.passenger_count <= 3", "onFailure": "ERROR"},
]  # fmt: skip


def test_stream_topic_with_rules_turns_a_record_breaking_a_condition_into_a_bad_record(
    spark, kafka, registry, tmp_path
):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from spark_avro import stream_topic

    bootstrap, url = _bootstrap(kafka), _url(registry)
    topic = f"taxi-rules-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    serialize = AvroSerializer(SchemaRegistryClient({"url": url}), V2)
    context = SerializationContext(topic, MessageField.VALUE)
    rides = [
        ride(1, tip_amount=0.5, store_and_fwd_flag="N"),  # passes both
        ride(2, tip_amount=0.0, store_and_fwd_flag="N"),  # untipped: DLQ
        ride(3, tip_amount=1.0, store_and_fwd_flag=None),  # 4 passengers: ERROR
        ride(4, tip_amount=2.0, store_and_fwd_flag="Y"),  # 1 passenger: passes
    ]
    values = [serialize(r, context) for r in rides]
    produce(bootstrap, topic, values)
    contract = tmp_path / "v1.contract.json"
    contract.write_text(json.dumps({"ruleSet": {"domainRules": RULES}}, indent=2))
    seen: list = []

    def keep(batch, batch_id):
        seen.extend(batch.collect())

    query = stream_topic(
        spark, bootstrap, topic, subject=f"{topic}-value", registry_url=url,
        process_batch=keep, available_now=True, rules=contract,
    )  # fmt: skip
    assert query.awaitTermination(180), "the availableNow query did not end"
    assert query.exception() is None
    rows = {r.offset: r for r in seen}
    assert sorted(rows) == [0, 1, 2, 3]
    assert {o: (r.decode_error_kind, r.rule_dlq_topic) for o, r in rows.items()} == {
        0: (None, None), 1: ("rule", "untipped"), 2: ("rule", None), 3: (None, None),
    }  # fmt: skip
    assert rows[1].decode_error.startswith("rule tipped failed")
    assert rows[2].decode_error.startswith("rule few_passengers failed")
    # a refused record keeps its raw framed value; a good one has none
    assert bytes(rows[1].raw_value) == values[1] and rows[0].raw_value is None
    assert (rows[0].vendorId, rows[3].vendorId) == (1, 4)
    assert rows[0].decode_error is None and rows[3].decode_error is None
