"""The verdict memo and cache give exactly the engine's findings, and a bad cache never hurts.

Differential: ``VerdictCache.check`` (memo, field-by-field comparison of plain records) against
``compat.check`` (the engine, proved against Java by tests/oracle) on the oracle's generated
pairs and on generated histories of plain records; ``check_candidate`` with the cache against
the engine's ``check_pairs``; the gate with a cold and a warm disk cache against no cache.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.avro.parse import FieldMemo, parse_schema
from schemacli.contracts.evolution import compat, diskcache, verdicts
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.diskcache import DiskCache
from schemacli.contracts.evolution.levels import BACKWARD, Level, SubjectLevels
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.jsontext.source import parse_text
from schemacli.contracts.store.history import load_history
from schemacli.contracts.store.tree import FileTree
from schemacli.errors import SchemacliError, SchemacliWarning
from tests.oracle.generator import pairs

ROOT = Path(__file__).resolve().parents[2]
PLAIN_TYPES = [
    "int",
    "long",
    "float",
    "double",
    "string",
    "bytes",
    "boolean",
    "null",
    ["null", "string"],
    ["null", "int"],
    ["int", "string"],
    ["null", "long", "string"],
    {"type": "array", "items": "int"},
    {"type": "array", "items": "long"},
    {"type": "map", "values": "string"},
    {"type": "map", "values": ["null", "bytes"]},
    {"type": "int", "logicalType": "date"},
    {"type": "long", "logicalType": "timestamp-millis"},
]
DEFAULTS = {
    "int": 0,
    "long": 0,
    "float": 0.0,
    "double": 0.0,
    "string": "",
    "bytes": "",
    "boolean": False,
    "null": None,
}


def loaded(schema, source: str = "<s>", version: int | None = None):
    return load_schema_text(json.dumps(schema, indent=2), source, version=version)


def _default_for(ftype):
    if isinstance(ftype, str):
        return DEFAULTS[ftype]
    if isinstance(ftype, list):
        return _default_for(ftype[0])
    if ftype["type"] == "array":
        return []
    if ftype["type"] == "map":
        return {}
    return DEFAULTS[ftype["type"]]


def _field(rng: random.Random, name: str) -> dict:
    ftype = rng.choice(PLAIN_TYPES)
    out = {"name": name, "type": ftype}
    if rng.random() < 0.5:
        out["default"] = _default_for(ftype)
    if rng.random() < 0.1:
        out["doc"] = "a field"
    return out


def plain_history(rng: random.Random, versions: int, *, name: str = "Rec") -> list[dict]:
    """A record's versions, each a random mutation of the one before: fields added (with and
    without defaults), removed, retyped, moved; sometimes the record is renamed."""
    fields = [_field(rng, f"f{i}") for i in range(rng.randint(1, 8))]
    record = {"type": "record", "name": name, "namespace": "com.example", "fields": fields}
    out = [json.loads(json.dumps(record))]
    for v in range(1, versions):
        fields = [dict(f) for f in fields]
        for _ in range(rng.randint(1, 3)):
            move = rng.random()
            if move < 0.35 or not fields:
                fields.insert(rng.randint(0, len(fields)), _field(rng, f"g{v}_{rng.randint(0, 9)}"))
            elif move < 0.5:
                fields.pop(rng.randrange(len(fields)))
            elif move < 0.8:
                changed = _field(rng, fields[rng.randrange(len(fields))]["name"])
                fields = [changed if f["name"] == changed["name"] else f for f in fields]
            else:
                rng.shuffle(fields)
        names = {f["name"] for f in fields}
        if len(names) != len(fields):  # the same new name twice: keep the first
            seen: set[str] = set()
            fields = [f for f in fields if not (f["name"] in seen or seen.add(f["name"]))]
        record = dict(record, fields=fields)
        if rng.random() < 0.05:
            record["name"] = name + "2"
        out.append(json.loads(json.dumps(record)))
    return out


def engine_findings(candidate, history, *, subject: str, level: Level):
    """What check_candidate found before the cache: the engine's check_pairs, placed in the
    reader's text (the reference the cached road must match exactly)."""
    labels = [f"{subject} v{h.version}" for h in history]
    found = []
    result = compat.check_pairs(level, candidate.schema, [h.schema for h in history], labels=labels)
    for pair in sorted(result, key=lambda p: level.directions.index(p.direction)):
        reader = candidate if pair.direction == BACKWARD else history[pair.index]
        found += [
            replace(f, location=reader.location(f.location.pointer), subject=subject)
            for f in pair.result.findings
        ]
    return found


class EngineOnly(VerdictCache):
    """No memo, no shortcut: every pair straight to the engine (the reference)."""

    def check(self, reader, writer):
        return compat.check(reader.schema, writer.schema)


# -- differential ------------------------------------------------------------------------------


def test_memo_gives_the_engines_findings_on_the_oracle_corpus():
    cache = VerdictCache()
    compared = 0
    for a, b in pairs(20251124, 400):
        try:
            la, lb = loaded(a), loaded(b)
        except SchemacliError:
            continue
        for reader, writer in ((la, lb), (lb, la)):
            assert cache.check(reader, writer) == compat.check(reader.schema, writer.schema)
            compared += 1
    assert compared > 500


def test_field_by_field_comparison_gives_the_engines_findings_on_plain_records():
    rng = random.Random(7)
    cache = VerdictCache()
    shortcut = incompatible = 0
    for _ in range(60):
        history = [loaded(s) for s in plain_history(rng, 8)]
        for reader in history:
            for writer in history:
                expected = compat.check(reader.schema, writer.schema)
                assert cache.check(reader, writer) == expected
                shortcut += cache._record(reader) is not None
                incompatible += not expected.compatible
    assert shortcut > 3000 and incompatible > 500  # the fast road, and findings, were exercised


SHARED = [  # the shared type's versions: v2 adds a field without a default
    {
        "type": "record",
        "name": "Money",
        "namespace": "com.shared",
        "fields": [{"name": "units", "type": "long"}],
    },
    {
        "type": "record",
        "name": "Money",
        "namespace": "com.shared",
        "fields": [{"name": "units", "type": "long"}, {"name": "currency", "type": "string"}],
    },
]
ALIASED = {  # a shared type that may not read itself: two fields answer to one alias
    "type": "record",
    "name": "Aliased",
    "namespace": "com.shared",
    "fields": [{"name": "a", "type": "int", "aliases": ["x"]}, {"name": "b", "type": "int"}],
}


def _history_with_references(rng: random.Random, store: Path, subject: str, versions: int):
    """A random plain history whose versions also hold fields of shared types, each version
    taking them from a declared reference (to either version of the shared subject) or by
    name from the store's names (the shared subject's latest)."""
    folder = store / "subjects" / subject
    folder.mkdir(parents=True)
    for n, schema in enumerate(
        plain_history(rng, versions, name=subject.split("-")[0].title()), start=1
    ):
        shared = [{"name": "money", "type": "com.shared.Money"}]
        if rng.random() < 0.3:
            shared.append({"name": "aliased", "type": "com.shared.Aliased"})
        if rng.random() < 0.2:
            shared.append({"name": "more", "type": ["null", "com.shared.Money"], "default": None})
        at = rng.randrange(len(schema["fields"]) + 1)
        schema["fields"][at:at] = shared
        (folder / f"v{n}.avsc").write_text(json.dumps(schema, indent=2))
        if rng.random() < 0.7:
            refs = [
                {
                    "name": "com.shared.Money",
                    "subject": "money-value",
                    "version": rng.choice([1, 2]),
                }
            ]
            if len(shared) > 1 and shared[1]["name"] == "aliased":
                refs.append(
                    {"name": "com.shared.Aliased", "subject": "aliased-value", "version": 1}
                )
            (folder / f"v{n}.references.json").write_text(json.dumps(refs))
    return load_history(FileTree(store), subject)


def test_field_by_field_comparison_of_records_with_references_gives_the_engines_findings(
    tmp_path,
):
    # A field naming a type that a reference defines is compared alone only when it is the
    # same, references included; the verdicts stay the engine's, whichever road is taken.
    rng = random.Random(13)
    store = tmp_path / "store"
    for subject, versions in (("money-value", SHARED), ("aliased-value", [ALIASED])):
        (store / "subjects" / subject).mkdir(parents=True)
        for n, schema in enumerate(versions, start=1):
            (store / "subjects" / subject / f"v{n}.avsc").write_text(json.dumps(schema))
    cache = VerdictCache()
    shortcut = incompatible = 0
    for i in range(30):
        history = _history_with_references(rng, store, f"s{i}-value", 6)
        for reader in history:
            for writer in history:
                expected = compat.check(reader.schema, writer.schema)
                assert cache.check(reader, writer) == expected
                shortcut += cache._record(reader) is not None
                incompatible += not expected.compatible
        for level in (Level.FULL_TRANSITIVE, Level.BACKWARD):
            for n in range(2, len(history) + 1):
                candidate, before = history[n - 1], list(history[: n - 1])
                report = check_candidate(
                    candidate, before, subject="s", level=level, verdicts=cache, fixes=False
                )
                if report.identical_to is None:
                    assert list(report.findings) == engine_findings(
                        candidate, before, subject="s", level=level
                    )
    assert shortcut > 400 and incompatible > 300  # both roads, and findings, were exercised


def test_the_memo_parses_each_one_field_record_once(monkeypatch):
    # The parser keeps no cache of its own: the memo owns the one for the texts it builds.
    parsed: list[str] = []

    def counting_parse(text):
        parsed.append(text)
        return parse_schema(text)

    monkeypatch.setattr(verdicts, "parse_schema", counting_parse)
    v1 = {"type": "record", "name": "Rec", "fields": [{"name": "a", "type": "int"}]}
    v3 = {
        **v1,
        "fields": v1["fields"]
        + [
            {"name": "b", "type": "int"},
            {"name": "c", "type": "long"},
        ],
    }
    result = VerdictCache().check(loaded(v3), loaded(v1))  # b and c have no default
    assert not result.compatible
    assert parsed and len(parsed) == len(set(parsed))
    assert '{"type":"record","name":"Rec","fields":[]}' in parsed  # the writer, asked for twice


@pytest.mark.parametrize("level", [Level.FULL_TRANSITIVE, Level.BACKWARD, Level.FORWARD])
def test_check_candidate_with_the_cache_matches_the_engine(level, tmp_path):
    rng = random.Random(11)
    cache = VerdictCache(tmp_path, min_cost=0)
    for run in range(2):  # cold, then every answer from disk
        fresh = VerdictCache(tmp_path, min_cost=0) if run else cache
        rng.seed(11)
        for _ in range(25):
            history = [
                loaded(s, f"subjects/s/v{n}.avsc", n)
                for n, s in enumerate(plain_history(rng, 6), start=1)
            ]
            for n in range(2, len(history) + 1):
                candidate, before = history[n - 1], history[: n - 1]
                report = check_candidate(  # the cache's road only: fixes are suggest's
                    candidate, before, subject="s", level=level, verdicts=fresh, fixes=False
                )
                if report.identical_to is None:
                    assert list(report.findings) == engine_findings(
                        candidate, before, subject="s", level=level
                    )


def _loaded_with(memo: FieldMemo, schema, source: str, version: int) -> LoadedSchema:
    """A version parsed as the gate parses a history: its fields through one memo."""
    document = parse_text(json.dumps(schema, indent=2), source)
    return LoadedSchema(source, document, parse_schema(document.value, fields=memo), version)


@pytest.mark.parametrize("level", [Level.FULL_TRANSITIVE, Level.BACKWARD, Level.FORWARD])
def test_histories_parsed_with_one_field_memo_get_the_engines_findings(level):
    # The gate's road: a history's fields parsed once, each version's table numbered from
    # them, most pairs decided without the engine; fed the same histories as the engine.
    rng = random.Random(12)
    cache = VerdictCache()
    compared = found = 0
    for _ in range(40):
        memo: FieldMemo = {}
        history = [
            _loaded_with(memo, s, f"subjects/s/v{n}.avsc", n)
            for n, s in enumerate(plain_history(rng, 8), start=1)
        ]
        for n in range(2, len(history) + 1):
            candidate, before = history[n - 1], history[: n - 1]
            report = check_candidate(
                candidate, before, subject="s", level=level, verdicts=cache, fixes=False
            )
            if report.identical_to is None:
                expected = engine_findings(candidate, before, subject="s", level=level)
                assert list(report.findings) == expected
                compared += 1
                found += bool(expected)
    assert compared > 200 and found > 50


def _gate_rows(store: Path, cache: VerdictCache | None, level=Level.FULL_TRANSITIVE):
    return gate(FileTree(store, display_root="st"), SubjectLevels(level), verdicts=cache).subjects


@pytest.mark.parametrize("level", [Level.FULL_TRANSITIVE, Level.BACKWARD, Level.FORWARD])
def test_gate_over_the_example_store_is_the_same_with_and_without_the_cache(tmp_path, level):
    store = tmp_path / "schemas"
    shutil.copytree(ROOT / "schemas", store)
    engine = _gate_rows(store, EngineOnly(), level)
    memo = _gate_rows(store, VerdictCache(), level)
    cold = _gate_rows(store, VerdictCache(tmp_path / "cache", min_cost=0), level)
    warm = _gate_rows(store, VerdictCache(tmp_path / "cache", min_cost=0), level)
    for path in store.rglob("*"):  # every stat changes: each file keyed again by its text
        os.utime(path)
    touched = _gate_rows(store, VerdictCache(tmp_path / "cache", min_cost=0), level)
    for table in (tmp_path / "cache").rglob("*.table"):  # the rows from their own entries
        table.unlink()
    entries = _gate_rows(store, VerdictCache(tmp_path / "cache", min_cost=0), level)
    assert engine == memo == cold == warm == touched == entries


def test_gate_findings_from_the_cache_keep_file_line_column_and_pointer(tmp_path):
    rng = random.Random(5)
    store = tmp_path / "store"
    for s in range(6):
        folder = store / "subjects" / f"t{s}-value"
        folder.mkdir(parents=True)
        for n, schema in enumerate(plain_history(rng, 5, name=f"R{s}"), start=1):
            (folder / f"v{n}.avsc").write_text(json.dumps(schema, indent=1 + s % 3))
    cache_dir = tmp_path / "cache"
    expected = _gate_rows(store, EngineOnly())
    assert _gate_rows(store, VerdictCache(cache_dir, min_cost=0)) == expected
    assert list(cache_dir.rglob("*.json"))
    assert _gate_rows(store, VerdictCache(cache_dir, min_cost=0)) == expected
    findings = [f for row in expected for f in row.findings]
    assert findings and all(f.location.line and f.location.column for f in findings)
    assert sum(bool(f.location.pointer) for f in findings) > 10


# -- cache safety --------------------------------------------------------------------------------


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


def _warm(tmp_path: Path):
    store = tmp_path / "schemas"
    if not store.exists():
        shutil.copytree(ROOT / "schemas", store)
    cache_dir = tmp_path / "cache"
    rows = _gate_rows(store, VerdictCache(cache_dir, min_cost=0))
    return store, cache_dir, rows


def test_a_cache_written_by_another_engine_version_is_never_read(tmp_path, monkeypatch):
    store, cache_dir, rows = _warm(tmp_path)
    for entry in _entries(cache_dir):  # poison every entry of this engine version
        data = json.loads(entry.read_text())
        data["value"] = {"versions": 0, "checked": [], "findings": []}
        entry.write_text(json.dumps(data))
    monkeypatch.setattr(diskcache, "ENGINE_VERSION", "another")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the old entries are not even looked at
        assert _gate_rows(store, VerdictCache(cache_dir, min_cost=0)) == rows
    assert list(cache_dir.glob("verdicts-another-*"))


def test_an_edited_engine_never_reads_the_old_entries(tmp_path, monkeypatch):
    store, cache_dir, rows = _warm(tmp_path)
    monkeypatch.setattr(diskcache, "_source_digest", lambda: "edited")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _gate_rows(store, VerdictCache(cache_dir, min_cost=0)) == rows
    assert len(list(cache_dir.glob("verdicts-*"))) == 2


@pytest.mark.parametrize("damage", ["truncated", "tampered", "not-json", "unreadable"])
def test_a_damaged_entry_is_ignored_with_a_warning(tmp_path, damage):
    store, cache_dir, rows = _warm(tmp_path)
    for table in cache_dir.rglob("*.table"):  # the rows are read from their entries
        table.unlink()
    for entry in _entries(cache_dir):
        text = entry.read_text()
        if damage == "truncated":
            entry.write_text(text[: len(text) // 2])
        elif damage == "tampered":  # the value changed, its checksum not
            data = json.loads(text)
            data["value"] = [data["value"], "tampered"]
            entry.write_text(json.dumps(data))
        elif damage == "not-json":
            entry.write_bytes(b"\xff\x00 binary")
        else:
            entry.unlink()
            entry.mkdir()  # reading it fails with an OSError
    with pytest.warns(SchemacliWarning) as caught:  # (a directory also cannot be rewritten)
        again = _gate_rows(store, VerdictCache(cache_dir, min_cost=0))
    assert any("ignoring the verdict cache entry" in str(w.message) for w in caught)
    assert again == rows


def test_a_cache_directory_that_cannot_be_written_is_skipped_with_one_warning(tmp_path):
    store = tmp_path / "schemas"
    shutil.copytree(ROOT / "schemas", store)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    with pytest.warns(SchemacliWarning, match="cannot be written") as caught:
        rows = _gate_rows(store, VerdictCache(blocker, min_cost=0))
    assert len([w for w in caught if "cannot be written" in str(w.message)]) == 1
    assert rows == _gate_rows(store, VerdictCache())


def test_entries_are_written_whole_by_concurrent_writers(tmp_path):
    import threading

    disk = DiskCache(tmp_path)
    values = [{"n": n, "payload": "x" * 20000} for n in range(8)]

    def write(value):
        for _ in range(25):
            disk.store("ab" + "0" * 62, value)

    threads = [threading.Thread(target=write, args=(v,)) for v in values]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert disk.load("ab" + "0" * 62) in values
    assert [p.name for p in disk.root.rglob("*")] == ["ab", "0" * 62 + ".json"]  # no temp file


def test_two_gates_writing_the_same_cache_at_once_leave_it_sound(tmp_path):
    store, cache_dir, _ = tmp_path / "schemas", tmp_path / "cache", None
    shutil.copytree(ROOT / "schemas", store)
    env = {
        "SCHEMACLI_CACHE_DIR": str(cache_dir),
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    command = [sys.executable, "-m", "schemacli", "gate", "-q", "--store", str(store), "-o", "json"]
    runs = [
        subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
        )
        for _ in range(3)
    ]
    outputs = [run.communicate() for run in runs]
    assert len({out for out, _ in outputs}) == 1
    assert all(b"warning" not in err for _, err in outputs)
    for entry in _entries(cache_dir):
        assert json.loads(entry.read_text())["engine"] == diskcache.engine_id()
    assert not [p for p in cache_dir.rglob(".tmp-*")]
    reference = subprocess.run(command + ["--no-cache"], env=env, capture_output=True, cwd=tmp_path)
    assert reference.stdout == outputs[0][0]


def test_other_versions_caches_unused_for_a_month_are_removed_and_recent_ones_kept(tmp_path):
    import os
    import time

    cache_dir = tmp_path / "cache"
    now = time.time()
    ages = {"verdicts-0-old": 45, "verdicts-0-recent": 2, "other-tool": 400}
    for name, days in ages.items():
        (cache_dir / name / "ab").mkdir(parents=True)
        (cache_dir / name / "ab" / "entry.json").write_text("{}")
        os.utime(cache_dir / name, (now - days * 86400, now - days * 86400))
    disk = DiskCache(cache_dir)
    disk.store("ab" + "0" * 62, {"x": 1})  # the first use of this engine's directory
    left = sorted(p.name for p in cache_dir.iterdir())
    assert left == sorted(["verdicts-0-recent", "other-tool", disk.root.name])
    assert disk.load("ab" + "0" * 62) == {"x": 1}
    assert disk.root.stat().st_mtime >= now - 1  # marked used: another version keeps it


def test_a_field_with_a_default_the_writer_lacks_is_read_without_asking_the_engine(monkeypatch):
    # The engine reads such a field's default and looks no further; the memo says so without
    # building a one-field record. Both roads are fed the same pairs.
    v1 = {"type": "record", "name": "Rec", "fields": [{"name": "a", "type": "int"}]}
    added = [
        {"name": "b", "type": ["null", "string"], "default": None},
        {"name": "c", "type": "long", "default": 3},
        {"name": "d", "type": {"type": "array", "items": "int"}, "default": []},
        {"name": "e", "type": {"type": "map", "values": "string"}, "default": {}},
    ]
    pairs = [
        (loaded({**v1, "fields": v1["fields"] + added[:n]}), loaded(v1))
        for n in range(1, len(added) + 1)
    ]
    expected = [compat.check(reader.schema, writer.schema) for reader, writer in pairs]
    parsed: list[str] = []
    monkeypatch.setattr(verdicts, "parse_schema", lambda text: parsed.append(text))

    assert [VerdictCache().check(reader, writer) for reader, writer in pairs] == expected
    assert all(result.compatible for result in expected)
    assert parsed == []  # no one-field record was built for the engine
