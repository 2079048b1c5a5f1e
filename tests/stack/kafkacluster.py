"""Three Apache Kafka nodes in KRaft mode (each broker + controller, a 3-voter quorum), for faults.

Built from the single node's pieces (tests/stack/kafka.py: the same jars, JVM options and
logging). Every internal topic has three replicas and needs two in sync
(``min.insync.replicas=2``, ``transaction.state.log.min.isr=2``), so the cluster keeps serving
— transactions included — while any one node is down, and refuses writes with two down.

Each node keeps its ports, config and log dir for the whole session: a test can SIGKILL one
(:meth:`KafkaCluster.kill`) and start it again on the same ports and data
(:meth:`KafkaCluster.restart`). Readiness is an event, never a sleep: the node's port answers,
and the metadata it serves lists all three brokers; at first start, also a record produced with
``acks=all`` to a three-replica topic is consumed back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .common import (
    JVM_BASE_OPTS,
    ComponentUnavailable,
    ManagedProcess,
    free_port,
    java,
    port_open,
    spawn,
    tail,
    wait_until,
)
from .kafka import (
    HEAP,
    LOG4J2,
    START_TIMEOUT,
    check_round_trip,
    cluster_id,
    kafka_jars,
    kraft_node_settings,
    properties_text,
)

NODES = 3
REPLICAS = 3
MIN_ISR = 2


def node_properties(
    *, node_id: int, port: int, controller_port: int, voters: str, data_dir: Path
) -> str:
    """server.properties of one node of the three: three replicas of everything, two of them
    needed for a write, so one node may be lost."""
    settings = kraft_node_settings(
        node_id=node_id, port=port, controller_port=controller_port, voters=voters,
        data_dir=data_dir,
    )  # fmt: skip
    settings.update(
        {
            "default.replication.factor": str(REPLICAS),
            "min.insync.replicas": str(MIN_ISR),
            "offsets.topic.replication.factor": str(REPLICAS),
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": str(REPLICAS),
            "transaction.state.log.min.isr": str(MIN_ISR),
            "transaction.state.log.num.partitions": "3",
            "share.coordinator.state.topic.replication.factor": str(REPLICAS),
            "share.coordinator.state.topic.min.isr": str(MIN_ISR),
            "unclean.leader.election.enable": "false",
            "num.replica.fetchers": "1",
        }
    )
    return properties_text(settings)


@dataclass
class ClusterNode:
    """One node: its id, ports and folder stay the same across kills and restarts."""

    node_id: int
    port: int
    controller_port: int
    workdir: Path
    process: ManagedProcess | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def config(self) -> Path:
        return self.workdir / "server.properties"

    @property
    def log(self) -> Path:
        return self.workdir / "kafka.log"

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()


@dataclass
class KafkaCluster:
    """Three running nodes. ``bootstrap`` names all three, as a client of a real cluster would."""

    nodes: list[ClusterNode]
    jvm: list[str] = field(repr=False)

    @property
    def bootstrap(self) -> str:
        return ",".join(node.bootstrap for node in self.nodes)

    @property
    def log(self) -> Path:
        """The first node's log (``logs`` has every node's)."""
        return self.nodes[0].log

    @property
    def logs(self) -> list[Path]:
        return [node.log for node in self.nodes]

    def node(self, node_id: int) -> ClusterNode:
        return next(n for n in self.nodes if n.node_id == node_id)

    def _spawn(self, node: ClusterNode) -> None:
        node.process = spawn(
            f"kafka-{node.node_id}",
            [*self.jvm, "kafka.Kafka", str(node.config)],
            log=node.log,
            cwd=node.workdir,
        )

    def _await_serving(self, node: ClusterNode, timeout: float = START_TIMEOUT) -> None:
        """Until ``node`` answers on its port and serves metadata listing all three brokers."""
        assert node.process is not None
        wait_until(
            f"kafka node {node.node_id}",
            lambda: port_open(node.port),
            process=node.process,
            timeout=timeout,
            what="listening on its port",
        )
        wait_until(
            f"kafka node {node.node_id}",
            lambda: len(self.brokers(node.bootstrap)) == NODES,
            process=node.process,
            timeout=timeout,
            what=f"serving metadata with {NODES} brokers",
        )

    def brokers(self, bootstrap: str | None = None) -> set[int]:
        """The broker ids the metadata lists (live, unfenced brokers), asked of ``bootstrap``
        (default: the cluster)."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": bootstrap or self.bootstrap, "log_level": 0})
        return set(admin.list_topics(timeout=5).brokers)

    def leader(self, topic: str, partition: int = 0) -> int:
        """The node id that leads ``topic``'s ``partition`` now."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        meta = admin.list_topics(topic, timeout=10).topics[topic]
        if meta.error is not None:
            raise RuntimeError(f"topic {topic!r}: {meta.error.str()}")
        return meta.partitions[partition].leader

    def kill(self, node_id: int) -> None:
        """SIGKILL the node's JVM (no controlled shutdown, no flush) and reap it."""
        node = self.node(node_id)
        assert node.process is not None and node.alive(), f"node {node_id} is not running"
        os.killpg(node.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            node.process.popen.wait(timeout=30)
        node.process.stop()  # marks it stopped and forgets it (the group is gone already)

    def restart(self, node_id: int) -> None:
        """Start a killed node again on its ports and log dir; return once it serves metadata
        listing all three brokers. Raises ComponentUnavailable (with its log tail) otherwise."""
        node = self.node(node_id)
        if node.alive():
            raise RuntimeError(f"node {node_id} is still running")
        self._spawn(node)
        self._await_serving(node)

    def ensure_all_running(self) -> None:
        """Restart any node a test left dead."""
        for node in self.nodes:
            if not node.alive():
                self.restart(node.node_id)

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None:
                node.process.stop()


def start_kafka_cluster(workdir: Path) -> KafkaCluster:
    """Format three nodes' storage under ``workdir`` and start them; return once every node
    serves metadata listing three brokers and a record produced with ``acks=all`` to a
    three-replica topic was consumed back. Raises ComponentUnavailable (with a log tail)."""
    jars = kafka_jars()
    workdir.mkdir(parents=True, exist_ok=True)
    log4j = workdir / "log4j2.properties"
    log4j.write_text(LOG4J2)
    jvm = [
        java(),
        *HEAP,
        *JVM_BASE_OPTS,
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={log4j}",
        "-cp",
        ":".join(str(j) for j in jars),
    ]
    nodes = [
        ClusterNode(i, free_port(), free_port(), workdir / f"node-{i}") for i in range(1, NODES + 1)
    ]
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in nodes)
    for node in nodes:
        node.workdir.mkdir(parents=True, exist_ok=True)
        node.config.write_text(
            node_properties(
                node_id=node.node_id,
                port=node.port,
                controller_port=node.controller_port,
                voters=voters,
                data_dir=node.workdir / "data",
            )
        )
    cluster = KafkaCluster(nodes, jvm)
    the_id = cluster_id()

    def format_storage(node: ClusterNode) -> None:
        formatting = spawn(
            f"kafka-storage-{node.node_id}",
            [*jvm, "kafka.tools.StorageTool", "format", f"--cluster-id={the_id}"]
            + ["-c", str(node.config)],
            log=node.log,
            cwd=node.workdir,
        )
        try:
            code = formatting.popen.wait(timeout=120)
        finally:
            formatting.stop()
        if code != 0:
            raise ComponentUnavailable(
                "kafka-cluster",
                f"formatting node {node.node_id}'s KRaft storage failed",
                log_tail=tail(node.log),
            )

    with ThreadPoolExecutor(NODES) as pool:
        list(pool.map(format_storage, nodes))
    try:
        for node in nodes:
            cluster._spawn(node)
        for node in nodes:
            cluster._await_serving(node)
        check_round_trip(cluster.bootstrap, nodes[0].process, replication_factor=REPLICAS)
    except ComponentUnavailable as exc:
        cluster.stop()
        logs = "\n".join(f"--- node {n.node_id} ---\n{tail(n.log, 15)}" for n in nodes)
        raise ComponentUnavailable("kafka-cluster", str(exc), log_tail=logs) from exc
    except BaseException:
        cluster.stop()
        raise
    return cluster
