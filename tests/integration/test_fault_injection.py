"""Fault injection: the exactly-once converter on the standalone cluster, its driver SIGKILLed
again and again and a worker lost mid-run, loses nothing and writes nothing twice.

100,000 v2 messages (one in ten a dead letter, one skipped), all produced before the first run.
The converter runs on the cluster (``spark_cluster``: a master and two 1-core workers) in
batches of 2,000 and is deployed again on the same checkpoint after every kill. Every kill
sends SIGKILL to the driver's whole process group (spark-submit, the JVM, the Python driver:
no goodbye; the executors on the workers go on until the master notices).

The kills follow the converter's progress, never the clock, so a fast machine cannot outrun the
schedule and a slow one cannot miss it:

- **By progress.** Ten seeded thresholds spread between 5% and 90% of the messages, at least
  four batches apart. A run is killed when its committed count (``progress.json``) first passes
  its threshold, which leaves at least 10% of the messages for later runs, whatever the speed.
- **Inside a transaction.** In some of those rounds, once the threshold is passed and the
  broker shows a transaction holding data open, the executors are frozen (SIGSTOP to each
  worker's process group, the executors in it) and the broker is asked again whether one is
  open: a ``read_uncommitted`` reader of v1 or the dead-letter topic would see records past
  the last stable offset (the high watermark is ahead of what ``read_committed`` may read). If
  so, the driver is killed while they are frozen; if not, they are let go (SIGCONT) and it is
  tried again. The answer does not race the writer, since the writer is frozen while it is asked. A
  count taken from committed progress always lands just after a commit; these kills cut a write
  in flight, and the executors, let go after the kill, may still try to finish it.
- **At start-up.** One round kills the new run the moment its query has started, before its
  first batch commits (its committed count is still the one it started from).
- **A worker lost.** In one round a worker is SIGKILLed with its executors once the run has
  committed a batch, and a new worker is started; the driver is killed at its threshold (the
  new worker joins meanwhile; the next run starts once the master lists it ALIVE).

A last run (``--available-now``) converts the rest. Reading both topics with ``read_committed``
then finds every valid message once in v1 and every bad one once in the dead-letter topic, and
the committed counts reconcile with both. The test fails when a kill did not land mid-stream
(no messages left after it, no transaction caught open); it never fails because the machine
was fast or slow: the only time bound is a deadline that only a hang reaches.

SCHEMACLI_FAULT_SEED changes the seed (printed in the output, for repeating a failing run).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import time
from pathlib import Path

import pytest

from tests.integration.test_converter_end_to_end import (
    check_outputs,
    deploy,
    prepare,
    wait_group_gone,
)

pytestmark = [pytest.mark.integration, pytest.mark.spark]

MESSAGES = 100_000
BATCH_SIZE = 2_000
KILLS = 10  # by progress; one more at start-up
IN_TRANSACTION = 4  # of the progress kills, how many wait for a transaction holding data
LOW, HIGH = 0.05, 0.90  # the thresholds' span, as shares of MESSAGES
GAP = 4 * BATCH_SIZE  # at least this far apart
# The executors keep the JVM's defaults (C2, G1), not the tests' C1 (tests.stack.spark
# .submit_jvm_confs, which the drivers keep): with C1 a 2,000-record batch took under half a
# second and its transactions were open for tens of milliseconds, too short for the
# in-transaction rounds to catch before the stream's end in three runs of four.
EXECUTOR = ("--conf", "spark.executor.memory=512m", "--conf", "spark.executor.extraJavaOptions=")
BATCH = ("--max-offsets-per-trigger", str(BATCH_SIZE), "--trigger-seconds", "0")
DEADLINE = 60 * 60  # seconds for the whole test: only a hang reaches it (it takes 5-20)
POLL = 0.02  # how often the test looks at the converter's progress (a wait, not a schedule)


def thresholds(rng: random.Random) -> list[int]:
    """KILLS sorted counts in [LOW, HIGH] x MESSAGES, each at least GAP after the one before:
    the slack left by the gaps is spread at random (seeded)."""
    low, high = int(LOW * MESSAGES), int(HIGH * MESSAGES)
    slack = high - low - GAP * (KILLS - 1)
    assert slack >= 0, "the thresholds cannot be that far apart"
    offsets = sorted(rng.randint(0, slack) for _ in range(KILLS))
    return [low + offset + GAP * i for i, offset in enumerate(offsets)]


def _bootstrap(kafka) -> str:
    return str(getattr(kafka, "bootstrap", kafka))


def _url(registry) -> str:
    return str(getattr(registry, "url", registry))


def _processed(state: Path) -> int:
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


def _tail(log: Path, since: int) -> str:
    return log.read_bytes()[since:][-3000:].decode(errors="replace") if log.exists() else ""


class Run:
    """One deployment of the converter: its pid, where its lines start in job.log, and the
    deadline every wait on it shares."""

    def __init__(self, s, master: tuple[str, ...], until: float) -> None:
        self.s, self.until = s, until
        self.log = s.state / "job.log"
        self.since = self.log.stat().st_size if self.log.exists() else 0
        self.t0 = time.monotonic()
        started = deploy(s, *master, *EXECUTOR, *BATCH, detach=True)
        assert started.returncode == 0, started.stderr[-3000:]
        self.pid = int((s.state / "submit.pid").read_text())

    def wait(self, what: str, done) -> None:
        """Until ``done()``; fails at once when the run ended first (its log tail says why)."""
        while not done():
            if not _alive(self.pid):
                raise AssertionError(f"the converter ended before {what}:\n{self.tail()}")
            if time.monotonic() > self.until:
                raise AssertionError(f"the converter hung before {what}:\n{self.tail()}")
            time.sleep(POLL)

    def started(self) -> bool:
        return self.log.exists() and b"converter started" in self.log.read_bytes()[self.since :]

    def seconds(self) -> float:
        """Since this run was deployed: printed with each kill, to see where the test's time
        goes (never asserted on)."""
        return round(time.monotonic() - self.t0, 1)

    def kill(self) -> int:
        """SIGKILL the whole process group, wait until it is gone; the count at the kill."""
        count = _processed(self.s.state)
        os.killpg(self.pid, signal.SIGKILL)  # no goodbye: batch and transaction in flight cut
        wait_group_gone(self.pid)
        return count

    def tail(self) -> str:
        """This run's part of job.log (its last 3,000 characters)."""
        return _tail(self.log, self.since)

    def gone(self) -> None:
        """SIGKILL what is left of this run: a test that failed mid-round must not leave a
        driver holding the cluster's cores (the next test's executors would wait for them)."""
        if _alive(self.pid):
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.killpg(self.pid, signal.SIGKILL)
            wait_group_gone(self.pid)


def freeze_executors(cluster) -> list[int]:
    """SIGSTOP every executor JVM on the cluster's workers, at once: each live worker's process
    group (the worker and its executors, ExecutorRunner's children) is stopped with one signal,
    then the executors are found and waited for, stopped (state T in /proc), before the broker
    is asked. Returns the groups, for ``thaw``. (Finding the executors first, by a scan of /proc,
    took longer than a short batch's transaction is open.)"""
    groups = []
    for worker in cluster.workers:
        if worker is not None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile: nothing to stop
                os.killpg(worker.pid, signal.SIGSTOP)
                groups.append(worker.pid)
    for pid in cluster.executors():  # found while they are stopped
        deadline = time.monotonic() + 60
        while _state(pid) not in ("T", "t", "Z", None):
            assert time.monotonic() < deadline, f"executor {pid} did not stop"
            time.sleep(0.001)
    return groups


def thaw(groups: list[int]) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError):  # it died meanwhile: nothing to let go
            os.killpg(group, signal.SIGCONT)


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


class OpenTransactions:
    """Whether a transaction holding data is open on v1 or the dead-letter topic: the high
    watermark (what ``read_uncommitted`` reads up to) ahead of the last stable offset (what
    ``read_committed`` may read), asked of the broker in that order."""

    def __init__(self, s) -> None:
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import AdminClient, OffsetSpec

        self.admin = AdminClient({"bootstrap.servers": s.bootstrap})
        self.request = {
            TopicPartition(topic, p): OffsetSpec.latest() for topic in (s.v1_topic, s.dlq)
            for p in (0, 1)
        }  # fmt: skip

    def _ends(self, level) -> dict:
        futures = self.admin.list_offsets(self.request, isolation_level=level, request_timeout=30)
        return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

    def holding_data(self) -> bool:
        from confluent_kafka import IsolationLevel

        high = self._ends(IsolationLevel.READ_UNCOMMITTED)
        stable = self._ends(IsolationLevel.READ_COMMITTED)
        # stable asked after high: a transaction open then that began below `high` held data
        return any(stable[tp] < high[tp] for tp in high)


def test_driver_killed_by_progress_in_transactions_and_at_start_and_a_worker_lost_nothing_lost_nothing_duplicated(  # noqa: E501
    kafka, registry, spark_cluster, tmp_path, request
):
    seed = int(os.environ.get("SCHEMACLI_FAULT_SEED", "16"))
    rng = random.Random(seed)
    marks = thresholds(rng)
    rounds = list(range(KILLS))
    in_transaction = set(rng.sample(rounds[1:], IN_TRANSACTION))
    worker_round = rng.choice([r for r in rounds[1:] if r not in in_transaction])
    startup_after = rng.choice(rounds[1:-1])  # the start-up kill comes after this round
    print(
        f"fault injection seed {seed}: thresholds {marks}, in-transaction rounds "
        f"{sorted(in_transaction)}, worker lost in round {worker_round}, start-up kill after "
        f"round {startup_after}"
    )
    until = time.monotonic() + DEADLINE
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=MESSAGES)
    master = ("--master", spark_cluster.master_url)
    open_txn = OpenTransactions(s)
    kills: list[dict] = []
    for round_, mark in enumerate(marks):
        run = Run(s, master, until)
        request.addfinalizer(run.gone)
        run.wait("its query started", run.started)
        up = run.seconds()
        kind = "progress"
        if round_ == worker_round:
            # a worker dies with its executors while batches run; a new one joins
            begun = _processed(s.state)
            run.wait("a first batch committed", lambda b=begun: _processed(s.state) > b)
            (victim, *_) = spark_cluster.alive_workers()
            spark_cluster.kill_worker(victim)
            # the new worker's JVM starts while the run goes on: waiting for it here would let
            # the run pass the thresholds of the rounds after this one (on a machine where a
            # batch takes a second, a worker's start is a dozen batches)
            joining = spark_cluster.start_worker(wait=False)
        # past the threshold, and past at least one batch of this run's own (a run that started
        # beyond its threshold is not killed before it has done anything)
        begun = _processed(s.state)
        target = max(mark, begun + 1)
        run.wait(f"{target} messages converted", lambda t=target: _processed(s.state) >= t)
        if round_ in in_transaction:
            kind, tries = "in-transaction", 0
            while True:
                tries += 1
                # a look while the writer runs says when to freeze it; the verdict is the
                # second look, asked while it is frozen (a transaction a few batches' records
                # long is open a small part of a batch: frozen at random, it was missed)
                if open_txn.holding_data():
                    frozen = freeze_executors(spark_cluster)
                    if open_txn.holding_data():
                        count = run.kill()  # the writer frozen mid-transaction
                        thaw(frozen)  # it goes on until it notices its driver is gone
                        break
                    thaw(frozen)
                assert _alive(run.pid), f"the converter ended:\n{run.tail()}"
                assert _processed(s.state) < MESSAGES, "no transaction caught open in the run"
                assert time.monotonic() < until, "the converter hung"
                time.sleep(POLL)
            kills.append({"round": round_, "kind": kind, "threshold": mark, "count": count,
                          "tries": tries, "up_s": up, "killed_s": run.seconds()})  # fmt: skip
        else:
            count = run.kill()
            kills.append({"round": round_, "kind": kind, "threshold": mark, "count": count,
                          "up_s": up, "killed_s": run.seconds()})  # fmt: skip
        if round_ == worker_round:
            spark_cluster.wait_worker(joining)  # the next run has both workers again
        if round_ == startup_after:
            # within a second of the restart: the moment the query has started, before its
            # first batch commits
            run = Run(s, master, until)
            request.addfinalizer(run.gone)
            run.wait("its query started", run.started)
            count = run.kill()
            kills.append({"round": round_, "kind": "start-up", "threshold": None, "count": count,
                          "killed_s": run.seconds()})  # fmt: skip
            # everything the driver did is in its log: it had committed no batch of its own
            whole = run.log.read_bytes()[run.since :].decode(errors="replace")
            assert not re.search(r"^batch \d+: in ", whole, re.M), run.tail()
    print("kills:", json.dumps(kills))
    by_progress = [k for k in kills if k["kind"] != "start-up"]
    counts_at_kill = [k["count"] for k in by_progress]
    assert counts_at_kill == sorted(set(counts_at_kill)), "a run made no progress before its kill"
    # every kill landed mid-stream: messages were left for the runs after it
    assert all(k["threshold"] <= k["count"] < MESSAGES for k in by_progress), kills
    assert sum(k["kind"] == "in-transaction" for k in kills) == IN_TRANSACTION
    assert sum(k["kind"] == "start-up" for k in kills) == 1
    assert len(spark_cluster.alive_workers()) == 2

    last = time.monotonic()
    final = deploy(s, *master, *EXECUTOR, "--available-now")
    print(f"the last run (--available-now) took {time.monotonic() - last:.1f} s")
    assert final.returncode == 0, final.stderr[-3000:]
    assert time.monotonic() < until, "the test took longer than its bound"

    counts = check_outputs(s)  # each valid message in v1 and each bad one dead-lettered, no other
    print(f"after {len(kills)} driver kills and a lost worker: {counts}")
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
