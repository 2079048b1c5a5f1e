"""The proof that schemacli runs data-quality rules as the executors users run (issue 40, §4;
docs/quality.md#the-proof).

One seeded set of 1,200 records over a schema with nested records, unions, arrays, maps,
logical types and tags (inline and in the subject's metadata), and one rule set of 31 rules
(CEL and CEL_FIELD, conditions and transforms, WRITE, READ and WRITEREAD, a guard, a disabled
rule, every onFailure: ERROR, NONE, DLQ), go through three roads:

* (a) schemacli's own evaluation: ``RuleRunner`` (schemacli.contracts.rules) record by record,
  and ``schemacli rules test`` over the same records in an Avro container file;
* (b) confluent-kafka-python's CEL executors (cel-python) inside a real ``AvroSerializer``
  (producing to the real broker, its DLQ action writing to the real DLQ topic) and a real
  ``AvroDeserializer`` (consuming that topic), both reading the rule set the AxonOps registry
  keeps (registered with ``schemacli register --rules``);
* (c) Google's CEL-Java run as Confluent's Java serializer runs it (``jvmscan.run_rules``,
  ``RuleRun``) on the same bytes.

Per record and rule: the same verdict (pass, fail, error) and the same action, the same
records refused and sent to the DLQ (with the rule's name in the DLQ header), and the same
bytes written (after the WRITE transforms) and read (after the READ transforms). The six rules
named ``diff-*`` are where the executors themselves differ; each is asserted to differ exactly
as its documented class says (``DIFFERENCES``, docs/quality.md#where-the-executors-differ),
record by record, and to differ on some records, so the class is live.
"""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import io
import json
import random
import re
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro
import pytest
from typer.testing import CliRunner

from converters.quality import jvmscan
from schemacli.app import app
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.execute import Result, RuleRunner
from schemacli.contracts.rules.model import parse_contract

pytestmark = [pytest.mark.integration, pytest.mark.rule_sets]

N_RECORDS = 1_200
SEED = 40

ADDRESS = {"type": "record", "name": "Address", "fields": [
    {"name": "street", "type": "string", "confluent:tags": ["PII"]},
    {"name": "city", "type": "string"},
    {"name": "zip", "type": "string", "confluent:tags": ["PII"]},
]}  # fmt: skip
LINE = {"type": "record", "name": "Line", "fields": [
    {"name": "sku", "type": "string"},
    {"name": "qty", "type": "int"},
    {"name": "price", "type": "double"},
    {"name": "note", "type": ["null", "string"], "default": None, "confluent:tags": ["FREE_TEXT"]},
]}  # fmt: skip
CUSTOMER = {"type": "record", "name": "Customer", "fields": [
    {"name": "name", "type": "string"},
    {"name": "email", "type": ["null", "string"], "default": None, "confluent:tags": ["PII"]},
    {"name": "phone", "type": "string", "confluent:tags": ["PII"]},
    {"name": "vip", "type": "boolean"},
    {"name": "address", "type": ["null", ADDRESS], "default": None},
]}  # fmt: skip
SCHEMA = {"type": "record", "name": "Order", "namespace": "proof", "fields": [
    {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "code", "type": "string"},
    {"name": "total", "type": "double"},
    {"name": "quantity", "type": "int"},
    {"name": "discount", "type": ["null", "float"], "default": None},
    {"name": "status", "type": {"type": "enum", "name": "Status",
                                "symbols": ["NEW", "PAID", "SHIPPED", "CANCELLED"]}},
    {"name": "customer", "type": CUSTOMER},
    {"name": "lines", "type": {"type": "array", "items": LINE}},
    {"name": "attributes", "type": {"type": "map", "values": "string"}},
    {"name": "counters", "type": {"type": "map", "values": "long"}},
    {"name": "payload", "type": ["null", "string", "long"], "default": None},
    {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "ship_date", "type": ["null", {"type": "int", "logicalType": "date"}],
     "default": None},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                                "scale": 2}},
    {"name": "fingerprint", "type": {"type": "fixed", "name": "Fingerprint", "size": 4}},
    {"name": "token", "type": "string"},
]}  # fmt: skip
# a tag given by the subject's metadata (a field path), not in the schema
METADATA = {"tags": {"proof.Order.token": ["SECRET"]}, "properties": {"owner": "proof"}}
DLQ_TOPIC = "dlq.topic"  # the rule parameter naming a DLQ rule's topic


def rule(
    name: str,
    expr: str,
    *,
    kind: str = "CONDITION",
    rtype: str = "CEL",
    mode: str = "WRITE",
    on_failure: str | None = "NONE",
    **more: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "kind": kind, "type": rtype, "mode": mode, "expr": expr}
    if on_failure is not None:
        out["onFailure"] = on_failure
    return {**out, **more}


def cap_quantity() -> str:
    """A whole-record TRANSFORM: the record again, with quantity capped at 50."""
    names = [f["name"] for f in SCHEMA["fields"]]
    fields = ", ".join(f"'{n}': " + ("50" if n == "quantity" else f"message.{n}") for n in names)
    return f"message.quantity > 50 ; {{{fields}}}"


def rules(dlq: str) -> list[dict[str, Any]]:
    """The rule set; ``dlq`` is the topic the DLQ rules name."""
    to_dlq = {"on_failure": "DLQ", "params": {DLQ_TOPIC: dlq}}
    pii = {"rtype": "CEL_FIELD", "tags": ["PII"]}
    return [
        rule("total-not-negative", "message.total >= 0.0", on_failure="ERROR"),
        rule("quantity-positive", "message.quantity > 0", **to_dlq),
        rule("status-open", "message.status in ['NEW', 'PAID', 'SHIPPED']"),
        rule("paid-has-lines", "message.status == 'PAID' ; size(message.lines) > 0"),
        rule("lines-qty-positive", "message.lines.all(l, l.qty > 0)", **to_dlq),
        rule("some-sku", "message.lines.exists(l, l.sku.startsWith('SKU-'))"),
        rule("email-shape",
             "message.customer.email == null || message.customer.email.contains('@')"),
        rule("channel-known", "'channel' in message.attributes && "
             "message.attributes['channel'] in ['web', 'shop']"),
        rule("counters-small", "message.counters.all(k, message.counters[k] < 1000)"),
        rule("code-shape", "message.code.matches('^[A-Z]{2}-[0-9]{3}$')"),
        rule("vip-discount", "message.customer.vip ; message.discount > 0.0"),
        rule("payload-short", "message.payload == null || type(message.payload) == int || "
             "size(message.payload) < 12"),
        rule("fingerprint-size", "size(message.fingerprint) == 4"),
        rule("address-city",
             "message.customer.address == null || message.customer.address.city != ''"),
        rule("line-totals", "message.lines.map(l, l.price * double(l.qty)).all(x, x < 5000.0)"),
        rule("pii-not-empty", "typeName == 'STRING' ; size(value) > 0", **pii),
        rule("mask-pii", "typeName == 'STRING' ; size(value) > 3 ? 'x' + string(size(value)) "
             "+ '***' : '***'", kind="TRANSFORM", on_failure="ERROR", **pii),
        rule("masked", "message.customer.phone.endsWith('***')"),
        rule("note-short", "typeName == 'STRING' ; size(value) <= 24", rtype="CEL_FIELD",
             tags=["FREE_TEXT"], **to_dlq),
        rule("redact-secret", "'[redacted]'", kind="TRANSFORM", rtype="CEL_FIELD",
             tags=["SECRET"], on_failure=None),
        rule("cap-quantity", cap_quantity(), kind="TRANSFORM"),
        rule("read-total-sane", "message.total < 9000.0", mode="READ", on_failure="ERROR"),
        rule("read-mark-secret", "typeName == 'STRING' ; '<' + value + '>'", kind="TRANSFORM",
             rtype="CEL_FIELD", tags=["SECRET"], mode="READ"),
        rule("id-present", "size(message.id) == 36", mode="WRITEREAD", on_failure="ERROR,NONE"),
        rule("never", "false", disabled=True),
        # where the executors differ (DIFFERENCES): conditions with onFailure NONE, so that
        # refusals and bytes stay comparable
        rule("diff-falsy-result", "message.customer.name"),
        rule("diff-matches-whole", "message.code.matches('[A-Z]{2}-[0-9]+')"),
        rule("diff-double-vs-int", "message.total >= 0"),
        rule("diff-timestamp-millis", "message.created_at > 1600000000000"),
        rule("diff-number-vs-null", "message.ship_date != null"),
        rule("diff-guard-error", "message.payload > 10 ; false"),
    ]  # fmt: skip


def records(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` seeded records: most pass the ERROR and DLQ rules, each fails on a few percent."""
    rng = random.Random(seed)

    def pick(*weighted: tuple[Any, int]) -> Any:
        return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]

    out = []
    for i in range(n):
        lines = [
            {
                "sku": pick(("SKU-1", 5), ("SKU-22", 3), ("X-9", 2), ("sku-3", 1)),
                "qty": pick((1, 10), (2, 6), (40, 3), (0, 1)),
                "price": pick((1.5, 4), (10.0, 4), (99.99, 2), (250.0, 1)),
                "note": pick((None, 10), ("", 2), ("fragile", 4), ("leave it at the back door", 1)),
            }
            for _ in range(pick((0, 2), (1, 5), (2, 3), (3, 1)))
        ]  # fmt: skip
        out.append(
            {
                "id": str(uuid.UUID(int=rng.getrandbits(128))),
                "code": pick(("AB-123", 8), ("XY-999", 4), ("AB-1234", 2), ("ab-123", 2),
                             ("Q-12", 2), ("AB-12x", 2)),
                "total": pick((12.5, 8), (3.25, 6), (0.0, 3), (999.0, 3), (-1.0, 1), (9500.0, 1)),
                "quantity": pick((1, 8), (3, 6), (7, 4), (60, 2), (120, 1), (0, 1)),
                "discount": pick((None, 6), (0.5, 3), (0.125, 1)),
                "status": pick(("NEW", 4), ("PAID", 4), ("SHIPPED", 3), ("CANCELLED", 1)),
                "customer": {
                    "name": pick(("Ada", 5), ("Bo", 4), ("", 1)),
                    "email": pick((None, 3), ("a@b.c", 5), ("nobody", 2), ("", 1)),
                    "phone": pick(("555-1234", 7), ("12", 2), ("", 1)),
                    "vip": rng.random() < 0.9,  # a false boolean fails every CEL_FIELD condition
                    "address": pick(
                        (None, 3),
                        ({"street": "Main 1", "city": "Oslo", "zip": "0150"}, 5),
                        ({"street": "", "city": "", "zip": "9"}, 1),
                    ),
                },
                "lines": lines,
                "attributes": pick(({}, 3), ({"channel": "web"}, 4),
                                   ({"channel": "fax", "x": "y"}, 2), ({"channel": "shop"}, 2)),
                "counters": pick(({}, 4), ({"a": 1}, 4), ({"a": 5, "b": 2000}, 2)),
                "payload": pick((None, 4), ("short", 3), ("a rather long text", 2), (42, 2),
                                (-7, 1)),
                "created_at": dt.datetime.fromtimestamp(
                    pick((1_500_000_000, 1), (1_650_000_000, 2), (1_700_000_000, 3)), tz=dt.UTC
                ),
                "ship_date": pick((None, 3), (dt.date(2024, 1, 2), 3), (dt.date(1970, 1, 1), 1)),
                "amount": decimal.Decimal(pick(("0.00", 1), ("12.34", 3), ("-5.50", 1))),
                "fingerprint": bytes(rng.getrandbits(8) for _ in range(4)),
                "token": pick(("s3cr3t", 2), (f"tok-{i}", 3), ("", 1)),
            }
        )  # fmt: skip
    return out


# ---- where the executors differ -----------------------------------------------------------

Verdicts = tuple[str, str, str]  # (schemacli, confluent-kafka-python, CEL-Java)


def _verdict(value: bool) -> str:
    return "pass" if value else "fail"


def _millis(value: Any) -> int:
    return int(value.timestamp() * 1000) if isinstance(value, dt.datetime) else int(value)


@dataclass(frozen=True)
class Difference:
    """A documented difference of the executors (docs/quality.md#where-the-executors-differ):
    the rule showing it, what each road gives for a record (from the record's values), and
    the upstream code or issue that makes it so."""

    rule: str
    what: str
    upstream: str
    expected: Callable[[dict[str, Any]], Verdicts]


DIFFERENCES = {
    d.rule: d
    for d in [
        Difference(
            "diff-falsy-result",
            "a CONDITION whose result is not a bool: Python fails it when falsy ('', 0, null), "
            "Java only when it is false",
            "confluentinc/confluent-kafka-python#1852 (serde: `if not result`); "
            "confluentinc/schema-registry AbstractKafkaSchemaSerDe "
            "(`Boolean.FALSE.equals(output)`)",
            lambda r: (
                _verdict(bool(r["customer"]["name"])),
                _verdict(bool(r["customer"]["name"])),
                "pass",
            ),
        ),
        Difference(
            "diff-matches-whole",
            "`matches`: a search for the pattern in Python (RE2, the CEL spec), a match of "
            "the whole string in Java (java.util.regex, Confluent's default `pcre` engine)",
            "confluentinc/schema-registry#4295 (CelUtils.pcreMatches, "
            "`Pattern.matcher(value).matches()`); cloud-custodian/cel-python "
            "`function_matches` (`re2.search`)",
            lambda r: (
                _verdict(re.search("[A-Z]{2}-[0-9]+", r["code"]) is not None),
                _verdict(re.search("[A-Z]{2}-[0-9]+", r["code"]) is not None),
                _verdict(re.fullmatch("[A-Z]{2}-[0-9]+", r["code"]) is not None),
            ),
        ),
        Difference(
            "diff-double-vs-int",
            "a double compared with an int: an error in the CEL spec and in CEL-Java as "
            "Confluent 8.3.1 builds it; cel-python compares the numbers",
            "cloud-custodian/cel-python (mixed int/double ordering accepted); "
            "confluentinc/schema-registry DGS-25037 (enableHeterogeneousNumericComparisons, "
            "after 8.3.1)",
            lambda r: ("error", _verdict(r["total"] >= 0), "error"),
        ),
        Difference(
            "diff-timestamp-millis",
            "a timestamp-millis field: a CEL timestamp in Python (fastavro decodes it to a "
            "datetime), its long in Java (Confluent's deserializer does not convert logical "
            "types by default)",
            "confluentinc/confluent-kafka-python#1852 (cel_executor: `this impl differs from "
            "the other clients`); confluentinc/schema-registry KafkaAvroDeserializerConfig "
            "`avro.use.logical.type.converters` (default false)",
            lambda r: ("error", "error", _verdict(_millis(r["created_at"]) > 1_600_000_000_000)),
        ),
        Difference(
            "diff-number-vs-null",
            "a number compared with null: false or true in the CEL spec (schemacli, "
            "CEL-Java); an error in cel-python",
            "cloud-custodian/cel-python#48",
            lambda r: (
                _verdict(r["ship_date"] is not None),
                "error" if r["ship_date"] is not None else "fail",
                _verdict(r["ship_date"] is not None),
            ),
        ),
        Difference(
            "diff-guard-error",
            "a guard that errs (a string or null payload compared with an int): Java skips the "
            "body (the CONDITION passes), Python's error is the rule's",
            "confluentinc/schema-registry DGS-9402 ('In CEL, treat exception from guard as "
            "false', CelExecutor.evaluateWithGuard); confluentinc/confluent-kafka-python "
            "cel_executor.execute (the guard's error is not caught)",
            lambda r: _guarded(r["payload"]),
        ),
    ]
}


def _guarded(payload: Any) -> Verdicts:
    if isinstance(payload, int):  # the guard holds for 42 (the body is false), not for -7
        return (_verdict(payload <= 10),) * 3  # type: ignore[return-value]
    return ("error", "error", "pass")


# ---- the roads -----------------------------------------------------------------------------


@dataclass
class Road:
    """What one road did to each record: per rule that ran, (verdict, action), in run order;
    whether the record was refused (and by which rule and action); the bytes it wrote."""

    verdicts: list[dict[str, tuple[str, str]]] = field(default_factory=list)
    refused: list[tuple[str, str] | None] = field(default_factory=list)
    written: list[bytes | None] = field(default_factory=list)


def encode(value: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(SCHEMA), value)
    return out.getvalue()


def decode(body: bytes) -> Any:
    return fastavro.schemaless_reader(io.BytesIO(body), fastavro.parse_schema(SCHEMA), None)


def ours(rule_set: dict[str, Any], bodies: list[bytes], mode: str) -> tuple[Road, list[Result]]:
    """(a) RuleRunner on each record as the deserializer presents it; what a serializer does
    is its outcomes up to the first refusal."""
    contract = parse_contract(json.dumps({"ruleSet": rule_set, "metadata": METADATA}), "proof")
    runner = RuleRunner(contract.rule_set, parse_schema(SCHEMA), contract.metadata)
    road, results = Road(), []
    for body in bodies:
        result = runner.run(decode(body), mode)
        results.append(result)
        seen = {}
        for o in result.outcomes:
            seen[o.rule.name] = (o.status, o.action)
            if o is result.refused_by:
                break
        road.verdicts.append(seen)
        refused = result.refused_by
        road.refused.append(None if refused is None else (refused.rule.name, refused.action))
        road.written.append(None if refused else encode(result.record))
    return road, results


def jvm(rule_set: dict[str, Any], bodies: list[bytes], mode: str) -> Road:
    """(c) CEL-Java as Confluent's Java serializer (WRITE) or deserializer (READ) runs it."""
    names = [r["name"] for r in rule_set["domainRules"]]
    road = Road()
    order = names if mode == "WRITE" else names[::-1]
    for got in jvmscan.run_rules(SCHEMA, rule_set, bodies, metadata=METADATA, mode=mode):
        by_name = dict(zip(names, got["outcomes"], strict=True))
        seen = {}
        for name in order:
            verdict, action, _ = by_name[name]
            if verdict in ("PASS", "FAIL", "ERROR"):
                seen[name] = (verdict.lower(), action or "NONE")
        road.verdicts.append(seen)
        refused = [(n, a) for n, (v, a) in seen.items() if v != "pass" and a != "NONE"]
        assert got["refused"] == bool(refused)
        road.refused.append(refused[0] if refused else None)
        road.written.append(None if got["refused"] else got["record"])
    return road


def spying(serde: type) -> tuple[type, list[tuple[str, str, str]]]:
    """A subclass of confluent-kafka's serde that notes each rule's verdict and action as the
    serde itself decides them (its ``_run_action``: no exception is a pass, a
    RuleConditionError a fail, a transform giving nothing a fail, any other exception an
    error)."""
    from confluent_kafka.schema_registry.serde import RuleConditionError

    seen: list[tuple[str, str, str]] = []

    class Spy(serde):  # type: ignore[misc, valid-type]
        def _run_action(self, ctx, rule_mode, rule, action, message, ex, default_action):  # type: ignore[no-untyped-def]
            if ex is None:
                verdict = "pass" if message is not None else "fail"
            else:
                verdict = "fail" if isinstance(ex, RuleConditionError) else "error"
            name = self._get_rule_action_name(rule, rule_mode, action) or default_action
            seen.append((rule.name, verdict, name))
            return super()._run_action(ctx, rule_mode, rule, action, message, ex, default_action)

    return Spy, seen


def python_road(seen: list[tuple[str, str, str]], road: Road, written: bytes | None) -> None:
    verdicts = {name: (verdict, action) for name, verdict, action in seen}
    road.verdicts.append(verdicts)
    refused = [(n, a) for n, (v, a) in verdicts.items() if v != "pass" and a != "NONE"]
    road.refused.append(refused[0] if refused else None)
    road.written.append(written)
    seen.clear()


def compare(
    inputs: list[dict[str, Any]], a: Road, b: Road, c: Road, mode: str
) -> dict[str, Counter[Verdicts]]:
    """Every record: the same rules ran, with the same verdicts and actions (a DIFFERENCES
    rule: exactly its class's verdicts), the same refusal, the same bytes. Returns, per
    difference rule, how often each (a, b, c) verdict triple was seen."""
    shown: dict[str, Counter[Verdicts]] = {name: Counter() for name in DIFFERENCES}
    for i, record in enumerate(inputs):
        va, vb, vc = a.verdicts[i], b.verdicts[i], c.verdicts[i]
        where = f"{mode} record {i}: {record}"
        assert list(va) == list(vb) == list(vc), where
        for name in va:
            if name in DIFFERENCES:
                got = (va[name][0], vb[name][0], vc[name][0])
                assert got == DIFFERENCES[name].expected(record), (name, got, where)
                shown[name][got] += 1
            else:
                assert va[name] == vb[name] == vc[name], (name, va[name], vb[name], vc[name], where)
        assert a.refused[i] == b.refused[i] == c.refused[i], where
        assert a.written[i] == b.written[i] == c.written[i], where
    return shown


def cli(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


@dataclass
class Proof:
    inputs: list[dict[str, Any]]
    rule_set: dict[str, Any]
    dlq_topic: str
    write: tuple[Road, Road, Road]
    read: tuple[Road, Road, Road]
    read_inputs: list[dict[str, Any]]
    results: list[Result]
    dlq: dict[int, str]  # record index -> the rule named in the DLQ record's header
    contract: Path


@pytest.fixture(scope="module")
def proof(kafka, registry, tmp_path_factory) -> Proof:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.schema_registry.rule_registry import RuleRegistry
    from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor
    from confluent_kafka.schema_registry.rules.cel.cel_field_executor import CelFieldExecutor
    from confluent_kafka.schema_registry.rules.dlq.dlq_action import DlqAction
    from confluent_kafka.serialization import MessageField, SerializationContext

    from tests.stack.kafka import quality_jars

    quality_jars()
    where = tmp_path_factory.mktemp("proof")
    topic = f"proof-{uuid.uuid4().hex[:8]}"
    dlq_topic = f"{topic}-dlq"
    admin = AdminClient({"bootstrap.servers": kafka})
    for future in admin.create_topics([NewTopic(topic, 1, 1), NewTopic(dlq_topic, 1, 1)]).values():
        future.result(30)
    rule_set = {"domainRules": rules(dlq_topic)}
    (where / "order.avsc").write_text(json.dumps(SCHEMA))
    contract = where / "order.contract.json"
    contract.write_text(json.dumps({"ruleSet": rule_set, "metadata": METADATA}, indent=2))
    done = cli("register", where / "order.avsc", "-s", f"{topic}-value", "-r", registry,
               "--rules", contract, "-o", "json")  # fmt: skip
    assert done.exit_code == 0, done.output

    inputs = records(N_RECORDS, SEED)
    bodies = [encode(r) for r in inputs]

    def rule_registry() -> RuleRegistry:
        reg = RuleRegistry()
        reg.register_executor(CelExecutor())
        reg.register_executor(CelFieldExecutor())
        reg.register_action(DlqAction({"bootstrap.servers": kafka, "dlq.auto.flush": "true"}))
        return reg

    client = SchemaRegistryClient({"url": registry})
    ctx = SerializationContext(topic, MessageField.VALUE)
    # (b) WRITE: each record through the serializer, produced with its index as the key
    Spy, seen = spying(AvroSerializer)
    serializer = Spy(client, conf={"auto.register.schemas": False, "use.latest.version": True},
                     rule_registry=rule_registry())  # fmt: skip
    producer = Producer({"bootstrap.servers": kafka, "acks": "all"})
    python_write = Road()
    for i, body in enumerate(bodies):
        try:
            framed = serializer(decode(body), ctx)
        except Exception:  # SerializationError: an ERROR or DLQ action refused the record
            framed = None
        python_road(seen, python_write, None if framed is None else framed[5:])
        if framed is not None:
            producer.produce(topic, key=str(i).encode(), value=framed)
    assert producer.flush(60) == 0
    serializer.close()  # flushes the DLQ action's producer
    del producer

    # (b) READ: the topic back through the deserializer; the DLQ topic's records by their id
    ids = {r["id"]: i for i, r in enumerate(inputs)}
    written = sum(1 for w in python_write.written if w is not None)
    Spy, seen = spying(AvroDeserializer)
    deserializer = Spy(client, rule_registry=rule_registry())
    python_read, read_keys, read_bodies = Road(), [], []
    dlq: dict[int, str] = {}
    consumer = Consumer({"bootstrap.servers": kafka, "group.id": f"proof-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})  # fmt: skip
    try:
        consumer.subscribe([topic, dlq_topic])
        expected_dlq = sum(1 for r in python_write.refused if r and r[1] == "DLQ")
        while len(read_keys) < written or len(dlq) < expected_dlq:
            msg = consumer.poll(30)
            assert msg is not None, (len(read_keys), written, len(dlq), expected_dlq)
            assert msg.error() is None, msg.error()
            if msg.topic() == dlq_topic:
                headers = dict(msg.headers() or [])
                dlq[ids[json.loads(msg.value())["id"]]] = headers["__rule.name"].decode()
                continue
            read_keys.append(int(msg.key()))
            read_bodies.append(msg.value()[5:])
            try:
                value = deserializer(msg.value(), ctx)
            except Exception:  # SerializationError: a READ rule's ERROR action refused it
                value = None
            python_road(seen, python_read, None if value is None else encode(value))
    finally:
        consumer.close()
    deserializer.close()

    write_a, results = ours(rule_set, bodies, "WRITE")
    read_a, _ = ours(rule_set, read_bodies, "READ")
    return Proof(
        inputs=inputs,
        rule_set=rule_set,
        dlq_topic=dlq_topic,
        write=(write_a, python_write, jvm(rule_set, bodies, "WRITE")),
        read=(read_a, python_read, jvm(rule_set, read_bodies, "READ")),
        read_inputs=[decode(b) for b in read_bodies],
        results=results,
        dlq=dlq,
        contract=contract,
    )


def test_the_rule_set_is_the_proof_the_issue_asks_for(proof: Proof) -> None:
    rules_ = proof.rule_set["domainRules"]
    assert len(proof.inputs) >= 1_000 and len(rules_) >= 20
    assert {r.get("onFailure", "ERROR") for r in rules_} >= {"ERROR", "NONE", "DLQ"}
    assert {(r["type"], r["kind"]) for r in rules_} == {
        ("CEL", "CONDITION"), ("CEL", "TRANSFORM"),
        ("CEL_FIELD", "CONDITION"), ("CEL_FIELD", "TRANSFORM"),
    }  # fmt: skip
    assert {r["mode"] for r in rules_} == {"WRITE", "READ", "WRITEREAD"}


def test_writing_every_record_gives_the_same_verdicts_refusals_and_bytes_on_every_road(
    proof: Proof,
) -> None:
    a, b, c = proof.write
    shown = compare(proof.inputs, a, b, c, "WRITE")
    refused = Counter(r for r in b.refused if r)
    written = sum(1 for w in b.written if w is not None)
    print(f"\nWRITE: {len(proof.inputs)} records, {written} written byte-identical by the three "
          f"roads, refused alike: {dict(refused)}")  # fmt: skip
    for name, seen in shown.items():
        print(f"  {name}: {dict(seen)}")
    assert written > len(proof.inputs) // 2
    assert {action for _, action in refused} == {"ERROR", "DLQ"}
    # the transforms ran: PII masked, the secret redacted, large quantities capped
    transformed = [decode(w) for w in b.written if w is not None]
    assert all(t["token"] == "[redacted]" for t in transformed)
    assert all(t["customer"]["phone"].endswith("***") for t in transformed)
    assert all(t["quantity"] <= 50 for t in transformed)
    for name, difference in DIFFERENCES.items():  # every class is live: it differs somewhere
        assert any(len(set(got)) > 1 for got in shown[name]), (name, difference.what)


def test_the_dlq_topic_holds_the_records_a_dlq_rule_refused_named_by_that_rule(
    proof: Proof,
) -> None:
    a, b, c = proof.write
    sent = {i: r[0] for i, r in enumerate(b.refused) if r and r[1] == "DLQ"}
    assert sent and proof.dlq == sent
    assert all(r.dlq_topic == proof.dlq_topic for i, r in enumerate(proof.results) if i in sent)


def test_reading_the_topic_gives_the_same_verdicts_refusals_and_bytes_on_every_road(
    proof: Proof,
) -> None:
    a, b, c = proof.read
    shown = compare(proof.read_inputs, a, b, c, "READ")
    refused = Counter(r for r in b.refused if r)
    print(f"\nREAD: {len(proof.read_inputs)} records, refused alike: {dict(refused)}; "
          + "; ".join(f"{n}: {dict(s)}" for n, s in shown.items()))  # fmt: skip
    assert refused  # read-total-sane refuses the records with a total of 9000 or more
    read = [decode(w) for w in b.written if w is not None]
    assert read and all(t["token"] == "<[redacted]>" for t in read)


def test_rules_test_counts_what_the_serializer_refused_and_sent_to_the_dlq(
    proof: Proof, tmp_path: Path
) -> None:
    samples = tmp_path / "orders.avro"
    with samples.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(SCHEMA), copy.deepcopy(proof.inputs))
    done = cli("rules", "test", proof.contract, samples, "--schema",
               proof.contract.with_name("order.avsc"), "-o", "json")  # fmt: skip
    assert done.exit_code == 1, done.output
    doc = json.loads(done.stdout)
    counts = {c["name"]: c for c in doc["cases"]}
    # every rule on every record (a census): RuleRunner's outcomes, counted
    expected: dict[str, Counter[str]] = {}
    for result in proof.results:
        for o in result.outcomes:
            expected.setdefault(o.rule.label, Counter())[o.status] += 1
    for label, tally in expected.items():
        case = counts[label]
        assert (case["pass"], case["fail"], case["error"]) == (
            tally["pass"], tally["fail"], tally["error"]), label  # fmt: skip
    b = proof.write[1]
    refused = sum(1 for r in b.refused if r)
    assert f"{len(proof.inputs)} records, mode WRITE; {refused} refused" in doc["notes"]
    assert f"{len(proof.dlq)} to DLQ topic {proof.dlq_topic}" in doc["notes"]
