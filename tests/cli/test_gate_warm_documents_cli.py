"""`schemacli gate -o json` served from the cache gives the document a cold run gives, on a
generated store with the shapes the bench's wide store has (shared types found through
declared references and by name, an incompatible version, an invalid one), warm and after
edits the listing must see: an in-place edit keeping the size and the mtime, a new version."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app

TYPES = ["int", "long", "string", "double", "boolean"]


def version(s: int, n: int) -> tuple[dict, list | None]:
    """Subject ``s``'s version ``n``: a record one optional field wider per version; subject 0
    defines a shared type, 1 takes it through a declared reference, 2 by name; 3's v3 retypes
    a field (incompatible at FULL_TRANSITIVE)."""
    fields: list[dict] = [{"name": f"f{i}", "type": TYPES[(s + i) % 5]} for i in range(4 + s)]
    references = None
    name, namespace = f"Rec{s}", f"gen.topic{s}"
    if s == 0:
        name, namespace = "Shared", "gen.common"
    elif s in (1, 2):
        fields.append({"name": "shared", "type": "gen.common.Shared"})
        if s == 1:
            references = [{"name": "gen.common.Shared", "subject": "common-value", "version": 1}]
    if s == 3 and n >= 3:
        fields[0] = {"name": "f0", "type": "string"}
    fields += [
        {"name": f"added{v}", "type": ["null", "string"], "default": None} for v in range(2, n + 1)
    ]
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}, references


def subject_name(s: int) -> str:
    return "common-value" if s == 0 else f"topic{s}-value"


def write_store(root: Path, subjects: int, versions: int) -> Path:
    store = root / "schemas"
    for s in range(subjects):
        folder = store / "subjects" / subject_name(s)
        folder.mkdir(parents=True)
        for n in range(1, versions + 1):
            record, references = version(s, n)
            (folder / f"v{n}.avsc").write_text(json.dumps(record, indent=2))
            if references is not None:
                (folder / f"v{n}.references.json").write_text(json.dumps(references))
    (store / "subjects" / "broken-value").mkdir()
    (store / "subjects" / "broken-value" / "v1.avsc").write_text('{"type": "record"}')
    (root / "schemacli.toml").write_text('store = "schemas"\ndefault-level = "FULL_TRANSITIVE"\n')
    return store


def gate_document(root: Path, cache: Path | None) -> tuple[int, dict]:
    env = {"SCHEMACLI_CACHE_DIR": str(cache)} if cache is not None else {}
    args = ["gate", "-q", "-o", "json", "--store", str(root / "schemas")]
    result = CliRunner().invoke(app, [*args, *([] if cache else ["--no-cache"])], env=env)
    return result.exit_code, json.loads(result.stdout)


def test_a_warm_gate_gives_the_cold_document_and_sees_every_edit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = write_store(tmp_path, subjects=12, versions=6)
    cache = tmp_path / "cache"
    cold = gate_document(tmp_path, None)
    assert cold[0] == 2  # broken-value does not parse
    verdicts = {case["name"]: case["verdict"] for case in cold[1]["cases"]}
    assert verdicts["topic3-value"] == "incompatible"
    assert verdicts["topic1-value"] == verdicts["topic2-value"] == "compatible"
    assert gate_document(tmp_path, cache) == cold  # the first run, filling the cache
    assert gate_document(tmp_path, cache) == cold  # warm: the table's listing, as it was

    # an edit in place keeping the size and the mtime: the ctime moves, the folder is read
    v4 = store / "subjects" / "topic5-value" / "v4.avsc"
    before = v4.stat()
    text = v4.read_text()
    edited = text.replace('"string"', '"double"', 1)
    assert len(edited) == len(text) and edited != text
    v4.write_text(edited)
    os.utime(v4, ns=(before.st_atime_ns, before.st_mtime_ns))
    edited_cold = gate_document(tmp_path, None)
    assert edited_cold != cold
    assert {c["name"]: c["verdict"] for c in edited_cold[1]["cases"]}["topic5-value"] == (
        "incompatible"
    )
    assert gate_document(tmp_path, cache) == edited_cold
    assert gate_document(tmp_path, cache) == edited_cold

    # the shared type's subject gets a new latest version: the by-name user is judged again
    record, _ = version(0, 7)
    record["fields"][0] = {"name": "f0", "type": "string"}  # Shared's f0: int -> string
    (store / "subjects" / "common-value" / "v7.avsc").write_text(json.dumps(record))
    grown_cold = gate_document(tmp_path, None)
    assert grown_cold != edited_cold
    assert gate_document(tmp_path, cache) == grown_cold
    assert gate_document(tmp_path, cache) == grown_cold


def test_a_warm_gate_gives_the_cold_document_after_adds_deletes_renames_swaps_and_touches(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    store = write_store(tmp_path, subjects=12, versions=5)
    subjects = store / "subjects"
    cache = tmp_path / "cache"
    gate_document(tmp_path, cache)  # fills the cache and the key table

    def same_as_cold() -> dict:
        cold = gate_document(tmp_path, None)
        assert gate_document(tmp_path, cache) == cold  # the run that sees the change
        assert gate_document(tmp_path, cache) == cold  # and the warm one after it
        return cold[1]

    documents = [same_as_cold()]
    # a version deleted, then a new one added in its place with other content
    (subjects / "topic4-value" / "v5.avsc").unlink()
    documents.append(same_as_cold())
    record, _ = version(4, 5)
    record["fields"][0] = {"name": "f0", "type": "bytes"}
    (subjects / "topic4-value" / "v5.avsc").write_text(json.dumps(record, indent=2))
    documents.append(same_as_cold())
    # a subject added, one renamed, one deleted
    shutil.copytree(subjects / "topic6-value", subjects / "topic60-value")
    documents.append(same_as_cold())
    (subjects / "topic7-value").rename(subjects / "topic70-value")
    documents.append(same_as_cold())
    shutil.rmtree(subjects / "topic8-value")
    documents.append(same_as_cold())
    # two versions swapped by rename (each keeps its inode, size and mtime under the other name)
    v2, v3 = subjects / "topic9-value" / "v2.avsc", subjects / "topic9-value" / "v3.avsc"
    v2.rename(tmp_path / "swap")
    v3.rename(v2)
    (tmp_path / "swap").rename(v3)
    documents.append(same_as_cold())
    # two versions' contents swapped in place at one size (the shorter padded with JSON
    # whitespace first), their mtimes put back: only the ctimes move
    v1, v3 = subjects / "topic3-value" / "v1.avsc", subjects / "topic3-value" / "v3.avsc"
    text_1, text_3 = v1.read_text(), v3.read_text()
    size = max(len(text_1), len(text_3))
    text_1, text_3 = text_1.ljust(size), text_3.ljust(size)
    v1.write_text(text_1)
    v3.write_text(text_3)
    documents.append(same_as_cold())
    stat_1, stat_3 = v1.stat(), v3.stat()
    v1.write_text(text_3)
    v3.write_text(text_1)
    os.utime(v1, ns=(stat_1.st_atime_ns, stat_1.st_mtime_ns))
    os.utime(v3, ns=(stat_3.st_atime_ns, stat_3.st_mtime_ns))
    assert (v1.stat().st_size, v3.stat().st_size) == (stat_1.st_size, stat_3.st_size)
    documents.append(same_as_cold())
    assert documents[-1] != documents[-2]
    # a file touched, its content unchanged
    v1 = subjects / "topic5-value" / "v1.avsc"
    later = v1.stat().st_mtime_ns + 5_000_000_000
    os.utime(v1, ns=(later, later))
    assert same_as_cold() == documents[-1]
