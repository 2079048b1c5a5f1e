"""The exactly-once converter through the loss of a Kafka broker, on a real three-node cluster.

Three KRaft nodes (``kafka_cluster3``: replication factor 3, ``min.insync.replicas=2``, the
transaction log too). The converter runs in the foreground (``--available-now``, batches of
``BATCH`` offsets) with the default ``local[2]`` master. When ``progress.json`` first counts
30% of the v2 messages, the node leading the v1 topic's first partition is SIGKILLed; when it
counts 60% (written with one node down), the node is started again on its ports and data. The
job must finish by itself with exit 0, and v1 and the dead-letter topic, read with
``read_committed`` (confluent-kafka's default, which ``check_outputs`` uses), must hold every
message exactly once, with counts equal to the committed ``progress.json``.

Every step waits for an event (a count in progress.json, a port, the metadata), never for time.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.integration.test_converter_end_to_end import Setup, check_outputs, deploy, prepare

pytestmark = [pytest.mark.integration, pytest.mark.spark]

N = 20_000
BATCH = 1_000  # offsets per micro-batch: 20 batches, so the faults land mid-run
KILL_AT = N * 3 // 10
RESTART_AT = N * 6 // 10
HANG = 900.0  # seconds: only a hung job gets near this


def _totals(s: Setup) -> dict[str, int]:
    try:
        return json.loads((s.state / "progress.json").read_text())["totals"]
    except (OSError, ValueError, KeyError):
        return {}  # not written yet, or read while being replaced


def _await_count(
    s: Setup, at_least: int, job: threading.Thread, outcome: dict, seen: list[tuple[float, int]]
) -> int:
    """Until progress.json counts ``at_least`` v2 messages; the count then. Fails if the job
    ends first (with its stderr) or nothing comes before HANG. Each new count goes to ``seen``
    with its time (the printed timeline)."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        done = _totals(s).get("in", 0)
        if not seen or seen[-1][1] != done:
            seen.append((time.monotonic(), done))
        if done >= at_least:
            return done
        if not job.is_alive():
            ended = outcome.get("result")
            why = ended.stderr[-3000:] if ended is not None else outcome.get("error")
            pytest.fail(f"the converter ended at {done} before counting {at_least}: {why}")
        time.sleep(0.2)  # a poll interval, not a synchronisation: the count is the event
    pytest.fail(f"the converter did not count {at_least} messages in {HANG:.0f} s (hung)")


def test_exactly_once_converter_loses_and_duplicates_nothing_when_a_broker_is_killed_mid_run(
    kafka_cluster3, registry, tmp_path
):
    cluster = kafka_cluster3
    began = time.monotonic()
    # every topic of the run has 3 replicas (with 1, acks=all would be refused: min ISR is 2)
    s = prepare(cluster.bootstrap, registry, tmp_path, n=N, replication_factor=3)
    from confluent_kafka.admin import AdminClient, ConfigResource

    topics = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=30).topics
    for name in (s.v2_topic, s.v1_topic, s.dlq):
        assert {len(p.replicas) for p in topics[name].partitions.values()} == {3}, name

    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = deploy(
                s,
                "--available-now",
                "--delivery",
                "exactly-once",
                "--max-offsets-per-trigger",
                str(BATCH),
            )
        except Exception as exc:  # noqa: BLE001 - e.g. the 900 s timeout: reported below
            outcome["error"] = repr(exc)

    job = threading.Thread(target=run, name="converter", daemon=True)
    job.start()
    deployed = time.monotonic()

    seen: list[tuple[float, int]] = []
    killed_at = _await_count(s, KILL_AT, job, outcome, seen)
    t_kill = time.monotonic() - deployed
    victim = cluster.leader(s.v1_topic, 0)
    cluster.kill(victim)
    # the whole second stretch is written with one node down: 2 replicas in sync, the minimum
    seen.append((time.monotonic(), -victim))  # the kill, in the timeline
    restarted_at = _await_count(s, RESTART_AT, job, outcome, seen)
    t_restart = time.monotonic() - deployed
    assert killed_at < N and restarted_at < N, "the faults did not land mid-run"
    seen.append((time.monotonic(), -victim))  # the restart begins
    cluster.restart(victim)
    back_at = _totals(s).get("in", 0)
    t_back = time.monotonic() - deployed
    seen.append((time.monotonic(), back_at))
    _await_count(s, N, job, outcome, seen)  # the rest, with all three nodes again

    job.join(HANG)
    assert not job.is_alive(), f"the converter did not finish in {HANG:.0f} s"
    assert "error" not in outcome, outcome.get("error")
    result = outcome["result"]
    t_end = time.monotonic() - deployed
    assert result.returncode == 0, result.stderr[-3000:]

    counts = check_outputs(s)  # every converted and dead-lettered message there, none extra
    assert counts["duplicates"] == 0, counts
    # the run's topics and the internal ones: 3 replicas each, 2 needed in sync
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topics = admin.list_topics(timeout=30).topics
    for name in ("__transaction_state", "__consumer_offsets"):
        assert {len(p.replicas) for p in topics[name].partitions.values()} == {3}, name
    resource = ConfigResource(ConfigResource.Type.TOPIC, s.v1_topic)
    described = admin.describe_configs([resource])[resource].result(30)
    assert described["min.insync.replicas"].value == "2"
    assert counts["in"] == N == counts["converted"] + counts["dead_letter"] + counts["skipped"]
    totals = _totals(s)
    assert totals == {
        "in": N,
        "converted": counts["converted"],
        "dead_letter": counts["dead_letter"],
        "skipped": counts["skipped"],
        "tombstone": 0,
    }
    print(
        f"\nbroker loss: node {victim} SIGKILLed at {killed_at}/{N} ({t_kill:.0f} s after "
        f"deploy), restarted from {restarted_at} ({t_restart:.0f} s), serving again at "
        f"{back_at} ({t_back:.0f} s), job done at {t_end:.0f} s; {counts}; "
        f"test {time.monotonic() - began:.0f} s"
    )
    print(
        "timeline (s after deploy: count, or -node at its kill and restart): "
        + ", ".join(f"{at - deployed:.0f}: {count}" for at, count in seen)
    )
