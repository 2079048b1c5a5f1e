"""Real-world subjects on the real stack, produced with confluent-kafka's AvroSerializer: a union
of records that gains a branch in the middle, a tombstone, and a reader version that cannot read
the newer records. Read with ``read_topic``, ``stream_topic`` and a generated module."""

from __future__ import annotations

import importlib.util
import json
import uuid

import pytest
from typer.testing import CliRunner

from tests.integration.test_spark_reader import _bootstrap, _url, create_topic

pytestmark = [pytest.mark.integration, pytest.mark.spark]

CARD = {"type": "record", "name": "Card", "fields": [{"name": "last4", "type": "int"}]}
CASH = {"type": "record", "name": "Cash", "fields": [{"name": "amount", "type": "double"}]}
VOUCHER = {"type": "record", "name": "Voucher", "fields": [{"name": "code", "type": "string"}]}


def trip(branches: list) -> str:
    return json.dumps({
        "type": "record", "name": "Trip", "namespace": "com.acme.rides",
        "fields": [{"name": "id", "type": "long"}, {"name": "payment", "type": branches}],
    })  # fmt: skip


V1 = trip([CARD, CASH])
V2 = trip([CARD, VOUCHER, CASH])  # a branch inserted in the middle


class Trips:
    def __init__(self, topic: str, subject: str, ids: dict[str, int]) -> None:
        self.topic, self.subject, self.ids = topic, subject, ids


@pytest.fixture(scope="module")
def trips(kafka, registry) -> Trips:
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic = f"trips-{uuid.uuid4().hex[:8]}"
    create_topic(_bootstrap(kafka), topic)
    client = SchemaRegistryClient({"url": _url(registry)})
    context = SerializationContext(topic, MessageField.VALUE)
    v1, v2 = AvroSerializer(client, V1), AvroSerializer(client, V2)  # auto-register v1, v2
    # AvroSerializer picks the union branch of a dict by its "-type" hint
    records = [
        (b"t1", v1({"id": 1, "payment": ("com.acme.rides.Card", {"last4": 4242})}, context)),
        (b"t2", v1({"id": 2, "payment": ("com.acme.rides.Cash", {"amount": 12.5})}, context)),
        (b"t3", v2({"id": 3, "payment": ("com.acme.rides.Voucher", {"code": "FREE"})}, context)),
        (b"t4", v2({"id": 4, "payment": ("com.acme.rides.Cash", {"amount": 7.25})}, context)),
        (b"t2", None),  # a tombstone: trip 2 deleted on a compacted topic
    ]
    producer = Producer({"bootstrap.servers": _bootstrap(kafka), "acks": "all"})
    for key, value in records:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0
    ids = {"v1": int.from_bytes(records[0][1][1:5], "big"),
           "v2": int.from_bytes(records[2][1][1:5], "big")}  # fmt: skip
    assert ids["v1"] != ids["v2"]
    return Trips(topic, f"{topic}-value", ids)


def payments(rows) -> dict[int, dict]:
    """trip id -> the payment's non-null branch {member name: value}."""
    out = {}
    for row in rows:
        if row["is_tombstone"]:
            continue
        branches = row["payment"].asDict(recursive=True)
        out[row["id"]] = {k: v for k, v in branches.items() if v is not None}
    return out


EXPECTED = {
    1: {"member_Card": {"last4": 4242}},
    2: {"member_Cash": {"amount": 12.5}},  # a v1 Cash stays Cash although v2 inserted a branch
    3: {"member_Voucher": {"code": "FREE"}},
    4: {"member_Cash": {"amount": 7.25}},
}


def test_read_topic_names_union_branches_and_marks_the_tombstone(spark, kafka, registry, trips):
    from spark_avro import read_topic, split_bad_records

    df = read_topic(spark, _bootstrap(kafka), trips.topic, subject=trips.subject,
                    registry_url=_url(registry))  # fmt: skip
    rows = df.collect()
    assert payments(rows) == EXPECTED
    (tombstone,) = [r for r in rows if r["is_tombstone"]]
    assert bytes(tombstone["key"]) == b"t2" and tombstone["decode_error"] is None
    good, bad = split_bad_records(df)
    assert good.count() == 4 and bad.count() == 0  # the tombstone is in neither frame
    assert split_bad_records(df, keep_tombstones=True)[0].count() == 5


def test_a_reader_version_that_cannot_read_newer_records_says_incompatible_and_why(
    spark, kafka, registry, trips
):
    from spark_avro import read_topic

    df = read_topic(spark, _bootstrap(kafka), trips.topic, subject=trips.subject,
                    registry_url=_url(registry), reader_version=1)  # fmt: skip
    rows = [r for r in df.collect() if not r["is_tombstone"]]
    by_id = {r["schema_id"]: r for r in rows}
    assert by_id[trips.ids["v1"]]["decode_error_kind"] is None
    bad = [r for r in rows if r["schema_id"] == trips.ids["v2"]]
    assert len(bad) == 2
    assert {r["decode_error_kind"] for r in bad} == {"incompatible"}
    assert all("/fields/1/type" in r["decode_error"] for r in bad)  # the engine's finding


def test_stream_topic_and_a_generated_module_give_the_same_payments(
    spark, kafka, registry, trips, tmp_path
):
    from schemacli.app import app
    from spark_avro import stream_topic

    seen: list = []
    query = stream_topic(
        spark, _bootstrap(kafka), trips.topic, subject=trips.subject,
        registry_url=_url(registry), available_now=True,
        process_batch=lambda batch, batch_id: seen.extend(batch.collect()),
    )  # fmt: skip
    query.awaitTermination(180)
    assert query.exception() is None
    assert payments(seen) == EXPECTED

    out = tmp_path / "trips_reader.py"
    result = CliRunner().invoke(app, [
        "spark", "codegen", "--subject", trips.subject, "--topic", trips.topic,
        "--registry", _url(registry), "--out", str(out),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = importlib.util.spec_from_file_location("trips_reader", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert payments(module.read(spark, _bootstrap(kafka)).collect()) == EXPECTED
