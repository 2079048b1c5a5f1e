"""`topics census` throughput: records/s of the header-only scan (target: 1M records/s here).

N small Confluent-framed records (default 3M, values of 3 writer ids in runs, string keys,
16-byte values) are produced once into a topic of P partitions (fast producer settings:
batches of 1 MB, linger 50 ms, no compression) and then read, each way timed ``--rounds``
times (median reported):

(floor) a bare confluent-kafka consumer that only counts the records it is given, all
        partitions assigned at once, the census's fetch settings: what reading the records
        into Python costs before the census looks at a byte;
(1)     the census, ``jobs=1``: one consumer in this process (``converters.census.scan``);
(2)     the census, ``jobs=2``, ``jobs=4``: worker processes, each with its own consumer and a
        share of the partitions;
(jvm)   the census's JVM road (``--engine jvm``, issue #29): Kafka's own Java consumer in a
        child JVM, ``jobs`` threads with a consumer each (``jvm jobs=N``).

Each census run's clock covers the whole ``take_census`` (metadata, watermarks, retention,
spawning the workers or starting the JVM, the read, the document). The *steady* rate leaves the
start out: the records counted between the first and the last progress report over the time
between them (reports come every 250 ms from the JVM, every batch from Python). The machine's
load is printed with the result.

    .venv/bin/python bench/bench_census.py [--messages 3000000] [--partitions 4] [--rounds 3]
                                           [--bootstrap HOST:PORT] [--jobs 1,2,4]
                                           [--engines python,jvm] [--topic EXISTING]

Without --bootstrap a broker is started from tests/stack (Maven jars). Results are printed and
appended as one JSON line to bench/results/census.jsonl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402


def machine() -> str:
    model = cpu_model()
    return f"{platform.node()} {os.cpu_count()} cpu {model}"


def load() -> float:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else -1.0


def produce(bootstrap: str, topic: str, n: int, partitions: int) -> float:
    """n records into a new topic; seconds taken."""
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
    values = [b"\x00" + struct.pack(">I", i) + b"payload-%03d" % i for i in (101, 102, 103)]
    started = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(topic, value=values[(i * 3) // n], key=b"ride-%d" % (i % 10_000),
                          partition=i % partitions)  # fmt: skip
                break
            except BufferError:
                p.poll(0.05)
    assert p.flush(120) == 0
    return time.perf_counter() - started


def cpu() -> float:
    """CPU seconds of this process (librdkafka's threads too) and of its reaped children (the
    census's worker processes)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def floor(bootstrap: str, topic: str, partitions: int) -> float:
    """Seconds for a bare consumer to be handed every record (counting only)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    from converters.census.scan import BATCH, consumer_config

    c = Consumer(consumer_config(bootstrap, None))
    started = time.perf_counter()
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    left, n = set(range(partitions)), 0
    while left:
        for m in c.consume(BATCH, 0.5):
            err = m.error()
            if err is None:
                n += 1
            elif err.code() == KafkaError._PARTITION_EOF:
                left.discard(m.partition())
    took = time.perf_counter() - started
    c.close()
    return took


def census(bootstrap: str, topic: str, jobs: int, n: int, engine: str) -> tuple[float, float]:
    """Seconds for the whole census, and its steady rate (records/s between the first and the
    last progress report)."""
    from converters.census.model import Mode
    from converters.census.take import take_census

    reports: list[tuple[float, int]] = []

    def progress(done: int, total: int) -> None:
        reports.append((time.perf_counter(), done))

    started = time.perf_counter()
    doc = take_census(bootstrap, topic, mode=Mode(), client=None, store=None, jobs=jobs,
                      engine=engine, progress=progress)  # fmt: skip
    took = time.perf_counter() - started
    assert doc["engine"] == engine, doc["engine"]
    assert doc["totals"]["messages"] == n, doc["totals"]
    versions = doc["values"]["versions"]
    assert sum(v["count"] for v in versions) == n and len(versions) == 3
    (t0, d0), (t1, d1) = reports[0], reports[-1]
    steady = (d1 - d0) / (t1 - t0) if t1 > t0 else float("nan")
    return took, steady


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=3_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bootstrap")
    ap.add_argument("--jobs", default="1,2,4")
    ap.add_argument("--engines", default="python,jvm")
    ap.add_argument("--topic", help="read this topic (of --messages records) instead of writing")
    args = ap.parse_args()
    from schemacli.gcpolicy import collect_rarely

    collect_rarely()  # as the CLI's entry point does (app.main), and the census's workers
    n, parts = args.messages, args.partitions
    broker = None
    if not args.bootstrap:
        from tests.stack.kafka import start_kafka

        broker = start_kafka(Path(tempfile.mkdtemp(prefix="bench-census-")) / "kafka")
    bootstrap = args.bootstrap or broker.bootstrap
    try:
        topic = args.topic or f"bench-census-{n}-{parts}-{int(time.time())}"
        if not args.topic:
            produced = produce(bootstrap, topic, n, parts)
            print(f"produced {n} records in {produced:.1f} s ({n / produced:,.0f}/s)", flush=True)
        rows: dict[str, list[float]] = {"floor": []}
        steady: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        jobs = [int(j) for j in args.jobs.split(",")]
        engines = [e.strip() for e in args.engines.split(",") if e.strip()]
        loads = [load()]
        for _ in range(args.rounds):
            before = cpu()
            rows["floor"].append(floor(bootstrap, topic, parts))
            cpus.setdefault("floor", []).append(cpu() - before)
            for engine in engines:
                for j in jobs:
                    name = f"jobs={j}" if engine == "python" else f"{engine} jobs={j}"
                    before = cpu()
                    took, rate = census(bootstrap, topic, j, n, engine)
                    rows.setdefault(name, []).append(took)
                    steady.setdefault(name, []).append(rate)
                    cpus.setdefault(name, []).append(cpu() - before)
                    print(f"{name}: {took:.2f} s ({n / took:,.0f}/s), steady {rate:,.0f}/s, "
                          f"load {load()}", flush=True)  # fmt: skip
            loads.append(load())
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
            "rate": {k: round(n / statistics.median(v)) for k, v in rows.items()},
            "seconds": {k: [round(s, 2) for s in v] for k, v in rows.items()},
            # records/s once reading: the start (a JVM, worker processes, metadata) left out
            "steady_rate": {k: round(statistics.median(v)) for k, v in steady.items()},
            # CPU per record (all processes): what the machine's 2 CPUs allow at best
            "cpu_us_per_record": {
                k: round(statistics.median(v) / n * 1e6, 3) for k, v in cpus.items()
            },  # fmt: skip
        }
        print(json.dumps(result, indent=2))
        out = ROOT / "bench" / "results" / "census.jsonl"
        with out.open("a") as f:
            f.write(json.dumps(result) + "\n")
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
