"""Waiting on Kafka so that Ctrl-C is heard within a second.

librdkafka's blocking calls (``list_topics``, ``get_watermark_offsets``, ``consume``, ``flush``,
the transaction calls) wait in C with the GIL released; Python runs its SIGINT handler only when
the call returns, so a ``list_topics(timeout=10)`` against a broker that does not answer ignored
Ctrl-C for ten seconds. (``poll`` and the admin client's futures are interruptible already.)

Every such wait goes through here: the call is made again and again with a timeout of at most
:data:`SLICE` seconds until it answers or the caller's whole ``timeout`` has passed, so a
pending KeyboardInterrupt is raised between two slices. Only "no answer yet" errors are retried
(the broker down or not reached, a timeout, a broker that left the cluster with the request
queued for it, an error librdkafka marks retriable, as it does a transaction call that timed
out); any other error is raised at once, and the last one when the
deadline passes, as the single long call would have.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from confluent_kafka import Consumer, TopicPartition

SLICE = 0.5  # seconds: the longest librdkafka is left blocking before Python looks at signals

T = TypeVar("T")


def _no_answer_yet(exc: BaseException) -> bool:
    from confluent_kafka import KafkaError

    err = exc.args[0] if exc.args else None
    if not isinstance(err, KafkaError):
        return False
    # _DESTROY_BROKER: the broker asked left the cluster's metadata (a lost broker, fenced by the
    # controller) with the request still queued for it; asked again, the partition's new leader
    # answers. OFFSET_NOT_AVAILABLE ("leader high watermark is not caught up"), LEADER_NOT_AVAILABLE
    # and NOT_LEADER_FOR_PARTITION: a leader just elected, not yet able to answer; it will
    waiting = (
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._TIMED_OUT,
        KafkaError._DESTROY_BROKER,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
    )
    return err.code() in waiting or bool(err.retriable())


def sliced(call: Callable[[float], T], timeout: float) -> T:
    """``call(t)`` with ``t`` <= :data:`SLICE`, repeated while it fails for want of an answer,
    until ``timeout`` seconds have passed (then its last error is raised)."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return interruptible(call, max(0.05, min(SLICE, left)))
        except KafkaException as exc:
            if not _no_answer_yet(exc) or time.monotonic() >= deadline:
                raise


def interruptible(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args)``; a Ctrl-C that reached Python inside one of librdkafka's callbacks (its
    logger, say) comes out of confluent-kafka as a SystemError: raise it as what it is."""
    try:
        return call(*args, **kwargs)
    except SystemError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise


def list_topics(client: Any, topic: str | None, timeout: float) -> Any:
    """Cluster metadata (of ``topic``) from a Consumer, Producer or AdminClient."""
    return sliced(lambda t: client.list_topics(topic, timeout=t), timeout)


def watermarks(consumer: Consumer, partition: TopicPartition, timeout: float) -> tuple[int, int]:
    """(low, high) offsets of a TopicPartition, asked of the broker."""
    return sliced(lambda t: consumer.get_watermark_offsets(partition, timeout=t), timeout)


def consume(consumer: Any, count: int, timeout: float = SLICE) -> list[Any]:
    """Up to ``count`` messages, waiting at most ``min(timeout, SLICE)`` seconds."""
    return interruptible(consumer.consume, count, timeout=min(timeout, SLICE))


def flush(producer: Any, timeout: float) -> int:
    """Deliver the producer's queue, for at most ``timeout`` seconds; the messages left."""
    deadline = time.monotonic() + timeout
    while True:
        left = interruptible(producer.flush, min(SLICE, max(0.0, deadline - time.monotonic())))
        if not left or time.monotonic() >= deadline:
            return int(left)
