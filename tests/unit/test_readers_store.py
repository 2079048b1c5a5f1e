"""Declared readers in the store: readers/<consumer>/reader.json + <subject>.avsc."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from schemacli.contracts.readers.declared import (
    DeclaredReader,
    ReaderDeclarationError,
    load_reader_schema,
    load_readers,
    parse_manifest,
)
from schemacli.errors import InputError

ORDER = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}],
}


def declare(
    store: Path,
    consumer: str,
    subjects: dict[str, dict] | None = None,
    manifest: object | str | None = None,
) -> Path:
    folder = store / "readers" / consumer
    folder.mkdir(parents=True, exist_ok=True)
    if manifest is None:
        manifest = {"owner": "team-" + consumer, "contact": "c@x", "groups": [f"{consumer}-g"]}
    text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
    (folder / "reader.json").write_text(text, encoding="utf-8")
    for subject, schema in (subjects or {}).items():
        (folder / f"{subject}.avsc").write_text(json.dumps(schema, indent=2), encoding="utf-8")
    return folder


def test_a_store_without_readers_declares_none(tmp_path):
    (tmp_path / "subjects").mkdir()
    assert load_readers(tmp_path) == []


def test_each_schema_file_is_one_declared_reader_carrying_its_manifest(tmp_path):
    declare(tmp_path, "billing", {"orders-value": ORDER, "payments-value": ORDER})
    declare(tmp_path, "audit", {"orders-value": ORDER}, {"groups": ["audit-1", "audit-2"]})
    found = load_readers(tmp_path)
    assert [(r.subject, r.consumer) for r in found] == [
        ("orders-value", "audit"),
        ("orders-value", "billing"),
        ("payments-value", "billing"),
    ]
    audit = found[0]
    assert audit == DeclaredReader(
        consumer="audit",
        subject="orders-value",
        schema_path=tmp_path / "readers" / "audit" / "orders-value.avsc",
        groups=("audit-1", "audit-2"),
        owner=None,
        contact=None,
    )
    assert found[1].owner == "team-billing" and found[1].contact == "c@x"


def test_readers_of_one_subject_only(tmp_path):
    declare(tmp_path, "billing", {"orders-value": ORDER, "payments-value": ORDER})
    assert [r.subject for r in load_readers(tmp_path, "payments-value")] == ["payments-value"]
    assert load_readers(tmp_path, "nobody-value") == []


def test_files_other_than_schemas_and_manifest_are_ignored(tmp_path):
    folder = declare(tmp_path, "billing", {"orders-value": ORDER})
    (folder / "README.md").write_text("who we are")
    assert len(load_readers(tmp_path)) == 1


def test_the_reader_schema_parses_with_its_positions(tmp_path):
    declare(tmp_path, "billing", {"orders-value": ORDER})
    schema = load_reader_schema(load_readers(tmp_path)[0])
    assert schema.location("/fields/0").line == 5


# -- refusals: each names its file and, inside a manifest, line:col --------------------------


def refused(store: Path, subject: str | None = None) -> InputError:
    with pytest.raises(InputError) as caught:
        load_readers(store, subject)
    return caught.value


def test_a_consumer_folder_without_manifest_is_refused(tmp_path):
    folder = declare(tmp_path, "billing", {"orders-value": ORDER})
    (folder / "reader.json").unlink()
    err = refused(tmp_path)
    assert isinstance(err, ReaderDeclarationError)
    assert "no reader.json" in err.message
    assert err.location.source.endswith("readers/billing/reader.json")


@pytest.mark.parametrize(
    ("manifest", "pointer_line", "words"),
    [
        ("[]", 1, "JSON object, not an array"),
        ('{\n  "groups": ["a"],\n  "team": "x"\n}', 3, "unknown key 'team'"),
        ('{\n  "owner": "x"\n}', 1, 'no "groups"'),
        ('{\n  "groups": []\n}', 2, '"groups" is empty'),
        ('{\n  "groups": "a"\n}', 2, "non-empty list"),
        ('{\n  "groups": [\n    "a",\n    7\n  ]\n}', 4, "not the number 7"),
        ('{\n  "groups": [\n    "a",\n    "a"\n  ]\n}', 4, "listed twice"),
        ('{\n  "groups": ["a"],\n  "owner": 3\n}', 3, '"owner" is a non-empty string'),
        ('{\n  "groups": ["a"],\n  "contact": ""\n}', 3, '"contact" is a non-empty string'),
        ('{\n  "groups": ["a"],\n', 3, ""),
        ("", 1, "empty"),
    ],
)
def test_a_bad_manifest_is_refused_at_its_line(tmp_path, manifest, pointer_line, words):
    declare(tmp_path, "billing", {"orders-value": ORDER}, manifest)
    err = refused(tmp_path)
    assert isinstance(err, ReaderDeclarationError)
    assert words in err.message
    assert err.location.source.endswith("readers/billing/reader.json")
    assert err.location.line == pointer_line
    assert err.location.column is not None


def test_a_manifest_that_is_a_directory_is_refused_by_name(tmp_path):
    folder = tmp_path / "readers" / "billing"
    (folder / "reader.json").mkdir(parents=True)
    err = refused(tmp_path)
    assert "directory" in err.message
    assert err.location.source.endswith("reader.json")


def test_a_binary_manifest_is_refused(tmp_path):
    folder = declare(tmp_path, "billing", {"orders-value": ORDER})
    (folder / "reader.json").write_bytes(b"\x00\x01\xff\xfe\x00garbage")
    assert refused(tmp_path).location.source.endswith("reader.json")


def test_a_huge_manifest_is_refused_without_reading_it_all(tmp_path):
    folder = declare(tmp_path, "billing", {"orders-value": ORDER})
    with open(folder / "reader.json", "wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: past the 8 MiB cap
    assert "large" in refused(tmp_path).message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_manifest_is_refused_not_waited_on(tmp_path):
    folder = tmp_path / "readers" / "billing"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "reader.json")
    assert "FIFO" in refused(tmp_path).message or "fifo" in refused(tmp_path).message.lower()


def test_a_schema_directly_in_readers_is_refused(tmp_path):
    (tmp_path / "readers").mkdir()
    (tmp_path / "readers" / "orders-value.avsc").write_text(json.dumps(ORDER))
    err = refused(tmp_path)
    assert "outside any consumer" in err.message
    assert "readers/<consumer>/orders-value.avsc" in err.hint


def test_readers_as_a_file_is_refused(tmp_path):
    (tmp_path / "readers").write_text("x")
    assert "not a directory" in refused(tmp_path).message


@pytest.mark.parametrize("name", ["-billing", "bil ling", "bil$ling"])
def test_a_bad_consumer_name_is_refused(tmp_path, name):
    declare(tmp_path, name, {"orders-value": ORDER})
    err = refused(tmp_path)
    assert "not a consumer name" in err.message


def test_a_schema_file_that_is_a_directory_is_refused(tmp_path):
    folder = declare(tmp_path, "billing")
    (folder / "orders-value.avsc").mkdir()
    assert "is a directory" in refused(tmp_path).message


def test_a_hidden_schema_file_is_not_a_subject(tmp_path):
    folder = declare(tmp_path, "billing")
    (folder / ".avsc").write_text(json.dumps(ORDER))
    assert "not a subject name" in refused(tmp_path).message


def test_manifest_text_parses_to_its_fields():
    manifest = parse_manifest('{"groups": ["g"], "owner": "o"}', "m.json")
    assert manifest.groups == ("g",) and manifest.owner == "o" and manifest.contact is None
