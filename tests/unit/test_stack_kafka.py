"""The test stack's Kafka launcher: what it hands to Kafka's own tools."""

import uuid

from tests.stack import kafka


def test_cluster_id_never_begins_with_a_dash_that_the_storage_tool_would_read_as_an_option(
    monkeypatch,
):
    # 0xF8 as the first byte encodes to "-" in URL-safe base64: the id Kafka redraws.
    draws = iter([uuid.UUID(bytes=b"\xf8" + b"\x00" * 15), uuid.UUID(bytes=b"\x10" * 16)])
    monkeypatch.setattr(kafka.uuid, "uuid4", lambda: next(draws))
    cid = kafka.cluster_id()
    assert cid == "EBAQEBAQEBAQEBAQEBAQEA"
    assert len(cid) == 22


def test_cluster_ids_are_kafka_uuid_text_of_16_bytes():
    for _ in range(500):
        cid = kafka.cluster_id()
        assert not cid.startswith("-")
        assert len(cid) == 22
