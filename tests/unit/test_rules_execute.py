"""A rule set run on records as Confluent's serializers run it.

The same contract goes to our ``RuleRunner`` and to confluent-kafka's own ``AvroSerializer`` /
``AvroDeserializer`` (its CEL and CEL_FIELD executors, cel-python underneath), in process, over
the library's in-memory registry (``mock://``: the client's own, no network; the proof against a
real registry and broker is tests/integration's). For every record: refused by both or by
neither, and when written, the same bytes (transforms included).
"""

from __future__ import annotations

import io
import json
import random
import sys
from typing import Any

import fastavro
import pytest

pytest.importorskip("celpy")  # a dev dependency; present in CI
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor  # noqa: E402
from confluent_kafka.schema_registry.rules.cel.cel_field_executor import (  # noqa: E402
    CelFieldExecutor,
)
from confluent_kafka.schema_registry.schema_registry_client import (  # noqa: E402
    Metadata,
    RuleSet,
)
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from schemacli.contracts.avro.parse import parse_schema  # noqa: E402
from schemacli.contracts.rules.execute import RuleRunner  # noqa: E402
from schemacli.contracts.rules.model import parse_contract  # noqa: E402

_LIMIT = sys.getrecursionlimit()
CelExecutor.register()
CelFieldExecutor.register()
sys.setrecursionlimit(_LIMIT)  # cel-python raises Python's limit for the whole process


@pytest.fixture(autouse=True)
def _recursion_limit_given_back():
    """cel-python sets Python's recursion limit when it builds an environment: give it back,
    so no other test runs with a limit it did not choose."""
    yield
    sys.setrecursionlimit(_LIMIT)


SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "acme",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "total", "type": "double"},
        {"name": "count", "type": "int"},
        {"name": "email", "type": ["null", "string"], "default": None, "confluent:tags": ["PII"]},
        {"name": "phone", "type": "string", "confluent:tags": ["PII"]},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "lines", "type": {"type": "array", "items": "string"}},
        {
            "name": "ship",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "city", "type": "string"},
                        {"name": "zip", "type": "string", "confluent:tags": ["PII"]},
                    ],
                },
            ],
            "default": None,
        },
    ],
}


def rule(name: str, kind: str, rtype: str, expr: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "kind": kind, "mode": more.pop("mode", "WRITE"), "type": rtype,
            "expr": expr, **more}  # fmt: skip


RULE_SETS: dict[str, list[dict[str, Any]]] = {
    "conditions": [
        rule("totalNotNegative", "CONDITION", "CEL", "message.total >= 0.0"),
        rule("someLines", "CONDITION", "CEL", "size(message.lines) > 0 || message.count == 0"),
    ],
    "guard and none": [
        rule(
            "paidHasTotal",
            "CONDITION",
            "CEL",
            "message.status == 'PAID' ; message.total > 0.0",
            onFailure="NONE",
        ),  # fmt: skip
        rule("idShape", "CONDITION", "CEL", "message.id.matches('^[A-Z][0-9]+$')"),
    ],
    "errors absorbed": [
        rule(
            "emailOrNothing",
            "CONDITION",
            "CEL",
            "message.email == null || message.email.contains('@')",
        ),  # fmt: skip
        rule("divide", "CONDITION", "CEL", "message.count == 0 || 10 / message.count >= 1"),
    ],
    "field condition": [
        rule(
            "piiNotEmpty",
            "CONDITION",
            "CEL_FIELD",
            "value == null || size(value) > 0",
            tags=["PII"],
        ),  # fmt: skip
    ],
    "field transform": [
        rule("maskPii", "TRANSFORM", "CEL_FIELD", "typeName == 'STRING' ; 'XXX'", tags=["PII"]),
        rule("afterMask", "CONDITION", "CEL", "message.phone == 'XXX'"),
    ],
    "message transform": [
        rule(
            "upper",
            "TRANSFORM",
            "CEL",
            "message.count > 5 ; {'id': message.id, "
            "'total': message.total, 'count': 5, 'email': message.email, 'phone': message.phone,"
            " 'status': message.status, 'lines': message.lines, 'ship': message.ship}",
        ),  # fmt: skip
    ],
    "disabled and read": [
        rule("off", "CONDITION", "CEL", "false", disabled=True),
        rule("onRead", "CONDITION", "CEL", "false", mode="READ"),
        rule(
            "both",
            "CONDITION",
            "CEL",
            "message.total < 500.0",
            mode="WRITEREAD",
            onFailure="ERROR,NONE",
        ),  # fmt: skip
    ],
}


def records(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append(
            {
                "id": rng.choice(["A1", "B22", "c3", "", "Z9"]) + ("" if i % 3 else str(i)),
                "total": rng.choice([0.0, 12.5, -1.0, 999.0, 3.25]),
                "count": rng.choice([0, 1, 3, 7, -2]),
                "email": rng.choice([None, "a@b.c", "nobody", ""]),
                "phone": rng.choice(["555-1234", "", "XXX"]),
                "status": rng.choice(["NEW", "PAID"]),
                "lines": rng.choice([[], ["x"], ["a", "b"]]),
                "ship": rng.choice(
                    [None, {"city": "Oslo", "zip": "0150"}, {"city": "", "zip": ""}]
                ),
            }
        )
    return out


def encode(value: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(SCHEMA), value)
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_our_runner_refuses_and_transforms_as_confluents_serializer(name: str) -> None:
    body = {"ruleSet": {"domainRules": RULE_SETS[name]}}
    contract = parse_contract(json.dumps(body), f"{name}.contract.json")
    client = SchemaRegistryClient.new_client({"url": f"mock://{name.replace(' ', '-')}"})
    client.register_schema(
        "orders-value",
        Schema(
            json.dumps(SCHEMA),
            "AVRO",
            rule_set=RuleSet.from_dict(body["ruleSet"]),
            metadata=Metadata.from_dict({"properties": {}}),
        ),
    )
    ser = AvroSerializer(
        client, None, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    ctx = SerializationContext("orders", MessageField.VALUE)
    runner = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata)
    refused = 0
    for record in records(150, seed=len(name)):
        ours = runner.run(json.loads(json.dumps(record)), "WRITE")
        try:
            theirs: bytes | None = ser(json.loads(json.dumps(record)), ctx)
        except Exception:  # SerializationError: a rule's ERROR action refused it
            theirs = None
        if theirs is None:
            refused += 1
            assert ours.refused_by is not None, (record, ours.outcomes)
            continue
        assert ours.refused_by is None, (record, ours.refused_by)
        assert theirs[5:] == encode(ours.record), record
    print(f"{name}: {refused} of 150 refused by both")


def test_read_rules_run_in_reverse_order_on_the_deserializer_side() -> None:
    body = {
        "ruleSet": {
            "domainRules": [
                rule(
                    "first", "TRANSFORM", "CEL_FIELD", "name == 'phone' ; value + '1'", mode="READ"
                ),  # fmt: skip
                rule(
                    "second", "TRANSFORM", "CEL_FIELD", "name == 'phone' ; value + '2'", mode="READ"
                ),  # fmt: skip
            ]
        }
    }
    contract = parse_contract(json.dumps(body), "read.contract.json")
    client = SchemaRegistryClient.new_client({"url": "mock://read-order"})
    client.register_schema(
        "orders-value",
        Schema(json.dumps(SCHEMA), "AVRO", rule_set=RuleSet.from_dict(body["ruleSet"])),
    )
    ser = AvroSerializer(
        client, None, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    de = AvroDeserializer(client, None, conf={"use.latest.version": True})
    ctx = SerializationContext("orders", MessageField.VALUE)
    record = records(1, seed=1)[0]
    theirs = de(ser(dict(record), ctx), ctx)
    ours = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata).run(
        fastavro.schemaless_reader(io.BytesIO(encode(record)), fastavro.parse_schema(SCHEMA)),
        "READ",
    )
    assert ours.record["phone"] == theirs["phone"] == record["phone"] + "21"


def test_a_dlq_rule_names_its_topic_and_refuses_the_record() -> None:
    body = {
        "ruleSet": {
            "domainRules": [
                rule(
                    "positive",
                    "CONDITION",
                    "CEL",
                    "message.total >= 0.0",
                    onFailure="DLQ",
                    params={"dlq.topic": "orders-dlq"},
                ),  # fmt: skip
            ]
        }
    }
    contract = parse_contract(json.dumps(body), "dlq.contract.json")
    runner = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata)
    bad = dict(records(1, seed=2)[0], total=-1.0)
    result = runner.run(bad, "WRITE")
    assert result.refused_by is not None and result.refused_by.rule.name == "positive"
    assert result.dlq_topic == "orders-dlq"
    assert runner.run(dict(bad, total=1.0), "WRITE").refused_by is None


def test_a_field_transform_with_the_tags_of_an_earlier_one_is_skipped_on_write() -> None:
    body = {
        "ruleSet": {
            "domainRules": [
                rule("mask", "TRANSFORM", "CEL_FIELD", "typeName == 'STRING' ; 'A'", tags=["PII"]),
                rule("again", "TRANSFORM", "CEL_FIELD", "typeName == 'STRING' ; 'B'", tags=["PII"]),
            ]
        }
    }
    contract = parse_contract(json.dumps(body), "twice.contract.json")
    runner = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata)
    result = runner.run(records(1, seed=3)[0], "WRITE")
    assert result.record["phone"] == "A"
    assert [o.rule.name for o in result.outcomes] == ["mask"]
