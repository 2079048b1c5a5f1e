"""topics check's JVM road without a broker: the committed jar is the one its sources build, the
plan handed to the JVM, and every way the JVM can fail (an exit status, an unreadable or partial
answer) is a typed error, never a half check."""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest

from converters import jvmbuild
from converters.census import jvmscan as census_jvm
from converters.census.model import PartitionTally
from converters.quality import jvmscan
from schemacli.errors import InputError, NetworkError

RULES = {"domainRules": [{"name": "positive", "kind": "CONDITION", "type": "CEL",
                          "mode": "WRITE", "expr": "message.total >= 0.0"}]}  # fmt: skip


def test_the_committed_quality_jar_was_built_from_the_sources_in_the_tree():
    # its digest covers the census's sources too: the jar is compiled against Workers
    digest = jvmbuild.source_digest(jvmscan.SOURCES, jvmscan.NEEDS)
    assert jvmbuild.jar_digest(jvmscan.JAR) == digest, "run scripts/build-jvm and commit the jar"


def test_the_scan_runs_on_the_census_workers_and_ships_none_of_its_own():
    # one owner of the threads, the consumers, progress and exit status: the census's jar
    with zipfile.ZipFile(jvmscan.JAR) as z:
        names = z.namelist()
    assert not [n for n in names if n.startswith("dev/schemacli/census/")]
    with zipfile.ZipFile(census_jvm.JAR) as z:
        assert "dev/schemacli/census/Workers.class" in z.namelist()
    assert jvmscan.OUR_JARS == (jvmscan.JAR, census_jvm.JAR)
    assert jvmscan.NEEDS == (census_jvm.SOURCES,)


def test_the_runtime_puts_the_census_jar_after_the_quality_jar(tmp_path, monkeypatch):
    for name in ("cel-0.13.1.jar", "avro-1.12.0.jar", "kafka-clients-4.1.1.jar"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setenv(jvmscan.JARS_ENV, str(tmp_path))
    monkeypatch.setattr(census_jvm, "find_java", lambda: "/usr/bin/java")
    classpath = jvmscan.runtime().classpath
    assert classpath[:2] == (jvmscan.JAR, census_jvm.JAR)
    assert {p.name for p in classpath[2:]} == {
        "cel-0.13.1.jar",
        "avro-1.12.0.jar",
        "kafka-clients-4.1.1.jar",
    }


def test_a_missing_census_jar_makes_the_jvm_road_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(jvmscan, "OUR_JARS", (jvmscan.JAR, tmp_path / "schemacli-census.jar"))
    monkeypatch.setattr(census_jvm, "find_java", lambda: "/usr/bin/java")
    with pytest.raises(jvmscan.JvmUnavailable, match="schemacli-census.jar") as err:
        jvmscan.runtime()
    assert "missing from this installation" in str(err.value)
    assert jvmscan.available() is False


def test_the_quality_jar_holds_the_scan_and_the_runner_for_java_17():
    with zipfile.ZipFile(jvmscan.JAR) as z:
        for main in (jvmscan.SCAN_CLASS, jvmscan.RUN_CLASS):
            head = z.read(main.replace(".", "/") + ".class")[:8]
            assert head[:4] == b"\xca\xfe\xba\xbe" and int.from_bytes(head[6:8], "big") == 61


def test_the_pom_pins_the_cel_version_the_docs_name():
    pom = jvmscan.POM.read_text()
    assert f"<cel.version>{jvmscan.CEL_VERSION}</cel.version>" in pom
    docs = (Path(__file__).parents[2] / "docs" / "quality.md").read_text()
    assert f"dev.cel:cel` {jvmscan.CEL_VERSION}" in docs


def plan() -> dict:
    return jvmscan.plan_document(
        "orders",
        [PartitionTally(0, 0, 10, 0, 10), PartitionTally(1, 5, 5, 5, 5)],
        writers={7: '{"type": "record", "name": "O", "fields": []}'},
        rule_set=RULES,
        metadata=None,
        mode="WRITE",
        threads=2,
        deadline=1234.5,
        examples=3,
    )


def test_the_plan_names_every_partition_range_writer_and_rule():
    p = plan()
    assert p["partitions"] == [[0, 0, 10], [1, 5, 5]]
    assert p["deadline_ms"] == 1234500 and p["threads"] == 2
    assert list(p["writers"]) == ["7"] and p["ruleSet"] == RULES


def good_answer() -> dict:
    rule = {"pass": 8, "fail": 1, "error": 0, "skipped": 0, "failed_at": [[0, 4]],
            "errored_at": []}  # fmt: skip
    return {
        "partitions": [
            {"partition": 0, "scanned": 10, "complete": True},
            {"partition": 1, "scanned": 0, "complete": True},
        ],
        "null": 1,
        "unframed": 0,
        "unknown": {},
        "writers": {"7": {"records": 9, "undecodable": 0, "rules": [rule]}},
    }


def test_a_well_formed_answer_becomes_the_tallies():
    got = jvmscan.answer(plan(), json.dumps(good_answer()).encode())
    assert got["partitions"] == {0: (10, True), 1: (0, True)}
    assert got["writers"][7]["rules"][0]["failed_at"] == [(0, 4)]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda a: a["partitions"].pop(),  # a partition missing
        lambda a: a["partitions"].append(dict(a["partitions"][0])),  # one twice
        lambda a: a["writers"]["7"]["rules"].append(a["writers"]["7"]["rules"][0]),  # 2 rules
        lambda a: a["writers"]["7"].__setitem__("records", -1),
        lambda a: a["writers"]["7"]["rules"][0].__setitem__("fail", "1"),
        lambda a: a.pop("null"),
    ],
    ids=["partition-missing", "partition-twice", "rule-count", "negative", "text-count", "field"],
)
def test_an_unreadable_answer_is_a_network_error_never_a_half_check(spoil):
    bad = good_answer()
    spoil(bad)
    with pytest.raises(NetworkError, match="unreadable answer"):
        jvmscan.answer(plan(), json.dumps(bad).encode())


def test_no_runtime_jars_is_an_input_error_naming_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv(jvmscan.JARS_ENV, str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(jvmscan, "_CHECKOUT", tmp_path)
    with pytest.raises(InputError) as err:
        jvmscan.runtime()
    assert str(tmp_path) in str(err.value) and "--engine python" in (err.value.hint or "")


def fake_java(tmp_path: Path, body: str) -> jvmscan.Runtime:
    script = tmp_path / "java"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return jvmscan.Runtime(str(script), (jvmscan.JAR,))


@pytest.mark.parametrize(
    ("body", "error", "words"),
    [
        ("echo 'error ConfigException: bad sasl' >&2; exit 2", InputError, "bad sasl"),
        ("echo 'error TimeoutException: no broker' >&2; exit 3", NetworkError, "no broker"),
        ("exit 9", NetworkError, "exit status 9"),
        ("echo 'not json'", NetworkError, "unreadable answer"),
    ],
    ids=["refused-settings", "kafka-failed", "crash", "nonsense"],
)
def test_every_jvm_failure_is_a_typed_error(tmp_path, body, error, words):
    with pytest.raises(error, match=words):
        jvmscan.read_partitions("b:9092", plan(), properties={}, step=lambda n: None,
                                run=fake_java(tmp_path, body))  # fmt: skip
