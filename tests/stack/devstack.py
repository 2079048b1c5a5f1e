"""scripts/devstack: the integration stack for a person, in the background.

    scripts/devstack up [--registry-impl apicurio|axonops] [--kafka-port N] [--registry-port N]
                        [--spark-cluster [--spark-port N]]
    scripts/devstack status
    scripts/devstack down

Same launchers and cache as the pytest fixtures. State (pids, URLs, log paths) lives in
.cache/devstack/state.json; each component runs in its own process group and is stopped by
``down`` (TERM, then KILL). ``--spark-cluster`` adds a Spark standalone master and two workers
(1 core, 1g each; tests/stack/sparkcluster.py) for ``schemacli migrate deploy --master
spark://...``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from .common import CACHE, ComponentUnavailable, port_open, stop_group
from .kafka import start_kafka
from .probe import REGISTRY_IMPLS
from .registry import start_registry, subjects_answer
from .spark import spark_jars
from .sparkcluster import master_json, start_spark_cluster

HOME = Path(os.environ.get("SCHEMACLI_DEVSTACK_HOME", CACHE / "devstack"))
STATE = HOME / "state.json"
DEFAULT_KAFKA_PORT = 9092  # the ports docker-compose.yml and the CLI defaults use
DEFAULT_REGISTRY_PORT = 8081
DEFAULT_SPARK_PORT = 7077  # Spark's standalone master port, and its web UI's
DEFAULT_SPARK_WEBUI_PORT = 8080
SPARK_WORKERS = 2


@dataclass(frozen=True)
class Component:
    name: str
    pid: int
    address: str  # bootstrap servers, registry URL, spark:// master URL or a worker's web UI
    log: str
    web: str = ""  # a Spark daemon's web UI (the master's serves /json/)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still "exists"; /proc tells
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def _load() -> list[Component]:
    if not STATE.is_file():
        return []
    return [Component(**entry) for entry in json.loads(STATE.read_text())]


def _save(components: list[Component]) -> None:
    HOME.mkdir(parents=True, exist_ok=True)
    STATE.write_text(json.dumps([asdict(c) for c in components], indent=2) + "\n")


def _port(preferred: int | None, default: int) -> int | None:
    """The port to use: the one asked for (0: any free one), else the default when free,
    else None (any free port)."""
    if preferred is not None:
        return preferred or None
    return None if port_open(default) else default


def _spark_state(components: list[Component]) -> dict:
    master = next(c for c in components if c.name == "spark-master")
    return master_json(int(master.web.rsplit(":", 1)[1]))


def _healthy(component: Component, components: list[Component]) -> bool:
    if not _alive(component.pid):
        return False
    try:
        if component.name == "kafka":
            return port_open(int(component.address.rsplit(":", 1)[1]))
        if component.name == "spark-master":
            return _spark_state(components).get("status") == "ALIVE"
        if component.name.startswith("spark-worker"):
            workers = _spark_state(components).get("workers", [])
            return any(
                w.get("webuiaddress") == component.web and w.get("state") == "ALIVE"
                for w in workers
            )
        return subjects_answer(component.address)
    except Exception:  # noqa: BLE001 - status reports, it does not raise
        return False


def up(args: argparse.Namespace) -> int:
    running = [c for c in _load() if _alive(c.pid)]
    if running:
        print("devstack is already up (scripts/devstack down first):", file=sys.stderr)
        _print(running)
        return 1
    begin = time.monotonic()
    try:
        print("resolving Spark connector jars ...", file=sys.stderr)
        jars = spark_jars()
    except ComponentUnavailable as exc:
        print(f"devstack up failed: {exc}", file=sys.stderr)
        return 3
    shutil.rmtree(HOME, ignore_errors=True)
    spark_note = " and a Spark standalone cluster" if args.spark_cluster else ""
    print(
        f"starting Kafka (KRaft), the {args.registry_impl} registry{spark_note} ...",
        file=sys.stderr,
    )
    # All are subprocesses polled until healthy: start them side by side.
    with ThreadPoolExecutor(max_workers=3) as pool:
        kafka = pool.submit(
            start_kafka,
            HOME / "kafka",
            detach=True,
            port=_port(args.kafka_port, DEFAULT_KAFKA_PORT),
        )
        registry = pool.submit(
            start_registry,
            args.registry_impl,
            HOME / "registry",
            detach=True,
            port=_port(args.registry_port, DEFAULT_REGISTRY_PORT),
        )
        cluster = None
        if args.spark_cluster:
            cluster = pool.submit(
                start_spark_cluster,
                HOME / "spark",
                workers=SPARK_WORKERS,
                detach=True,
                port=_port(args.spark_port, DEFAULT_SPARK_PORT),
                # --spark-port 0 (tests) means free ports for the web UI too
                webui_port=None if args.spark_port == 0 else _port(None, DEFAULT_SPARK_WEBUI_PORT),
            )
    started: list[Component] = []
    failures: list[str] = []
    for name, future in (("kafka", kafka), ("registry", registry)):
        try:
            running = future.result()
        except ComponentUnavailable as exc:
            failures.append(str(exc))
            continue
        address = running.bootstrap if name == "kafka" else running.url
        started.append(Component(name, running.process.pid, address, str(running.log)))
    if cluster is not None:
        try:
            started += _spark_components(cluster.result())
        except ComponentUnavailable as exc:
            failures.append(str(exc))
    if failures:
        for component in started:
            stop_group(component.pid)
        STATE.unlink(missing_ok=True)
        print("devstack up failed:\n" + "\n".join(failures), file=sys.stderr)
        return 3
    _save(started)
    print(f"devstack up in {time.monotonic() - begin:.1f} s", file=sys.stderr)
    _print(started)
    # comma-separated, as spark.jars wants it; `schemacli migrate` reads this variable
    print(f"export SCHEMACLI_SPARK_JARS={','.join(str(j) for j in jars)}")
    master = next((c.address for c in started if c.name == "spark-master"), None)
    if master:
        print(
            f"run the converter on the cluster: schemacli migrate deploy MAPPING --master {master}"
            ' --jars "$SCHEMACLI_SPARK_JARS" -b ... -r ...',
            file=sys.stderr,
        )
    return 0


def _spark_components(cluster) -> list[Component]:
    """The master, then each worker (``down`` stops them in reverse: workers first)."""
    master = Component(
        "spark-master",
        cluster.master.pid,
        cluster.master_url,
        str(cluster.master.log),
        f"http://127.0.0.1:{cluster.webui_port}",
    )
    workers = [
        Component(
            f"spark-worker-{i}",
            process.pid,
            f"http://127.0.0.1:{port}",
            str(process.log),
            f"http://127.0.0.1:{port}",
        )
        for i, (process, port) in enumerate(
            zip(cluster.workers, cluster.worker_ui_ports, strict=True)
        )
        if process is not None
    ]
    return [master, *workers]


def _where(component: Component) -> str:
    return f"(pid {component.pid}, log {component.log})"


_LABELS = {"kafka": "kafka: bootstrap servers", "registry": "registry: registry URL"}


def _print(components: list[Component]) -> None:
    for component in components:
        if component.name == "spark-master":
            label = f"spark master: {component.address}  web UI {component.web}"
            print(f"{label}  {_where(component)}")
            continue
        if component.name.startswith("spark-worker"):
            print(f"{component.name}: web UI {component.address}  {_where(component)}")
            continue
        print(f"{_LABELS[component.name]} {component.address}  {_where(component)}")
    by_name = {c.name: c.address for c in components}
    if "registry" in by_name:
        print(f"export SCHEMACLI_REGISTRY_URL={by_name['registry']}")


def status(_: argparse.Namespace) -> int:
    components = _load()
    if not components:
        print("devstack is down")
        return 1
    healthy = True
    for component in components:
        ok = _healthy(component, components)
        healthy &= ok
        state = "up" if ok else ("running, NOT healthy" if _alive(component.pid) else "DEAD")
        print(f"{component.name}: {state}  {component.address}  {_where(component)}")
    return 0 if healthy else 1


def down(_: argparse.Namespace) -> int:
    components = _load()
    for component in reversed(components):
        stop_group(component.pid)
        print(f"{component.name}: stopped (pid {component.pid})")
    STATE.unlink(missing_ok=True)
    if not components:
        print("devstack was not running")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/devstack", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser(
        "up", help="start Kafka and a schema registry (and a Spark cluster) in the background"
    )
    start.add_argument(
        "--registry-impl",
        choices=REGISTRY_IMPLS,
        default=os.environ.get("SCHEMACLI_REGISTRY_IMPL", "apicurio"),
    )
    start.add_argument(
        "--kafka-port", type=int, help=f"default {DEFAULT_KAFKA_PORT} if free; 0: any free port"
    )
    start.add_argument(
        "--registry-port",
        type=int,
        help=f"default {DEFAULT_REGISTRY_PORT} if free; 0: any free port",
    )
    start.add_argument(
        "--spark-cluster",
        action="store_true",
        help=f"also start a Spark standalone master and {SPARK_WORKERS} workers (1 core, 1g each)",
    )
    start.add_argument(
        "--spark-port",
        type=int,
        help=f"the master's port with --spark-cluster: default {DEFAULT_SPARK_PORT} if free "
        f"(web UI {DEFAULT_SPARK_WEBUI_PORT} if free); 0: any free ports",
    )
    start.set_defaults(run=up)
    commands.add_parser("status", help="is it up and healthy?").set_defaults(run=status)
    commands.add_parser("down", help="stop everything devstack started").set_defaults(run=down)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
