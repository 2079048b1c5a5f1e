"""Read sample v2 records from the topic for ``validate --sample N`` (confluent-kafka + fastavro).

Each value is Confluent-framed; its writer schema is fetched by id from the registry (the one road,
``schemacli.registry.schemas``: self-contained, each id once) and the body
is decoded into the mapping's v2 schema with Avro resolution, as the job's ``from_avro`` does.
Values that are not framed Avro, or fail to decode, are counted and left out of the sample (the
job would dead-letter them).
"""

from __future__ import annotations

import io
import time
from typing import TYPE_CHECKING, Any

from converters.kafka import waits
from converters.kafka.settings import client_config
from converters.mapping.model import Mapping
from schemacli.errors import NetworkError, UsageError

if TYPE_CHECKING:
    from schemacli.registry.client import RegistryClient


def read_samples(
    bootstrap: str, mapping: Mapping, client: RegistryClient, count: int, *, timeout: float = 15.0
) -> list[dict[str, Any]]:
    """Up to ``count`` decoded records from the start of the v2 topic. Raises NetworkError when
    Kafka cannot be reached, UsageError when confluent-kafka is missing."""
    try:
        from confluent_kafka import Consumer, KafkaException, TopicPartition
    except ImportError:
        raise UsageError(
            "--sample needs confluent-kafka", hint="pip install 'schemacli[kafka]'"
        ) from None
    import fastavro

    from schemacli.registry.schemas import RegistrySchemas

    road = RegistrySchemas(client)
    topic = mapping.source.topic
    if topic is None:
        raise UsageError(
            "the mapping names no v2 topic to sample", hint="Add source.topic to the mapping."
        )
    reader = fastavro.parse_schema(mapping.source.schema_json)
    writers: dict[int, Any] = {}
    consumer = Consumer(
        client_config(
            bootstrap,
            None,
            {
                "group.id": "schemacli-migrate-sample",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            },
        )
    )
    records: list[dict[str, Any]] = []
    try:
        meta = waits.list_topics(consumer, topic, min(timeout, 10))
        tmeta = meta.topics.get(topic)
        if tmeta is None or tmeta.error is not None:
            raise UsageError(
                f"topic {topic!r} not found on {bootstrap}",
                hint="Check the mapping's source.topic.",
            )
        consumer.assign([TopicPartition(topic, p, 0) for p in tmeta.partitions])
        deadline = time.monotonic() + timeout
        while len(records) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error() is not None:
                continue
            value = msg.value()
            if not value or len(value) < 5 or value[0] != 0:
                continue
            sid = int.from_bytes(value[1:5], "big", signed=True)
            if sid not in writers:
                writers[sid] = fastavro.parse_schema(road.schema_by_id(sid).value)
            try:
                record = fastavro.schemaless_reader(io.BytesIO(value[5:]), writers[sid], reader)
            except Exception:  # undecodable body: the job dead-letters it; not a sample
                continue
            if isinstance(record, dict):  # a v2 record schema reads as a dict
                records.append(record)
    except KafkaException as exc:
        raise NetworkError(
            f"cannot read {topic!r} from {bootstrap}: {_kafka_reason(exc)}",
            hint="Is the broker running and reachable? Check --bootstrap (host:port).",
        ) from exc
    finally:
        consumer.close()
    return records


def _kafka_reason(exc: Exception) -> str:
    """The KafkaError's own words (``exc.args[0].str()``), not its repr; else the exception."""
    error = exc.args[0] if exc.args else None
    text = getattr(error, "str", None)
    return text() if callable(text) else str(exc)
