"""Reading a topic to its end: the one bounded reader behind ``migrate finish`` (the dead
letters by error), ``migrate status``'s dependents (direct writes to v1) and ``migrate replay``
(the dead letters to repair).

"The end" is the end offsets when the read starts: what is written later is not waited for. A
partition is done at its end offset, or at end of partition: a topic written in transactions
ends in a commit marker, an offset no consumer ever receives, so the consumer must be made with
``enable.partition.eof`` (and, to skip aborted records, ``read_committed``). The read is bounded
by a deadline, and waits in slices that hear Ctrl-C (``converters.kafka.waits``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from converters.kafka import waits


class EndNotReached(Exception):
    """The deadline passed with ``partitions`` still short of their end offsets."""

    def __init__(self, partitions: list[int]) -> None:
        super().__init__(partitions)
        self.partitions = partitions


def ranges(consumer: Any, topic: str, timeout: float = 10) -> dict[int, tuple[int, int]] | None:
    """partition -> (low, high) offsets of ``topic``'s non-empty partitions; None when the
    topic is not there."""
    from confluent_kafka import TopicPartition

    meta = waits.list_topics(consumer, topic, timeout).topics.get(topic)
    if meta is None or meta.error is not None:
        return None
    found = {}
    for p in sorted(meta.partitions):
        low, high = waits.watermarks(consumer, TopicPartition(topic, p), timeout)
        if high > low:
            found[p] = (low, high)
    return found


def read_to_end(
    consumer: Any,
    topic: str,
    spans: Mapping[int, tuple[int, int]],
    *,
    timeout: float,
    batch: int = 1000,
    errors: str = "raise",
) -> Iterator[Any]:
    """Every message of ``topic`` in ``spans`` (partition -> [start, end) offsets), partition by
    partition in offset order. ``errors="raise"``: a Kafka error other than end of partition is
    raised as KafkaException; ``"skip"``: it is passed over. Raises :class:`EndNotReached` when
    ``timeout`` seconds pass first. The consumer is the caller's to make and close."""
    from confluent_kafka import KafkaError, KafkaException, TopicPartition

    todo = {p: span for p, span in spans.items() if span[1] > span[0]}
    if not todo:
        return
    consumer.assign([TopicPartition(topic, p, start) for p, (start, _) in todo.items()])
    left, deadline = set(todo), time.monotonic() + timeout
    while left:
        if time.monotonic() > deadline:
            raise EndNotReached(sorted(left))
        for msg in waits.consume(consumer, batch):
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    left.discard(msg.partition())
                elif errors == "raise":
                    raise KafkaException(err)
                continue
            if msg.partition() not in left:
                continue
            end = todo[msg.partition()][1]
            if msg.offset() >= end:
                left.discard(msg.partition())
                continue
            yield msg
            if msg.offset() + 1 >= end:
                left.discard(msg.partition())
