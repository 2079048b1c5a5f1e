"""The proof of the suggested fixes: every fix applied, then judged by us AND by Apache Avro Java.

Over the generated pairs (tests/oracle/generator.py: each pair as (old, candidate), at BACKWARD,
FORWARD and FULL; generated triples at the *_TRANSITIVE levels) and the real-world pairs the
tests already use (the store's taxi-rides subject, the breaking migration schema, the kind
fixtures and Java's quirks, the Spark real-world union of records), for every finding and every
fix that can apply (safe, and separately unsafe):

* apply its edits to the candidate's text;
* the engine: that finding is gone and no comparison of the level gained a finding;
* Java (``SchemaCompatibility`` through the oracle): the same, on Java's own incompatibilities;
* every field the fix did not touch (its text, and the named types its type uses) keeps its
  Parsing Canonical Form;
* the readers ``validate`` names, fastavro and the Python avro package, read the fixed schema
  whenever they read the candidate (Java alone is not the judge: it accepts a named type
  defined twice, a forward reference, a fallback to the null namespace);
* no two fixes of one finding carry the same title.

Then the whole file, as ``check --fix`` fixes it (safe fixes, re-checked until nothing more
applies): when every finding had a safe fix, the result must be compatible at the level for
the engine and for Java. The rate per finding kind is printed (and must be 100%).
SCHEMACLI_FIX_PAIRS sets the number of generated pairs (default 400).
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.avro.schema import RecordSchema, Schema, named_types
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.levels import BACKWARD, Level, comparisons
from schemacli.contracts.findings import Finding
from schemacli.contracts.fixes.edits import Applicability, EditError, Fix, JsonEditor, apply_edits
from schemacli.contracts.fixes.fixing import fix_candidate
from schemacli.errors import SchemacliError
from schemacli.kinds import INCOMPATIBILITIES

from .generator import Generator, pairs

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
PAIRS = int(os.environ.get("SCHEMACLI_FIX_PAIRS", "400"))
SEED = int(os.environ.get("SCHEMACLI_ORACLE_SEED", "20251122"))
LEVELS = (Level.BACKWARD, Level.FORWARD, Level.FULL)
TRANSITIVE = (Level.BACKWARD_TRANSITIVE, Level.FORWARD_TRANSITIVE, Level.FULL_TRANSITIVE)
SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE
RATES_FILE = ROOT / ".cache" / "fix-rates.md"


# -- the corpus -------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _real_world() -> Iterator[tuple[str, list[str], str]]:
    """(name, history texts, candidate text) from the files and fixtures the tests use."""
    subjects = ROOT / "schemas" / "subjects" / "taxi-rides-value"
    v1, v2 = (subjects / "v1.avsc").read_text(), (subjects / "v2.avsc").read_text()
    breaking = (ROOT / "schemas" / "migration" / "taxi-ride-v2-breaking.avsc").read_text()
    yield "taxi-rides v1 -> v2", [v1], v2
    yield "taxi-rides v2 -> v1", [v2], v1
    yield "taxi-rides v1 -> breaking", [v1], breaking
    yield "taxi-rides v2 -> breaking", [v2], breaking
    yield "taxi-rides breaking -> v2", [breaking], v2
    yield "taxi-rides v1, v2 -> breaking", [v1, v2], breaking
    from .test_differential import QUIRKS, _kind_fixtures

    for kind, (reader, writer, _) in _kind_fixtures().items():
        yield f"fixture {kind} (reader new)", [_text(writer)], _text(reader)
        yield f"fixture {kind} (writer new)", [_text(reader)], _text(writer)
    for name, (reader, writer, _) in QUIRKS.items():
        yield f"quirk {name} (reader new)", [_text(writer)], _text(reader)
        yield f"quirk {name} (writer new)", [_text(reader)], _text(writer)
    from tests.integration.test_spark_reader_real_world import V1, V2

    yield "trips union of records v1 -> v2", [_text(json.loads(V1))], _text(json.loads(V2))
    yield "trips union of records v2 -> v1", [_text(json.loads(V2))], _text(json.loads(V1))
    from tests.unit.test_fix_proof import MONEY_NEW, MONEY_OLD

    # a later field reaches Money by Java's fallback to the null namespace: a fix that
    # defines Money in the record's namespace would change that field's type
    yield "null-namespace fallback", [_text(MONEY_OLD)], _text(MONEY_NEW)
    yield "null-namespace fallback, reversed", [_text(MONEY_NEW)], _text(MONEY_OLD)


def _cases() -> Iterator[tuple[str, list[str], str, tuple[Level, ...]]]:
    for name, history, candidate in _real_world():
        yield name, history, candidate, LEVELS
    for n, (a, b) in enumerate(pairs(SEED, PAIRS)):
        yield f"generated pair {n}", [_text(a)], _text(b), LEVELS
    gen = Generator(SEED + 1)
    for n in range(max(PAIRS // 8, 10)):
        a = gen.schema()
        b = gen.mutate(a)
        c = gen.mutate(b)
        yield f"generated triple {n}", [_text(a), _text(b)], _text(c), TRANSITIVE


def _load(history: list[str], candidate: str) -> tuple[list[LoadedSchema], LoadedSchema] | None:
    try:
        old = [load_schema_text(t, f"v{i}.avsc", version=i) for i, t in enumerate(history, 1)]
        return old, load_schema_text(candidate, "candidate.avsc")
    except SchemacliError:
        return None  # a generated schema Java refuses too: nothing to fix


# -- judging one fixed text -------------------------------------------------------------------

Key = tuple[int, str, str, str]  # (version index, direction, kind, pointer)


def _java_keys(oracle, level: Level, history: list[str], candidate: str) -> set[Key] | None:
    requests = []
    wanted = comparisons(level, len(history))
    for index, direction in wanted:
        old, new = json.loads(history[index]), json.loads(candidate)
        reader, writer = (new, old) if direction == BACKWARD else (old, new)
        requests.append({"op": "compat", "reader": reader, "writer": writer})
    keys: set[Key] = set()
    for (index, direction), answer in zip(wanted, oracle.ask_many(requests), strict=True):
        if "parse_error" in answer:
            return None
        if "error" in answer:  # Java throws: our AMBIGUOUS_FIELD_MATCH
            keys.add((index, direction, "AMBIGUOUS_FIELD_MATCH", "?"))
            continue
        for inc in answer["incompatibilities"]:
            keys.add((index, direction, inc["type"], inc["location"]))
    return keys


def _engine_keys(level: Level, history: list[LoadedSchema], candidate: LoadedSchema) -> set[Key]:
    from schemacli.contracts.evolution import compat

    keys: set[Key] = set()
    for index, direction in comparisons(level, len(history)):
        old = history[index].schema
        reader, writer = (
            (candidate.schema, old) if direction == BACKWARD else (old, candidate.schema)
        )
        for f in compat.check(reader, writer).findings:
            pointer = "?" if f.kind == "AMBIGUOUS_FIELD_MATCH" else f.location.pointer or ""
            keys.add((index, direction, f.kind.value, pointer))
    return keys


def _touched_fields_kept(before: LoadedSchema, after_text: str, fix: Fix) -> bool:
    """Every field whose text and whose named types' definitions no edit touches keeps its
    canonical form (and still exists)."""
    after = load_schema_text(after_text, "fixed.avsc")
    editor = JsonEditor(before.document)
    spans = [(e.start, e.end) for e in fix.edits]

    def touched(start: int, end: int) -> bool:
        return any(s <= end and start <= e for s, e in spans)

    def span(pointer: str) -> tuple[int, int] | None:
        try:
            return editor.span(pointer)
        except EditError:
            return None

    # A field is found again by its pointer (edits that add keep the others' pointers) or, when
    # an element was removed before it, by its record's name and its own.
    by_pointer, by_name = {}, {}
    for record in named_types(after.schema):
        if isinstance(record, RecordSchema):
            for f in record.fields:
                by_pointer[f.pointer] = f
                by_name[(record.fullname, f.name)] = f
    for record in named_types(before.schema):
        if not isinstance(record, RecordSchema):
            continue
        for f in record.fields:
            where = span(f.pointer)
            if where is None:
                continue
            uses = [where] + [
                s for s in (span(n.pointer) for n in named_types(f.type)) if s is not None
            ]
            if any(touched(*s) for s in uses):
                continue
            same = [
                now
                for now in (by_pointer.get(f.pointer), by_name.get((record.fullname, f.name)))
                if now is not None and now.name == f.name and _canon(now.type) == _canon(f.type)
            ]
            if not same:
                return False
    return True


def _canon(schema: Schema) -> str:
    return canonical_form(schema)


def _other_readers_refusal(text: str) -> str | None:
    """What fastavro or the Python avro package say when they refuse ``text`` (None: both
    read it)."""
    import avro.schema
    import fastavro

    try:
        fastavro.parse_schema(json.loads(text), _write_hint=False)
    except Exception as err:  # noqa: BLE001 - whatever the reader raises is its refusal
        return f"fastavro: {err}"
    try:
        avro.schema.parse(text)
    except Exception as err:  # noqa: BLE001
        return f"avro: {err}"
    return None


# -- the test ---------------------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.findings: Counter[str] = Counter()
        self.with_safe: Counter[str] = Counter()
        self.display_only: Counter[str] = Counter()
        self.tried: dict[Applicability, Counter[str]] = defaultdict(Counter)
        self.proven: dict[Applicability, Counter[str]] = defaultdict(Counter)
        self.whole_tried = 0
        self.whole_proven = 0
        self.whole_unmasked = 0
        self.whole_identical = 0

    def table(self) -> str:
        lines = [
            "| kind | findings | with a safe fix | safe fixes proven | unsafe fixes proven "
            "| advice only |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for kind in INCOMPATIBILITIES:
            k = kind.value
            safe = _rate(self.proven[SAFE][k], self.tried[SAFE][k])
            unsafe = _rate(self.proven[UNSAFE][k], self.tried[UNSAFE][k])
            lines.append(
                f"| {k} | {self.findings[k]} | {self.with_safe[k]} | {safe} | {unsafe} "
                f"| {self.display_only[k]} |"
            )
        lines.append(
            f"\nWhole files fixed by `check --fix` (every finding had a safe fix): "
            f"{_rate(self.whole_proven, self.whole_tried)} compatible for the engine and Java"
            f"{self._unmasked()}."
        )
        return "\n".join(lines)

    def _unmasked(self) -> str:
        out = ""
        if self.whole_identical:
            out += (
                f" ({self.whole_identical} of them fixed into an existing version, which the "
                "registry returns without a check)"
            )
        if not self.whole_unmasked:
            return out
        return out + (
            f"; {self.whole_unmasked} more stopped at a finding Java's ambiguous-field error "
            "had hidden and that has no safe fix (engine and Java agree on what is left)"
        )


def _rate(good: int, total: int) -> str:
    return f"{good}/{total} ({100 * good / total:.0f}%)" if total else "0/0 (-)"


def test_every_suggested_fix_makes_the_engine_and_java_agree_it_is_compatible(oracle, capsys):
    tally = Tally()
    failures: list[str] = []
    for name, history_texts, candidate_text, levels in _cases():
        loaded = _load(history_texts, candidate_text)
        if loaded is None:
            continue
        history, candidate = loaded
        for level in levels:
            report = check_candidate(candidate, history, subject="s", level=level)
            if report.identical_to is not None or report.compatible:
                continue
            before = _engine_keys(level, history, candidate)
            java_before = _java_keys(oracle, level, history_texts, candidate_text)
            assert java_before is not None, name
            readers_read_it = _other_readers_refusal(candidate_text) is None
            everything_safe = True
            for finding in report.findings:
                k = finding.kind.value
                tally.findings[k] += 1
                titles = [fix.title for fix in finding.fixes]
                if len(titles) != len(set(titles)):
                    failures.append(f"{name} at {level}: {k}: two fixes share a title: {titles}")
                usable = [f for f in finding.fixes if f.applies]
                if not usable:
                    tally.display_only[k] += 1
                if not any(f.applicability is Applicability.SAFE for f in usable):
                    everything_safe = False
                else:
                    tally.with_safe[k] += 1
                for fix in usable:
                    tally.tried[fix.applicability][k] += 1
                    problem = _judge(
                        oracle,
                        level,
                        history,
                        history_texts,
                        candidate,
                        fix,
                        finding,
                        before,
                        java_before,
                        readers_read_it,
                    )
                    if problem is None:
                        tally.proven[fix.applicability][k] += 1
                    else:
                        failures.append(f"{name} at {level}: {k} fix {fix.title!r}: {problem}")
            if everything_safe:
                tally.whole_tried += 1
                fixed = fix_candidate(candidate, history, subject="s", level=level)
                java_after = _java_keys(oracle, level, history_texts, fixed.text)
                left = fixed.report.findings
                if fixed.report.compatible and java_after == set():
                    tally.whole_proven += 1
                elif fixed.report.identical_to is not None:
                    # Fixed into an existing version: the registry checks nothing and returns
                    # that version (a re-submission), whatever older versions say.
                    tally.whole_proven += 1
                    tally.whole_identical += 1
                elif (
                    left
                    and java_after
                    and all(
                        not any(f.applicability is Applicability.SAFE for f in x.fixes if f.applies)
                        for x in left
                    )
                ):
                    # An ambiguous field hid the comparison's other findings, and one of them
                    # has no safe fix: --fix stops there, and Java agrees something is left.
                    tally.whole_unmasked += 1
                else:
                    failures.append(
                        f"{name} at {level}: check --fix left "
                        f"{[f.kind.value for f in left]}, Java {java_after}"
                    )
    table = tally.table()
    RATES_FILE.parent.mkdir(parents=True, exist_ok=True)
    RATES_FILE.write_text(table + "\n")
    with capsys.disabled():
        print("\nSuggested fixes, proven per finding kind (engine and Apache Avro Java):")
        print(table)
    assert not failures, f"{len(failures)} fix(es) not proven; first:\n" + "\n".join(failures[:8])
    assert sum(tally.tried[Applicability.SAFE].values()) > 50, "the corpus must exercise fixes"
    for kind in (
        "READER_FIELD_MISSING_DEFAULT_VALUE",
        "NAME_MISMATCH",
        "MISSING_ENUM_SYMBOLS",
        "MISSING_UNION_BRANCH",
        "TYPE_MISMATCH",
        "FIXED_SIZE_MISMATCH",
    ):
        assert tally.tried[Applicability.SAFE][kind] + tally.tried[Applicability.UNSAFE][kind], kind


def _judge(
    oracle,
    level: Level,
    history: list[LoadedSchema],
    history_texts: list[str],
    candidate: LoadedSchema,
    fix: Fix,
    finding: Finding,
    before: set[Key],
    java_before: set[Key],
    readers_read_it: bool,
) -> str | None:
    """None when the fix is proven, else what went wrong."""
    text = apply_edits(candidate.document.text, fix.edits)
    try:
        after = load_schema_text(text, "fixed.avsc")
    except SchemacliError as err:
        return f"the fixed text does not parse: {err}"
    ours = _engine_keys(level, history, after)
    java = _java_keys(oracle, level, history_texts, text)
    if java is None:
        return "Java refuses the fixed schema"
    gone = {key for key in before if key[2] == finding.kind.value and key[3] == _pointer(finding)}
    if not _within(ours, before) or gone <= ours:
        return f"engine: before {sorted(before)}, after {sorted(ours)}"
    java_gone = {k for k in java_before if k[2] == finding.kind.value and k[3] == _pointer(finding)}
    if not _within(java, java_before) or java_gone <= java:
        return f"Java: before {sorted(java_before)}, after {sorted(java)}"
    if not _touched_fields_kept(candidate, text, fix):
        return "a field the fix did not touch changed its canonical form"
    if readers_read_it:
        refusal = _other_readers_refusal(text)
        if refusal is not None:
            return f"the candidate is read by fastavro and avro, the fixed one is not: {refusal}"
    return None


def _within(after: set[Key], before: set[Key]) -> bool:
    """No comparison gained an incompatibility, except one where Java had stopped at an
    ambiguous field (its other incompatibilities were unknown, not absent)."""
    masked = {(k[0], k[1]) for k in before if k[2] == "AMBIGUOUS_FIELD_MATCH"}
    return all(
        k in before or ((k[0], k[1]) in masked and k[2] != "AMBIGUOUS_FIELD_MATCH") for k in after
    )


def _pointer(finding: Finding) -> str:
    if finding.kind == "AMBIGUOUS_FIELD_MATCH":
        return "?"
    # check_candidate keeps the engine's pointer (placed in the reader's text)
    return finding.location.pointer or ""
