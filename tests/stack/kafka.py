"""A single-node Apache Kafka broker in KRaft mode (combined broker + controller), from Maven jars.

The broker's jars come from Maven Central (tests/stack/kafka-pom.xml -> .cache/jars/kafka/).
Each start writes a server.properties with free loopback ports into its own work folder,
formats the storage with ``kafka.tools.StorageTool`` and starts ``kafka.Kafka``. Healthy means:
a topic can be created, a record produced and consumed back.
"""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .common import (
    JARS,
    JVM_BASE_OPTS,
    STACK_DIR,
    ComponentUnavailable,
    ManagedProcess,
    free_port,
    java,
    maven_copy,
    port_open,
    spawn,
    tail,
    wait_until,
)

KAFKA_VERSION = "4.1.1"  # keep equal to kafka.version in kafka-pom.xml
KAFKA_POM = STACK_DIR / "kafka-pom.xml"
KAFKA_JARS = JARS / "kafka"
HEAP = ("-Xms128m", "-Xmx512m")
START_TIMEOUT = 90.0

LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
"""


@dataclass(frozen=True)
class KafkaBroker:
    """A running broker: ``bootstrap`` is what clients pass as bootstrap.servers."""

    bootstrap: str
    process: ManagedProcess
    workdir: Path

    @property
    def log(self) -> Path:
        return self.process.log

    def stop(self) -> None:
        self.process.stop()


def kafka_jars() -> list[Path]:
    """The broker's classpath, resolved with mvn on first use. Raises ComponentUnavailable."""
    return maven_copy("kafka", KAFKA_POM, KAFKA_JARS)


def cluster_id() -> str:
    """A KRaft cluster id in Kafka's Uuid text form (URL-safe base64 of 16 bytes, no padding).

    Like Kafka's own ``Uuid.randomUuid``, an id that begins with ``-`` is drawn again: the
    storage tool's argument parser would read it as an option (about one id in 64).
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def kraft_node_settings(
    *, node_id: int, port: int, controller_port: int, voters: str, data_dir: Path
) -> dict[str, str]:
    """What every KRaft node of the test stack has: broker and controller in one process on
    127.0.0.1, PLAINTEXT, few threads for a small machine, a stop that is a kill."""
    return {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": "1",
        "auto.create.topics.enable": "true",
        "group.initial.rebalance.delay.ms": "0",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
        "log.cleaner.enable": "false",
        "controlled.shutdown.enable": "false",
    }


def properties_text(settings: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def server_properties(*, port: int, controller_port: int, data_dir: Path) -> str:
    """server.properties for the single node: every internal topic has one replica."""
    settings = kraft_node_settings(
        node_id=1,
        port=port,
        controller_port=controller_port,
        voters=f"1@127.0.0.1:{controller_port}",
        data_dir=data_dir,
    )
    settings.update(
        {
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
        }
    )
    return properties_text(settings)


def start_kafka(workdir: Path, *, detach: bool = False, port: int | None = None) -> KafkaBroker:
    """Format storage in ``workdir`` and start a broker; return once it is healthy.

    ``detach`` leaves it running after this process exits (scripts/devstack). Raises
    ComponentUnavailable (with the log tail) if it cannot be resolved, started or made healthy;
    a broker that started but is not healthy is stopped first.
    """
    jars = kafka_jars()
    classpath = ":".join(str(j) for j in jars)
    workdir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    controller_port = free_port()
    config = workdir / "server.properties"
    config.write_text(
        server_properties(port=port, controller_port=controller_port, data_dir=workdir / "data")
    )
    log4j = workdir / "log4j2.properties"
    log4j.write_text(LOG4J2)
    log = workdir / "kafka.log"
    jvm = [
        java(),
        *HEAP,
        *JVM_BASE_OPTS,
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={log4j}",
        "-cp",
        classpath,
    ]

    formatting = spawn(
        "kafka-storage",
        # `--cluster-id=ID` in one word: the id can never be taken for an option.
        [*jvm, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id()}"]
        + ["-c", str(config)],
        log=log,
        cwd=workdir,
    )
    if formatting.popen.wait(timeout=120) != 0:
        formatting.stop()
        raise ComponentUnavailable(
            "kafka", "formatting the KRaft storage failed", log_tail=tail(log)
        )
    formatting.stop()

    process = spawn(
        "kafka", [*jvm, "kafka.Kafka", str(config)], log=log, cwd=workdir, detach=detach
    )
    broker = KafkaBroker(f"127.0.0.1:{port}", process, workdir)
    try:
        wait_until(
            "kafka",
            lambda: port_open(port),
            process=process,
            timeout=START_TIMEOUT,
            what="listening on its port",
        )
        check_round_trip(broker.bootstrap, process)
    except BaseException:
        process.stop()
        raise
    return broker


def check_round_trip(
    bootstrap: str,
    process: ManagedProcess | None = None,
    timeout: float = 60.0,
    *,
    replication_factor: int = 1,
) -> None:
    """Create a topic (``replication_factor`` replicas), produce one record (librdkafka's
    default ``acks=all``) and consume it back. Raises ComponentUnavailable."""
    try:
        from confluent_kafka import Consumer, Producer
        from confluent_kafka.admin import AdminClient, NewTopic
    except ImportError as exc:
        raise ComponentUnavailable(
            "kafka",
            "confluent-kafka is not installed (pip install 'confluent-kafka[avro,schemaregistry]')",
        ) from exc

    log_tail = (lambda: tail(process.log)) if process else (lambda: "")
    deadline = time.monotonic() + timeout
    topic = f"_schemacli_health_{uuid.uuid4().hex[:8]}"
    quiet = {"bootstrap.servers": bootstrap, "log_level": 0}
    admin = AdminClient(quiet)
    created = admin.create_topics([NewTopic(topic, 1, replication_factor)], operation_timeout=30)
    try:
        created[topic].result(timeout=max(1.0, deadline - time.monotonic()))
    except Exception as exc:
        raise ComponentUnavailable(
            "kafka", f"could not create topic {topic}: {exc}", log_tail=log_tail()
        ) from exc

    marker = uuid.uuid4().bytes
    producer = Producer({**quiet, "message.timeout.ms": int(timeout * 1000)})
    producer.produce(topic, value=marker)
    if producer.flush(max(1.0, deadline - time.monotonic())) != 0:
        raise ComponentUnavailable(
            "kafka", "a produced record was not acknowledged", log_tail=log_tail()
        )

    consumer = Consumer(
        {**quiet, "group.id": topic, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    try:
        consumer.subscribe([topic])
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            if message.value() == marker:
                break
        else:
            raise ComponentUnavailable(
                "kafka", f"the record produced to {topic} was not consumed", log_tail=log_tail()
            )
    finally:
        consumer.close()
    admin.delete_topics([topic], operation_timeout=10)


def census_jars() -> list[Path]:
    """The census's JVM scan's run-time jars (kafka-clients, its codecs, slf4j-nop), resolved
    from converters/census/jvm/pom.xml into .cache/jars/census (where the census looks in a
    checkout)."""
    from converters.census.jvmscan import POM

    return maven_copy("census kafka-clients", POM, JARS / "census")


def quality_jars() -> list[Path]:
    """topics check's JVM engine's run-time jars (Google's CEL-Java, Avro, kafka-clients and its
    codecs, slf4j-nop), resolved from converters/quality/jvm/pom.xml into .cache/jars/quality
    (where topics check looks in a checkout; the proof's JVM road runs them too)."""
    from converters.quality.jvmscan import POM

    return maven_copy("quality (CEL-Java) jars", POM, JARS / "quality")
