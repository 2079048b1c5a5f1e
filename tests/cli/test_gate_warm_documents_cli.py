"""`schemacli gate -o json` served from the cache gives the document a cold run gives, on a
generated store with the shapes the bench's wide store has (shared types found through
declared references and by name, an incompatible version, an invalid one), warm and after
edits the listing must see: an in-place edit keeping the size and the mtime, a new version."""

from __future__ import annotations

import json
import os
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
