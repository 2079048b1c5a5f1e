"""The one bounded "read a topic to its end" (converters.kafka.topicend) behind finish,
dependents and replay, over a scripted consumer: no broker."""

from __future__ import annotations

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import KafkaError, KafkaException  # noqa: E402

from converters.kafka.topicend import EndNotReached, read_to_end  # noqa: E402


class Msg:
    def __init__(self, partition: int, offset: int, code: int | None = None) -> None:
        self._p, self._o = partition, offset
        self._err = KafkaError(code) if code is not None else None

    def partition(self) -> int:
        return self._p

    def offset(self) -> int:
        return self._o

    def error(self) -> KafkaError | None:
        return self._err


class Scripted:
    """A consumer whose consume() hands out the given batches, then nothing."""

    def __init__(self, *batches: list[Msg]) -> None:
        self.batches = list(batches)
        self.assigned: list = []

    def assign(self, partitions: list) -> None:
        self.assigned = [(tp.partition, tp.offset) for tp in partitions]

    def consume(self, count: int, timeout: float) -> list[Msg]:
        return self.batches.pop(0) if self.batches else []


def positions(msgs) -> list[tuple[int, int]]:
    return [(m.partition(), m.offset()) for m in msgs]


def test_a_partition_ends_at_its_end_offset_or_at_end_of_partition_past_a_commit_marker():
    eof = KafkaError._PARTITION_EOF
    consumer = Scripted([Msg(0, 5), Msg(1, 0), Msg(0, 6), Msg(1, 1)], [Msg(0, 7, eof)])
    got = read_to_end(consumer, "t", {0: (5, 8), 1: (0, 2), 2: (4, 4)}, timeout=5)
    assert positions(got) == [(0, 5), (1, 0), (0, 6), (1, 1)]  # offset 7: the commit marker
    assert consumer.assigned == [(0, 5), (1, 0)]  # an empty span is not read


def test_what_is_written_after_the_read_started_is_not_read():
    consumer = Scripted([Msg(0, 0), Msg(0, 1), Msg(0, 2)])
    assert positions(read_to_end(consumer, "t", {0: (0, 2)}, timeout=5)) == [(0, 0), (0, 1)]


def test_the_deadline_names_the_partitions_short_of_their_end():
    consumer = Scripted([Msg(1, 0)])
    with pytest.raises(EndNotReached) as late:
        list(read_to_end(consumer, "t", {0: (0, 3), 1: (0, 1)}, timeout=0.2))
    assert late.value.partitions == [0]


def test_a_kafka_error_is_raised_or_passed_over_as_the_caller_asks():
    def broken() -> Scripted:
        return Scripted([Msg(0, 0, KafkaError._MSG_TIMED_OUT), Msg(0, 0)])

    with pytest.raises(KafkaException):
        list(read_to_end(broken(), "t", {0: (0, 1)}, timeout=5))
    assert positions(read_to_end(broken(), "t", {0: (0, 1)}, timeout=5, errors="skip")) == [(0, 0)]
