"""Fixtures for the real stack: ``kafka`` (bootstrap servers) and ``registry`` (base URL of a
Confluent-compatible API), each started once per session by tests/stack and stopped at the end,
also when a test fails or the run is interrupted.

``kafka_broker`` / ``registry_server`` give the launcher objects (process, log, workdir).
``kafka_cluster3`` is a three-node KRaft cluster (replication factor 3, ``min.insync.replicas=2``):
the ``tests.stack.kafkacluster.KafkaCluster``, whose ``bootstrap`` names all three nodes and
whose ``kill(node_id)`` / ``restart(node_id)`` SIGKILL a node and start it again on its ports.
``spark_cluster`` is a Spark standalone cluster (a master and two workers, 1 core and 1g each):
the ``tests.stack.sparkcluster.SparkCluster``, whose ``master_url`` is ``spark://127.0.0.1:N``.
The registry implementation comes from ``--registry-impl`` or SCHEMACLI_REGISTRY_IMPL.
When a test that uses a component fails, the tail of that component's log is attached to
the report.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stack.common import tail
from tests.stack.harness import obtain, prestart
from tests.stack.kafka import KafkaBroker, start_kafka
from tests.stack.kafkacluster import KafkaCluster, start_kafka_cluster
from tests.stack.registry import Registry, start_registry
from tests.stack.sparkcluster import SparkCluster, start_spark_cluster

KAFKA_FIXTURES = {"kafka", "kafka_broker"}
REGISTRY_FIXTURES = {"registry", "registry_server"}
SPARK_CLUSTER_FIXTURES = {"spark_cluster"}
KAFKA_CLUSTER_FIXTURES = {"kafka_cluster3"}

# fixture name -> running component, for attaching log tails to failed reports
_RUNNING: dict[str, KafkaBroker | KafkaCluster | Registry | SparkCluster] = {}


def _workdir(config: pytest.Config, name: str) -> Path:
    factory = getattr(config, "_tmp_path_factory", None)  # pytest's own, as tmp_path_factory
    return factory.mktemp(name) if factory else Path(tempfile.mkdtemp(prefix=f"{name}-"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start Kafka, the registry and the Spark cluster in the background as soon as we know
    tests need them."""
    config = session.config
    if config.option.collectonly or not session.items:
        return
    needed = set().union(*(getattr(item, "fixturenames", ()) for item in session.items))
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        # Create pytest's base temp dir here, in the main thread: its first creation is not
        # thread-safe, and two starter threads racing on it made mktemp fail ("kafka is not a
        # normalized and relative path").
        factory.getbasetemp()
    if needed & KAFKA_FIXTURES:
        prestart("kafka", lambda: start_kafka(_workdir(config, "kafka")))
    if needed & REGISTRY_FIXTURES:
        impl = config.getoption("--registry-impl")
        prestart("registry", lambda: start_registry(impl, _workdir(config, f"registry-{impl}")))
    if needed & SPARK_CLUSTER_FIXTURES:
        prestart("spark-cluster", lambda: start_spark_cluster(_workdir(config, "spark-cluster")))
    if needed & KAFKA_CLUSTER_FIXTURES:
        prestart("kafka-cluster3", lambda: start_kafka_cluster(_workdir(config, "kafka-cluster3")))


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A single-node KRaft Kafka broker on a free loopback port."""
    broker = obtain("kafka", lambda: start_kafka(tmp_path_factory.mktemp("kafka")))
    _RUNNING["kafka"] = broker
    try:
        yield broker
    finally:
        _RUNNING.pop("kafka", None)
        broker.stop()


@pytest.fixture(scope="session")
def kafka(kafka_broker: KafkaBroker) -> str:
    """bootstrap.servers of the session's broker, e.g. ``127.0.0.1:40123``."""
    return kafka_broker.bootstrap


@pytest.fixture(scope="session")
def _kafka_cluster3_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    cluster = obtain(
        "kafka-cluster3", lambda: start_kafka_cluster(tmp_path_factory.mktemp("kafka-cluster3"))
    )
    _RUNNING["kafka_cluster3"] = cluster
    try:
        yield cluster
    finally:
        _RUNNING.pop("kafka_cluster3", None)
        cluster.stop()


@pytest.fixture
def kafka_cluster3(_kafka_cluster3_session: KafkaCluster) -> KafkaCluster:
    """Three KRaft nodes, each broker and controller (a 3-voter quorum), on free loopback ports;
    every internal topic with 3 replicas and ``min.insync.replicas=2``. Started once per
    session; a node an earlier test killed is started again (on its ports and data) first."""
    _kafka_cluster3_session.ensure_all_running()
    return _kafka_cluster3_session


@pytest.fixture(scope="session")
def registry_impl(pytestconfig: pytest.Config) -> str:
    """Which registry implementation this run uses: apicurio or axonops."""
    return pytestconfig.getoption("--registry-impl")


@pytest.fixture(scope="session")
def registry_server(
    registry_impl: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Registry]:
    """A Confluent-API schema registry (in-memory storage, global level BACKWARD)."""
    server = obtain(
        "registry",
        lambda: start_registry(registry_impl, tmp_path_factory.mktemp(f"registry-{registry_impl}")),
    )
    _RUNNING["registry"] = server
    try:
        yield server
    finally:
        _RUNNING.pop("registry", None)
        server.stop()


@pytest.fixture(scope="session")
def registry(registry_server: Registry) -> str:
    """Base URL of the Confluent-compatible API (no trailing slash)."""
    return registry_server.url


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A Spark standalone cluster on 127.0.0.1: a master and two workers of 1 core and 1g
    each, started with pyspark's spark-class. ``master_url`` for --master; ``kill_worker(i)``,
    ``start_worker()``, ``alive_workers()`` and ``state()`` (the master's JSON) for tests."""
    cluster = obtain(
        "spark-cluster", lambda: start_spark_cluster(tmp_path_factory.mktemp("spark-cluster"))
    )
    _RUNNING["spark_cluster"] = cluster
    try:
        yield cluster
    finally:
        _RUNNING.pop("spark_cluster", None)
        cluster.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.failed:
        names = set(getattr(item, "fixturenames", ()))
        for name, component in list(_RUNNING.items()):
            if {name, f"{name}_broker", f"{name}_server"} & names:
                for log in getattr(component, "logs", [component.log]):  # a cluster: each node's
                    report.sections.append((f"{name} log tail ({log})", tail(log, 30)))
    return report
