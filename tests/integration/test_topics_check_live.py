"""`topics check` on the real broker and registry: the JVM road (Kafka's consumer, Avro,
CEL-Java) counts every rule's passes, failures and errors per writer version exactly, the Python
road (cel's evaluator) gives the same document, and every bad input is a clear error with its
exit code and a valid document in every -o format."""

from __future__ import annotations

import json
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from converters.quality import jvmscan
from tests.integration.test_census_live import cli
from tests.integration.test_spark_reader import _bootstrap, _url

pytestmark = [pytest.mark.integration]

TIMING = ("scanned_at", "scanned_at_ms", "duration_s", "engine")
V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "total", "type": "double"},
    {"name": "email", "type": "string", "confluent:tags": ["PII"]},
]}  # fmt: skip
V2 = {
    **V1,
    "fields": [*V1["fields"], {"name": "note", "type": ["null", "string"], "default": None}],
}
RULES = {"domainRules": [
    {"name": "total-not-negative", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
     "expr": "message.total >= 0.0", "onFailure": "ERROR"},
    {"name": "email-has-at", "kind": "CONDITION", "type": "CEL_FIELD", "mode": "WRITE",
     "tags": ["PII"], "expr": "value.contains('@')", "onFailure": "NONE"},
    {"name": "note-short", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
     "expr": "size(message.note) < 10", "onFailure": "DLQ", "params": {"dlq.topic": "dlq"}},
    {"name": "read-only", "kind": "CONDITION", "type": "CEL", "mode": "READ",
     "expr": "message.id > 0"},
]}  # fmt: skip
FORMATS = ("text", "json", "junit", "github", "sarif", "gitlab")


@dataclass
class Topic:
    name: str
    ids: dict[str, int]
    contract: Path
    passing: Path
    transforming: Path  # a CEL TRANSFORM: no Spark SQL form
    ghost: str  # a topic that is not there, whose value subject is registered


def _frame(schema_id: int, schema: dict, record: dict) -> bytes:
    import io

    import fastavro

    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), record)
    return b"\x00" + schema_id.to_bytes(4, "big") + out.getvalue()


@pytest.fixture(scope="module", autouse=True)
def _jvm_road() -> None:
    from tests.stack.kafka import quality_jars

    quality_jars()
    assert jvmscan.available(), "the JVM road cannot run: java, the jar or its jars missing"


@pytest.fixture(scope="module")
def topic(kafka, registry, tmp_path_factory) -> Topic:
    import requests
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = _bootstrap(kafka)
    name = f"check-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, 2, 1)]).values():
        future.result(30)
    ids = {}
    ghost = f"ghost-{uuid.uuid4().hex[:8]}"
    for label, subject, schema in (("v1", name, V1), ("v2", name, V2), ("ghost", ghost, V1)):
        answer = requests.post(
            f"{_url(registry)}/subjects/{subject}-value/versions",
            json={"schema": json.dumps(schema)},
            timeout=30,
        )
        answer.raise_for_status()
        ids[label] = answer.json()["id"]
    v1, v2 = ids["v1"], ids["v2"]
    plan = [
        # partition 0: v1 x4 (one negative total, one email without @), an undecodable v1
        (0, _frame(v1, V1, {"id": 1, "total": 5.0, "email": "a@x"})),
        (0, _frame(v1, V1, {"id": 2, "total": -1.0, "email": "b@x"})),
        (0, _frame(v1, V1, {"id": 3, "total": 2.0, "email": "nobody"})),
        (0, _frame(v1, V1, {"id": 4, "total": 0.0, "email": "d@x"})),
        (0, b"\x00" + v1.to_bytes(4, "big") + b"\x02"),  # a long, then nothing: undecodable
        # partition 1: v2 x3 (a null note, a long note), a tombstone, unframed, another id
        (1, _frame(v2, V2, {"id": 5, "total": 1.0, "email": "e@x", "note": None})),
        (1, _frame(v2, V2, {"id": 6, "total": 1.0, "email": "f@x", "note": "hello"})),
        (1, _frame(v2, V2, {"id": 7, "total": -3.0, "email": "g@x", "note": "far too long"})),
        (1, None),
        (1, b'{"id": 8}'),
        (1, b"\x00\x00\x0f\x42\x3f\x02"),  # id 999999: not the subject's
    ]
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, value in plan:
        producer.produce(name, value=value, partition=partition)
    assert producer.flush(30) == 0
    where = tmp_path_factory.mktemp("check")
    contract = where / "v2.contract.json"
    contract.write_text(json.dumps({"metadata": {}, "ruleSet": RULES}))
    passing = where / "passing.contract.json"
    passing.write_text(json.dumps({"ruleSet": {"domainRules": [RULES["domainRules"][0]]}}))
    transforming = where / "transforming.contract.json"
    transform = {"name": "normalise", "kind": "TRANSFORM", "type": "CEL", "mode": "WRITE",
                 "expr": "message"}  # fmt: skip
    transforming.write_text(json.dumps({"ruleSet": {"domainRules": [transform]}}))
    return Topic(name, ids, contract, passing, transforming, ghost)


def check(topic: Topic, kafka, registry, *args: str, engine: str = "jvm", fmt: str = "json"):
    return cli("topics", "check", topic.name, "-b", _bootstrap(kafka), "-r", _url(registry),
               "--engine", engine, "-o", fmt, *args)  # fmt: skip


def rule(doc: dict, version: int, name: str) -> dict:
    (v,) = [v for v in doc["versions"] if v["version"] == version]
    (r,) = [r for r in v["rules"] if r["name"] == name]
    return r


def test_jvm_check_counts_every_rule_per_writer_version_exactly(topic, kafka, registry):
    done = check(topic, kafka, registry, "--contract", str(topic.contract))
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "jvm" and doc["verdict"] == "fail" and doc["complete"] is True
    assert doc["totals"] == {"messages": 11, "checked": 7, "null": 1, "unframed": 1,
                             "other_ids": 1, "undecodable": 1}  # fmt: skip
    assert doc["other_ids"] == [{"id": 999999, "count": 1}]
    v1 = doc["versions"][0]
    assert (v1["version"], v1["records"], v1["undecodable"]) == (1, 5, 1)
    assert v1["undecodable_at"] == {"partition": 0, "offset": 4}
    total = rule(doc, 1, "total-not-negative")
    assert (total["pass"], total["fail"], total["error"]) == (3, 1, 0)
    assert total["failed_at"] == [{"partition": 0, "offset": 1}]
    email = rule(doc, 1, "email-has-at")
    assert (email["pass"], email["fail"]) == (3, 1)
    assert email["failed_at"] == [{"partition": 0, "offset": 2}]
    note_v1 = rule(doc, 1, "note-short")  # v1 has no note: the expression errs on every record
    assert (note_v1["pass"], note_v1["fail"], note_v1["error"]) == (0, 0, 4)
    assert note_v1["first_error"]
    note_v2 = rule(doc, 2, "note-short")  # a null note errs (size(null)), a long one fails
    assert (note_v2["pass"], note_v2["fail"], note_v2["error"]) == (1, 1, 1)
    assert rule(doc, 2, "read-only")["skipped"] == 3  # a READ rule does not run on write
    assert [s["name"] for s in doc["summary"]] == [r["name"] for r in RULES["domainRules"]]


def counts(doc: dict) -> dict:
    """The document without what depends on the road or the clock (timings, error words)."""
    out = {k: v for k, v in doc.items() if k not in (*TIMING, "versions")}
    out["versions"] = [
        {**v, "decode_error": None, "rules": [{**r, "first_error": None} for r in v["rules"]]}
        for v in doc["versions"]
    ]
    return out


def test_python_check_gives_the_jvm_document(topic, kafka, registry):
    jvm = json.loads(check(topic, kafka, registry, "--contract", str(topic.contract)).stdout)
    done = check(topic, kafka, registry, "--contract", str(topic.contract), engine="python")
    assert done.returncode == 1, done.stderr
    python = json.loads(done.stdout)
    assert python["engine"] == "python"
    assert counts(python) == counts(jvm)


SQL_RULES = {"domainRules": [  # CEL CONDITIONs on fields every version has: Spark SQL runs them
    RULES["domainRules"][0],
    {"name": "id-above-2", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
     "expr": "message.id > 2", "onFailure": "NONE"},
    {"name": "email-has-at", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
     "expr": "message.email.contains('@') ; message.total < 4.0", "onFailure": "DLQ",
     "params": {"dlq.topic": "dlq"}},
    RULES["domainRules"][3],
]}  # fmt: skip


FIELD_RULES = {"domainRules": [  # a CEL_FIELD CONDITION on the PII-tagged field, beside CEL ones
    RULES["domainRules"][0], RULES["domainRules"][1], RULES["domainRules"][3],
]}  # fmt: skip


@pytest.mark.parametrize(
    ("rule_mode", "rule_set"),
    [("WRITE", SQL_RULES), ("READ", SQL_RULES), ("WRITE", FIELD_RULES), ("READ", FIELD_RULES)],
    ids=["write", "read", "write-field-rule", "read-field-rule"],
)
def test_spark_check_gives_the_jvm_document(
    topic, kafka, registry, spark, tmp_path, rule_mode, rule_set
):
    from converters.census.model import Mode
    from converters.quality.check import RuleSource, take_check
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.settings import RegistrySettings

    rules = RuleSource(rule_set, {}, {"subject": None, "version": None, "file": "sql.json"})
    docs = {}
    with RegistryClient(RegistrySettings(url=_url(registry))) as client:
        for engine in ("jvm", "spark"):
            docs[engine] = take_check(_bootstrap(kafka), topic.name, subject=f"{topic.name}-value",
                                      client=client, rules=rules, mode=Mode(), engine=engine,
                                      rule_mode=rule_mode, spark=spark)  # fmt: skip
    assert docs["spark"]["engine"] == "spark"
    assert counts(docs["spark"]) == counts(docs["jvm"])
    assert docs["jvm"]["totals"]["checked"] == 7
    if rule_set is FIELD_RULES and rule_mode == "WRITE":  # the CEL_FIELD rule ran on each record
        field = [
            r for v in docs["spark"]["versions"] for r in v["rules"] if r["name"] == "email-has-at"
        ]
        assert sum(r["pass"] + r["fail"] + r["error"] for r in field) == 7
    if rule_set is SQL_RULES:
        assert docs["jvm"]["verdict"] == "fail"


def test_read_mode_runs_the_read_rules(topic, kafka, registry):
    doc = json.loads(check(topic, kafka, registry, "--contract", str(topic.contract),
                           "--rule-mode", "read").stdout)  # fmt: skip
    read_only = rule(doc, 2, "read-only")
    assert (read_only["pass"], read_only["skipped"]) == (3, 0)
    assert rule(doc, 2, "total-not-negative")["skipped"] == 3


def test_a_rule_set_every_record_passes_exits_0_in_every_format(topic, kafka, registry):
    args = ("--contract", str(topic.passing), "--sample", "1")
    for fmt in FORMATS:
        done = check(topic, kafka, registry, *args, fmt=fmt)
        assert done.returncode == 0, (fmt, done.stdout, done.stderr)
        valid_document(fmt, done.stdout)


def test_a_failing_check_is_a_valid_document_in_every_format(topic, kafka, registry):
    for fmt in FORMATS:
        done = check(topic, kafka, registry, "--contract", str(topic.contract), fmt=fmt)
        assert done.returncode == 1, (fmt, done.stderr)
        valid_document(fmt, done.stdout)
        if fmt != "json":
            assert "total-not-negative" in done.stdout
        if fmt == "github":
            assert "::error" in done.stdout


def valid_document(fmt: str, text: str) -> None:
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(text)
    elif fmt == "junit":
        ET.fromstring(text)
    else:  # text and github: lines for people and for the Actions log
        assert text.strip()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("--registry-less",), 2, "needs --registry"),
        (("--contract", "/nonexistent/c.json"), 2, "c.json"),
        (("--contract", "CONTRACT", "--version", "1"), 2, "--contract and --version"),
        (("--topic", "no-such-topic-x"), 2, "no versions"),
        (("--topic", "GHOST", "--contract", "CONTRACT"), 2, "not found"),
        (("--bootstrap", "127.0.0.1:1", "--contract", "CONTRACT"), 3, "Kafka"),
        (("--registry", "http://127.0.0.1:1"), 3, "127.0.0.1:1"),
        (("--version", "1"), 2, "no domain rules"),
        (("--engine", "flink"), 2, "flink"),
        (("--engine", "spark", "--contract", "TRANSFORMING"), 2, "--engine spark cannot run"),
    ],
    ids=["no-registry", "no-contract-file", "contract-and-version", "unknown-topic",
         "subject-without-topic", "broker-unreachable", "registry-unreachable",
         "version-without-rules", "bad-engine", "spark-without-sql-form"],
)  # fmt: skip
def test_every_bad_input_is_a_clear_error_in_every_format(topic, kafka, registry, args, code,
                                                          words):  # fmt: skip
    for fmt in FORMATS:
        name, bootstrap, url, extra = topic.name, _bootstrap(kafka), _url(registry), []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--registry-less":
                url = None
            elif a == "--topic":
                name, i = (topic.ghost if args[i + 1] == "GHOST" else args[i + 1]), i + 1
            elif a == "--bootstrap":
                bootstrap, i = args[i + 1], i + 1
            elif a == "--registry":
                url, i = args[i + 1], i + 1
            else:
                paths = {"CONTRACT": topic.contract, "TRANSFORMING": topic.transforming}
                extra.append(str(paths[a]) if a in paths else a)
            i += 1
        command = ["topics", "check", name, "-b", bootstrap, "-o", fmt, "--connect-timeout",
                   "3", "--timeout", "3", "--retries", "0", *extra]  # fmt: skip
        if url is not None:
            command += ["-r", url]
        done = cli(*command)
        assert done.returncode == code, (fmt, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        assert words.lower() in done.stderr.lower(), done.stderr
        if fmt != "text":
            valid_document(fmt, done.stdout)


ADDRESS = {"type": "record", "name": "Address", "namespace": "shop", "fields": [
    {"name": "city", "type": "string"},
    {"name": "zip", "type": "string", "confluent:tags": ["PII"]},
]}  # fmt: skip
ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "ship", "type": ["null", "shop.Address"], "default": None},
    {"name": "bill", "type": "shop.Address"},
]}  # fmt: skip
ORDER_INLINE = {**ORDER, "fields": [ORDER["fields"][0],
    {"name": "ship", "type": ["null", ADDRESS], "default": None},
    {"name": "bill", "type": "shop.Address"}]}  # fmt: skip
REFERENCE_RULES = {"domainRules": [
    {"name": "bill-city", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
     "expr": "message.bill.city != ''"},
    {"name": "ship-or-bill", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
     "expr": "message.ship == null || message.ship.city == message.bill.city"},
    {"name": "zip-long", "kind": "CONDITION", "type": "CEL_FIELD", "mode": "WRITE",
     "tags": ["PII"], "expr": "size(value) >= 4"},
]}  # fmt: skip


def test_a_writer_with_schema_references_is_decoded_and_checked_by_both_engines(
    kafka, registry, tmp_path
):
    """The writer's named types live in another subject (a Confluent schema reference): both
    engines decode with the schema made self-contained, and count alike."""
    import requests
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap, url = _bootstrap(kafka), _url(registry)
    name = f"refs-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: its futures need it alive
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(30)
    requests.post(f"{url}/subjects/{name}-address/versions",
                  json={"schema": json.dumps(ADDRESS)}, timeout=30).raise_for_status()  # fmt: skip
    answer = requests.post(
        f"{url}/subjects/{name}-value/versions",
        json={"schema": json.dumps(ORDER), "references": [
            {"name": "shop.Address", "subject": f"{name}-address", "version": 1}]},
        timeout=30,
    )  # fmt: skip
    answer.raise_for_status()
    order_id = answer.json()["id"]
    oslo, lisbon = {"city": "Oslo", "zip": "0150"}, {"city": "", "zip": "12"}
    records = [
        {"id": 1, "ship": None, "bill": oslo},  # passes all
        {"id": 2, "ship": oslo, "bill": lisbon},  # bill-city, ship-or-bill, zip-long fail
        {"id": 3, "ship": lisbon, "bill": oslo},  # ship-or-bill and zip-long (ship.zip) fail
    ]
    producer = Producer({"bootstrap.servers": bootstrap})
    for r in records:
        producer.produce(name, value=_frame(order_id, ORDER_INLINE, r))
    assert producer.flush(30) == 0
    contract = tmp_path / "c.json"
    contract.write_text(json.dumps({"ruleSet": REFERENCE_RULES}))
    docs = {}
    for engine in ("jvm", "python"):
        done = cli("topics", "check", name, "-b", bootstrap, "-r", url, "--engine", engine,
                   "-o", "json", "--contract", str(contract))  # fmt: skip
        assert done.returncode == 1, done.stderr
        docs[engine] = json.loads(done.stdout)
    for engine, doc in docs.items():
        assert doc["totals"]["checked"] == 3 and doc["totals"]["undecodable"] == 0, engine
        counts = [(r["name"], r["pass"], r["fail"], r["error"]) for r in doc["summary"]]
        assert counts == [("bill-city", 2, 1, 0), ("ship-or-bill", 1, 2, 0),
                          ("zip-long", 1, 2, 0)], (engine, counts)  # fmt: skip
