"""`migrate replay` on the real stack: dead letters from a mapping that cannot convert some
amounts, a fixed mapping, replayed twice -> each record once in v1, with its original position.

The converter runs with the planned mapping (``prepare``: every i % 10 == 3 ride has
total_amount "n/a", dead-lettered at ``convert``; every i % 10 == 7 value is not Avro at all,
dead-lettered at ``decode``). One dead letter is written twice more, as an at-least-once run
would. The fixed mapping turns a bad amount into -1.0.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import fastavro
import pytest
import yaml

from converters.pipeline.headers import parse_marker
from tests.integration.test_converter_end_to_end import (
    MARKER,
    ROOT,
    V1,
    _bootstrap,
    _url,
    consume,
    deploy,
    headers_of,
    prepare,
)

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def replay(s, *extra: str) -> subprocess.CompletedProcess:
    from tests.stack.spark import spark_jars

    env = {
        **os.environ,
        "SCHEMACLI_SPARK_JARS": ",".join(str(j) for j in spark_jars()),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    cmd = [
        sys.executable,
        "-m",
        "schemacli",
        "migrate",
        "replay",
        str(s.mapping),
        "-b",
        s.bootstrap,
        "-r",
        s.registry,
        "--state-dir",
        str(s.state),
        "-o",
        "json",
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)


def fixed_mapping(s, tmp: Path) -> Path:
    """The planned mapping with total_amount's failures defaulted to -1.0 (beside it, so its
    relative schema paths still resolve)."""
    data = yaml.safe_load(s.mapping.read_text())
    data["fields"]["total_amount"] = {
        "from": "total_amount",
        "convert": "parse_number",
        "on_error": "default",
        "default": -1.0,
    }
    path = tmp / "fixed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def write_twice_more(s, count: int) -> str:
    """Copy the first dead letter ``count`` times into the dead-letter topic (the duplicates an
    at-least-once run leaves); returns its source position."""
    from confluent_kafka import Producer

    first = consume(s.bootstrap, s.dlq, expected=1, idle=10)[0]
    producer = Producer({"bootstrap.servers": s.bootstrap, "acks": "all"})
    for _ in range(count):
        producer.produce(s.dlq, key=first.key(), value=first.value(), headers=first.headers())
    assert producer.flush(30) == 0
    return headers_of(first)["schemacli.source"].decode()


def test_replaying_dead_letters_with_a_fixed_mapping_twice_writes_each_record_once_in_v1(
    kafka, registry, tmp_path
):
    s = prepare(_bootstrap(kafka), _url(registry), tmp_path, n=40)
    ran = deploy(s, "--available-now")
    assert ran.returncode == 0, ran.stderr[-3000:]
    bad_amount = {p for p, v in s.produced.items() if v["ride"]["total_amount"] == "n/a"}
    not_avro = {p for p, v in s.produced.items() if v["value"] == b"not avro at all"}
    converted = {p for p, v in s.produced.items() if v["expect"] == "converted"}
    assert (len(bad_amount), len(not_avro), len(converted)) == (4, 4, 31)
    write_twice_more(s, 2)
    fixed = fixed_mapping(s, tmp_path)

    dry = replay(s, "--mapping", str(fixed), "--dry-run")
    assert dry.returncode == 1, dry.stderr[-3000:]  # the not-Avro ones still fail
    report = json.loads(dry.stdout)
    assert (report["read"], report["unique"], report["written"]) == (10, 8, 0)
    assert set(report["would_write"]) == bad_amount and report["dry_run"] is True

    first = replay(s, "--mapping", str(fixed))
    assert first.returncode == 1, first.stderr[-3000:]
    report = json.loads(first.stdout)
    assert (report["converted"], report["written"], report["already_in_v1"]) == (4, 4, 0)
    assert set(report["would_write"]) == bad_amount
    failing = report["still_failing"]
    assert {f["source"] for f in failing} == not_avro
    assert {f["stage"] for f in failing} == {"decode"}
    assert all("magic byte" in f["error"] for f in failing), failing
    assert [(stage, n) for stage, _, n in report["by_error"]] == [("decode", 4)]

    again = replay(s, "--mapping", str(fixed))
    assert again.returncode == 1, again.stderr[-3000:]
    report = json.loads(again.stdout)
    assert (report["converted"], report["written"], report["already_in_v1"]) == (4, 0, 4)

    seen: dict[str, int] = {}
    for msg in consume(s.bootstrap, s.v1_topic, expected=35):
        h = headers_of(msg)
        position = parse_marker(h[MARKER]).dedupe_key
        seen[position] = seen.get(position, 0) + 1
        if position in bad_amount:  # replayed: converted by the fixed mapping
            sent = s.produced[position]
            assert msg.key() == sent["key"]
            assert h["trace-id"] == f"t{sent['ride']['vendorId']}".encode()
            assert not {"schemacli.error", "schemacli.source"} & set(h)
            assert parse_marker(h[MARKER]).origin == f"{s.v2_topic}-value/1"
            assert msg.value()[1:5] == s.v1_id.to_bytes(4, "big")
            record = fastavro.schemaless_reader(io.BytesIO(msg.value()[5:]), V1, None)
            assert record == {
                **sent["ride"],
                "total_amount": -1.0,
                "trip_distance": pytest.approx(sent["ride"]["trip_distance"]),
            }
    assert set(seen) == converted | bad_amount
    assert all(n == 1 for n in seen.values()), {p: n for p, n in seen.items() if n > 1}

    replays = json.loads((s.state / "replays.json").read_text())["replays"]
    assert [(r["written"], r["already_in_v1"], r["still_failing"]) for r in replays] == [
        (4, 0, 4),
        (0, 4, 4),
    ]

    too_many = replay(s, "--limit", "5")  # refused before reading (or starting Spark)
    assert too_many.returncode == 2
    # 10 dead letters and the commit markers of the transactions that wrote them
    assert "dead letters (its offsets), more than --limit 5" in too_many.stderr
