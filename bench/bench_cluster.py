"""The exactly-once converter on a Spark standalone cluster (2 workers x 1 core) vs local[2], and
how long it takes to recover when a worker dies mid-run.

    .venv/bin/python bench/bench_cluster.py [--messages N] [--rounds 2] [--bootstrap HOST:PORT]

The same pipeline as bench_converter.py's (b') (``pipeline.records.build_records`` through the
job's ``foreachBatch`` into its JVM writer, ``pipeline.txsink.write_batch``), N taxi rides
(default 500,000), in one SparkSession per master: ``local[2]``, then ``spark://`` on a cluster
started from tests/stack/sparkcluster.py (a master and two 1-core, 1g workers; executors 512m).
Each master
runs one untimed warm-up and ``--rounds`` timed ``availableNow`` runs (median reported).

Recovery: on the cluster, a streaming run in batches of ``--batch`` messages; after three batches
one worker is SIGKILLed (with its executor) and a new one started. Reported: the median batch
time before the kill, and the time from the kill until the next batch completed (Spark notices
the lost executor, re-runs its tasks elsewhere; the retried task's producer fences the lost
one's). Results: printed and appended to bench/results/cluster.jsonl.
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

from bench_converter import V1, V2, count, machine, produce, source  # noqa: E402


def session(master: str):
    from pyspark.sql import SparkSession

    from converters.pipeline.jvmjar import JAR
    from tests.stack.spark import spark_jars

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName(f"bench-cluster {master}")
        .config("spark.jars", ",".join(str(p) for p in [*spark_jars(), JAR]))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    from converters.pipeline.stream import apply_sql_defaults

    apply_sql_defaults(spark)
    return spark


def run(spark, bootstrap, mapping, reg, work: Path, *, stream_batch: int | None = None):
    """One exactly-once run into fresh topics; returns (seconds, the query, progress path)."""
    from converters.pipeline.progress import ProgressFile
    from converters.pipeline.records import build_records
    from converters.pipeline.stream import transactional_batches
    from converters.pipeline.txsink import SinkConfig, progress_group

    sink = SinkConfig(
        bootstrap, mapping.source.topic, progress_group(mapping.source.topic, mapping.target.topic)
    )
    progress = ProgressFile(work.with_suffix(".json"), counted_by="transactions")
    df = source(spark, bootstrap, mapping.source.topic)
    if stream_batch:
        # the bench's own reader (not the job's): cap each batch for the recovery run
        df = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", mapping.source.topic)
            .option("startingOffsets", "earliest")
            .option("includeHeaders", "true")
            .option("maxOffsetsPerTrigger", str(stream_batch))
            .load()
        )
    writer = df.transform(lambda d: build_records(d, mapping, reg)).writeStream.foreachBatch(
        transactional_batches(sink, progress)
    )
    writer = writer.option("checkpointLocation", str(work))
    writer = (
        writer.trigger(processingTime="0 seconds")
        if stream_batch
        else writer.trigger(availableNow=True)
    )
    t0 = time.perf_counter()
    query = writer.start()
    if stream_batch:
        return t0, query, progress.path
    query.awaitTermination()
    return time.perf_counter() - t0, query, progress.path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch", type=int, default=50_000, help="messages per batch (recovery run)")
    ap.add_argument("--bootstrap")
    args = ap.parse_args()
    n = args.messages
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = machine()
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    broker = cluster = None
    from tests.registry_fake import FakeRegistry
    from tests.stack.sparkcluster import start_spark_cluster

    if not args.bootstrap:
        from tests.stack.kafka import start_kafka

        broker = start_kafka(work / "kafka")
    bootstrap = args.bootstrap or broker.bootstrap
    registry = FakeRegistry().start()
    try:
        from confluent_kafka.admin import AdminClient, NewTopic

        from converters.mapping.reader import load
        from converters.pipeline.records import resolve_registry
        from schemacli.registry.client import RegistryClient
        from schemacli.registry.settings import RegistrySettings

        run_id = uuid.uuid4().hex[:6]
        runs = [f"{m}-{r}" for m in ("local", "cluster") for r in range(args.rounds + 1)]
        runs.append("recovery")
        topics = {"v2": f"bc-v2-{run_id}"}
        for r in runs:
            topics[r] = f"bc-v1-{r}-{run_id}"
            topics[f"{r}-dlq"] = f"bc-dlq-{r}-{run_id}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic(t, 2, 1) for t in topics.values()]).values():
            f.result(30)
        example = load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
        with RegistryClient(RegistrySettings.build(url=registry.url, env={})) as client:
            client.register(f"{topics['local-0']}-value", json.dumps(V1))
            v2_id = client.register(f"{topics['v2']}-value", json.dumps(V2)).id
            base = replace(
                example,
                source=replace(example.source, subject=f"{topics['v2']}-value", topic=topics["v2"]),
                target=replace(
                    example.target, subject=f"{topics['local-0']}-value", topic=topics["local-0"]
                ),
            )
            reg = resolve_registry(base, client)
        produce(bootstrap, topics["v2"], v2_id, n)

        def mapped(r: str):
            target = replace(base.target, topic=topics[r])
            return replace(base, target=target, dead_letter_topic=topics[f"{r}-dlq"])

        timings: dict[str, list[float]] = {"local[2]": [], "cluster": []}
        cluster = start_spark_cluster(work / "spark", workers=2, cores=1, memory="1g")
        for label, master, prefix in (
            ("local[2]", "local[2]", "local"),
            ("cluster", cluster.master_url, "cluster"),
        ):
            spark = session(master)
            for r in range(args.rounds + 1):
                name = f"{prefix}-{r}"
                secs, _, _ = run(spark, bootstrap, mapped(name), reg, work / f"cp-{name}")
                written = count(bootstrap, topics[name]) + count(bootstrap, topics[f"{name}-dlq"])
                assert written >= n, (name, written)
                what = "warm-up" if r == 0 else f"round {r}"
                print(f"{label} {what}: {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr)
                if r:
                    timings[label].append(secs)
            if label == "cluster":
                recovery = measure_recovery(
                    spark, cluster, bootstrap, mapped("recovery"), reg, work, n, args.batch
                )
            spark.stop()
        rates = {k: round(n / statistics.median(v)) for k, v in timings.items()}
        line = {
            "bench": "cluster",
            "date": started,
            "machine": where,
            "messages": n,
            "rounds": args.rounds,
            "msg_per_s": rates,
            "cluster_vs_local": round(rates["cluster"] / rates["local[2]"], 2),
            "recovery": recovery,
        }
        print(json.dumps(line, indent=2))
        out = ROOT / "bench/results/cluster.jsonl"
        out.parent.mkdir(exist_ok=True)
        with out.open("a") as f:
            f.write(json.dumps(line) + "\n")
    finally:
        registry.stop()
        if cluster is not None:
            cluster.stop()
        if broker is not None:
            broker.stop()
    return 0


def measure_recovery(spark, cluster, bootstrap, mapping, reg, work, n, batch) -> dict:
    """Stream in batches of ``batch``; after three batches kill a worker and start another."""
    t0, query, path = run(spark, bootstrap, mapping, reg, work / "cp-recovery", stream_batch=batch)
    done: list[tuple[float, int]] = []  # (time a batch's counts landed, total in)
    seen = -1
    killed_at = None
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            total = json.loads(Path(path).read_text())["totals"]["in"]
        except (OSError, ValueError, KeyError):
            total = 0
        if total != seen:
            seen = total
            done.append((time.perf_counter(), total))
            if len(done) == 4 and killed_at is None:  # three batches (the first read is 0)
                victim = cluster.alive_workers()[0]
                killed_at = time.perf_counter()
                cluster.kill_worker(victim)
                cluster.start_worker(wait=False)
            if total >= n:
                break
        time.sleep(0.05)
    query.stop()
    before = [b[0] - a[0] for a, b in zip(done[1:4], done[2:4], strict=False)]
    after = [t for t, _ in done if killed_at is not None and t > killed_at]
    return {
        "batch_messages": batch,
        "median_batch_s_before": round(statistics.median(before), 2) if before else None,
        "kill_to_next_batch_s": round(after[0] - killed_at, 2) if after else None,
        "batches": len(done) - 1,
        "completed": seen >= n,
    }


if __name__ == "__main__":
    raise SystemExit(main())
