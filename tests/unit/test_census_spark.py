"""The census's Spark road without Spark: its groups folded into the same spans as the Python
road's count of the same records (pieces of a partition in any order), the Kafka source's
options for the planned ranges, what a --master may be, and pyspark missing."""

from __future__ import annotations

import json
import random

import pytest

from converters.census import scan, sparkscan
from converters.census.model import HEADER, NULL, UNFRAMED, PartitionTally, Span, classify
from tests.unit.test_census import Msg, framed


def python_road(partition: int, records: list[tuple[int, bytes | None, bytes | None, int]]):
    """The Python road's tally of one partition's records ((offset, key, value, ts))."""
    end = records[-1][0] + 1
    tally = PartitionTally(partition, 0, end, records[0][0], end)
    reader = scan.PartitionReader(tally)
    reader.feed([Msg(partition, o, k, v, ts=ts) for o, k, v, ts in records])
    return reader.close(complete=True)


def head_of(data: bytes | None) -> bytes | None:
    """What kind_sql gives for ``data``, written in Python: the 4 id bytes of a header, b"" for
    other bytes, None for none."""
    if data is None:
        return None
    return data[1:HEADER] if len(data) >= HEADER and data[0] == 0 else b""


def spark_groups(partition: int, records, rng: random.Random) -> list[dict]:
    """The rows groups() would give for ``records``, cut into pieces first (a partition read
    by several tasks) and shuffled: (partition, key kind, value kind) per piece."""
    cuts = sorted(rng.sample(range(1, len(records)), min(3, len(records) - 1)))
    pieces = [records[a:b] for a, b in zip([0, *cuts], [*cuts, len(records)], strict=True)]
    rows = []
    for piece in pieces:
        by: dict = {}
        for offset, key, value, ts in piece:
            by.setdefault((head_of(key), head_of(value)), []).append((offset, ts))
        for (kk, vk), seen in by.items():
            rows.append({
                "partition": partition, "key_kind": kk, "value_kind": vk, "count": len(seen),
                "first_offset": seen[0][0], "first_ts": seen[0][1],
                "last_offset": seen[-1][0], "last_ts": seen[-1][1],
            })  # fmt: skip
    rng.shuffle(rows)
    return rows


def spans(tally: PartitionTally, side: str) -> dict:
    return {k: vars(s) for k, s in getattr(tally, side).items()}


@pytest.mark.parametrize("seed", range(12))
def test_spark_groups_fold_into_the_python_roads_spans(seed):
    rng = random.Random(seed)
    choices = [None, b"", b"k", b"\x00\x00\x07", framed(1), framed(1, b"yy"), framed(2**32 - 1)]
    records, offset = [], 5
    for _ in range(rng.randint(2, 300)):
        offset += rng.choice((1, 1, 2))  # gaps: commit markers
        key = rng.choice(choices) if rng.random() < 0.3 or not records else records[-1][1]
        value = rng.choice(choices) if rng.random() < 0.3 or not records else records[-1][2]
        records.append((offset, key, value, rng.choice((offset * 10, None))))
    want = python_road(3, records)
    got = PartitionTally(3, want.low, want.high, want.start, want.end)
    (folded,) = sparkscan.fold([got], spark_groups(3, records, rng))
    assert folded.scanned == want.scanned == len(records)
    assert spans(folded, "keys") == spans(want, "keys")
    assert spans(folded, "values") == spans(want, "values")


@pytest.mark.parametrize(
    "data", [None, b"", b"\x00", b"\x00\x00\x00\x07", b"\x01\x00\x00\x00\x07", framed(7), framed(0)]
)
def test_a_groups_kind_is_the_kind_classify_gives(data):
    assert sparkscan.kind_of(head_of(data)) == classify(None if data is None else data[:HEADER])


def test_kinds_of_the_groups_are_null_unframed_or_the_id():
    assert sparkscan.kind_of(None) == NULL
    assert sparkscan.kind_of(bytearray()) == UNFRAMED
    assert sparkscan.kind_of(bytearray(b"\x00\x00\x01\x00")) == 256


def test_spans_joined_in_any_order_keep_the_first_and_last_by_offset():
    whole = Span()
    for piece in (Span(2, 50, 60, 500, 600), Span(1, 10, 10, None, None), Span(3, 70, 90, 7, 9)):
        whole.join(piece)
    whole.join(Span())
    assert vars(whole) == vars(Span(6, 10, 90, None, 9))


def test_the_sources_options_read_the_planned_ranges_of_partitions_that_have_any():
    tallies = [PartitionTally(0, 0, 9, 2, 5), PartitionTally(1, 4, 4, 4, 4),
               PartitionTally(2, 0, 7, 0, 7)]  # fmt: skip
    options = sparkscan.source_options("b:9092", "orders", tallies, {"client.id": "mine"})
    assert json.loads(options["assign"]) == {"orders": [0, 2]}
    assert json.loads(options["startingOffsets"]) == {"orders": {"0": 2, "2": 0}}
    assert json.loads(options["endingOffsets"]) == {"orders": {"0": 5, "2": 7}}
    assert options["kafka.bootstrap.servers"] == "b:9092"
    assert options["kafka.client.id"] == "mine"  # the user's settings win
    assert options["kafka.isolation.level"] == "read_uncommitted"  # aborted records count too
    # none of the settings Spark's source keeps for itself (it would refuse them)
    assert not {f"kafka.{k}" for k in sparkscan.SOURCE_OWNS} & set(options)


@pytest.mark.parametrize(
    "master", ["local", "local[2]", "local[*]", "spark://h:7077", "spark://a:1,b:2", "yarn"]
)
def test_a_master_spark_takes_is_accepted(master):
    assert sparkscan.master_problem(master) is None


@pytest.mark.parametrize(
    ("master", "words"),
    [
        ("", "is not a Spark master"),
        ("local[two]", "is not a Spark master"),
        ("spark://", "is not a Spark master"),
        ("spark://host", "not HOST:PORT"),
        ("spark://host:70000", "not HOST:PORT"),
        ("spark://a:1,b", "not HOST:PORT"),
        ("http://master:7077", "is not a Spark master"),
    ],
)
def test_a_master_spark_cannot_take_is_named(master, words):
    assert words in (sparkscan.master_problem(master) or "")


def test_the_master_is_the_given_one_else_local_with_the_jobs_else_every_core():
    assert sparkscan.master_of("spark://h:1", 4) == "spark://h:1"
    assert sparkscan.master_of(None, 3) == "local[3]"
    assert sparkscan.master_of(None, None) == "local[*]"


def test_the_spark_engine_without_pyspark_is_an_input_error(monkeypatch):
    monkeypatch.setattr(sparkscan, "available", lambda: False)
    with pytest.raises(sparkscan.SparkUnavailable, match="needs pyspark") as caught:
        scan.engine_of("spark")
    assert caught.value.exit_code == 2
    assert scan.engine_of("auto") in ("jvm", "python")  # auto never takes Spark


def test_a_standalone_master_that_does_not_answer_is_a_network_error():
    from schemacli.errors import NetworkError

    with pytest.raises(NetworkError, match="spark://127.0.0.1:1 does not answer") as caught:
        sparkscan.probe("spark://127.0.0.1:1", 2.0)
    assert caught.value.exit_code == 3
    sparkscan.probe("local[2]", 2.0)  # a local master is not asked
