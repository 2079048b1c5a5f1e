"""The exactly-once converter on a standalone cluster: 1 worker vs 2 workers (1 core each) on the
same data, and where each message's CPU goes (driver, executors, broker).

    .venv/bin/python bench/bench_scaleout.py [--messages N] [--rounds 2] [--road fast|sql|both]

A master and two 1-core workers from tests/stack/sparkcluster.py (executors 512m). "1 worker":
the application is capped at one core (``spark.cores.max=1``), so it gets one executor on one
worker; "2 workers": two cores, one executor on each. Everything - broker, master, workers,
executors, driver - shares this machine's CPUs, so the wall-clock rate of "2 workers" cannot show
what two machines would do. What it can show is the cost: for every timed run the CPU seconds
(user + system, from /proc) of the driver's JVM, the driver's Python, the executors' JVMs and the
broker are divided by the messages, and a model from those costs (bench/README.md, issue #31)
says what real machines would gain. Each session runs one untimed warm-up and ``--rounds`` timed
``availableNow`` runs per road (medians). Results: printed and appended to
bench/results/scaleout.jsonl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_converter import V1, V2, count_committed, machine, produce, source  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def descendants(root: int) -> list[int]:
    """Every process under ``root`` (a worker's executors are its children)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def executors(cluster) -> list[int]:
    pids = []
    for w in cluster.workers:
        if w is None:
            continue
        for pid in descendants(w.pid):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"CoarseGrainedExecutorBackend" in cmd:
                pids.append(pid)
    return pids


def session(master: str, cores: int):
    from pyspark.sql import SparkSession

    from converters.pipeline.jvmjar import JAR
    from tests.stack.spark import spark_jars

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName(f"bench-scaleout {cores}")
        .config("spark.jars", ",".join(str(p) for p in [*spark_jars(), JAR]))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", str(cores))
        .config("spark.executor.cores", "1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    from converters.pipeline.stream import apply_sql_defaults

    apply_sql_defaults(spark)
    return spark


def run(spark, bootstrap, mapping, reg, checkpoint: Path, road: str) -> float:
    from converters.mapping.recordplan import record_plan
    from converters.pipeline.fastroad import fast_batches, plan_json
    from converters.pipeline.progress import ProgressFile
    from converters.pipeline.records import build_records
    from converters.pipeline.stream import transactional_batches
    from converters.pipeline.txsink import SinkConfig, progress_group

    sink = SinkConfig(
        bootstrap, mapping.source.topic, progress_group(mapping.source.topic, mapping.target.topic)
    )
    progress = ProgressFile(checkpoint.with_suffix(".json"), counted_by="transactions")
    df = source(spark, bootstrap, mapping.source.topic)
    if road == "fast":
        batches = fast_batches(sink, progress, plan_json(mapping, reg, record_plan(mapping)))
    else:
        df = build_records(df, mapping, reg)
        batches = transactional_batches(sink, progress)
    writer = df.writeStream.foreachBatch(batches).option("checkpointLocation", str(checkpoint))
    t0 = time.perf_counter()
    q = writer.trigger(availableNow=True).start()
    q.awaitTermination()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--road", choices=("fast", "sql", "both"), default="both")
    args = ap.parse_args()
    n = args.messages
    roads = ("fast", "sql") if args.road == "both" else (args.road,)
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = machine()
    work = Path(tempfile.mkdtemp(prefix="bench-scaleout-"))
    from tests.registry_fake import FakeRegistry
    from tests.stack.kafka import start_kafka
    from tests.stack.sparkcluster import start_spark_cluster

    broker = start_kafka(work / "kafka")
    registry = FakeRegistry().start()
    cluster = None
    try:
        from confluent_kafka.admin import AdminClient, NewTopic

        from converters.mapping.reader import load
        from converters.pipeline.records import resolve_registry
        from schemacli.registry.client import RegistryClient
        from schemacli.registry.settings import RegistrySettings

        run_id = uuid.uuid4().hex[:6]
        runs = [
            f"{w}w-{road}-{r}" for w in (1, 2) for road in roads for r in range(args.rounds + 1)
        ]
        topics = {"v2": f"bs-v2-{run_id}"}
        for r in runs:
            topics[r] = f"bs-v1-{r}-{run_id}"
            topics[f"{r}-dlq"] = f"bs-dlq-{r}-{run_id}"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic(t, 2, 1) for t in topics.values()]).values():
            f.result(30)
        example = load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
        first = runs[0]
        with RegistryClient(RegistrySettings.build(url=registry.url, env={})) as client:
            client.register(f"{topics[first]}-value", json.dumps(V1))
            v2_id = client.register(f"{topics['v2']}-value", json.dumps(V2)).id
            base = replace(
                example,
                source=replace(example.source, subject=f"{topics['v2']}-value", topic=topics["v2"]),
                target=replace(
                    example.target, subject=f"{topics[first]}-value", topic=topics[first]
                ),
            )
            reg = resolve_registry(base, client)
        produce(broker.bootstrap, topics["v2"], v2_id, n)
        cluster = start_spark_cluster(work / "spark", workers=2, cores=1, memory="1g")
        results: dict[str, dict] = {}
        for workers in (1, 2):
            spark = session(cluster.master_url, workers)
            driver_jvm = spark.sparkContext._gateway.proc.pid
            for road in roads:
                label = f"{workers} worker{'s' * (workers > 1)}, {road} road"
                secs_list, cpu_list = [], []
                for r in range(args.rounds + 1):
                    name = f"{workers}w-{road}-{r}"
                    target = replace(base.target, topic=topics[name])
                    mapped = replace(base, target=target, dead_letter_topic=topics[f"{name}-dlq"])
                    execs = executors(cluster)
                    pids = {
                        "driver JVM": [driver_jvm],
                        "executors": execs,
                        "broker": [broker.process.pid, *descendants(broker.process.pid)],
                    }
                    before = {k: sum(cpu_seconds(p) for p in v) for k, v in pids.items()}
                    py0 = sum(os.times()[:2])
                    secs = run(spark, broker.bootstrap, mapped, reg, work / f"cp-{name}", road)
                    # executors may have started during the run (the first one)
                    pids["executors"] = executors(cluster)
                    after = {k: sum(cpu_seconds(p) for p in v) for k, v in pids.items()}
                    cpu = {k: after[k] - before.get(k, 0.0) for k in after}
                    cpu["driver Python"] = sum(os.times()[:2]) - py0
                    got = count_committed(broker.bootstrap, topics[name])[0]
                    got += count_committed(broker.bootstrap, topics[f"{name}-dlq"])[0]
                    assert got == n, (name, got)
                    what = "warm-up" if r == 0 else f"round {r}"
                    us = {k: round(1e6 * v / n, 2) for k, v in cpu.items()}
                    print(
                        f"{label} {what}: {n / secs:,.0f} msg/s ({secs:.1f}s), CPU µs/msg {us}",
                        file=sys.stderr,
                    )
                    if r:
                        secs_list.append(secs)
                        cpu_list.append(us)
                results[label] = {
                    "msg_per_s": round(n / statistics.median(secs_list)),
                    "msg_per_s_each": [round(n / s) for s in secs_list],
                    "cpu_us_per_msg": {
                        k: round(statistics.median(c[k] for c in cpu_list), 2) for k in cpu_list[0]
                    },
                    "executors": len(executors(cluster)),
                }
            spark.stop()
        line = {
            "bench": "scaleout",
            "date": started,
            "machine": where,
            "messages": n,
            "rounds": args.rounds,
            "results": results,
        }
        print(json.dumps(line, indent=2))
        out = ROOT / "bench/results/scaleout.jsonl"
        with out.open("a") as f:
            f.write(json.dumps(line) + "\n")
    finally:
        registry.stop()
        if cluster is not None:
            cluster.stop()
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
