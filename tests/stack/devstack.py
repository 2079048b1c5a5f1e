"""scripts/devstack: the integration stack for a person, in the background.

    scripts/devstack up [--registry-impl apicurio|axonops] [--kafka-port N] [--registry-port N]
    scripts/devstack status
    scripts/devstack down

Same launchers and cache as the pytest fixtures. State (pids, URLs, log paths) lives in
.cache/devstack/state.json; each component runs in its own process group and is stopped by
``down`` (TERM, then KILL).
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

HOME = Path(os.environ.get("SCHEMACLI_DEVSTACK_HOME", CACHE / "devstack"))
STATE = HOME / "state.json"
DEFAULT_KAFKA_PORT = 9092  # the ports docker-compose.yml and the CLI defaults use
DEFAULT_REGISTRY_PORT = 8081


@dataclass(frozen=True)
class Component:
    name: str
    pid: int
    address: str  # bootstrap servers or registry URL
    log: str


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


def _healthy(component: Component) -> bool:
    if not _alive(component.pid):
        return False
    try:
        if component.name == "kafka":
            return port_open(int(component.address.rsplit(":", 1)[1]))
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
    print(f"starting Kafka (KRaft) and the {args.registry_impl} registry ...", file=sys.stderr)
    # Both are subprocesses polled until healthy: start them side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
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
    return 0


def _where(component: Component) -> str:
    return f"(pid {component.pid}, log {component.log})"


def _print(components: list[Component]) -> None:
    for component in components:
        label = "bootstrap servers" if component.name == "kafka" else "registry URL"
        print(f"{component.name}: {label} {component.address}  {_where(component)}")
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
        ok = _healthy(component)
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
    start = commands.add_parser("up", help="start Kafka and a schema registry in the background")
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
    start.set_defaults(run=up)
    commands.add_parser("status", help="is it up and healthy?").set_defaults(run=status)
    commands.add_parser("down", help="stop everything devstack started").set_defaults(run=down)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
