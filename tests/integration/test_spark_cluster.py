"""The converter and a generated reader on a real Spark standalone cluster.

A master and two workers (1 core, 1g each) run as separate processes from pyspark's own
distribution (``spark_cluster``, tests/stack/sparkcluster.py). ``schemacli migrate deploy
--master spark://...`` runs the converter there in client deploy mode: the driver is a process
here, the executors run on the workers. The master's JSON and the workers' work directories
prove the work ran on the cluster, not in a local[*] driver.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.integration.test_converter_end_to_end import check_outputs, deploy, prepare
from tests.integration.test_spark_reader import (
    RIDES,
    V1,
    V2,
    as_tuples,
    create_topic,
    expected_rows,
    produce,
)
from tests.stack.sparkcluster import SparkCluster, executors_of, wait_for_app

pytestmark = [pytest.mark.integration, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]
# Executors smaller than the workers' 1g: two apps' worth of JVMs stay modest on a shared box.
EXECUTOR = ("--conf", "spark.executor.memory=512m")


def _bootstrap(kafka) -> str:
    return str(getattr(kafka, "bootstrap", kafka))


def _url(registry) -> str:
    return str(getattr(registry, "url", registry))


def executor_dirs(cluster: SparkCluster, app_id: str) -> list[Path]:
    """The executor directories workers made for ``app_id`` (<work-dir>/<app id>/<executor>)."""
    return sorted(p for p in cluster.workdir.glob(f"worker-*/{app_id}/*") if p.is_dir())


def migrate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schemacli", "migrate", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_converter_deployed_on_the_standalone_cluster_converts_every_record(
    kafka, registry, spark_cluster, tmp_path
):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=120)
    s.state = tmp_path / s.v2_topic  # names the app (--name schemacli-migrate-<state dir>)
    began = time.monotonic()
    result = deploy(s, "--master", spark_cluster.master_url, "--available-now", *EXECUTOR)
    took = time.monotonic() - began
    assert result.returncode == 0, result.stderr[-3000:]
    assert "converted 95 dead-lettered 24 skipped 1" in result.stderr, result.stderr[-3000:]
    counts = check_outputs(s)
    assert (counts["converted"], counts["dead_letter"], counts["skipped"]) == (95, 24, 1)
    assert counts["duplicates"] == 0
    progress = json.loads((s.state / "progress.json").read_text())["totals"]
    assert progress == {"in": 120, "converted": 95, "dead_letter": 24, "skipped": 1, "tombstone": 0}
    # It ran on the cluster: the master lists it finished, and a worker ran its executors.
    app = wait_for_app(spark_cluster, s.v2_topic, completed=True)
    assert app["state"] == "FINISHED" and app["name"].startswith("schemacli-migrate")
    assert executor_dirs(spark_cluster, app["id"]), f"no executor of {app['id']} on a worker"
    deployed = json.loads((s.state / "deploy.json").read_text())
    assert deployed["master"] == spark_cluster.master_url
    print(f"converter on {spark_cluster.master_url}: {took:.1f} s for 120 records")


def test_status_and_stop_work_on_a_detached_converter_on_the_cluster(
    kafka, registry, spark_cluster, tmp_path
):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=50)
    s.state = tmp_path / s.v2_topic
    started = deploy(s, "--master", spark_cluster.master_url, *EXECUTOR, detach=True)
    assert started.returncode == 0, started.stderr
    deadline = time.monotonic() + 300
    totals: dict = {}
    while time.monotonic() < deadline and totals.get("in") != 50:
        time.sleep(0.5)
        try:
            totals = json.loads((s.state / "progress.json").read_text())["totals"]
        except (OSError, ValueError, KeyError):
            totals = {}
    assert totals.get("in") == 50, (s.state / "job.log").read_text()[-3000:]
    app = wait_for_app(spark_cluster, s.v2_topic, completed=False)
    assert app["name"].startswith("schemacli-migrate")

    status = migrate("status", str(s.mapping), "--state-dir", str(s.state), "-b", s.bootstrap)
    assert status.returncode == 0, status.stderr
    assert "running (pid" in status.stdout
    as_json = migrate(
        "status", str(s.mapping), "--state-dir", str(s.state), "-b", s.bootstrap, "-o", "json"
    )
    report = json.loads(as_json.stdout)
    assert report["running"] is True and report["totals"]["in"] == 50
    assert sum(p["end_offset"] for p in report["partitions"]) == 50

    stopped = migrate("stop", str(s.mapping), "--state-dir", str(s.state))
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert ": stopped (pid" in stopped.stdout
    log = (s.state / "job.log").read_text()
    assert "SIGTERM: stopping after the current batch" in log and "converter stopped" in log
    assert "Traceback" not in log and "converter failed" not in log
    assert not (s.state / "submit.pid").exists()
    # The driver said goodbye to the master: the app is finished, not lost with its executors.
    done = wait_for_app(spark_cluster, s.v2_topic, completed=True)
    assert done["id"] == app["id"] and done["state"] == "FINISHED"
    assert executor_dirs(spark_cluster, app["id"])
    after = migrate("status", str(s.mapping), "--state-dir", str(s.state), "-o", "json")
    assert json.loads(after.stdout)["running"] is False


READER_DRIVER = """\
import json, sys
from pyspark.sql import SparkSession
import rides_reader

spark = SparkSession.builder.appName("schemacli-reader-on-cluster").getOrCreate()
rows = rides_reader.read(spark, sys.argv[1]).collect()
json.dump([r.asDict() for r in rows], open(sys.argv[2], "w"), default=str)
spark.stop()
"""


def test_a_generated_reader_runs_on_the_cluster(kafka, registry, spark_cluster, tmp_path):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from converters.ops.deploy import find_spark_submit
    from tests.stack.spark import spark_jars, submit_jvm_confs

    bootstrap, url = _bootstrap(kafka), _url(registry)
    topic = f"taxi-rides-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    client = SchemaRegistryClient({"url": url})
    serializers = {"v1": AvroSerializer(client, V1), "v2": AvroSerializer(client, V2)}
    context = SerializationContext(topic, MessageField.VALUE)
    values = [serializers[version](record, context) for version, record in RIDES]
    produce(bootstrap, topic, values)
    ids = {
        v: int.from_bytes(value[1:5], "big") for (v, _), value in zip(RIDES, values, strict=True)
    }

    module = tmp_path / "rides_reader.py"
    generated = subprocess.run(
        [
            sys.executable, "-m", "schemacli", "spark", "codegen", "--subject", f"{topic}-value",
            "--topic", topic, "--registry", url, "--out", str(module),
        ],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    driver = tmp_path / "read_rides.py"
    driver.write_text(READER_DRIVER)
    out = tmp_path / "rows.json"
    submitted = subprocess.run(
        [
            find_spark_submit(), "--master", spark_cluster.master_url,
            "--jars", ",".join(str(j) for j in spark_jars()),
            "--py-files", str(module),
            "--conf", f"spark.pyspark.python={sys.executable}",
            "--conf", f"spark.pyspark.driver.python={sys.executable}",
            "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
            "--conf", "spark.ui.enabled=false", *EXECUTOR, *submit_jvm_confs(),
            str(driver), bootstrap, str(out),
        ],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert as_tuples(rows) == expected_rows(ids)
    app = wait_for_app(spark_cluster, "schemacli-reader-on-cluster", completed=True)
    assert app["state"] == "FINISHED" and executor_dirs(spark_cluster, app["id"])


HOLDING_APP = """\
import sys, time
from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master(sys.argv[2]).appName("schemacli-holds-executors")
    .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.ui.enabled", "false").config("spark.executor.memory", "512m")
    .getOrCreate()
)
spark.sparkContext.parallelize(range(4), 4).map(lambda x: x).collect()
print("ready", flush=True)
time.sleep(float(sys.argv[1]))
"""


def test_a_killed_worker_takes_its_executors_and_a_new_worker_joins(spark_cluster, tmp_path):
    app = tmp_path / "hold.py"
    app.write_text(HOLDING_APP)
    holder = subprocess.Popen(
        [sys.executable, str(app), "120", spark_cluster.master_url],
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        before = set(spark_cluster.alive_workers())
        victim = min(before)
        process = spark_cluster.workers[victim]
        assert process is not None
        deadline = time.monotonic() + 60  # the app may have run on the other executor first
        while time.monotonic() < deadline and not executors_of(process.pid):
            time.sleep(0.2)
        executors = executors_of(process.pid)
        assert executors, "the app has no executor on the worker (not in its process group?)"
        spark_cluster.kill_worker(victim)
        deadline = time.monotonic() + 60  # only a hang reaches it
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in executors):
            time.sleep(0.1)
        assert not any(Path(f"/proc/{p}").exists() for p in executors)
        deadline = time.monotonic() + 120  # only a hang reaches it
        while time.monotonic() < deadline and victim in spark_cluster.alive_workers():
            time.sleep(0.2)
        assert spark_cluster.alive_workers() == sorted(before - {victim})
    finally:
        holder.kill()
        holder.wait()
    joined = spark_cluster.start_worker()  # the session's cluster has two workers again
    assert set(spark_cluster.alive_workers()) == (before - {victim}) | {joined}
