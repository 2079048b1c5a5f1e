"""The census's Spark road on a standalone cluster: 1 worker vs 2 workers (1 core each) on the
same topic, the JVM road beside them, and where each record's CPU goes (issue #39, item 5).

    .venv/bin/python bench/bench_census_cluster.py [--messages 5000000] [--partitions 4]
                                                   [--rounds 3]

A broker (tests/stack/kafka.py) and a master with two 1-core workers (tests/stack/sparkcluster.py,
executors 512m) on this machine. N small framed records (bench_census.produce: 3 writer ids in
runs, string keys, 16-byte values) in P partitions, read in interleaved rounds, after one untimed
warm-up round:

(jvm)       ``take_census(engine="jvm", jobs=2)``: the one-machine anchor;
(1 worker)  ``take_census(engine="spark", master=..., jobs=1)``: ``spark.cores.max=1``, so one
            executor on one worker;
(2 workers) the same with ``jobs=2``: one executor on each worker.

Each census is timed whole (Kafka's metadata, the Spark session and its executors, the read, the
document) and its Spark job alone (the collect of the groups, timed around
``census.sparkscan._collect``). CPU seconds (user + system, /proc) are taken around each run: the
driver's JVM (pyspark's gateway, alive across sessions), the driver's Python, the executors (the
workers' reaped children, ``cutime + cstime``, and any executor still alive), the broker; divided
by the records. Every round's document is checked against what was produced. Results: printed
and appended to bench/results/census_cluster.jsonl with the load, the commit and the date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_census import load, machine, produce  # noqa: E402
from bench_scaleout import cpu_seconds, descendants, executors  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def reaped_seconds(pid: int) -> float:
    """CPU seconds of the children ``pid`` has waited for (a worker's finished executors)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[13]) + int(fields[14])) / TICK


def executor_seconds(cluster) -> float:
    """The executors' CPU seconds: those alive, and those a worker's JVM has reaped (the worker
    process is a launcher whose child is that JVM: every process of its tree is asked)."""
    live = sum(cpu_seconds(p) for p in executors(cluster))
    trees = [p for w in cluster.workers if w is not None for p in (w.pid, *descendants(w.pid))]
    return live + sum(reaped_seconds(p) for p in trees)


def driver_jvm() -> int | None:
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    return gateway.proc.pid if gateway is not None and gateway.proc is not None else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=5_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from schemacli.gcpolicy import collect_rarely

    collect_rarely()
    n, parts = args.messages, args.partitions
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="bench-census-cluster-"))
    conf = work / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        "spark.driver.host 127.0.0.1\nspark.driver.bindAddress 127.0.0.1\n"
        "spark.executor.memory 512m\n"
    )
    from tests.stack.kafka import census_jars, start_kafka
    from tests.stack.spark import spark_jars
    from tests.stack.sparkcluster import start_spark_cluster

    census_jars()
    os.environ.update({
        "SCHEMACLI_SPARK_JARS": ",".join(str(j) for j in spark_jars()),
        "SPARK_CONF_DIR": str(conf),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
    })  # fmt: skip
    from converters.census import sparkscan
    from converters.census.model import Mode
    from converters.census.take import take_census

    job_seconds: list[float] = []
    collect = sparkscan._collect

    def timed_collect(*a, **k):  # the Spark job alone
        t0 = time.perf_counter()
        try:
            return collect(*a, **k)
        finally:
            job_seconds.append(time.perf_counter() - t0)

    sparkscan._collect = timed_collect
    broker = start_kafka(work / "kafka")
    cluster = None
    try:
        topic = f"bench-census-cluster-{n}-{parts}-{int(time.time())}"
        took = produce(broker.bootstrap, topic, n, parts)
        print(f"produced {n} records in {took:.1f} s", file=sys.stderr, flush=True)
        cluster = start_spark_cluster(work / "spark", workers=2, cores=1, memory="1g")
        runs = {"jvm": ("jvm", None, 2), "1 worker": ("spark", cluster.master_url, 1),
                "2 workers": ("spark", cluster.master_url, 2)}  # fmt: skip
        results: dict[str, dict[str, list]] = {k: {} for k in runs}
        loads = [load()]
        for r in range(args.rounds + 1):
            for label, (engine, master, jobs) in runs.items():
                pids = {"broker": [broker.process.pid, *descendants(broker.process.pid)]}
                jvm = driver_jvm()
                before = {
                    "broker": sum(cpu_seconds(p) for p in pids["broker"]),
                    "executors": executor_seconds(cluster),
                    "driver JVM": cpu_seconds(jvm) if jvm else 0.0,
                    "driver Python": sum(os.times()[:2]),
                    "census JVM": sum(os.times()[2:4]),  # the JVM road's reaped child
                }
                job_seconds.clear()
                t0 = time.perf_counter()
                doc = take_census(broker.bootstrap, topic, mode=Mode(), client=None, store=None,
                                  jobs=jobs, engine=engine, master=master)  # fmt: skip
                secs = time.perf_counter() - t0
                jvm = jvm or driver_jvm()
                after = {
                    "broker": sum(cpu_seconds(p) for p in pids["broker"]),
                    "executors": executor_seconds(cluster),
                    "driver JVM": cpu_seconds(jvm) if jvm else 0.0,
                    "driver Python": sum(os.times()[:2]),
                    "census JVM": sum(os.times()[2:4]),
                }
                assert doc["engine"] == engine and doc["complete"], doc["engine"]
                assert doc["totals"]["messages"] == n, doc["totals"]
                assert sum(v["count"] for v in doc["values"]["versions"]) == n
                us = {k: round(1e6 * (after[k] - before[k]) / n, 3) for k in after}
                job = job_seconds[0] if job_seconds else None
                what = "warm-up" if r == 0 else f"round {r}"
                rate = f", job {job:.2f} s ({n / job:,.0f}/s)" if job else ""
                said = f"{label} {what}: {secs:.2f} s whole ({n / secs:,.0f}/s){rate}, "
                print(said + f"CPU µs/record {us}, load {load()}", file=sys.stderr, flush=True)
                if r:
                    row = results[label]
                    row.setdefault("whole_s", []).append(round(secs, 2))
                    if job:
                        row.setdefault("job_s", []).append(round(job, 2))
                    row.setdefault("cpu", []).append(us)
            loads.append(load())
        summary = {}
        for label, row in results.items():
            cpu = {k: round(statistics.median(c[k] for c in row["cpu"]), 3) for k in row["cpu"][0]}
            entry = {
                "whole_rate": round(n / statistics.median(row["whole_s"])),
                "whole_s": row["whole_s"],
                "cpu_us_per_record": cpu,
            }
            if row.get("job_s"):
                entry["job_rate"] = round(n / statistics.median(row["job_s"]))
                entry["job_s"] = row["job_s"]
                # what one executor core reads when it has the core to itself
                entry["records_per_s_per_executor_core"] = round(1e6 / cpu["executors"])
            summary[label] = entry
        line = {
            "bench": "census_cluster",
            "date": started,
            "commit": commit,
            "machine": machine(),
            "load_1min": loads,
            "messages": n,
            "partitions": parts,
            "rounds": args.rounds,
            "results": summary,
        }
        print(json.dumps(line, indent=2))
        with (ROOT / "bench/results/census_cluster.jsonl").open("a") as f:
            f.write(json.dumps(line) + "\n")
    finally:
        if cluster is not None:
            cluster.stop()
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
