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
    killed = time.monotonic()
    # the whole second stretch is written with one node down: 2 replicas in sync, the minimum
    seen.append((killed, -victim))  # the kill, in the timeline
    at_kill = _totals(s).get("in", 0)  # counted by the batches committed before the kill
    restarted_at = _await_count(s, RESTART_AT, job, outcome, seen)
    restarting = time.monotonic()
    t_restart = restarting - deployed
    assert killed_at < N and restarted_at < N, "the faults did not land mid-run"
    seen.append((restarting, -victim))  # the restart begins
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
    # How long the loss stalled it, from the counts' events (a batch is BATCH offsets): the first
    # commit after the kill may be the batch that was in flight; the one after it was begun
    # after the kill, so its commit says the converter runs again. Both came while the node was
    # down. The order of events is asserted, never a duration.
    after = [(t, count) for t, count in seen if t > killed and count >= 0]
    first = next(t for t, count in after if count > at_kill)
    resumed = next(t for t, count in after if count >= at_kill + 2 * BATCH)
    assert killed < first <= resumed < restarting

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
        f"broker loss: the first commit {first - killed:.1f} s after the kill, a batch begun "
        f"after it committed {resumed - killed:.1f} s after it (Kafka's defaults: about 60 s)"
    )
    print(
        "timeline (s after deploy: count, or -node at its kill and restart): "
        + ", ".join(f"{at - deployed:.0f}: {count}" for at, count in seen)
    )
    waited = [line for line in result.stderr.splitlines() if "Exception" in line]
    print("the job's Kafka exceptions: " + (" | ".join(waited[:4]) or "none"))


# The census through the loss of the broker leading the partition it reads. One partition with
# three replicas; the node leading it is SIGKILLed the moment the census's read begins (its
# watermarks are taken: the road's read function is wrapped) or, on the Spark road, the moment
# its Spark job begins (the session started: its start is not the stall), so the read itself
# meets the dead leader until the controller gives the partition a new one. The census must
# finish complete and exact; the time from the kill to its first records read is printed (an
# upper bound of the stall: it includes the road's own start, a JVM, or the Spark job's
# planning and tasks).
CENSUS_N = 3_000


def _census_topic(cluster, name: str) -> str:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for future in admin.create_topics([NewTopic(name, 1, 3)]).values():
        future.result(60)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(CENSUS_N):
        producer.produce(name, key=b"k%d" % i, value=b"\x00\x00\x00\x00\x07" + b"%06d" % i)
    assert producer.flush(60) == 0
    return name


@pytest.fixture
def spark_connectors(monkeypatch, tmp_path) -> None:
    """The Spark road's connectors and driver address, as an operator gives them."""
    import sys

    from tests.stack.spark import spark_jars

    conf = tmp_path / "spark-conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        "spark.driver.host 127.0.0.1\nspark.driver.bindAddress 127.0.0.1\n"
    )
    monkeypatch.setenv("SCHEMACLI_SPARK_JARS", ",".join(str(j) for j in spark_jars()))
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)


@pytest.mark.parametrize(
    ("engine", "when"),
    [("jvm", "read"), ("python", "read"), ("spark", "job"), ("jvm", "start")],
)
def test_census_reads_every_record_when_its_partitions_leader_is_killed(
    kafka_cluster3, engine, when, monkeypatch, request
):
    """``when`` "read": the leader is killed as the read begins (the watermarks taken); "job":
    as the Spark job begins; "start": just before the census starts, so its watermarks wait for
    the new leader too."""
    import uuid

    from converters.census import jvmscan, scan, sparkscan
    from converters.census.model import Mode
    from converters.census.take import take_census

    if engine == "jvm":
        from tests.stack.kafka import census_jars

        census_jars()
    if engine == "spark":
        request.getfixturevalue("spark_connectors")
    cluster = kafka_cluster3
    topic = _census_topic(cluster, f"census-loss-{engine}-{uuid.uuid4().hex[:6]}")
    victim = cluster.leader(topic, 0)
    module = {"jvm": jvmscan, "python": scan, "spark": sparkscan}[engine]
    read = module.read_partitions
    events: dict[str, float] = {}
    seen: list[tuple[float, int]] = []

    def kill() -> None:
        if "kill" not in events:  # once: the census taken again below finds the node down
            cluster.kill(victim)
            events["kill"] = time.monotonic()

    def kill_then_read(*args, **kwargs):
        events["read"] = time.monotonic()
        kill()
        return read(*args, **kwargs)

    def progress(done: int, total: int) -> None:
        seen.append((time.monotonic(), done))

    if when == "read":
        monkeypatch.setattr(module, "read_partitions", kill_then_read)
    if engine == "spark":  # when the Spark job itself begins (the session started)
        collect = sparkscan._collect

        def job(*args, **kwargs):
            events["job"] = time.monotonic()
            if when == "job":
                kill()
            return collect(*args, **kwargs)

        monkeypatch.setattr(sparkscan, "_collect", job)

    def exact_census() -> float:
        """The census taken; the time its first records were read."""
        seen.clear()
        doc = take_census(cluster.bootstrap, topic, mode=Mode(), client=None, store=None,
                          engine=engine, jobs=2, progress=progress)  # fmt: skip
        assert doc["engine"] == engine and doc["complete"] is True
        assert doc["totals"]["messages"] == CENSUS_N
        (version,) = doc["values"]["versions"]
        assert (version["id"], version["count"]) == (7, CENSUS_N)
        return next(t for t, done in seen if done > 0)

    began = time.monotonic()
    if when == "start":
        events["start"] = began
        kill()
    first = exact_census()
    events["done"] = time.monotonic()
    # the order of events: the kill, then the first records read (from the new leader)
    assert events["kill"] < first <= events["done"]
    job = (
        f", the Spark job began {events['job'] - events['kill']:.1f} s after it"
        if "job" in events and when != "job"
        else ""
    )
    # the same census again, the node still down and its partition led by another: the road's
    # own time from the same point to its first records, which the stall above comes on top of
    events["start"] = time.monotonic()
    again = exact_census() - events[when]
    print(
        f"\ncensus ({engine}, node {victim} killed as the {when} began): first records read "
        f"{first - events['kill']:.1f} s after the kill{job}, census done "
        f"{events['done'] - events['kill']:.1f} s after it ({events['done'] - began:.1f} s in "
        f"all); taken again without a loss, first records {again:.1f} s after its {when} began"
    )
