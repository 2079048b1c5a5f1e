"""`topics census` and the `subjects delete --version` guard on the real broker and registry.

A topic of three partitions is written with confluent-kafka's AvroSerializer: three value
versions and a key version registered by it, plus unframed values, string keys, null keys,
tombstones and a value framed with an id no registry holds. Every record's partition, offset and
timestamp come from the producer's delivery reports; the census must say exactly that.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.test_spark_reader import _bootstrap, _url

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
UNKNOWN_ID = 987_654_321


def ride(*extra: dict) -> str:
    return json.dumps({
        "type": "record", "name": "Ride", "namespace": "com.acme.census",
        "fields": [{"name": "id", "type": "long"}, *extra],
    })  # fmt: skip


V1 = ride()
V2 = ride({"name": "city", "type": "string", "default": ""})
V3 = ride({"name": "city", "type": "string", "default": ""},
          {"name": "fare", "type": "double", "default": 0.0})  # fmt: skip
UNUSED = ride({"name": "city", "type": "string", "default": ""},
              {"name": "fare", "type": "double", "default": 0.0},
              {"name": "tip", "type": "double", "default": 0.0})  # fmt: skip
KEY = json.dumps({"type": "record", "name": "RideKey", "namespace": "com.acme.census",
                  "fields": [{"name": "ride", "type": "long"}]})  # fmt: skip


@dataclass
class Produced:
    topic: str
    ids: dict[str, int]  # "v1", "v2", "v3", "key" -> schema id
    versions: dict[str, int]  # the same -> registry version
    delivered: list[tuple[int, int, int, bytes | None, bytes | None]]  # p, offset, ts, key, value


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "schemacli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def produced(kafka, registry) -> Produced:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    bootstrap = _bootstrap(kafka)
    topic = f"census-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 3, 1)]).values():
        future.result(30)
    client = SchemaRegistryClient({"url": _url(registry)})
    values = SerializationContext(topic, MessageField.VALUE)
    keys = SerializationContext(topic, MessageField.KEY)
    v1, v2, v3 = (AvroSerializer(client, s) for s in (V1, V2, V3))
    key = AvroSerializer(client, KEY)
    # one more version nothing is written with: deleting it needs no --force
    client.register_schema(
        f"{topic}-value",
        __import__("confluent_kafka.schema_registry", fromlist=["Schema"]).Schema(UNUSED, "AVRO"),
    )

    def k(n: int) -> bytes:
        return key({"ride": n}, keys)

    plan: list[tuple[int, bytes | None, bytes | None]] = [
        # partition 0: v1 x3 (Avro keys), a value with an unknown id, v2 x2 (string keys)
        *[(0, k(i), v1({"id": i}, values)) for i in range(3)],
        (0, k(3), b"\x00" + UNKNOWN_ID.to_bytes(4, "big") + b"\x02"),
        *[(0, b"ride-%d" % i, v2({"id": i, "city": "Oslo"}, values)) for i in (4, 5)],
        # partition 1: v2 x4 (null keys), unframed values x2 (JSON), v1 x1 after them
        *[(1, None, v2({"id": i, "city": "Bergen"}, values)) for i in range(10, 14)],
        (1, k(14), b'{"id": 14}'),
        (1, k(15), b""),  # empty bytes: unframed too
        (1, k(16), v1({"id": 16}, values)),
        # partition 2: v3 x3, tombstones x2 (Avro keys), v3 x1
        *[(2, k(i), v3({"id": i, "city": "Rome", "fare": 9.5}, values)) for i in range(20, 23)],
        (2, k(20), None),
        (2, k(21), None),
        (2, k(23), v3({"id": 23, "city": "Rome", "fare": 1.0}, values)),
    ]
    delivered: list[tuple[int, int, int, bytes | None, bytes | None]] = []

    def report(err, msg) -> None:
        assert err is None, err
        delivered.append((msg.partition(), msg.offset(), msg.timestamp()[1], msg.key(),
                          msg.value()))  # fmt: skip

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for partition, k_bytes, v_bytes in plan:
        producer.produce(topic, key=k_bytes, value=v_bytes, partition=partition,
                         on_delivery=report)  # fmt: skip
    assert producer.flush(30) == 0
    assert len(delivered) == len(plan)

    def header_id(data: bytes) -> int:
        return int.from_bytes(data[1:5], "big")

    ids = {"v1": header_id(plan[0][2]), "v2": header_id(plan[4][2]),  # type: ignore[index]
           "v3": header_id(plan[13][2]), "key": header_id(plan[0][1])}  # type: ignore[index]  # fmt: skip
    versions = {}
    for name, subject in (("v1", "value"), ("v2", "value"), ("v3", "value"), ("key", "key")):
        refs = [r for r in client.get_schema_versions(ids[name])
                if r.subject == f"{topic}-{subject}"]  # fmt: skip
        versions[name] = refs[0].version
    assert len(set(ids.values())) == 4
    return Produced(topic, ids, versions, sorted(delivered))


def expected_side(delivered, side: int) -> dict:
    """kind -> partition -> [count, first offset, last offset, first ts, last ts], computed from
    the delivery reports (side 3: keys, 4: values)."""
    out: dict = defaultdict(dict)
    for record in delivered:
        p, offset, ts = record[0], record[1], record[2]
        data = record[side]
        if data is None:
            kind = "null"
        elif len(data) >= 5 and data[0] == 0:
            kind = int.from_bytes(data[1:5], "big")
        else:
            kind = "unframed"
        row = out[kind].get(p)
        if row is None:
            out[kind][p] = [1, offset, offset, ts, ts]
        else:
            row[0] += 1
            row[2], row[4] = offset, ts
    return out


def ranges_of(doc_ranges) -> dict:
    return {r["partition"]: [r["count"], r["first_offset"], r["last_offset"],
                             r["first_timestamp_ms"], r["last_timestamp_ms"]]
            for r in doc_ranges}  # fmt: skip


def census(produced, kafka, *args: str) -> dict:
    done = cli("topics", "census", produced.topic, "-b", _bootstrap(kafka), "-o", "json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_census_is_exact(doc: dict, delivered) -> None:
    assert doc["totals"]["messages"] == len(delivered)
    for side, index in (("keys", 3), ("values", 4)):
        want = expected_side(delivered, index)
        s = doc[side]
        got = {v["id"]: ranges_of(v["partitions"]) for v in s["versions"]}
        got_nonid = {name: ranges_of(s[name]["partitions"]) for name in ("unframed", "null")}
        assert got == {k: v for k, v in want.items() if isinstance(k, int)}, side
        assert got_nonid == {n: want.get(n, {}) for n in ("unframed", "null")}, side
        assert s["framed"] + s["unframed"]["count"] + s["null"]["count"] == len(delivered)


def test_census_counts_every_version_of_keys_and_values_exactly(produced, kafka, registry):
    doc = census(produced, kafka, "--registry", _url(registry))
    assert_census_is_exact(doc, produced.delivered)
    topic = produced.topic
    named = {v["id"]: (v["subject"], v["version"]) for side in ("keys", "values")
             for v in doc[side]["versions"]}  # fmt: skip
    assert named == {
        produced.ids["v1"]: (f"{topic}-value", produced.versions["v1"]),
        produced.ids["v2"]: (f"{topic}-value", produced.versions["v2"]),
        produced.ids["v3"]: (f"{topic}-value", produced.versions["v3"]),
        produced.ids["key"]: (f"{topic}-key", produced.versions["key"]),
        UNKNOWN_ID: (None, None),
    }
    assert doc["values"]["unknown_ids"] == {"count": 1, "ids": [UNKNOWN_ID]}
    assert doc["values"]["null"]["count"] == 2  # the tombstones
    assert doc["keys"]["null"]["count"] == 4
    assert doc["keys"]["unframed"]["count"] == 2
    assert doc["values"]["unframed"]["count"] == 2
    assert doc["resolved_by"]["source"] == "registry"
    assert [p["scanned"] for p in doc["partitions"]] == [6, 7, 6]
    retention = doc["retention"]
    assert retention["cleanup_policy"] == "delete" and retention["retention_ms"] > 0
    v1 = next(v for v in doc["values"]["versions"] if v["id"] == produced.ids["v1"])
    assert v1["oldest_ages_out_at_ms"] == v1["first_timestamp_ms"] + retention["retention_ms"]
    assert v1["all_aged_out_at_ms"] == v1["last_timestamp_ms"] + retention["retention_ms"]
    # the versions sort by subject and version, the unknown id last
    assert [v["id"] for v in doc["values"]["versions"]][-1] == UNKNOWN_ID


def test_census_in_worker_processes_equals_the_one_process_census(produced, kafka, registry):
    from converters.census import scan

    # the Python road (auto takes the JVM where it can run)
    one = census(produced, kafka, "--jobs", "1", "--engine", "python")
    # force the worker processes on a small topic
    original = scan.PARALLEL_MIN
    scan.PARALLEL_MIN = 0
    try:
        from converters.census.model import Mode
        from converters.census.take import take_census

        many = take_census(_bootstrap(kafka), produced.topic, mode=Mode(), client=None,
                           store=None, jobs=3, engine="python")  # fmt: skip
    finally:
        scan.PARALLEL_MIN = original
    for doc in (one, many):
        assert_census_is_exact(doc, produced.delivered)
    assert one["values"] == many["values"] and one["keys"] == many["keys"]


def test_census_names_ids_from_the_pulled_store_without_a_registry(
    produced, kafka, registry, tmp_path
):
    pulled = cli("pull", "--registry", _url(registry), "--store", str(tmp_path / "schemas"),
                 f"{produced.topic}-value", f"{produced.topic}-key", cwd=tmp_path)  # fmt: skip
    assert pulled.returncode == 0, pulled.stderr
    doc = census(produced, kafka, "--store", str(tmp_path / "schemas"))
    assert doc["resolved_by"] == {"source": "store", "where": str(tmp_path / "schemas")}
    named = {v["id"]: (v["subject"], v["version"]) for v in doc["values"]["versions"]}
    assert named[produced.ids["v2"]] == (f"{produced.topic}-value", produced.versions["v2"])
    assert named[UNKNOWN_ID] == (None, None)


def test_census_sample_reads_the_first_n_of_each_partition(produced, kafka):
    doc = census(produced, kafka, "--sample", "2")

    def rank(d) -> int:  # how many records of its partition come before it
        return sum(1 for e in produced.delivered if e[0] == d[0] and e[1] < d[1])

    first_two = [d for d in produced.delivered if rank(d) < 2]
    assert_census_is_exact(doc, first_two)
    assert doc["mode"] == {"whole": False, "sample": 2, "since_ms": None, "until_ms": None}
    assert [(p["start"], p["end"]) for p in doc["partitions"]] == [(0, 2)] * 3


def test_census_since_a_time_after_every_record_reads_nothing(produced, kafka):
    doc = census(produced, kafka, "--since", "2999-01-01")
    assert doc["totals"]["messages"] == 0
    assert all(p["start"] == p["end"] == p["high"] for p in doc["partitions"])
    old = census(produced, kafka, "--since", "2000-01-01", "--until", "2999-01-01")
    assert_census_is_exact(old, produced.delivered)


@pytest.mark.parametrize("fmt", ["text", "junit", "github", "sarif", "gitlab"])
def test_census_renders_every_format_as_a_valid_document(produced, kafka, registry, fmt):
    from tests.output_documents import parse

    done = cli("topics", "census", produced.topic, "-b", _bootstrap(kafka), "--registry",
               _url(registry), "-o", fmt)  # fmt: skip
    assert done.returncode == 0, done.stderr
    if fmt == "text":
        assert f"{produced.topic}-value v{produced.versions['v1']}" in done.stdout
        assert "tombstones (null value)" in done.stdout
        assert f"id {UNKNOWN_ID} (unknown)" in done.stdout
        return
    parse(fmt, done.stdout)
    assert "CENSUS_UNKNOWN_ID" in done.stdout and "CENSUS_UNFRAMED" in done.stdout


def test_census_of_a_missing_topic_is_an_input_error(kafka):
    done = cli("topics", "census", f"missing-{uuid.uuid4().hex[:6]}", "-b", _bootstrap(kafka))
    assert done.returncode == 2
    assert "not found" in done.stderr and "Traceback" not in done.stderr


def versions_of(registry, subject: str) -> list[int]:
    done = cli("subjects", "show", subject, "--registry", _url(registry), "-o", "json")
    assert done.returncode == 0, done.stderr
    return [v["version"] for v in json.loads(done.stdout)["versions"]]


def test_delete_refuses_a_version_still_in_the_data_and_force_deletes_it(produced, kafka, registry):
    subject = f"{produced.topic}-value"
    before = versions_of(registry, subject)
    v1 = produced.versions["v1"]
    refused = cli("subjects", "delete", subject, "--version", str(v1), "--yes",
                  "--registry", _url(registry), "-b", _bootstrap(kafka))  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    # names the partitions, the offsets and when the data ages out
    v1_id = produced.ids["v1"].to_bytes(4, "big")
    v1_rows = [d for d in produced.delivered if d[4] and d[4][1:5] == v1_id]
    assert "partition 0 offsets 0..2 (3)" in refused.stderr
    last_p1 = max(d[1] for d in v1_rows if d[0] == 1)
    assert f"partition 1 offsets {last_p1}..{last_p1} (1)" in refused.stderr
    assert "ages out from" in refused.stderr and "Nothing was deleted" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert versions_of(registry, subject) == before  # nothing deleted

    # a version nothing was written with: deleted without --force
    written = {produced.versions[v] for v in ("v1", "v2", "v3")}
    (unused,) = [v for v in before if v not in written]
    ok = cli("subjects", "delete", subject, "--version", str(unused), "--yes",
             "--registry", _url(registry), "-b", _bootstrap(kafka), "-o", "json")  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["census"]["records"] == 0

    forced = cli("subjects", "delete", subject, "--version", str(v1), "--yes", "--force",
                 "--registry", _url(registry), "-b", _bootstrap(kafka), "-o", "json")  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    answer = json.loads(forced.stdout)
    assert answer["deleted_versions"] == [v1]
    assert answer["census"]["records"] == 4 and answer["census"]["forced"] is True
    assert "with --force" in forced.stderr
    assert v1 not in versions_of(registry, subject)


def test_delete_with_topic_checks_that_topics_keys(produced, kafka, registry):
    # a subject with another naming: --topic says whose data to look at; the key version is
    # in the topic's keys
    refused = cli("subjects", "delete", f"{produced.topic}-key", "--version",
                  str(produced.versions["key"]), "--yes", "--registry", _url(registry),
                  "-b", _bootstrap(kafka), "--topic", produced.topic)  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    assert "key(s) in partition 0 offsets 0..3 (4)" in refused.stderr


def test_finishs_v1_data_left_is_the_census_of_the_v1_topics_values(produced, kafka):
    from converters.ops.finish import FinalReport, v1_data_left

    left = v1_data_left(_bootstrap(kafka), produced.topic)
    want = expected_side(produced.delivered, 4)
    assert left["records"] == len(produced.delivered) and left["complete"]
    assert {v["id"]: v["count"] for v in left["versions"]} == {
        k: sum(r[0] for r in parts.values()) for k, parts in want.items() if isinstance(k, int)
    }
    assert (left["unframed"], left["tombstones"]) == (2, 2)
    assert left["all_aged_out_at_ms"] == max(v["all_aged_out_at_ms"] for v in left["versions"])
    report = FinalReport("v2", produced.topic, None, None, 0.0, {}, {}, [], v1_data=left)
    text = report.text()
    assert f"v1 data left in {produced.topic}: {len(produced.delivered)} record(s)" in text
    assert f"writer id {UNKNOWN_ID}: 1 record(s)" in text
    assert "v1's data is all aged out by" in text
