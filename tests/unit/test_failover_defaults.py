"""The Java clients' defaults that keep a lost broker's stall short (issue #39): every road that
reads or writes through a Java Kafka client carries them, a --kafka-properties file overrides
them, and a given request.timeout.ms never leaves default.api.timeout.ms below it (Kafka's
admin client refuses that). The stall itself is measured by
tests/integration/test_broker_loss.py."""

from __future__ import annotations

import pytest

from converters.kafka.settings import (
    FAILOVER_CONSUMER,
    FAILOVER_PRODUCER,
    SPARK_SOURCE_FAILOVER,
    with_failover,
)


def test_the_calls_bound_is_never_below_the_requests_bound():
    api = int(FAILOVER_CONSUMER["default.api.timeout.ms"])
    assert int(FAILOVER_CONSUMER["request.timeout.ms"]) <= api < 60_000  # Kafka's default: 60 s
    assert int(FAILOVER_PRODUCER["request.timeout.ms"]) < 30_000  # Kafka's default: 30 s


def test_every_java_client_of_the_converter_and_the_census_carries_the_bounds():
    from converters.census import jvmscan, sparkscan
    from converters.pipeline import stream, txsink

    for name, value in FAILOVER_CONSUMER.items():
        assert stream.SOURCE_DEFAULTS[f"kafka.{name}"] == value
        assert jvmscan.CONSUMER_DEFAULTS[name] == value
        assert sparkscan.SOURCE_DEFAULTS[name] == value
    for name, value in FAILOVER_PRODUCER.items():
        assert stream.SINK_DEFAULTS[f"kafka.{name}"] == value
        assert txsink.PRODUCER_DEFAULTS[name] == value
    assert SPARK_SOURCE_FAILOVER.items() <= stream.SOURCE_DEFAULTS.items()
    options = sparkscan.source_options("b:9092", "t", [], {})
    assert SPARK_SOURCE_FAILOVER.items() <= options.items()
    assert options["kafka.default.api.timeout.ms"] == FAILOVER_CONSUMER["default.api.timeout.ms"]


def test_a_properties_file_overrides_the_bounds():
    given = {"kafka.default.api.timeout.ms": "90000", "kafka.request.timeout.ms": "20000"}
    merged = with_failover({"kafka.default.api.timeout.ms": "10000"}, given, "kafka.")
    assert merged["kafka.default.api.timeout.ms"] == "90000"
    assert merged["kafka.request.timeout.ms"] == "20000"


@pytest.mark.parametrize(("request_ms", "api_ms"), [("30000", "30000"), ("5000", "10000")])
def test_a_given_request_timeout_raises_the_default_calls_bound_to_it(request_ms, api_ms):
    merged = with_failover(FAILOVER_CONSUMER, {"request.timeout.ms": request_ms})
    assert merged["default.api.timeout.ms"] == api_ms
    assert merged["request.timeout.ms"] == request_ms


def test_a_request_timeout_that_is_not_a_number_is_left_for_the_client_to_name():
    merged = with_failover(FAILOVER_CONSUMER, {"request.timeout.ms": "soon"})
    assert merged["request.timeout.ms"] == "soon"
    assert merged["default.api.timeout.ms"] == FAILOVER_CONSUMER["default.api.timeout.ms"]
