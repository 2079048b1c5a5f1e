"""`topics check` throughput beside the census's, in one run (issue 40: >= 500k records/s with 10
rules, records decoded, on one machine).

N Confluent-framed Avro records of one writer version (a ride: 11 fields, ~70 bytes; default
3M) are produced once into a topic of P partitions, their schema registered in a registry
started from tests/stack (AxonOps, light, unless --registry is given). Then, ``--rounds``
times, interleaved so that both see the same machine:

(census) ``topics census --engine jvm``: the header-only scan (bench_census.py's road);
(check)  ``topics check --engine jvm`` with the 10 rules of ``RULES`` (8 CEL conditions, one
         with a guard, and 2 CEL_FIELD conditions on a tagged field): every value decoded into
         a GenericRecord with its writer schema and every rule evaluated (each rule's CEL, as
         Google's CEL-Java checked it, compiled into closures: quality/jvm's Closures);
(celjava) with ``--celjava``, the same check with CEL-Java's interpreter alone (the plan's
         ``closures`` false), the road before the closures, paired in the same rounds.

Both are timed as the whole call (metadata, watermarks, the JVM's start, the read, the
document); the *steady* rate leaves the start out (records between the first and the last
progress report over the time between them), and the seconds before the first report (the
JVM's start, the plan, the rules' compiles, the first fetch) and after the last (the answer, the
JVM's exit, the document) are reported beside it. Medians are reported, with the load before and
after each round, the commit and the date; raw lines go to bench/results/check.jsonl.

    .venv/bin/python bench/bench_check.py [--messages 3000000] [--partitions 4] [--rounds 3]
                                          [--jobs 2] [--bootstrap HOST:PORT --registry URL]
                                          [--topic EXISTING] [--celjava]

The machine is shared: rerun it when it is quiet (``uptime``) and compare the ratio
check/census of one run rather than absolute figures across runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_census import cpu, load, machine  # noqa: E402

SCHEMA = {"type": "record", "name": "Ride", "namespace": "bench", "fields": [
    {"name": "id", "type": "string"},
    {"name": "driver", "type": "string"},
    {"name": "rider", "type": "string", "confluent:tags": ["PII"]},
    {"name": "phone", "type": "string", "confluent:tags": ["PII"]},
    {"name": "fare", "type": "double"},
    {"name": "distance_km", "type": "double"},
    {"name": "passengers", "type": "int"},
    {"name": "status", "type": {"type": "enum", "name": "Status",
                                "symbols": ["REQUESTED", "ONGOING", "DONE", "CANCELLED"]}},
    {"name": "city", "type": "string"},
    {"name": "started_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "tip", "type": ["null", "double"], "default": None},
]}  # fmt: skip


def _condition(name: str, expr: str, rtype: str = "CEL", **more: Any) -> dict[str, Any]:
    return {"name": name, "kind": "CONDITION", "type": rtype, "mode": "WRITE", "expr": expr,
            "onFailure": "ERROR", **more}  # fmt: skip


RULES = {"domainRules": [
    _condition("fare-not-negative", "message.fare >= 0.0"),
    _condition("distance-sane", "message.distance_km < 500.0"),
    _condition("passengers", "message.passengers > 0 && message.passengers <= 8"),
    _condition("status-known", "message.status in ['REQUESTED', 'ONGOING', 'DONE']"),
    _condition("id-shape", "size(message.id) == 12"),
    _condition("city-named", "message.city != ''"),
    _condition("done-has-fare", "message.status == 'DONE' ; message.fare > 0.0"),
    _condition("rider-prefix", "message.rider.startsWith('r-')"),
    _condition("pii-not-empty", "size(value) > 0", "CEL_FIELD", tags=["PII"]),
    _condition("pii-short", "size(value) < 40", "CEL_FIELD", tags=["PII"]),
]}  # fmt: skip


def bodies(count: int = 1000, seed: int = 40) -> list[bytes]:
    """``count`` distinct encoded rides (a few break a rule), cycled by the producer."""
    import fastavro

    parsed = fastavro.parse_schema(SCHEMA)
    rng = random.Random(seed)
    out = []
    for i in range(count):
        ride = {
            "id": f"ride-{i:07d}",
            "driver": rng.choice(["d-17", "d-4", "d-99"]),
            "rider": rng.choice(["r-1", "r-22", "x-3"]),
            "phone": rng.choice(["555-1234", "555-9876", ""]),
            "fare": rng.choice([12.5, 7.25, 0.0, -1.0]),
            "distance_km": rng.choice([3.2, 12.0, 600.0]),
            "passengers": rng.choice([1, 2, 4, 0]),
            "status": rng.choice(["REQUESTED", "ONGOING", "DONE", "CANCELLED"]),
            "city": rng.choice(["Oslo", "Lisbon", ""]),
            "started_at": 1_700_000_000_000 + i,
            "tip": rng.choice([None, 1.5]),
        }
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, ride)
        out.append(buf.getvalue())
    return out


def produce(bootstrap: str, topic: str, n: int, partitions: int, schema_id: int) -> float:
    """n framed rides into a new topic; seconds taken."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(60)
    p = Producer({
        "bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
        "compression.type": "none", "acks": 1,
        "queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 1_048_576,
    })  # fmt: skip
    header = b"\x00" + struct.pack(">I", schema_id)
    values = [header + b for b in bodies()]
    started = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(topic, value=values[i % len(values)], partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
    assert p.flush(120) == 0
    return time.perf_counter() - started


def register(registry: str, subject: str) -> int:
    import requests

    answer = requests.post(
        f"{registry}/subjects/{subject}/versions",
        json={"schema": json.dumps(SCHEMA), "ruleSet": RULES},
        timeout=30,
    )
    answer.raise_for_status()
    return int(answer.json()["id"])


def _steady(reports: list[tuple[float, int]]) -> float:
    (t0, d0), (t1, d1) = reports[0], reports[-1]
    return (d1 - d0) / (t1 - t0) if t1 > t0 else float("nan")


def _ends(started: float, reports: list[tuple[float, int]], ended: float) -> tuple[float, float]:
    """Seconds from the call to the first progress report (the JVM's start, the plan, the rules'
    compiles, the first fetch) and from the last report to the document (the answer, exit)."""
    return reports[0][0] - started, ended - reports[-1][0]


def census(
    bootstrap: str, topic: str, jobs: int, n: int
) -> tuple[float, float, tuple[float, float]]:
    from converters.census.model import Mode
    from converters.census.take import take_census

    reports: list[tuple[float, int]] = []
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        reports.append((time.perf_counter(), done))

    doc = take_census(bootstrap, topic, mode=Mode(), client=None, store=None, jobs=jobs,
                      engine="jvm", progress=progress)  # fmt: skip
    ended = time.perf_counter()
    took = ended - started
    assert doc["engine"] == "jvm" and doc["totals"]["messages"] == n, doc["totals"]
    return took, _steady(reports), _ends(started, reports, ended)


def check(
    bootstrap: str, registry: str, topic: str, jobs: int, n: int, *, closures: bool = True
) -> tuple[float, float, tuple[float, float]]:
    from converters.census.model import Mode
    from converters.quality import jvmscan
    from converters.quality.check import RuleSource, take_check
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings

    reports: list[tuple[float, int]] = []

    def progress(done: int, total: int) -> None:
        reports.append((time.perf_counter(), done))

    rules = RuleSource(RULES, {}, {"subject": None, "version": None, "file": "bench"})
    planned = jvmscan.plan_document

    def plan(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**planned(*args, **kwargs), "closures": closures}

    jvmscan.plan_document = plan  # type: ignore[assignment]
    started = time.perf_counter()
    try:
        with RegistryClient(RegistrySettings(url=registry)) as client:
            doc = take_check(bootstrap, topic, subject=f"{topic}-value", client=client,
                             rules=rules, mode=Mode(), jobs=jobs, engine="jvm",
                             progress=progress)  # fmt: skip
    finally:
        jvmscan.plan_document = planned  # type: ignore[assignment]
    ended = time.perf_counter()
    took = ended - started
    assert doc["engine"] == "jvm" and doc["totals"]["checked"] == n, doc["totals"]
    (version,) = doc["versions"]
    assert all(r["pass"] + r["fail"] + r["error"] == n for r in version["rules"]), version
    assert all(r["error"] == 0 for r in version["rules"]), version["rules"]
    return took, _steady(reports), _ends(started, reports, ended)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=3_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--bootstrap")
    ap.add_argument("--registry")
    ap.add_argument("--topic", help="read this topic (of --messages rides) instead of writing")
    ap.add_argument("--celjava", action="store_true",
                    help="also time the check with CEL-Java's interpreter alone")  # fmt: skip
    args = ap.parse_args()
    from schemacli.gcpolicy import collect_rarely

    collect_rarely()
    n, parts = args.messages, args.partitions
    broker = registry_server = None
    work = Path(tempfile.mkdtemp(prefix="bench-check-"))
    if not args.bootstrap:
        from tests.stack.kafka import start_kafka

        broker = start_kafka(work / "kafka")
    if not args.registry:
        from tests.stack.registry import start_registry

        registry_server = start_registry("axonops", work / "registry")
    bootstrap = args.bootstrap or broker.bootstrap
    registry = args.registry or registry_server.url
    try:
        topic = args.topic or f"bench-check-{n}-{parts}-{int(time.time())}"
        if not args.topic:
            schema_id = register(registry, f"{topic}-value")
            took = produce(bootstrap, topic, n, parts, schema_id)
            print(f"produced {n} records in {took:.1f} s ({n / took:,.0f}/s)", flush=True)
        names = ["census jvm", "check jvm"] + (["check jvm celjava"] if args.celjava else [])
        seconds: dict[str, list[float]] = {name: [] for name in names}
        steady: dict[str, list[float]] = {name: [] for name in names}
        cpus: dict[str, list[float]] = {name: [] for name in names}
        ends: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        loads = [load()]
        for _ in range(args.rounds):
            for name in seconds:
                before = cpu()
                if name == "census jvm":
                    took, rate, edges = census(bootstrap, topic, args.jobs, n)
                else:
                    took, rate, edges = check(bootstrap, registry, topic, args.jobs, n,
                                              closures=name == "check jvm")  # fmt: skip
                seconds[name].append(took)
                ends[name].append(edges)
                steady[name].append(rate)
                cpus[name].append(cpu() - before)
                print(f"{name} jobs={args.jobs}: {took:.2f} s ({n / took:,.0f}/s), steady "
                      f"{rate:,.0f}/s, to the first report {edges[0]:.2f} s, after the last "
                      f"{edges[1]:.2f} s, load {load()}", flush=True)  # fmt: skip
            loads.append(load())
        rate = {k: round(n / statistics.median(v)) for k, v in seconds.items()}
        result = {
            "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                capture_output=True,
                text=True,
            ).stdout.strip(),  # fmt: skip
            "machine": machine(),
            "load_1min": loads,
            "messages": n,
            "partitions": parts,
            "jobs": args.jobs,
            "rules": len(RULES["domainRules"]),
            "rate": rate,
            "seconds": {k: [round(s, 2) for s in v] for k, v in seconds.items()},
            "steady_rate": {k: round(statistics.median(v)) for k, v in steady.items()},
            # the call's start (to the first progress report) and end (after the last), medians
            "to_first_report_s": {
                k: round(statistics.median(e[0] for e in v), 2) for k, v in ends.items()
            },
            "after_last_report_s": {
                k: round(statistics.median(e[1] for e in v), 2) for k, v in ends.items()
            },
            "cpu_us_per_record": {
                k: round(statistics.median(v) / n * 1e6, 3) for k, v in cpus.items()
            },  # fmt: skip
            "check_over_census": round(rate["check jvm"] / rate["census jvm"], 3),
        }
        if args.celjava:
            alone = rate["check jvm celjava"]
            result["celjava_over_census"] = round(alone / rate["census jvm"], 3)
            result["closures_over_celjava"] = round(rate["check jvm"] / alone, 2)
        print(json.dumps(result, indent=2))
        with (ROOT / "bench" / "results" / "check.jsonl").open("a") as f:
            f.write(json.dumps(result) + "\n")
    finally:
        if broker is not None:
            broker.stop()
        if registry_server is not None:
            registry_server.stop()


if __name__ == "__main__":
    main()
