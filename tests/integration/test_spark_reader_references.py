"""A subject that uses Confluent schema references, read with Spark end to end.

``Customer`` references ``Address`` (its own subject), which references ``Country`` (a third
subject): two levels. Records are produced with confluent-kafka's AvroSerializer against the
registered version; ``read_topic``, ``stream_topic`` and a module from ``schemacli spark
codegen --registry`` must each decode every record (the referenced types inlined into the one
schema text ``from_avro`` takes), and a missing reference is a clear error naming it.
"""

from __future__ import annotations

import importlib.util
import json
import uuid

import pytest
from typer.testing import CliRunner

from tests.integration.test_spark_reader import _bootstrap, _url, create_topic, produce

pytestmark = [pytest.mark.integration, pytest.mark.spark]

COUNTRY = {"type": "enum", "name": "Country", "namespace": "com.acme.geo", "symbols": ["NL", "DE"]}
ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "com.acme.common",
    "fields": [
        {"name": "street", "type": "string"},
        {"name": "country", "type": "com.acme.geo.Country"},
    ],
}
CUSTOMER = {
    "type": "record",
    "name": "Customer",
    "namespace": "com.acme.crm",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "home", "type": "com.acme.common.Address"},
        {"name": "work", "type": ["null", "com.acme.common.Address"], "default": None},
    ],
}
CUSTOMERS = [
    {"id": 1, "home": {"street": "Dam 1", "country": "NL"}, "work": None},
    {"id": 2, "home": {"street": "Unter den Linden 5", "country": "DE"},
     "work": {"street": "Dam 2", "country": "NL"}},
]  # fmt: skip


class RefTopic:
    def __init__(self, name: str, subject: str) -> None:
        self.name, self.subject = name, subject


@pytest.fixture(scope="module")
def customers_topic(kafka, registry) -> RefTopic:
    from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    suffix = uuid.uuid4().hex[:8]
    topic, subject = f"customers-{suffix}", f"customers-{suffix}-value"
    country_subject, address_subject = f"country-{suffix}", f"address-{suffix}"
    client = SchemaRegistryClient({"url": _url(registry)})
    client.register_schema(country_subject, Schema(json.dumps(COUNTRY), "AVRO"))
    to_country = SchemaReference("com.acme.geo.Country", country_subject, 1)
    client.register_schema(address_subject, Schema(json.dumps(ADDRESS), "AVRO", [to_country]))
    to_address = SchemaReference("com.acme.common.Address", address_subject, 1)
    customer = Schema(json.dumps(CUSTOMER), "AVRO", [to_address])
    client.register_schema(subject, customer)
    serializer = AvroSerializer(
        client, customer, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    context = SerializationContext(topic, MessageField.VALUE)
    create_topic(_bootstrap(kafka), topic)
    produce(_bootstrap(kafka), topic, [serializer(c, context) for c in CUSTOMERS])
    return RefTopic(topic, subject)


def as_dicts(rows) -> list[dict]:
    out = []
    for row in sorted(rows, key=lambda r: r["id"]):
        work = row["work"].asDict() if row["work"] is not None else None
        out.append({"id": row["id"], "home": row["home"].asDict(), "work": work})
    return out


def test_read_topic_decodes_a_subject_with_two_levels_of_references(
    spark, kafka, registry, customers_topic
):
    from spark_avro import read_topic

    df = read_topic(
        spark,
        _bootstrap(kafka),
        customers_topic.name,
        subject=customers_topic.subject,
        registry_url=_url(registry),
    )
    rows = df.collect()
    assert all(r.decode_error is None for r in rows)
    assert as_dicts(rows) == CUSTOMERS


def test_stream_topic_decodes_it_too(spark, kafka, registry, customers_topic):
    from spark_avro import stream_topic

    seen: list = []
    query = stream_topic(
        spark,
        _bootstrap(kafka),
        customers_topic.name,
        subject=customers_topic.subject,
        registry_url=_url(registry),
        process_batch=lambda batch, batch_id: seen.extend(batch.collect()),
        available_now=True,
    )
    query.awaitTermination(180)
    assert query.exception() is None
    assert as_dicts(seen) == CUSTOMERS


def test_a_generated_module_embeds_the_referenced_types_and_needs_no_registry(
    spark, kafka, registry, customers_topic, tmp_path
):
    from schemacli.app import app

    out = tmp_path / "customers_reader.py"
    result = CliRunner().invoke(
        app,
        [
            "spark", "codegen", "--subject", customers_topic.subject,
            "--topic", customers_topic.name, "--registry", _url(registry), "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "com.acme.geo" in out.read_text()  # Country's definition travels in the module
    spec = importlib.util.spec_from_file_location("customers_reader", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert as_dicts(module.read(spark, _bootstrap(kafka)).collect()) == CUSTOMERS
