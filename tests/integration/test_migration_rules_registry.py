"""A new major version with its migration rules, in the same subject, on the REAL registry; and
road (c) of the equality proof: confluent-kafka's AvroDeserializer with use.latest.with.metadata
on the real broker, running the registered DOWNGRADE rule.

Which registry keeps what (docs/registry.md#data-contracts-metadata-rule-sets-and-compatibility-
groups): AxonOps v0.2.1 keeps metadata, ruleSet and compatibilityGroup and answers
GET /subjects/{s}/metadata; Apicurio 3.0.9 (ccompat v7) accepts all three with 200 and keeps
none, so `register --major-version` stops there with exit 3 naming the registry.

The records are the seeded ones of tests/spark/test_migration_rules_equality.py; (c) is compared
with the rule run by jsonata-python directly (b), which that test proves equal to the Spark
converter (a). Counts are printed (``-s``).
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import fastavro
import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.extras import require_jsonata

pytestmark = pytest.mark.integration
require_jsonata()

runner = CliRunner()


def cli(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _files(tmp_path: Path):
    from tests.spark.test_migration_rules_equality import MAPPING, V1, V2

    (tmp_path / "v1.avsc").write_text(json.dumps(V1))
    (tmp_path / "v2.avsc").write_text(json.dumps(V2))
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        MAPPING.replace("source: {subject: rides-v2-value, topic: rides-v2}",
                        "source: {subject: rides-v2-value, topic: rides-v2, schema: v2.avsc}")
        .replace("target: {subject: rides-value, topic: rides}",
                 "target: {subject: rides-value, topic: rides, schema: v1.avsc}")
    )  # fmt: skip
    rules = tmp_path / "rules.json"
    r = cli("migrate", "rules", mapping, "--out", rules)
    assert r.exit_code == 0, r.output
    return rules


def _register_v1(registry: str, subject: str, tmp_path: Path) -> None:
    r = cli("register", tmp_path / "v1.avsc", "-s", subject, "-r", registry,
            "--major-version", "1")  # fmt: skip
    assert r.exit_code in (0, 3), r.output


def test_register_major_version_keeps_rules_or_names_the_registry_that_drops_them(
    registry, registry_impl, tmp_path
):
    rules = _files(tmp_path)
    subject = f"rides-{uuid.uuid4().hex[:8]}-value"
    _register_v1(registry, subject, tmp_path)
    r = cli("register", tmp_path / "v2.avsc", "-s", subject, "-r", registry, "--major-version",
            "2", "--rules", rules, "--compatibility-group", "-o", "json")  # fmt: skip
    if registry_impl == "axonops":
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert doc["major_version"] == 2 and doc["compatibility_group"] == "major_version"
        assert doc["rules"] == ["DOWNGRADE rides-v2-value-downgrade"]
        # pull keeps them in the store, and the offline gate compares within groups only
        store = tmp_path / "store"
        (store / "subjects").mkdir(parents=True)
        r = cli("pull", subject, "--store", store, "--no-levels", "-r", registry)
        assert r.exit_code == 0, r.output
        folder = store / "subjects" / subject
        assert json.loads((folder / "contract.json").read_text()) == {
            "compatibilityGroup": "major_version"
        }
        v2 = json.loads((folder / "v2.contract.json").read_text())
        assert v2["metadata"]["properties"]["major_version"] == "2"
        assert v2["ruleSet"] == json.loads(rules.read_text())["ruleSet"]
        assert json.loads((folder / "v1.contract.json").read_text())["ruleSet"] == {}
        r = cli("gate", "--store", store, "--no-cache")
        assert r.exit_code == 0, r.output
        (folder / "v2.contract.json").write_text(json.dumps({**v2, "ruleSet": {}}))
        r = cli("gate", "--store", store, "--no-cache")
        assert r.exit_code == 1 and "MISSING_MIGRATION_RULE" in r.output
    else:  # Apicurio: the compatibilityGroup (and metadata) are accepted and dropped
        assert r.exit_code == 3, r.output
        assert "did not keep" in r.stderr + r.stdout and registry.split("//")[1] in r.output


@pytest.mark.rule_sets
def test_a_v1_consumer_reads_v2_records_through_the_registered_downgrade_rule(
    registry, registry_impl, kafka, tmp_path
):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.schema_registry.rules.jsonata.jsonata_executor import JsonataExecutor
    from confluent_kafka.serialization import MessageField, SerializationContext

    from tests.spark.test_migration_rules_equality import V1, V2, by_rule, encode, records

    JsonataExecutor.register()
    rules = _files(tmp_path)
    topic = f"rides-{uuid.uuid4().hex[:8]}"
    subject = f"{topic}-value"
    _register_v1(registry, subject, tmp_path)
    r = cli("register", tmp_path / "v2.avsc", "-s", subject, "-r", registry, "--major-version",
            "2", "--rules", rules, "--compatibility-group", "-o", "json")  # fmt: skip
    assert r.exit_code == 0, r.output
    v2_id = json.loads(r.stdout)["id"]

    bodies = [encode(V2, rec) for rec in records(seed=30, n=400)]
    producer = Producer({"bootstrap.servers": kafka})
    for i, body in enumerate(bodies):
        producer.produce(topic, key=str(i).encode(), value=b"\0" + v2_id.to_bytes(4, "big") + body)
    assert producer.flush(60) == 0
    del producer  # its threads would outlive the broker and log reconnects

    sr = SchemaRegistryClient({"url": registry})
    deserializer = AvroDeserializer(sr, conf={"use.latest.with.metadata": {"major_version": "1"}})
    consumer = Consumer({"bootstrap.servers": kafka, "group.id": f"g-{topic}",
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([topic])
    got: dict[int, bytes | None] = {}
    ctx = SerializationContext(topic, MessageField.VALUE)
    v1_parsed = fastavro.parse_schema(V1)
    try:
        while len(got) < len(bodies):
            msg = consumer.poll(30)
            assert msg is not None, f"only {len(got)} of {len(bodies)} records arrived"
            assert msg.error() is None, msg.error()
            try:
                value = deserializer(msg.value(), ctx)
            except Exception:  # noqa: BLE001 - the rule failed the record: its verdict
                got[int(msg.key())] = None
                continue
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, v1_parsed, value)
            got[int(msg.key())] = buf.getvalue()
    finally:
        consumer.close()
    by_deserializer = [got[i] for i in range(len(bodies))]
    expected = by_rule(
        json.loads(rules.read_text())["ruleSet"]["migrationRules"][0]["expr"], bodies
    )
    differ = [i for i, (a, b) in enumerate(zip(by_deserializer, expected, strict=True)) if a != b]
    converted = sum(1 for b in by_deserializer if b is not None)
    print(
        f"\nroad (c) AvroDeserializer use.latest.with.metadata on {registry_impl} vs (b): "
        f"{len(bodies)} records, {converted} converted byte-identical, "
        f"{len(bodies) - converted} failed in both, {len(differ)} differ"
    )
    assert not differ
    assert converted > 100
