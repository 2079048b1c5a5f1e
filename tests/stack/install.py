"""scripts/ci-setup: fetch everything the integration stack needs into .cache/, idempotently.

    python -m tests.stack.install [--registry-impl apicurio,axonops]

Spark connector jars, the Kafka broker, the census's Kafka client jars, the JVM JSONata
engine (JSONata4Java, for the migration-rule proof) and topics check's JVM engine (Google's
CEL-Java with Avro and kafka-clients) via mvn, Apicurio via mvn, AxonOps via go
build.
Already cached components cost nothing (stamp files). The steps run in two lanes at once: the
Maven fetches one after another (they share the local Maven repository), the Go build beside
them (its own caches), which takes a fresh machine's set-up from the sum of the two to the longer.
Exit 0 when all were obtained, 1 if any failed (each failure printed with its log tail).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Sequence

from . import registry
from .common import ComponentUnavailable
from .jsonata import jsonata_jars
from .kafka import census_jars, kafka_jars, quality_jars
from .probe import REGISTRY_IMPLS
from .spark import spark_jars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/ci-setup", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--registry-impl",
        default=",".join(REGISTRY_IMPLS),
        help="comma-separated registries to obtain (default: all)",
    )
    args = parser.parse_args(argv)
    impls = [i.strip() for i in args.registry_impl.split(",") if i.strip()]
    unknown = sorted(set(impls) - set(REGISTRY_IMPLS))
    if unknown:
        parser.error(f"unknown registry implementation(s) {unknown}; choose from {REGISTRY_IMPLS}")

    maven: list[tuple[str, Callable[[], object]]] = [
        ("spark connector jars", spark_jars),
        ("kafka broker jars", kafka_jars),
        ("census kafka-clients jars", census_jars),
        ("jsonata4java jars", jsonata_jars),
        ("quality jars (CEL-Java, Avro, kafka-clients)", quality_jars),
        *(
            (f"registry {impl}", lambda impl=impl: registry.obtain(impl))
            for impl in impls
            if impl != "axonops"
        ),
    ]
    go = [("registry axonops", lambda: registry.obtain("axonops"))] if "axonops" in impls else []
    failures: list[str] = []
    lanes = [threading.Thread(target=_run_lane, args=(lane, failures)) for lane in (go, maven)]
    for lane in lanes:
        lane.start()
    for lane in lanes:
        lane.join()
    return 1 if failures else 0


_PRINT = threading.Lock()


def _run_lane(steps: Sequence[tuple[str, Callable[[], object]]], failures: list[str]) -> None:
    """Run one lane's steps in order, printing each one's outcome as a whole line."""
    for label, step in steps:
        begin = time.monotonic()
        try:
            step()
        except ComponentUnavailable as exc:
            with _PRINT:
                failures.append(label)
                print(f"ci-setup: {label}: FAILED\n{exc}", file=sys.stderr)
            continue
        with _PRINT:
            print(f"ci-setup: {label}: ok ({time.monotonic() - begin:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
