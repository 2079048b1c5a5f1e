"""The census's pure parts: a record's kind from its header, runs tallied into spans (checked
against a record-by-record count on generated partitions), the document, retention's age-out,
--since/--until, the delete guard's words and the renderers over a document."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from converters.census import guard, scan
from converters.census.model import (
    NULL,
    UNFRAMED,
    Mode,
    PartitionTally,
    Registered,
    Retention,
    classify,
    document,
    iso_ms,
)
from converters.census.take import parse_when
from schemacli.errors import InputError


class Msg:
    """What confluent-kafka's Message offers the census."""

    def __init__(self, partition, offset, key, value, ts=1_000, error=None) -> None:
        self._p, self._o, self._k, self._v, self._ts, self._e = (
            partition, offset, key, value, ts, error,
        )  # fmt: skip

    def partition(self):
        return self._p

    def offset(self):
        return self._o

    def key(self):
        return self._k

    def value(self):
        return self._v

    def timestamp(self):
        return (1, self._ts) if self._ts is not None else (0, -1)

    def error(self):
        return self._e


def framed(schema_id: int, body: bytes = b"x") -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


def eof(partition: int):
    from confluent_kafka import KafkaError

    return Msg(partition, -1001, None, None, error=KafkaError(KafkaError._PARTITION_EOF))


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (None, NULL),
        (b"", UNFRAMED),
        (b"\x00\x00\x00", UNFRAMED),  # too short for an id
        (b"\x01\x00\x00\x00\x07", UNFRAMED),  # another magic byte
        (b'{"id"', UNFRAMED),
        (framed(7)[:5], 7),
        (framed(2**32 - 1)[:5], 2**32 - 1),
    ],
)
def test_a_records_first_bytes_say_its_kind(head, kind):
    assert classify(head) == kind


def naive(records, side: int) -> dict:
    """kind -> [count, first offset, last offset] counted record by record."""
    out: dict = {}
    for offset, key, value in records:
        kind = classify(None if (key, value)[side] is None else (key, value)[side][:5])
        row = out.get(kind)
        if row is None:
            out[kind] = [1, offset, offset]
        else:
            row[0] += 1
            row[2] = offset
    return out


def spans(tally, side: str) -> dict:
    return {k: [s.count, s.first_offset, s.last_offset] for k, s in getattr(tally, side).items()}


@pytest.mark.parametrize("seed", range(12))
def test_runs_tallied_batch_by_batch_equal_a_record_by_record_count(seed):
    rng = random.Random(seed)
    choices = [None, b"", b"plain-key", b"{}", framed(1), framed(1, b"yy"), framed(2), framed(3)]
    n = rng.randint(1, 400)
    records, offset = [], 10
    for _ in range(n):
        offset += rng.choice((1, 1, 1, 2))  # gaps: commit markers, compacted records
        # long runs with switches, as real topics have
        key = rng.choice(choices) if rng.random() < 0.2 or not records else records[-1][1]
        value = rng.choice(choices) if rng.random() < 0.2 or not records else records[-1][2]
        records.append((offset, key, value))
    end = records[-1][0] + 1
    tally = PartitionTally(0, 0, end, records[0][0], end)
    reader = scan.PartitionReader(tally)
    msgs = [Msg(0, o, k, v, ts=o * 10) for o, k, v in records]
    done, i = False, 0
    while i < len(msgs):
        size = rng.randint(1, 50)
        done = reader.feed(msgs[i : i + size])
        i += size
    assert done
    reader.close(complete=True)
    assert tally.scanned == n
    assert spans(tally, "keys") == naive(records, 0)
    assert spans(tally, "values") == naive(records, 1)
    for span in tally.values.values():
        assert span.first_timestamp_ms == span.first_offset * 10
        assert span.last_timestamp_ms == span.last_offset * 10


def test_records_written_after_the_census_started_are_not_counted():
    tally = PartitionTally(0, 0, 3, 0, 3)
    reader = scan.PartitionReader(tally)
    batch = [Msg(0, o, None, framed(1)) for o in range(6)]
    assert reader.feed(batch) is True
    reader.close(complete=True)
    assert tally.scanned == 3 and tally.values[1].last_offset == 2


def test_the_end_of_a_partition_ends_its_read_before_its_end_offset():
    # a transactional topic ends in a commit marker: offset 3 is never delivered
    tally = PartitionTally(0, 0, 4, 0, 4)
    reader = scan.PartitionReader(tally)
    assert reader.feed([Msg(0, o, None, framed(1)) for o in range(3)] + [eof(0)]) is True
    assert reader.close(complete=True).scanned == 3


def test_a_record_without_a_timestamp_has_none():
    tally = PartitionTally(0, 0, 1, 0, 1)
    reader = scan.PartitionReader(tally)
    reader.feed([Msg(0, 0, None, framed(1), ts=None)])
    span = reader.close(complete=True).values[1]
    assert span.first_timestamp_ms is None and span.last_timestamp_ms is None


def test_a_batch_is_cut_where_its_partition_changes():
    batch = [Msg(p, o, None, None) for p, o in ((0, 1), (0, 2), (1, 7), (0, 3), (0, 4))]
    chunks = scan._chunks(batch)
    assert [(p, [m.offset() for m in c]) for p, c in chunks] == [
        (0, [1, 2]), (1, [7]), (0, [3, 4]),
    ]  # fmt: skip


def test_partitions_are_shared_so_the_biggest_spread_over_the_workers():
    tallies = [PartitionTally(p, 0, size, 0, size) for p, size in enumerate([100, 90, 10, 5, 0])]
    shares = scan.share(tallies, 2)
    loads = sorted(sum(t.end - t.start for t in s) for s in shares)
    assert loads == [95, 110] or loads == [100, 105]


@pytest.mark.parametrize(
    ("settings", "out"),
    [
        (Retention(retention_ms=1000, cleanup_policy="delete"), 6000),
        (Retention(retention_ms=1000, cleanup_policy="compact,delete"), 6000),
        (Retention(retention_ms=-1, cleanup_policy="delete"), None),  # kept forever
        (Retention(retention_ms=1000, cleanup_policy="compact"), None),  # only compaction
        (Retention(), None),  # the broker did not say
    ],
)
def test_when_a_record_ages_out_follows_the_topics_retention(settings, out):
    assert settings.ages_out(5000) == out
    assert settings.ages_out(None) is None


def tally_with(partition: int, values: dict) -> PartitionTally:
    t = PartitionTally(partition, 0, 100, 0, 100)
    from converters.census.model import Span

    for kind, (count, first, last) in values.items():
        span = Span()
        span.add(count, (first, first * 1000), (last, last * 1000))
        t.values[kind] = span
        t.scanned += count
    return t


TEN_SECONDS = Retention(retention_ms=10_000, cleanup_policy="delete")


def doc_of(parts, names=None, retention=TEN_SECONDS):
    return document(
        topic="orders",
        bootstrap="b:9092",
        scanned_at_ms=1_795_000_000_123,
        duration_s=0.5,
        mode=Mode(sample=10),
        retention=retention,
        partitions=parts,
        names=names or {},
        resolved_by={"source": "registry", "where": "http://r"},
    )


def test_the_document_names_ids_by_the_topics_own_subject_and_puts_unknown_ids_last():
    parts = [
        tally_with(1, {7: (2, 3, 4), 99: (1, 5, 5)}),
        tally_with(0, {7: (3, 0, 2), NULL: (1, 9, 9)}),
    ]
    names = {7: [Registered("other", 1), Registered("orders-value", 2)]}
    doc = doc_of(parts, names)
    assert doc["scanned_at"] == "2026-11-18T11:06:40.123Z" == iso_ms(1_795_000_000_123)
    assert doc["mode"] == {"whole": False, "sample": 10, "since_ms": None, "until_ms": None}
    values = doc["values"]
    first, unknown = values["versions"]
    assert (first["subject"], first["version"], first["also"]) == (
        "orders-value", 2, [{"subject": "other", "version": 1}],
    )  # fmt: skip
    assert [r["partition"] for r in first["partitions"]] == [0, 1]
    assert first["count"] == 5 and first["first_timestamp_ms"] == 0
    assert first["last_timestamp_ms"] == 4000
    assert first["oldest_ages_out_at_ms"] == 10_000 and first["all_aged_out_at_ms"] == 14_000
    assert unknown["id"] == 99 and not unknown["known"] and unknown["subject"] is None
    assert values["unknown_ids"] == {"count": 1, "ids": [99]}
    assert values["null"]["count"] == 1
    assert values["framed"] + values["unframed"]["count"] + values["null"]["count"] == 7
    assert doc["totals"]["messages"] == 7


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("2026-11-01", 1_793_491_200_000),
        ("2026-11-01T10:00:00Z", 1_793_527_200_000),
        ("2026-11-01T11:00:00+01:00", 1_793_527_200_000),
        ("90s", int((NOW - 90) * 1000)),
        ("7d", int((NOW - 7 * 86_400) * 1000)),
        ("2w", int((NOW - 14 * 86_400) * 1000)),
    ],
)
def test_since_and_until_take_iso_dates_and_ages(text, ms):
    assert parse_when(text, now=NOW) == ms


@pytest.mark.parametrize("text", ["yesterday", "", "7", "7y", "-5d", "1" * 50 + "d", "2026-13-01",
                                  "x" * 5000, "\u0667d", "\uff17d"])  # fmt: skip
def test_a_when_that_is_neither_a_date_nor_an_age_is_refused(text):
    assert parse_when(text, now=NOW) is None


def test_the_guard_finds_a_schema_ids_records_on_both_sides_and_words_them():
    parts = [tally_with(0, {7: (3, 0, 2)})]
    parts[0].keys[7] = parts[0].values[7]
    doc = doc_of(parts)
    found = guard.holdings(doc, 7)
    assert [h.side for h in found] == ["keys", "values"]
    words = found[1].text(doc["retention"])
    assert words.startswith("3 value(s) in partition 0 offsets 0..2 (3); ages out from ")
    assert "all of it by 1970-01-01 00:00:12 UTC" in words
    assert guard.holdings(doc, 8) == []
    kept = doc_of(parts, retention=Retention(retention_ms=-1, cleanup_policy="delete"))
    words = guard.holdings(kept, 7)[0].text(kept["retention"])
    assert "kept until deleted (retention.ms=-1)" in words


@pytest.mark.parametrize(
    ("subject", "topic"),
    [("orders-value", "orders"), ("orders-key", "orders"), ("a-key-value", "a-key"),
     ("orders", None), ("-value", None), ("com.acme.Ride", None)],
)  # fmt: skip
def test_a_subjects_topic_by_topic_name_strategy(subject, topic):
    assert guard.topic_of(subject) == topic


@pytest.mark.parametrize("fmt", ["json", "junit", "github", "sarif", "gitlab"])
def test_a_census_renders_as_a_valid_document_in_every_ci_format(fmt):
    from schemacli.output import render
    from schemacli.output.census import report
    from tests.output_documents import parse

    parts = [tally_with(0, {7: (3, 0, 2), 99: (1, 3, 3), UNFRAMED: (2, 4, 5)})]
    doc = doc_of(parts, {7: [Registered("orders-value", 1)]})
    out = render(report(doc), fmt)
    parse(fmt, out)
    assert "CENSUS_UNKNOWN_ID" in out and "CENSUS_UNFRAMED" in out


def test_the_text_census_shows_versions_ranges_and_age_out():
    from schemacli.output.census import text

    parts = [tally_with(0, {7: (3, 0, 2), NULL: (1, 3, 3)})]
    out = text(doc_of(parts, {7: [Registered("orders-value", 1)]}))
    assert "orders-value v1 (id 7)" in out and "p0 offsets 0-2" in out
    assert "tombstones (null value): p0 offsets 3-3" in out
    assert "cleanup.policy=delete, retention 10s" in out
    assert "first 10 per partition" in out


def test_progress_draws_nothing_when_stderr_is_not_a_terminal(capsys):
    from schemacli.output.terminal import Progress

    with Progress("census") as progress:
        progress(5, 10)
        progress(10, 10)
    assert capsys.readouterr().err == ""


def test_progress_draws_a_bar_with_the_count_on_a_terminal(monkeypatch):
    import io
    import sys

    from schemacli.output.terminal import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    with Progress("census of orders") as progress:
        progress(500, 1000)
        progress(1000, 1000)
    assert "census of orders" in screen.getvalue() and "1000/1000" in screen.getvalue()


# -- the store's registry snapshots, read by the one bounded JSON reader -------------------------


def _snapshot(store: Path, subject: str, content: str) -> Path:
    path = store / "subjects" / subject / "registry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def test_the_stores_snapshots_name_each_id(tmp_path):
    from converters.census.names import from_store

    _snapshot(tmp_path, "a-value", json.dumps({"subject": "a-value", "versions": [
        {"store_version": 1, "registry_version": 3, "id": 41}]}))  # fmt: skip
    assert [(r.subject, r.version) for r in from_store(tmp_path)[41]] == [("a-value", 3)]


@pytest.mark.parametrize(
    "content",
    [
        '{"subject": "a", "versions": [{"id": "ghp_PLANTED", "registry_version": 1}]}',
        '{"subject": "a", "versions": [{"id": true, "registry_version": 1}]}',
        '{"subject": "a", "versions": ["ghp_PLANTED"]}',
        "[" * 5000 + "]" * 5000,
        '{"subject": "a", "versions": [{"id": ' + "7" * 5000 + ', "registry_version": 1}]}',
        "ghp_PLANTED",
    ],
)
def test_a_snapshot_that_is_not_one_is_an_input_error_that_quotes_nothing(tmp_path, content):
    from converters.census.names import from_store

    _snapshot(tmp_path, "a-value", content)
    with pytest.raises(InputError) as caught:
        from_store(tmp_path)
    assert "ghp" not in f"{caught.value.message} {caught.value.hint}"
    assert "registry.json" in str(caught.value.location)


def test_a_snapshot_linked_out_of_the_store_is_refused(tmp_path):
    from converters.census.names import from_store

    secret = tmp_path / "secret.json"
    secret.write_text('{"subject": "x", "versions": []}')
    store = tmp_path / "store"
    (store / "subjects/a-value").mkdir(parents=True)
    (store / "subjects/a-value/registry.json").symlink_to(secret)
    with pytest.raises(InputError, match="leads outside the store"):
        from_store(store)
