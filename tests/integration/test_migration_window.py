"""The migration window on the real stack: who still depends on v1, and finishing it.

After the converter has converted the v2 topic, a consumer group ("billing") still reads v1 and
a legacy producer still writes v1 directly. ``migrate status`` lists both; ``migrate finish``
refuses while they exist; once billing has left and the direct write is out of the window,
``finish`` drains, stops and reports counts that reconcile with both topics.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest

from tests.integration.test_converter_end_to_end import (
    MARKER,
    ROOT,
    _bootstrap,
    _url,
    consume,
    deploy,
    headers_of,
    prepare,
)

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def migrate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "schemacli", "migrate", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


def status(s, window: int) -> dict:
    done = migrate(
        "status", str(s.mapping), "--state-dir", str(s.state), "-b", s.bootstrap,
        "--window", str(window), "-o", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def active_v1_groups(report: dict) -> list[str]:
    groups = report["dependents"]["v1_groups"]
    return [g["group_id"] for g in groups if g["members"] or any(p["lag"] for p in g["partitions"])]


def test_status_names_v1_dependents_and_finish_waits_for_them_to_go(kafka, registry, tmp_path):
    from confluent_kafka import Consumer, KafkaError, Producer

    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=40)
    ran = deploy(s, "--available-now")
    assert ran.returncode == 0, ran.stderr[-3000:]

    # a legacy producer still writes v1 directly (no converter marker) ...
    producer = Producer({"bootstrap.servers": s.bootstrap})
    producer.produce(s.v1_topic, key=b"legacy-7", value=b"\x00", headers=[("app", b"old-writer")])
    assert producer.flush(30) == 0
    # ... and a consumer group still reads v1, caught up and connected
    billing = Consumer(
        {"bootstrap.servers": s.bootstrap, "group.id": f"billing-{uuid.uuid4().hex[:6]}",
         "auto.offset.reset": "earliest", "client.id": "billing-app",
         "enable.auto.commit": False, "enable.partition.eof": True}
    )  # fmt: skip
    billing.subscribe([s.v1_topic])
    # read v1 to the end of both partitions (the event), bounded by a deadline only a hang meets
    read, at_end, deadline = 0, set(), time.monotonic() + 120
    while len(at_end) < 2:
        assert time.monotonic() < deadline, f"billing did not read v1 to its end ({read} read)"
        msg = billing.poll(0.5)
        if msg is None:
            continue
        if msg.error() is None:
            read += 1
        elif msg.error().code() == KafkaError._PARTITION_EOF:
            at_end.add(msg.partition())
    assert read > 1
    billing.commit(asynchronous=False)

    seen = status(s, window=300)
    assert seen["window"]["state"] == "running"
    deps = seen["dependents"]
    (billing_group,) = [g for g in deps["v1_groups"] if g["group_id"].startswith("billing-")]
    assert [m["client_id"] for m in billing_group["members"]] == ["billing-app"]
    direct = sum(d["messages"] for d in deps["direct_writes"])
    assert direct == 1
    assert any("b'legacy-7'" in d["key_sample"] and "app" in d["header_names"]
               for d in deps["direct_writes"])  # fmt: skip

    refused = migrate(
        "finish", str(s.mapping), "--state-dir", str(s.state), "-b", s.bootstrap,
        "--interval", "1", "--window", "300",
    )  # fmt: skip
    assert refused.returncode == 1
    assert "billing-" in refused.stderr and "without the converter's marker" in refused.stderr
    assert not (s.state / "final-report.json").exists()

    billing.close()  # billing moves to v2; the direct write ages out of a 2 s window
    deadline = time.monotonic() + 120  # only a hang reaches it
    while True:  # until status sees the group gone and the write older than the window
        gone = status(s, window=2)
        aged_out = sum(d["messages"] for d in gone["dependents"]["direct_writes"]) == 0
        if active_v1_groups(gone) == [] and aged_out:
            break
        assert time.monotonic() < deadline, gone["dependents"]

    finished = migrate(
        "finish", str(s.mapping), "--state-dir", str(s.state), "-b", s.bootstrap,
        "--interval", "1", "--window", "2", "-o", "json",
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    t = report["totals"]
    assert t["in"] == 40 == t["converted"] + t["dead_letter"] + t["skipped"]
    v1 = consume(s.bootstrap, s.v1_topic, t["converted"] + 1)
    assert sum(1 for m in v1 if MARKER in headers_of(m)) == t["converted"]
    dead = consume(s.bootstrap, s.dlq, t["dead_letter"])
    assert len(dead) == t["dead_letter"] == sum(report["dead_letters_by_error"].values())
    assert report["window_start"] < report["window_end"]
    # v1's data left behind: the converted records (one writer id) and the legacy direct write
    left = report["v1_data"]
    assert left["records"] == len(v1) and left["unframed"] == 1
    assert [v["count"] for v in left["versions"]] == [t["converted"]]
    assert (
        left["all_aged_out_at_ms"] == max(v["all_aged_out_at_ms"] for v in left["versions"])
        and left["all_aged_out_at_ms"] > report["window_end"] * 1000
    )
    assert "v1 data left in" in (s.state / "final-report.txt").read_text()
    assert json.loads((s.state / "final-report.json").read_text()) == report
    assert status(s, window=2)["window"]["state"] == "finished"
