"""The census's JVM road without a broker: the committed jar is the one its sources build, the
plan and the properties handed to the JVM, and every way the JVM can fail (a crash, an exit
status, an unreadable or partial answer) is a typed error, never a half census."""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from converters import jvmbuild
from converters.census import jvmscan
from converters.census.model import NULL, UNFRAMED, PartitionTally, Span
from schemacli.errors import InputError, NetworkError


def test_the_committed_census_jar_was_built_from_the_sources_in_the_tree():
    assert jvmbuild.jar_digest(jvmscan.JAR) == jvmbuild.source_digest(jvmscan.SOURCES), (
        "run scripts/build-jvm and commit the jar"
    )


def test_the_census_jar_holds_the_scan_for_java_17():
    with zipfile.ZipFile(jvmscan.JAR) as z:
        head = z.read(jvmscan.MAIN_CLASS.replace(".", "/") + ".class")[:8]
    assert head[:4] == b"\xca\xfe\xba\xbe" and int.from_bytes(head[6:8], "big") == 61


def tallies() -> list[PartitionTally]:
    return [PartitionTally(0, 0, 10, 0, 10), PartitionTally(1, 5, 5, 5, 5)]


def fake_java(tmp_path: Path, body: str) -> jvmscan.Runtime:
    """A 'java' that ignores its arguments and does ``body`` (a shell script)."""
    script = tmp_path / "java"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return jvmscan.Runtime(str(script), ())


def read(run: jvmscan.Runtime, properties=None) -> list[PartitionTally]:
    steps: list[int] = []
    out = jvmscan.read_partitions("broker:9092", "orders", tallies(), properties=properties,
                                  threads=2, deadline=2e9, step=steps.append, run=run)  # fmt: skip
    assert all(n > 0 for n in steps)
    return out


ANSWER = {
    "partitions": [
        {
            "partition": 0,
            "scanned": 10,
            "complete": True,
            "keys": [["null", 10, 0, 1000, 9, None]],
            "values": [[7, 6, 0, 1000, 8, 1008], ["unframed", 3, 1, None, 5, 1005],
                       ["null", 1, 9, 1009, 9, 1009]],
        },
        {"partition": 1, "scanned": 0, "complete": True, "keys": [], "values": []},
    ]
}  # fmt: skip


def test_the_jvms_answer_becomes_the_same_tallies_as_the_python_road(tmp_path):
    body = f"echo 'progress 4' >&2\necho 'progress 6' >&2\necho '{json.dumps(ANSWER)}'\n"
    got = read(fake_java(tmp_path, body))
    assert [t.partition for t in got] == [0, 1]
    assert got[0].scanned == 10 and got[0].complete
    assert got[0].keys == {NULL: Span(10, 0, 9, 1000, None)}
    assert got[0].values == {7: Span(6, 0, 8, 1000, 1008), UNFRAMED: Span(3, 1, 5, None, 1005),
                             NULL: Span(1, 9, 9, 1009, 1009)}  # fmt: skip
    assert got[1].scanned == 0 and got[1].keys == {}


def test_the_plan_names_the_topic_deadline_threads_and_every_range(tmp_path):
    text = jvmscan._plan_text("orders", tallies(), 2, 1234.5)
    assert text.splitlines() == ["topic\torders", "deadline_ms\t1234500", "threads\t2",
                                 "partition\t0\t0\t10", "partition\t1\t5\t5"]  # fmt: skip


def test_the_properties_file_escapes_values_and_the_bootstrap_wins():
    text = jvmscan.properties_text(
        "b:9092", {"bootstrap.servers": "x", "sasl.jaas.config": 'a b="c=d";\n', "é": "ü"}
    )
    lines = text.splitlines()
    assert "bootstrap.servers=b\\:9092" in lines
    assert 'sasl.jaas.config=a\\ b\\="c\\=d";\\u000a' in lines
    assert "é=ü" in lines  # the file is UTF-8
    assert "max.poll.records=100000" in lines


def test_the_properties_reach_the_jvm_in_a_file_only_its_owner_reads(tmp_path):
    # the fake java copies its last argument's mode and content where the test can see them
    seen = tmp_path / "seen"
    body = (f'for a; do last=$a; done\nstat -c %a "$last" > {seen}.mode\ncp "$last" {seen}\n'
            f"echo '{json.dumps(ANSWER)}'\n")  # fmt: skip
    read(fake_java(tmp_path, body), {"sasl.password": "s3cret"})
    assert Path(f"{seen}.mode").read_text().strip() == "600"
    assert "sasl.password=s3cret" in seen.read_text()


@pytest.mark.parametrize(
    ("body", "error", "words"),
    [
        ("echo 'error TimeoutException: no broker' >&2\nexit 3\n", NetworkError,
         "cannot read from Kafka at broker:9092 (JVM engine): TimeoutException: no broker"),
        ("echo 'error ConfigException: bad value x' >&2\nexit 2\n", InputError,
         "refused its Kafka settings: ConfigException: bad value x"),
        ("echo 'Exception in thread main java.lang.OutOfMemoryError' >&2\nexit 1\n",
         NetworkError, "exit status 1: Exception in thread main java.lang.OutOfMemoryError"),
        ("kill -9 $$\n", NetworkError, "exit status -9"),
        ("echo 'not json'\n", NetworkError, "unreadable answer"),
        ("echo '{\"partitions\": []}'\n", NetworkError, "no answer for partitions [0, 1]"),
        ("echo '{\"partitions\": [{\"partition\": 0}]}'\n", NetworkError, "unreadable answer"),
        ("echo '{\"partitions\": [{\"partition\": 9, \"scanned\": 1, \"complete\": true, "
         "\"keys\": [], \"values\": []}]}'\n", NetworkError, "unreadable answer"),
        ("echo '" + json.dumps({"partitions": [
            {**ANSWER["partitions"][0], "values": [["v2", 1, 0, 0, 0, 0]]},
            ANSWER["partitions"][1]]}) + "'\n", NetworkError, "unreadable answer"),
        ("echo '" + json.dumps({"partitions": [ANSWER["partitions"][0]] * 2}) + "'\n",
         NetworkError, "partition 0 twice"),
    ],
)  # fmt: skip
def test_every_failure_of_the_jvm_is_a_typed_error_and_no_census(tmp_path, body, error, words):
    with pytest.raises(error) as caught:
        read(fake_java(tmp_path, body))
    assert type(caught.value) is error
    assert words in str(caught.value), str(caught.value)
    assert caught.value.hint


def test_the_temporary_plan_and_properties_are_removed_after_the_read(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(NetworkError):
        read(fake_java(tmp_path, "exit 3\n"))
    assert os.listdir(tmp_path / "tmp") == []
