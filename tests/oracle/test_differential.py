"""Differential tests: our parser and compatibility engine against Apache Avro Java itself.

Every generated schema must be accepted or refused exactly as Java's Schema.Parser does (with the
same Parsing Canonical Form when accepted), and every generated pair, in both directions, must
get Java's verdict and the same set of (incompatibility type, location). The pair count is
SCHEMACLI_ORACLE_PAIRS (default 2500 pairs = 5000 checks), the seed SCHEMACLI_ORACLE_SEED.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.evolution.compat import AMBIGUOUS_FIELD_MATCH, check
from schemacli.errors import SchemaParseError

from .generator import broken_schemas, named_pairs, pairs

pytestmark = pytest.mark.oracle

PAIRS = int(os.environ.get("SCHEMACLI_ORACLE_PAIRS", "2500"))
SEED = int(os.environ.get("SCHEMACLI_ORACLE_SEED", "20251122"))
NAMED_PAIRS = int(os.environ.get("SCHEMACLI_ORACLE_NAMED_PAIRS", "400"))


def our_parse(schema: Any) -> dict[str, Any]:
    try:
        return {"ok": True, "canonical": canonical_form(parse_schema(schema))}
    except SchemaParseError as exc:
        return {"ok": False, "error": exc.message}


def our_compat(reader: Any, writer: Any) -> dict[str, Any]:
    try:
        result = check(reader, writer)
    except SchemaParseError as exc:
        return {"parse_error": exc.message}
    kinds = {(f.kind, f.location.pointer) for f in result.findings}
    if any(kind == AMBIGUOUS_FIELD_MATCH for kind, _ in kinds):
        return {"error": "ambiguous field"}
    return {"compatible": result.compatible, "incompatibilities": sorted(kinds)}


def java_compat(answer: dict[str, Any]) -> dict[str, Any]:
    if "parse_error" in answer:
        return {"parse_error": answer["parse_error"]}
    if "error" in answer:
        return {"error": answer["error"]}
    kinds = {(i["type"], i["location"]) for i in answer["incompatibilities"]}
    return {"compatible": answer["compatible"], "incompatibilities": sorted(kinds)}


def same(ours: dict[str, Any], java: dict[str, Any]) -> bool:
    if set(ours) != set(java):
        return False
    if "parse_error" in java or "error" in java:
        return True
    return ours == java


def report(disagreements: list[tuple[Any, ...]]) -> str:
    # The smallest disagreement first: it is the easiest to read.
    disagreements.sort(key=lambda d: len(json.dumps(d[0])))
    lines = [f"{len(disagreements)} disagreement(s) with Apache Avro Java; the smallest:"]
    for item in disagreements[:3]:
        lines.append(json.dumps(item[0], ensure_ascii=False))
        lines.append(f"  java: {json.dumps(item[1], ensure_ascii=False)}")
        lines.append(f"  ours: {json.dumps(item[2], ensure_ascii=False)}")
    return "\n".join(lines)


def test_parser_accepts_and_refuses_exactly_what_java_does(oracle):
    schemas = [s for pair in pairs(SEED, PAIRS // 4) for s in pair]
    schemas += list(broken_schemas(SEED, max(PAIRS // 4, 200)))
    answers = oracle.ask_many([{"op": "parse", "schema": s} for s in schemas])
    disagreements = []
    refused = 0
    for schema, java in zip(schemas, answers, strict=True):
        ours = our_parse(schema)
        refused += not java["ok"]
        if ours["ok"] != java["ok"] or (ours["ok"] and ours["canonical"] != java["canonical"]):
            disagreements.append(({"schema": schema}, java, ours))
    assert not disagreements, report(disagreements)
    assert refused > len(schemas) // 20, "the corpus should exercise refusals too"


def test_compatibility_agrees_with_java_on_every_generated_pair_both_ways(oracle):
    requests = []
    for a, b in pairs(SEED, PAIRS):
        requests.append({"op": "compat", "reader": a, "writer": b})
        requests.append({"op": "compat", "reader": b, "writer": a})
    answers = oracle.ask_many(requests)
    disagreements = []
    verdicts = {"compatible": 0, "incompatible": 0, "error": 0, "parse_error": 0}
    for request, answer in zip(requests, answers, strict=True):
        java = java_compat(answer)
        ours = our_compat(request["reader"], request["writer"])
        # The same pair as JSON text: parse and result caches, and the shortcut for a text
        # compared with itself, must not change a thing.
        ours_text = our_compat(json.dumps(request["reader"]), json.dumps(request["writer"]))
        if ours_text != ours:
            disagreements.append(
                (
                    {"reader": request["reader"], "writer": request["writer"], "as": "text"},
                    java,
                    ours_text,
                )
            )
        if "compatible" in java:
            verdicts["compatible" if java["compatible"] else "incompatible"] += 1
        else:
            verdicts[next(iter(java))] += 1
        if not same(ours, java):
            disagreements.append(
                ({"reader": request["reader"], "writer": request["writer"]}, java, ours)
            )
    assert not disagreements, report(disagreements)
    # The corpus must exercise both verdicts, not only one.
    assert verdicts["compatible"] > len(requests) // 10, verdicts
    assert verdicts["incompatible"] > len(requests) // 10, verdicts


def test_names_and_aliases_spelled_every_way_resolve_as_java_resolves_them(oracle):
    # Full names, short names, a leading dot, empty and nested namespaces; aliases on records,
    # enums and fixed; each pair checked both ways, so the alias is on the reader in one and on
    # the writer in the other. Parsing must agree too (a reference Java cannot resolve).
    requests = []
    for a, b in named_pairs(SEED, NAMED_PAIRS):
        requests.append({"op": "compat", "reader": a, "writer": b})
        requests.append({"op": "compat", "reader": b, "writer": a})
    schemas = [r["reader"] for r in requests]
    parsed = oracle.ask_many([{"op": "parse", "schema": s} for s in schemas])
    answers = oracle.ask_many(requests)
    disagreements = []
    verdicts = {"compatible": 0, "incompatible": 0, "refused": 0}
    for schema, java in zip(schemas, parsed, strict=True):
        ours = our_parse(schema)
        if ours["ok"] != java["ok"] or (ours["ok"] and ours["canonical"] != java["canonical"]):
            disagreements.append(({"schema": schema}, java, ours))
    for request, answer in zip(requests, answers, strict=True):
        java = java_compat(answer)
        ours = our_compat(request["reader"], request["writer"])
        if "compatible" in java:
            verdicts["compatible" if java["compatible"] else "incompatible"] += 1
        else:
            verdicts["refused"] += 1
        if not same(ours, java):
            disagreements.append(
                ({"reader": request["reader"], "writer": request["writer"]}, java, ours)
            )
    assert not disagreements, report(disagreements)
    assert verdicts["compatible"] > len(requests) // 10, verdicts
    assert verdicts["incompatible"] > len(requests) // 10 and verdicts["refused"], verdicts


def _kind_fixtures() -> dict[str, Any]:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "unit" / "test_compat_kinds.py"
    spec = importlib.util.spec_from_file_location("_compat_kind_fixtures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KIND_FIXTURES


def test_hand_written_kind_fixtures_are_what_java_reports(oracle):
    for kind, (reader, writer, location) in _kind_fixtures().items():
        java = java_compat(oracle.compat(reader, writer))
        if kind == AMBIGUOUS_FIELD_MATCH:
            assert "matches multiple fields" in java["error"]
        else:
            assert java == {"compatible": False, "incompatibilities": [(kind, location)]}, kind


# Java behaviour that surprises people, documented in docs/compatibility.md: each case is
# (reader, writer, expected (kind, location) set), checked against Java and against us.
_X_INT = {"type": "record", "name": "X", "fields": [{"name": "v", "type": "int"}]}
_X_STRING = {"type": "record", "name": "X", "fields": [{"name": "v", "type": "string"}]}
QUIRKS = {
    "namespaces_are_ignored": (
        {"type": "record", "name": "a.R", "fields": []},
        {"type": "record", "name": "b.R", "fields": []},
        [],
    ),
    "memoised_pair_reports_its_first_location": (
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": ["null", _X_INT]}, {"name": "b", "type": "X"}],
        },
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": _X_STRING}, {"name": "b", "type": "X"}],
        },
        [("MISSING_UNION_BRANCH", "/fields/0/type"), ("TYPE_MISMATCH", "/fields/0/type")],
    ),
    "enum_default_field_missing_in_writer_is_compared_with_the_record": (
        {
            "type": "record",
            "name": "R",
            "fields": [
                {
                    "name": "e",
                    "type": {"type": "enum", "name": "E", "symbols": ["A"], "default": "A"},
                }
            ],
        },
        {"type": "record", "name": "R", "fields": []},
        [("TYPE_MISMATCH", "/fields/0/type")],
    ),
    "union_branches_report_only_the_union": (
        [_X_INT, "string"],
        [dict(_X_INT, fields=[{"name": "v", "type": "long"}]), "int"],
        [("MISSING_UNION_BRANCH", "/0"), ("MISSING_UNION_BRANCH", "/1")],
    ),
    "int_is_not_promoted_to_string": ("string", "int", [("TYPE_MISMATCH", "/")]),
}


@pytest.mark.parametrize("case", sorted(QUIRKS))
def test_documented_java_quirks_hold_for_java_and_for_us(oracle, case):
    reader, writer, expected = QUIRKS[case]
    java = java_compat(oracle.compat(reader, writer))
    ours = our_compat(reader, writer)
    assert java == {"compatible": not expected, "incompatibilities": sorted(expected)}
    assert ours == java


def test_every_generated_schema_checked_against_itself_agrees_with_java(oracle):
    # check(text, text) parses the text once and compares the tree with itself, which takes the
    # "no field aliases: compatible with itself" shortcut; two separately parsed copies take the
    # full path. Both must give Java's answer for the schema against itself.
    from schemacli.contracts.evolution.compat import _self_compatible

    schemas = [s for pair in pairs(SEED + 1, PAIRS // 2) for s in pair]
    schemas = [s for s in schemas if our_parse(s)["ok"]]
    answers = oracle.ask_many([{"op": "compat", "reader": s, "writer": s} for s in schemas])
    disagreements = []
    shortcut = full = 0
    for schema, answer in zip(schemas, answers, strict=True):
        java = java_compat(answer)
        text = json.dumps(schema)
        if _self_compatible(parse_schema(text)):
            shortcut += 1
        else:
            full += 1
        for ours in (our_compat(text, text), our_compat(schema, json.loads(text))):
            if not same(ours, java):
                disagreements.append(({"reader": schema, "writer": schema}, java, ours))
    assert not disagreements, report(disagreements)
    assert shortcut > len(schemas) // 2 and full > 0, (shortcut, full)


def nested_arrays(levels: int) -> str:
    return '{"type":"array","items":' * levels + '"int"' + "}" * levels


def nested_records(levels: int, leaf: str = '"int"') -> str:
    text = leaf
    for i in range(levels):
        text = f'{{"type":"record","name":"R{i}","fields":[{{"name":"f","type":{text}}}]}}'
    return text


@pytest.mark.parametrize(
    "text",
    [nested_arrays(1000), nested_arrays(1001), nested_records(333), nested_records(334)],
    ids=["1000 arrays", "1001 arrays", "333 records (999 levels)", "334 records (1002 levels)"],
)
def test_schemas_nested_up_to_javas_json_limit_parse_and_deeper_ones_are_refused(oracle, text):
    java = oracle.parse({"text": text})
    ours = our_parse(text)
    assert ours["ok"] == java["ok"], (java, ours)
    if java["ok"]:
        assert ours["canonical"] == java["canonical"]
    else:
        assert "nesting depth (1001) exceeds the maximum allowed (1000" in java["error"]
        assert "reads at most 1000" in ours["error"]


NUMBERS = {  # a default's JSON number -> what it is (Jackson counts digits, not characters)
    "9" * 1000: "1000-digit integer",
    "9" * 1001: "1001-digit integer",
    "-" + "9" * 1000: "negative 1000-digit integer",
    "9" * 5000: "5000-digit integer (past Python's 4300)",
    "1." + "0" * 999: "1000 digits with a fraction",
    "1." + "0" * 1000: "1001 digits with a fraction",
    "1" + "0" * 998 + "e1": "1000 digits with an exponent",
    "1" + "0" * 999 + "e1": "1001 digits with an exponent",
    "1" + "0" * 998 + "e+1": "1000 digits with a signed exponent",
    "1" + "0" * 998 + "E-12": "1001 digits with a signed exponent",
    "0." + "0" * 1000: "a leading 0 and a 1000-digit fraction",
}


@pytest.mark.parametrize("number", NUMBERS, ids=NUMBERS.values())
def test_numbers_up_to_javas_length_limit_parse_and_longer_ones_are_refused(oracle, number):
    field = f'{{"name":"a","type":"double","default":{number}}}'
    text = f'{{"type":"record","name":"R","fields":[{field}]}}'
    java = oracle.parse({"text": text})
    ours = our_parse(text)
    assert ours["ok"] == java["ok"], (java, ours)
    if not java["ok"]:
        assert "exceeds the maximum allowed (1000" in java["error"]
        assert "reads at most 1000" in ours["error"]


def test_a_check_between_schemas_nested_as_deep_as_java_reads_gets_javas_verdict(oracle):
    for reader, writer in [
        (nested_records(333, '"long"'), nested_records(333)),
        (nested_records(333), nested_records(333, '"long"')),
        (nested_arrays(1000), nested_arrays(1000)),
    ]:
        java = java_compat(oracle.compat({"text": reader}, {"text": writer}))
        assert our_compat(reader, writer) == java


@pytest.mark.parametrize("bom", [False, True], ids=["no BOM", "BOM"])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_java_reads_a_schema_file_in_utf16_or_utf32_as_we_do(oracle, tmp_path, encoding, bom):
    from schemacli.contracts.avro.loader import load_schema_file

    text = (
        '{"type":"record","name":"Position","namespace":"com.acme","fields":['
        '{"name":"x","type":"int","doc":"\u00e9"}]}'
    )
    path = tmp_path / "position.avsc"
    path.write_bytes((("\ufeff" if bom else "") + text).encode(encoding))
    java = oracle.ask({"op": "parse_files", "paths": [str(path)]})
    assert java["ok"], java
    assert canonical_form(load_schema_file(path).schema) == java["canonical"]


def test_java_resolves_types_from_files_named_anything_as_we_do(oracle):
    # Java parses the files with one parser, dependencies first (avro-maven-plugin's imports);
    # we find them by the names they define, in any order.
    from pathlib import Path

    from schemacli.contracts.avro.loader import load_schema_file

    index = Path(__file__).resolve().parents[1] / "fixtures" / "avsc" / "index"
    order = ["model/position.avsc", "enums/_b.avsc", "model/order-item.avsc", "order.avsc"]
    java = oracle.ask({"op": "parse_files", "paths": [str(index / p) for p in order]})
    assert java["ok"], java
    assert canonical_form(load_schema_file(index / "order.avsc").schema) == java["canonical"]
    fallback = Path(__file__).resolve().parents[1] / "fixtures" / "avsc" / "fallback"
    paths = [str(fallback / "money.avsc"), str(fallback / "price.avsc")]
    java = oracle.ask({"op": "parse_files", "paths": paths})
    assert java["ok"], java  # Java falls back to the null namespace (we warn)
    assert canonical_form(load_schema_file(fallback / "price.avsc").schema) == java["canonical"]
