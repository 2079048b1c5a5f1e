"""Fault injection: the exactly-once converter on the standalone cluster, its driver SIGKILLed at
random moments again and again and a worker lost mid-run, loses nothing and writes nothing twice.

100,000 v2 messages (one in ten a dead letter, one skipped). The converter runs on the cluster
(``spark_cluster``: a master and two 1-core workers) in batches of 2,000; once a run has
committed its first batch, a seeded random delay passes and the driver's whole process group is
SIGKILLed (spark-submit, the JVM, the
Python driver: no goodbye, whatever batch and transaction were in flight are cut; the executors
on the workers go on until the master notices). It is deployed again on the same checkpoint.
Once, in the middle, a worker is SIGKILLed with its executors while a batch runs, and a new worker
is started. A last run (``--available-now``) converts the rest. Reading both topics with
``read_committed`` then finds every valid message once in v1 and every bad one once in the
dead-letter topic, and the committed counts reconcile with both.

SCHEMACLI_FAULT_SEED changes the seed (printed in the output, for repeating a failing run).
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from tests.integration.test_converter_end_to_end import check_outputs, deploy, prepare

pytestmark = [pytest.mark.integration, pytest.mark.spark]

MESSAGES = 100_000
KILLS = 10
WORKER_LOST_AT = 5  # the kill round during which a worker is lost and replaced
EXECUTOR = ("--conf", "spark.executor.memory=512m")
BATCH = ("--max-offsets-per-trigger", "2000", "--trigger-seconds", "0")
DEADLINE = 20 * 60  # seconds for the whole test: bounded, never hangs CI


def _bootstrap(kafka) -> str:
    return str(getattr(kafka, "bootstrap", kafka))


def _url(registry) -> str:
    return str(getattr(registry, "url", registry))


def _processed(state) -> int:
    try:
        return json.loads((state / "progress.json").read_text())["totals"]["in"]
    except (OSError, ValueError, KeyError):
        return 0


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_started(state, since: int, until: float, pid: int) -> None:
    """Until this run's query has started (its line in job.log past ``since`` bytes); fails at
    once when the run ended first (its error is in the log)."""
    log = state / "job.log"
    while time.monotonic() < until:
        if log.exists() and b"converter started" in log.read_bytes()[since:]:
            return
        if not _alive(pid):
            raise AssertionError(f"the converter ended before it started:\n{_tail(log, since)}")
        time.sleep(0.2)
    raise AssertionError(f"the converter did not start in time:\n{_tail(log, since)}")


def _tail(log: Path, since: int) -> str:
    return log.read_bytes()[since:][-3000:].decode(errors="replace") if log.exists() else ""


def test_driver_killed_ten_times_and_a_worker_lost_nothing_lost_nothing_duplicated(
    kafka, registry, spark_cluster, tmp_path
):
    seed = int(os.environ.get("SCHEMACLI_FAULT_SEED", "16"))
    rng = random.Random(seed)
    print(f"fault injection seed {seed}")
    until = time.monotonic() + DEADLINE
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=MESSAGES)
    master = ("--master", spark_cluster.master_url)
    kills = []
    worker_lost = False
    for round_ in range(KILLS):
        log = s.state / "job.log"
        since = log.stat().st_size if log.exists() else 0
        started = deploy(s, *master, *EXECUTOR, *BATCH, detach=True)
        assert started.returncode == 0, started.stderr[-3000:]
        pid = int((s.state / "submit.pid").read_text())
        _wait_started(s.state, since, until, pid)
        # this run's first batch committed (its counts came from the broker at start): the kill
        # below then lands mid-stream, at a random moment of a later batch or its transaction
        before = _processed(s.state)
        while _processed(s.state) == before and time.monotonic() < until:
            if not _alive(pid):
                raise AssertionError(f"the converter ended early:\n{_tail(log, since)}")
            time.sleep(0.1)
        if round_ == WORKER_LOST_AT:
            # a worker dies with its executors while batches run; a new one joins
            (victim, *_) = spark_cluster.alive_workers()
            spark_cluster.kill_worker(victim)
            spark_cluster.start_worker()
            worker_lost = True
        time.sleep(rng.uniform(0.0, 5.0))
        done = _processed(s.state)
        os.killpg(pid, signal.SIGKILL)  # no goodbye: batch and transaction in flight are cut
        kills.append(done)
        time.sleep(rng.uniform(0.0, 1.5))
    assert worker_lost and len(kills) == KILLS
    print(f"processed when killed: {kills}")
    assert kills == sorted(set(kills)), "a run made no progress before its kill"
    assert kills[-1] < MESSAGES, "every message was converted before the last kill: no crash hit"
    final = deploy(s, *master, *EXECUTOR, "--available-now")
    assert final.returncode == 0, final.stderr[-3000:]
    assert time.monotonic() < until, "the run took longer than its bound"

    counts = check_outputs(s)  # each valid message in v1 and each bad one dead-lettered, no other
    print(f"after {KILLS} driver kills and a lost worker: {counts}")
    assert counts["duplicates"] == 0
    assert counts["in"] == counts["converted"] + counts["dead_letter"] + counts["skipped"]
    totals = json.loads((s.state / "progress.json").read_text())["totals"]
    assert totals == {
        "in": MESSAGES,
        "converted": counts["converted"],
        "dead_letter": counts["dead_letter"],
        "skipped": counts["skipped"],
        "tombstone": 0,
    }
    assert len(spark_cluster.alive_workers()) == 2
