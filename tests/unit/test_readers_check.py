"""Judging a writer against declared readers: placement in both files, the cache, the level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.evolution.levels import Level, compared_versions, comparisons
from schemacli.contracts.evolution.verdicts import (
    VerdictCache,
    decode_finding,
    encodable,
    encode_finding,
)
from schemacli.contracts.findings import Finding, Kind, ReaderRef
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.contracts.readers.judge import LoadedReader, judge_readers, writer_pointer
from schemacli.errors import Location


def record(*fields: dict, name: str = "Order") -> dict:
    return {"type": "record", "name": name, "fields": list(fields)}


ID = {"name": "id", "type": "long"}
NOTE = {"name": "note", "type": "string"}


@pytest.mark.parametrize(
    ("reader", "writer", "pointer", "expected"),
    [
        # a field matched by name, wherever it sits in the writer
        (record(ID, NOTE), record(NOTE, ID), "/fields/0/type", "/fields/1/type"),
        # by the reader field's alias
        (
            record({"name": "ident", "type": "int", "aliases": ["id"]}),
            record(ID),
            "/fields/0/type",
            "/fields/0/type",
        ),
        # a field only the reader has: the writer's fields
        (record(ID, NOTE), record(ID), "/fields/1", "/fields"),
        # nested records, arrays and unions: same key or index
        (
            record({"name": "items", "type": {"type": "array", "items": record(ID, name="I")}}),
            record({"name": "items", "type": {"type": "array", "items": record(ID, name="I")}}),
            "/fields/0/type/items/fields/0/type",
            "/fields/0/type/items/fields/0/type",
        ),
        (
            record({"name": "u", "type": ["null", "int"]}),
            record({"name": "u", "type": ["null", "int", "string"]}),
            "/fields/0/type/1",
            "/fields/0/type/1",
        ),
        # a writer that is not a record at all: its root
        (record(ID), "string", "/fields/0", ""),
        ("long", "int", "", ""),
    ],
)
def test_the_writers_place_matches_the_readers(reader, writer, pointer, expected):
    assert writer_pointer(reader, writer, pointer) == expected


def declared(consumer: str = "billing", owner: str | None = "team-billing") -> DeclaredReader:
    return DeclaredReader(
        consumer,
        "orders-value",
        Path(f"readers/{consumer}/orders-value.avsc"),
        ("billing-1", "billing-2"),
        owner,
        "billing@example.com",
    )


def loaded(schema: dict, source: str):
    return load_schema_text(json.dumps(schema, indent=2), source)


def test_each_incompatibility_names_the_consumer_and_both_places():
    reader = LoadedReader(declared(), loaded(record(ID, NOTE), "readers/billing/orders-value.avsc"))
    writer = loaded(record(ID), "subjects/orders-value/v2.avsc")
    (finding,) = judge_readers(
        writer, [reader], subject="orders-value", writer_label="orders-value v2"
    )
    assert finding.kind is Kind.READER_FIELD_MISSING_DEFAULT_VALUE
    assert finding.location.source == "subjects/orders-value/v2.avsc"
    assert finding.location.pointer == "/fields"
    assert finding.reader is not None
    assert finding.reader.location.source == "readers/billing/orders-value.avsc"
    assert finding.reader.location.pointer == "/fields/1"
    assert finding.reader.location.line == 9
    assert "Consumer billing (owner team-billing; group(s) billing-1, billing-2)" in finding.message
    assert "readers/billing/orders-value.avsc:9:5" in finding.message
    assert "Tell billing@example.com" in (finding.hint or "")


def test_a_reader_that_reads_the_writer_gives_nothing():
    reader = LoadedReader(declared(), loaded(record(ID), "r.avsc"))
    writer = loaded(record(ID, NOTE), "w.avsc")
    assert judge_readers(writer, [reader], subject="s", writer_label="s v2") == ()


def test_a_consumer_without_owner_is_named_without_one():
    reader = LoadedReader(declared(owner=None), loaded(record(ID, NOTE), "r.avsc"))
    (finding,) = judge_readers(
        loaded(record(ID), "w.avsc"), [reader], subject="s", writer_label="s v2"
    )
    assert "Consumer billing (group(s) billing-1, billing-2)" in finding.message


def test_a_finding_with_its_reader_survives_the_cache_unchanged():
    finding = Finding(
        kind=Kind.TYPE_MISMATCH,
        message="m",
        location=Location("w.avsc", "/fields/0/type", 3, 5),
        reader=ReaderRef("billing", "o", None, ("g1", "g2"), Location("r.avsc", "/x", 7, 9)),
    )
    assert decode_finding(json.loads(json.dumps(encode_finding(finding)))) == finding
    assert encodable([finding]) is not None


def test_reader_pairs_are_cached_on_disk_and_read_back(tmp_path):
    reader = loaded(record(ID, NOTE), "r.avsc")
    writer = loaded(record(ID), "w.avsc")
    first = VerdictCache(tmp_path, min_cost=0.0).reader_pair(reader, writer)
    assert list(tmp_path.rglob("*.json")) or list(tmp_path.rglob("*"))  # something written
    again = VerdictCache(tmp_path, min_cost=0.0).reader_pair(reader, writer)
    assert again == first and not again.compatible


def test_a_corrupt_reader_pair_entry_is_computed_again(tmp_path):
    reader = loaded(record(ID, NOTE), "r.avsc")
    writer = loaded(record(ID), "w.avsc")
    cache = VerdictCache(tmp_path, min_cost=0.0)
    first = cache.reader_pair(reader, writer)
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix == ".json":
            path.write_text('{"not": "findings"}')
    with pytest.warns(Warning):
        again = VerdictCache(tmp_path, min_cost=0.0).reader_pair(reader, writer)
    assert again.findings == first.findings


# -- the level READERS ---------------------------------------------------------------------------


def test_the_level_readers_compares_with_no_earlier_version():
    assert comparisons(Level.READERS, 5) == ()
    assert list(compared_versions(Level.READERS, 5)) == []
    assert Level.parse("readers") is Level.READERS
    assert not Level.READERS.in_registry
    assert all(level.in_registry for level in Level if level is not Level.READERS)
