"""A v2 subject whose schema uses Confluent references two levels deep, on the real stack: every
road that reads it from the registry gives what the same migration gives with the schema written
inline.

In the registry: ``x.Color`` (an enum) in one subject, ``x.Address`` (a record using
``x.Color``, by reference) in a second, and the v2 ``shop.Order`` (using ``x.Address``, by
reference) under the v2 topic's subject; v1 under the v1 topic's subject, self-contained. Two
mappings convert v2 to v1 with the same rules: one names only the v2 subject (its schema comes
from the registry, through ``schemacli.registry.schemas``), the other gives the v2 schema inline
in a file. ``migrate validate``, ``migrate rules``, ``migrate deploy`` (the converter job,
exactly-once, read back by a v1 consumer), ``migrate replay``, ``spark codegen --migrate`` and
``converters.onread.read_topic(migrate=)`` must give the v1 records the inline mapping gives;
``check`` and ``gate --registry`` judge the subject's history with its references.
"""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import fastavro
import pytest
import yaml
from typer.testing import CliRunner

from converters.pipeline.headers import parse_marker
from tests.integration.test_converter_end_to_end import (
    MARKER,
    ROOT,
    Setup,
    consume,
    deploy,
    headers_of,
)
from tests.integration.test_replay import replay
from tests.referenced_schemas import (
    ADDRESS,
    COLOR,
    ORDER_V1,
    ORDER_V2,
    ORDER_V2_INLINE,
)
from tests.referenced_schemas import FIELDS as RULES

pytestmark = [pytest.mark.integration, pytest.mark.spark]

V1, V2, V2_INLINE = ORDER_V1, ORDER_V2, ORDER_V2_INLINE
FIELDS = yaml.safe_load(RULES)["fields"]
FIXED = {**FIELDS, "total": {**FIELDS["total"], "on_error": "default", "default": -1.0}}
COUNT = 30  # every i % 10 == 3 order has total "n/a": dead-lettered, then replayed


def order(i: int) -> dict:
    return {
        "id": i,
        "ship_to": {"street": f"{i} Main St", "color": COLOR["symbols"][i % 3]},
        "note": None if i % 2 else f"note {i}",
        "total": "n/a" if i % 10 == 3 else f"{i}.5",
    }


@dataclass
class Stack:
    setup: Setup  # what the converter tests' deploy and replay take (by-subject mapping)
    inline: Path  # the same mapping with the v2 schema in a file
    by_subject_fixed: Path
    inline_fixed: Path
    v2_subject: str
    subjects: tuple[str, str]  # color, address
    v2_id: int
    positions: dict[str, int]  # "topic/partition/offset" -> order i


def _mapping(path: Path, source: dict, s_target: dict, fields: dict, dlq: str) -> Path:
    doc = {"version": 1, "source": source, "target": s_target, "dead_letter_topic": dlq}
    path.write_text(yaml.safe_dump({**doc, "fields": fields}, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def stack(kafka, registry, tmp_path_factory) -> Stack:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from schemacli.registry.client import RegistryClient
    from schemacli.registry.models import Reference
    from schemacli.registry.settings import RegistrySettings

    tag = uuid.uuid4().hex[:8]
    v2_topic, v1_topic = f"orders-v2-{tag}", f"orders-{tag}"
    dlq = f"{v2_topic}.dead-letter"
    color, address = f"color-{tag}", f"address-{tag}"
    v2_subject, v1_subject = f"{v2_topic}-value", f"{v1_topic}-value"
    admin = AdminClient({"bootstrap.servers": kafka})
    topics = [NewTopic(t, 2, 1) for t in (v2_topic, v1_topic, dlq)]
    for future in admin.create_topics(topics).values():
        future.result(30)
    with RegistryClient(RegistrySettings.build(url=registry, env={})) as client:
        client.register(color, json.dumps(COLOR))
        client.register(address, json.dumps(ADDRESS), references=[Reference("x.Color", color, 1)])
        v2_id = client.register(
            v2_subject, json.dumps(V2), references=[Reference("x.Address", address, 1)]
        ).id
        v1_id = client.register(v1_subject, json.dumps(V1)).id
    tmp = tmp_path_factory.mktemp("references")
    (tmp / "v1.avsc").write_text(json.dumps(V1))
    (tmp / "v2.avsc").write_text(json.dumps(V2_INLINE))
    target = {"subject": v1_subject, "schema": "v1.avsc", "topic": v1_topic}
    by_subject = {"subject": v2_subject, "topic": v2_topic}
    inline = {**by_subject, "schema": "v2.avsc"}
    paths = [
        _mapping(tmp / name, source, target, fields, dlq)
        for name, source, fields in (
            ("by-subject.yaml", by_subject, FIELDS),
            ("inline.yaml", inline, FIELDS),
            ("by-subject-fixed.yaml", by_subject, FIXED),
            ("inline-fixed.yaml", inline, FIXED),
        )
    ]
    parsed = fastavro.parse_schema(V2_INLINE)  # the same binary encoding as the registered v2
    positions: dict[str, int] = {}
    producer = Producer({"bootstrap.servers": kafka, "acks": "all", "enable.idempotence": True})
    for i in range(COUNT):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, order(i))
        value = b"\x00" + v2_id.to_bytes(4, "big") + buf.getvalue()

        def delivered(err, msg, i=i):
            assert err is None, err
            positions[f"{msg.topic()}/{msg.partition()}/{msg.offset()}"] = i

        producer.produce(v2_topic, key=f"k{i}".encode(), value=value, on_delivery=delivered)
    assert producer.flush(60) == 0
    setup = Setup(
        kafka, registry, paths[0], tmp / "state", v2_topic, v1_topic, dlq, v1_id, {}, v2_id=v2_id
    )
    subjects = (color, address)
    return Stack(setup, paths[1], paths[2], paths[3], v2_subject, subjects, v2_id, positions)


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "schemacli", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=600,
    )


@pytest.fixture(scope="module")
def inline_rows(spark, kafka, registry, stack) -> dict[int, dict | str]:
    """What the inline mapping gives for every order, read on the topic by migrate on read."""
    return _read(spark, kafka, registry, stack, stack.inline)


def _read(spark, kafka, registry, stack, mapping: Path) -> dict[int, dict | str]:
    from converters.onread import read_topic

    rows = read_topic(
        spark, kafka, stack.setup.v2_topic, registry_url=registry, migrate=mapping, flatten=False
    )
    return _by_offset(stack, rows.collect())


def _by_offset(stack, rows) -> dict[int, dict | str]:
    out: dict[int, dict | str] = {}
    for r in rows:
        i = stack.positions[f"{stack.setup.v2_topic}/{r['partition']}/{r['offset']}"]
        if r["decode_error"] is not None:
            out[i] = r["decode_error_kind"]
            continue
        out[i] = r["record"].asDict(recursive=True)
    return out


def test_the_inline_mapping_gives_v1_orders_and_bad_records_for_bad_totals(inline_rows):
    assert len(inline_rows) == COUNT
    for i, row in inline_rows.items():
        if i % 10 == 3:
            assert row == "convert"
        else:
            want = order(i)
            assert row == {"id": i, "ship_to": want["ship_to"], "total": float(want["total"])}


def test_validate_and_rules_read_the_referenced_subject_as_the_inline_schema(registry, stack):
    from schemacli.contracts.avro.canonical import canonical_form
    from schemacli.contracts.avro.parse import parse_schema

    mappings = (stack.setup.mapping, stack.inline)
    checked = [cli("migrate", "validate", str(m), "-r", registry, "-o", "json") for m in mappings]
    for done in checked:
        assert done.returncode == 0, done.stderr
    shown = [json.loads(done.stdout) for done in checked]
    for doc in shown:  # where each side's schema came from differs, by design
        doc.pop("mapping", None)
        doc.pop("source", None)
    assert shown[0] == shown[1]
    for client in ("python", "java"):
        bodies = [
            cli("migrate", "rules", str(m), "-r", registry, "--client", client) for m in mappings
        ]
        for done in bodies:
            assert done.returncode == 0, done.stderr
        got, want = (json.loads(done.stdout) for done in bodies)
        assert got["ruleSet"] == want["ruleSet"] and got["metadata"] == want["metadata"]
        assert canonical_form(parse_schema(got["schema"])) == canonical_form(
            parse_schema(want["schema"])
        )


def test_read_topic_through_the_referenced_subject_gives_the_inline_mappings_rows(
    spark, kafka, registry, stack, inline_rows
):
    assert _read(spark, kafka, registry, stack, stack.setup.mapping) == inline_rows


def test_a_generated_migrating_reader_of_the_referenced_subject_gives_the_same_rows(
    spark, kafka, registry, stack, inline_rows, tmp_path
):
    from schemacli.app import app

    out = tmp_path / "orders_reader.py"
    result = CliRunner().invoke(
        app,
        [
            "spark", "codegen", "--subject", stack.v2_subject, "--topic", stack.setup.v2_topic,
            "--registry", registry, "--migrate", str(stack.setup.mapping), "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = importlib.util.spec_from_file_location("orders_reader", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert _by_offset(stack, module.read(spark, kafka, flatten=False).collect()) == inline_rows


def test_deploy_and_replay_through_the_referenced_subject_write_the_inline_mappings_v1_records(
    spark, kafka, registry, stack, inline_rows
):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    s = stack.setup
    ran = deploy(s, "--available-now")
    assert ran.returncode == 0, ran.stderr[-3000:]
    # a v1 consumer: confluent-kafka's deserializer with the v1 reader schema, read_committed
    deser = AvroDeserializer(SchemaRegistryClient({"url": registry}), json.dumps(V1))
    context = SerializationContext(s.v1_topic, MessageField.VALUE)

    def v1_topic() -> dict[int, list[dict]]:
        seen: dict[int, list[dict]] = {}
        for msg in consume(s.bootstrap, s.v1_topic):
            source = parse_marker(headers_of(msg)[MARKER]).dedupe_key
            assert msg.value()[1:5] == s.v1_id.to_bytes(4, "big")
            seen.setdefault(stack.positions[source], []).append(deser(msg.value(), context))
        return seen

    converted = v1_topic()
    want = {i: row for i, row in inline_rows.items() if row != "convert"}
    assert {i: rows[0] for i, rows in converted.items()} == want
    assert all(len(rows) == 1 for rows in converted.values())  # exactly once
    dead = consume(s.bootstrap, s.dlq)
    assert sorted(stack.positions[headers_of(m)["schemacli.source"].decode()] for m in dead) == [
        i for i in range(COUNT) if i % 10 == 3
    ]

    # the dead letters again, with the fixed mapping (a bad total becomes -1.0): as the fixed
    # inline mapping reads them
    fixed_inline = _read(spark, kafka, registry, stack, stack.inline_fixed)
    done = replay(s, "--mapping", str(stack.by_subject_fixed))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert (report["converted"], report["written"]) == (3, 3)
    after = v1_topic()
    assert {i: rows[0] for i, rows in after.items()} == fixed_inline
    assert all(len(rows) == 1 for rows in after.values())


def test_check_and_gate_judge_the_referenced_subject_with_its_references(registry, stack, tmp_path):
    color, address = stack.subjects
    # check: a v3 of the order, self-contained, against the history with references
    tip = {"name": "tip", "type": "double", "default": 0.0}
    v3 = {**V2_INLINE, "fields": [*V2_INLINE["fields"], tip]}
    (tmp_path / "v3.avsc").write_text(json.dumps(v3))
    checked = cli(
        "check", str(tmp_path / "v3.avsc"), "--subject", stack.v2_subject, "--registry", registry,
        "-o", "json",
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # both verdicts agree, or (Apicurio 3.0.9, whose compatibility test cannot read a history
    # with references: docs/registry.md) the registry could not judge and the local one stands
    assert "-> agree" in checked.stderr or "could not judge" in checked.stderr, checked.stderr
    kinds = [f["kind"] for case in json.loads(checked.stdout)["cases"] for f in case["findings"]]
    assert set(kinds) <= {"REGISTRY_NOT_ASKED"}
    # gate: the three subjects pulled (references as sidecars), a new version of the order that
    # uses x.Address by reference, checked and registered
    store = tmp_path / "store"
    pulled = cli(
        "pull", color, address, stack.v2_subject, "--store", str(store), "--registry", registry,
        "--no-levels",
    )  # fmt: skip
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    folder = store / "subjects" / stack.v2_subject
    assert json.loads((folder / "v1.references.json").read_text()) == [
        {"name": "x.Address", "subject": address, "version": 1}
    ]
    v2_next = {**V2, "fields": [*V2["fields"], tip]}
    (folder / "v2.avsc").write_text(json.dumps(v2_next, indent=2))
    (folder / "v2.references.json").write_text((folder / "v1.references.json").read_text())
    gated = cli(
        "gate", "--store", str(store), "--registry", registry, "--register", "-o", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert gated.returncode == 0, gated.stdout + gated.stderr
    report = json.loads(gated.stdout)
    kinds = [f["kind"] for case in report["cases"] for f in case["findings"]]
    assert len(report["cases"]) == 3
    assert set(kinds) <= {"REGISTRY_NOT_ASKED"}  # no divergence, no disagreement
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.schemas import RegistrySchemas
    from schemacli.registry.settings import RegistrySettings

    with RegistryClient(RegistrySettings.build(url=registry, env={})) as client:
        latest = RegistrySchemas(client).schema(stack.v2_subject)
    assert latest.number == 2 and [r.source for r in latest.loaded.references] == [f"{address}:v1"]
