"""The census's and topics check's JVM scans speak one protocol, that of the census's Workers
which both run on (the quality jar with the census's jar on its classpath): Kafka settings the
consumer refuses end the scan with exit status 2 (an input error naming the setting), a consumer
that cannot be built with 3 (a network error), and ranges with nothing to read give a complete
answer at once. The real jars in a real JVM; no broker is needed for any of it (the bootstrap is
a port nothing listens on)."""

from __future__ import annotations

import time

import pytest

from converters.census import jvmscan as census_jvm
from converters.census.model import PartitionTally
from converters.quality import jvmscan as quality_jvm
from schemacli.errors import InputError, NetworkError

pytestmark = [pytest.mark.integration]

NOWHERE = "127.0.0.1:1"
REFUSED = {"fetch.max.bytes": "lots"}
UNBUILDABLE = {
    "security.protocol": "SSL",
    "ssl.truststore.location": "/nonexistent/truststore.jks",
    "ssl.truststore.password": "unused",
}
RULES = {"domainRules": [{"name": "positive", "kind": "CONDITION", "type": "CEL",
                          "mode": "WRITE", "expr": "message.total >= 0.0"}]}  # fmt: skip
WRITER = '{"type": "record", "name": "O", "fields": [{"name": "total", "type": "double"}]}'


@pytest.fixture(scope="module", autouse=True)
def _jvm_roads() -> None:
    from tests.stack.kafka import census_jars, quality_jars

    census_jars()
    quality_jars()
    assert census_jvm.available(), "the census's JVM road cannot run here"
    assert quality_jvm.available(), "topics check's JVM road cannot run here"


def ranges(*spans: tuple[int, int]) -> list[PartitionTally]:
    # scanned and complete as no answer would leave them: what the test sees is the JVM's
    return [
        PartitionTally(p, start, end, start, end, scanned=-1, complete=False)
        for p, (start, end) in enumerate(spans)
    ]


def census(properties: dict[str, str], *spans: tuple[int, int]) -> list[PartitionTally]:
    return census_jvm.read_partitions(NOWHERE, "orders", ranges(*spans), properties=properties,
                                      threads=2, deadline=time.time() + 120,
                                      step=lambda n: None)  # fmt: skip


def check(properties: dict[str, str], *spans: tuple[int, int]) -> dict:
    plan = quality_jvm.plan_document("orders", ranges(*spans), writers={7: WRITER},
                                     rule_set=RULES, metadata=None, mode="WRITE", threads=2,
                                     deadline=time.time() + 120, examples=3)  # fmt: skip
    return quality_jvm.read_partitions(NOWHERE, plan, properties=properties, step=lambda n: None)


SCANS = {"census": census, "check": check}


@pytest.mark.parametrize("scan", SCANS)
def test_refused_kafka_settings_end_either_scan_as_an_input_error_naming_the_setting(scan):
    with pytest.raises(InputError, match="refused") as err:
        SCANS[scan](REFUSED, (0, 5), (0, 3))
    assert "ConfigException" in str(err.value) and "fetch.max.bytes" in str(err.value)


@pytest.mark.parametrize("scan", SCANS)
def test_a_consumer_that_cannot_be_built_ends_either_scan_as_a_network_error(scan):
    with pytest.raises(NetworkError, match=f"cannot read from Kafka at {NOWHERE}") as err:
        SCANS[scan](UNBUILDABLE, (0, 5), (0, 3))
    assert "KafkaException" in str(err.value)


def test_empty_ranges_are_a_complete_census_without_a_read():
    got = census({}, (4, 4), (0, 0))
    assert [(t.partition, t.scanned, t.complete) for t in got] == [(0, 0, True), (1, 0, True)]


def test_empty_ranges_are_a_complete_check_without_a_read():
    got = check({}, (4, 4), (0, 0))
    assert got["partitions"] == {0: (0, True), 1: (0, True)}
    assert got["writers"] == {} and got["null"] == 0 and got["unframed"] == 0
