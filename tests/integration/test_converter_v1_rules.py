"""The converter under v1's WRITE rules on the real broker and registry: v1 is registered with a
rule set of CEL_FIELD TRANSFORMs and CONDITIONs (and metadata tags) on AxonOps, which keeps rule
sets; ``migrate deploy`` converts v2 messages, and what lands on the v1 topic is the masked
record the Python rules engine and the v1 writer give (byte for byte), every record v1's rules
refuse is a dead letter naming the rule (stage ``rule``), and nothing is lost or doubled.

The schemas, rules and records are tests/spark/test_converter_v1_transforms.py's, where the
converter's rows are proven equal to the Python engine's record for record."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from tests.integration.test_converter_end_to_end import (
    ROOT,
    Setup,
    _bootstrap,
    _url,
    consume,
    deploy,
    headers_of,
)

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.rule_sets]


def _expected(rows: list[dict], v1_id: int) -> list[tuple[str, bytes | str]]:
    """Per v2 record, where the converter must put it: ("v1", the framed v1 bytes the Python
    engine and the v1 writer give) or ("dead", the reason's start)."""
    from schemacli.contracts.avro.parse import parse_schema
    from schemacli.contracts.rules.execute import RuleRunner
    from schemacli.contracts.rules.model import parse_contract
    from spark_avro.wire import frame
    from tests.spark.test_converter_v1_transforms import METADATA, RULE_SET, V1, _body

    contract = parse_contract(json.dumps({"metadata": METADATA, "ruleSet": RULE_SET}), "v1")
    runner = RuleRunner(contract.rule_set, parse_schema(V1), contract.metadata)
    names = [f["name"] for f in V1["fields"]]
    out: list[tuple[str, bytes | str]] = []
    for row in rows:
        if not -(2**31) <= row["age"] < 2**31:  # the mapping's narrowing refuses it
            out.append(("dead", "age"))
            continue
        result = runner.run({n: row[n] for n in names}, "WRITE")
        if result.refused_by is not None:
            out.append(("dead", f"rule {result.refused_by.rule.name} "))
        else:
            out.append(("v1", frame(v1_id, _body(V1, result.record))))
    return out


def test_the_converter_writes_v1s_masked_records_and_dead_letters_what_v1s_rules_refuse(
    kafka, registry, tmp_path
):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings
    from spark_avro.wire import frame
    from tests.spark.test_converter_v1_transforms import METADATA, RULE_SET, V1, V2, _body, records

    bootstrap, url = _bootstrap(kafka), _url(registry)
    run = uuid.uuid4().hex[:8]
    v2_topic, v1_topic, dlq = (
        f"customers-v2-{run}",
        f"customers-{run}",
        f"customers-v2-{run}.dead-letter",
    )
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, num_partitions=2, replication_factor=1)
                                  for t in (v2_topic, v1_topic, dlq)]).values():  # fmt: skip
        f.result(30)
    with RegistryClient(RegistrySettings.build(url=url, env={})) as client:
        v1_id = client.register(f"{v1_topic}-value", json.dumps(V1), metadata=METADATA,
                                rule_set=RULE_SET).id  # fmt: skip
        v2_id = client.register(f"{v2_topic}-value", json.dumps(V2)).id
    (tmp_path / "v1.avsc").write_text(json.dumps(V1))
    (tmp_path / "v2.avsc").write_text(json.dumps(V2))
    mapping = tmp_path / "mapping.yaml"
    planned = subprocess.run(
        [sys.executable, "-m", "schemacli", "migrate", "plan", "--from", str(tmp_path / "v2.avsc"),
         "--to", str(tmp_path / "v1.avsc"), "--source-subject", f"{v2_topic}-value",
         "--target-subject", f"{v1_topic}-value", "--source-topic", v2_topic, "--target-topic",
         v1_topic, "--out", str(mapping)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert f"dead_letter_topic: {dlq}" in mapping.read_text()  # the planned default

    rows = records(80)
    values = [frame(v2_id, _body(V2, r)) for r in rows]
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, value in enumerate(values):
        producer.produce(v2_topic, key=f"k{i}".encode(), value=value)
    assert producer.flush(60) == 0
    del producer

    s = Setup(bootstrap, url, mapping, tmp_path / "state", v2_topic, v1_topic, dlq, v1_id, {})
    result = deploy(s, "--available-now")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "converter road: SQL road" in result.stderr  # the fast road builds no Spark rows

    expected = _expected(rows, v1_id)
    written = consume(bootstrap, v1_topic)
    dead = consume(bootstrap, dlq)
    got: dict[int, list[tuple[str, bytes | str]]] = {}
    for msg in written:
        got.setdefault(int(msg.key()[1:]), []).append(("v1", msg.value()))
    for msg in dead:
        h = headers_of(msg)
        assert msg.value() == values[int(msg.key()[1:])]  # a dead letter keeps the v2 bytes
        stage = h["schemacli.error-stage"].decode()
        assert stage in ("rule", "convert"), h
        got.setdefault(int(msg.key()[1:]), []).append(("dead", h["schemacli.error"].decode()))
    doubled = {i: g for i, g in got.items() if len(g) != 1}
    lost = [i for i in range(len(rows)) if i not in got]
    assert not doubled and not lost, (doubled, lost)
    differ = []
    for i, want in enumerate(expected):
        (where, what) = got[i][0]
        ok = where == want[0] and (
            what == want[1] if where == "v1" else str(what).startswith(str(want[1]))
        )
        if not ok:
            differ.append((i, rows[i], want, got[i]))
    assert not differ, differ[:3]
    masked = [v for w, v in expected if w == "v1" and b"***" in v]
    refused = {str(v).split(" ")[1] for w, v in expected if w == "dead" and v != "age"}
    assert masked and refused == {"adult", "ratio", "scored"}, refused
    print(f"\n{len(rows)} records: {len(written)} written ({len(masked)} masked), "
          f"{len(dead)} dead letters, refused by {sorted(refused)}")  # fmt: skip
