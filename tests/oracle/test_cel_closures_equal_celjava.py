"""The closures ``topics check``'s JVM road compiles a rule's CEL into (issue 40,
``quality/jvm/.../Closures.java``) give what Google's CEL-Java interpreter gives, as Confluent's
Java serializer runs it: ``RuleRun`` over the same records twice, once with CEL-Java alone and
once with the closures first, must give per record and rule the same verdict (pass, fail, error,
skipped, not run), the same action, the same error's words, the same refusal and the same bytes
after the transforms.

The corpus is the serializer proof's (tests/integration/test_cel_rules_equality.py: 1,200
seeded records, 31 rules), the edges of CEL's semantics the closures must not get wrong
(``EDGES``: overflow, division by zero, mixed int and double, null, missing keys, indexes out of
range, string order, a bad pattern, a rule typed only as a map), and the bench's rule set
(bench/bench_check.py), which the closures must run whole, without CEL-Java.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from bench import bench_check
from converters.quality import jvmscan
from tests.integration.test_cel_rules_equality import (
    METADATA,
    N_RECORDS,
    SCHEMA,
    SEED,
    encode,
    records,
    rules,
)

pytestmark = [pytest.mark.oracle]


def _condition(name: str, expr: str, rtype: str = "CEL", **more: Any) -> dict[str, Any]:
    return {"name": name, "kind": "CONDITION", "type": rtype, "mode": "WRITEREAD", "expr": expr,
            "onFailure": "NONE", **more}  # fmt: skip


EDGES = [
    _condition("int-overflow", "message.quantity * 9223372036854775807 > 0"),
    _condition("int-add-overflow", "message.quantity + 9223372036854775807 > 0"),
    _condition("int-negate", "-message.quantity < 0"),
    _condition("int-divide-by-zero", "message.quantity / (message.quantity - 1) >= 0"),
    _condition("int-modulo", "message.quantity % 7 == 3 || message.quantity % -1 == 0"),
    _condition("double-divide-by-zero", "message.total / 0.0 > 1.0"),
    _condition("double-nan", "message.total / (message.total - message.total) == 0.0"),
    _condition("double-vs-int", "message.total == 12"),
    _condition("int-to-double", "double(message.quantity) * 1.5 < message.total"),
    _condition("string-of-int", "string(message.quantity) + 'x' != '1x'"),
    _condition("string-order", "message.code < 'AC' && message.code >= 'AB'"),
    _condition("bool-order", "message.customer.vip > false"),
    _condition("null-field", "message.discount == null"),
    _condition("null-field-compared", "message.discount > 0.1"),
    _condition("null-record-select", "message.customer.address.city == 'Oslo'"),
    _condition("map-key-missing", "message.attributes['channel'] == 'web'"),
    _condition("map-in", "'a' in message.counters && message.counters['a'] > 1"),
    _condition("list-index", "message.lines[1].qty > 1"),
    _condition("list-size", "size(message.lines) > 1 && message.lines.size() < 3"),
    _condition("bad-pattern", "message.code.matches('[')"),
    _condition("pattern-from-field", "message.code.matches(message.token)"),
    _condition("ternary", "message.quantity > 5 ? message.code.startsWith('AB') : 1 / 0 == 1"),
    _condition("or-absorbs-error", "message.total == 12 || message.quantity > 0"),
    _condition("and-absorbs-error", "message.total == 12 && message.quantity > 1000"),
    _condition("untyped-map", "message.nothing == 1 || message.quantity > 1"),
    _condition("enum-and-logical", "message.status == 'NEW' && message.created_at > 0"),
    _condition("bytes", "size(message.fingerprint) == 4"),
    _condition("unicode-size", "size(message.customer.name + 'ü') == 3"),
    _condition(
        "field-value", "typeName == 'STRING' ; value + name != fullName", "CEL_FIELD", tags=["PII"]
    ),  # fmt: skip
    _condition("field-null", "value != ''", "CEL_FIELD", tags=["FREE_TEXT"]),
    # the fast road passes over the top record's fields a CEL_FIELD condition cannot see
    _condition("field-tag-nobody-has", "value != ''", "CEL_FIELD", tags=["NOBODY"]),
    _condition("field-untagged", "typeName == 'STRING' ; size(value) >= 0", "CEL_FIELD"),
]

# a top record of every kind of field a CEL_FIELD condition's walk meets: a false boolean fails
# the rule whether its tags are the rule's or not, a union's branch is judged by its field's
# tags, enums and fixed are never given to the expression, nested fields by their container's
FLAGS = {"type": "record", "name": "Flags", "namespace": "edge", "fields": [
    {"name": "name", "type": "string", "confluent:tags": ["PII"]},
    {"name": "active", "type": "boolean"},
    {"name": "maybe", "type": ["null", "boolean"], "default": None},
    {"name": "note", "type": ["null", "string"], "default": None, "confluent:tags": ["PII"]},
    {"name": "other", "type": ["null", "string", "long"], "default": None},
    {"name": "level", "type": {"type": "enum", "name": "Level", "symbols": ["LOW", "HIGH"]}},
    {"name": "key", "type": {"type": "fixed", "name": "Key", "size": 2}},
    {"name": "count", "type": "long"},
    {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [
        {"name": "on", "type": "boolean"},
        {"name": "label", "type": "string", "confluent:tags": ["PII"]},
    ]}, "confluent:tags": ["PII"]},
]}  # fmt: skip

FLAG_RULES = {"domainRules": [
    _condition("pii-not-empty", "value != ''", "CEL_FIELD", tags=["PII"]),
    _condition("pii-short", "size(value) < 4", "CEL_FIELD", tags=["PII"]),
    _condition("nobody", "value != ''", "CEL_FIELD", tags=["NOBODY"]),
    _condition("every-field", "typeName == 'LONG' ; value > 1", "CEL_FIELD"),
]}  # fmt: skip


def _flags(count: int = 64) -> list[bytes]:
    import fastavro

    parsed = fastavro.parse_schema(FLAGS)
    out = []
    for i in range(count):
        flags = {
            "name": ["", "ab", "abcdef"][i % 3],
            "active": i % 2 == 0,
            "maybe": [None, True, False][i % 3],
            "note": [None, "", "xyz", "longer"][i % 4],
            "other": [None, "s", 7][i % 3],
            "level": ["LOW", "HIGH"][i % 2],
            "key": b"ab",
            "count": i % 5,
            "inner": {"on": i % 4 != 0, "label": ["", "lbl"][i % 2]},
        }
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, flags)
        out.append(buf.getvalue())
    return out


def _both(
    schema: Any, rule_set: dict[str, Any], bodies: list[bytes], metadata: Any, mode: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    kept = {"metadata": metadata, "mode": mode}
    alone = jvmscan.rule_run(schema, rule_set, bodies, closures=False, **kept)
    first = jvmscan.rule_run(schema, rule_set, bodies, closures=True, **kept)
    return alone, first


def _same(alone: dict[str, Any], first: dict[str, Any], names: list[str], mode: str) -> None:
    assert len(alone["results"]) == len(first["results"])
    for i, (a, b) in enumerate(zip(alone["results"], first["results"], strict=True)):
        for name, got_a, got_b in zip(names, a["outcomes"], b["outcomes"], strict=True):
            assert got_a == got_b, (mode, i, name, got_a, got_b)
        assert (a["refused"], a["record"]) == (b["refused"], b["record"]), (mode, i)


def _compared(
    schema: Any, rule_set: dict[str, Any], bodies: list[bytes], mode: str
) -> tuple[dict[str, set[str]], dict[str, Any]]:
    """Both roads over ``bodies``, compared record by record (:func:`_same`); the verdicts each
    rule gave (the closures' road), and that road's whole answer."""
    names = [r["name"] for r in rule_set["domainRules"]]
    alone, first = _both(schema, rule_set, bodies, {}, mode)
    _same(alone, first, names, mode)
    verdicts = {
        name: {r["outcomes"][i][0] for r in first["results"]} for i, name in enumerate(names)
    }
    return verdicts, first


@pytest.fixture(scope="module")
def quality_runtime() -> None:
    from tests.stack.kafka import quality_jars

    quality_jars()  # fails (never skips) when they cannot be resolved


@pytest.mark.parametrize("mode", ["WRITE", "READ"])
def test_the_closures_give_celjavas_verdicts_errors_and_bytes_over_the_proof_corpus(
    mode: str, quality_runtime: None
) -> None:
    rule_set = {"domainRules": rules("proof-dlq") + EDGES}
    names = [r["name"] for r in rule_set["domainRules"]]
    bodies = [encode(r) for r in records(N_RECORDS, SEED)]
    alone, first = _both(SCHEMA, rule_set, bodies, METADATA, mode)
    _same(alone, first, names, mode)
    assert alone["evaluations"]["closures"] == alone["evaluations"]["fallback"] == 0
    counts = first["evaluations"]
    verdicts = {o[0] for r in first["results"] for o in r["outcomes"]}
    print(f"\n{mode}: {len(bodies)} records x {len(names)} rules, evaluations {counts}, "
          f"verdicts {sorted(verdicts)}")  # fmt: skip
    # the closures did most of the work, gave some back (errors, nulls) and left some to
    # CEL-Java (comprehensions, map literals, type(), bytes)
    assert counts["closures"] > counts["fallback"] > 0 and counts["celjava"] > 0
    assert {"PASS", "FAIL", "ERROR"} <= verdicts


def test_the_benchs_rule_set_runs_whole_in_the_closures(quality_runtime: None) -> None:
    rule_set = bench_check.RULES
    names = [r["name"] for r in rule_set["domainRules"]]
    bodies = bench_check.bodies()
    alone, first = _both(bench_check.SCHEMA, rule_set, bodies, {}, "WRITE")
    _same(alone, first, names, "WRITE")
    counts = first["evaluations"]
    assert counts["fallback"] == counts["celjava"] == 0 and counts["closures"] > 0, counts


def test_the_benchs_programs_are_compiled_before_its_first_record(quality_runtime: None) -> None:
    # the scan compiles the rules' programs while its consumers connect (Engine.prepare): every
    # program the bench's rules ask for, CEL and CEL_FIELD, guard and body, is one of them
    for closures in (True, False):
        answer = jvmscan.rule_run(
            bench_check.SCHEMA, bench_check.RULES, bench_check.bodies(50), closures=closures
        )
        assert answer["compiled_at_run"] == 0, (closures, answer["compiled_at_run"])
    # a rule set whose fields a walk meets deeper down compiles some at run, as before
    deeper = jvmscan.rule_run(FLAGS, FLAG_RULES, _flags(8))
    assert deeper["compiled_at_run"] > 0


@pytest.mark.parametrize("mode", ["WRITE", "READ"])
def test_the_fast_field_walk_gives_the_full_walks_verdicts_on_every_kind_of_field(
    mode: str, quality_runtime: None
) -> None:
    verdicts, _ = _compared(FLAGS, FLAG_RULES, _flags(), mode)
    # a false boolean fails even the rule whose tag no field has, which passes the others; a
    # tagged union's null branch is given to the expression (and errs)
    assert verdicts["nobody"] == {"PASS", "FAIL"}, verdicts
    assert all("FAIL" in seen for seen in verdicts.values()), verdicts
    assert "ERROR" in verdicts["pii-not-empty"], verdicts


# strings the closures read in place (Avro's Utf8, no String made) when their bytes are ASCII,
# and every other string made a String first: ASCII, empty, accented, CJK, a surrogate pair,
# and bytes that are not UTF-8 (a lone continuation byte, a cut sequence, an encoded surrogate),
# which Java decodes with replacement characters; at the top, in a union, in a list, nested
TEXTS = {"type": "record", "name": "Texts", "namespace": "edge", "fields": [
    {"name": "name", "type": "string", "confluent:tags": ["PII"]},
    {"name": "note", "type": ["null", "string"], "default": None, "confluent:tags": ["PII"]},
    {"name": "words", "type": {"type": "array", "items": "string"}, "confluent:tags": ["PII"]},
    {"name": "plain", "type": "string"},
    {"name": "inner", "type": {"type": "record", "name": "TextsInner", "fields": [
        {"name": "label", "type": "string", "confluent:tags": ["PII"]},
    ]}},
]}  # fmt: skip

STRINGS = [
    b"", b"ab", b"abc", b"b", "ü".encode(), "aü".encode(), "日本語".encode(), "😀".encode(),
    "é".encode(), b"\xff", b"a\xc3", b"\xed\xa0\x80", b"ab\x80",
]  # fmt: skip

TEXT_RULES = {"domainRules": [
    _condition("size-two", "size(message.name) == 2"),
    _condition("size-method", "message.name.size() < 3"),
    _condition("equals-ascii", "message.name == 'ab'"),
    _condition("ascii-not-equals", "'ab' != message.name"),
    _condition("equals-accented", "message.name == 'ü'"),
    _condition("in-ascii", "message.name in ['ab', 'abc', '']"),
    _condition("in-mixed", "message.name in ['ü', 'ab']"),
    _condition("starts", "message.name.startsWith('a')"),
    _condition("ends", "message.name.endsWith('b')"),
    _condition("contains", "message.name.contains('b')"),
    _condition("contains-empty", "message.name.contains('')"),
    _condition("starts-cjk", "message.name.startsWith('日')"),
    _condition("note-equals", "message.note == 'ab'"),
    _condition("note-size", "size(message.note) > 1"),
    _condition("note-starts", "message.note.startsWith('a')"),
    _condition("word-equals", "size(message.words) > 0 && message.words[0] == 'ab'"),
    _condition("two-fields", "message.plain != message.name"),
    _condition("label-in", "message.inner.label in ['ab', 'b']"),
    _condition("field-not-equals", "value != 'ab'", "CEL_FIELD", tags=["PII"]),
    _condition("field-size", "size(value) < 3", "CEL_FIELD", tags=["PII"]),
    _condition("field-starts", "value.startsWith('a')", "CEL_FIELD", tags=["PII"]),
    _condition("field-not-in", "!(value in ['b', 'ü'])", "CEL_FIELD", tags=["PII"]),
    _condition("field-guarded", "name == 'name' ; value != 'abc'", "CEL_FIELD", tags=["PII"]),
    _condition("field-any", "typeName == 'STRING' ; size(value) >= 2", "CEL_FIELD"),
]}  # fmt: skip


def _avro_long(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _avro_string(raw: bytes) -> bytes:
    return _avro_long(len(raw)) + raw


def _texts() -> list[bytes]:
    """TEXTS records, written byte by byte: fastavro would not write bytes that are not UTF-8."""
    out = []
    n = len(STRINGS)
    for i in range(3 * n):
        name, other = STRINGS[i % n], STRINGS[(i * 5 + 1) % n]
        note = b"\x00" if i % 4 == 0 else b"\x02" + _avro_string(other)
        words = [STRINGS[(i + k) % n] for k in range(i % 3)]
        listed = (_avro_long(len(words)) + b"".join(map(_avro_string, words))) if words else b""
        out.append(
            _avro_string(name) + note + listed + b"\x00" + _avro_string(STRINGS[(i * 7) % n])
            + _avro_string(STRINGS[(i * 3 + 2) % n])
        )  # fmt: skip
    return out


@pytest.mark.parametrize("mode", ["WRITE", "READ"])
def test_strings_read_in_place_give_the_strings_verdicts_ascii_or_not(
    mode: str, quality_runtime: None
) -> None:
    verdicts, first = _compared(TEXTS, TEXT_RULES, _texts(), mode)
    # every rule but one meets a record it passes and one it fails (or errs on: a null
    # note's size); every string contains ''
    assert {n for n, seen in verdicts.items() if len(seen) == 1} == {"contains-empty"}, verdicts
    assert {"PASS", "FAIL", "ERROR"} <= set().union(*verdicts.values())
    assert first["evaluations"]["closures"] > 0, first["evaluations"]
