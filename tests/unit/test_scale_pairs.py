"""check and diff at scale: wide records, many findings, unions of many records.

What these prove is behaviour (the same findings, the right place), never speed: the speed is
measured by bench/bench_scale_pairs.py.
"""

from __future__ import annotations

import json

from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.compat import MISSING_UNION_BRANCH, check
from schemacli.contracts.evolution.diff import diff
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.jsontext.document import _navigate


def _record(types: list[str]) -> str:
    fields = [{"name": f"f{i}", "type": t} for i, t in enumerate(types)]
    return json.dumps({"type": "record", "name": "R", "fields": fields}, indent=2)


def _union(names: list[str]) -> str:
    branches = [
        {"type": "record", "name": n, "namespace": "u", "fields": [{"name": "a", "type": "int"}]}
        for n in names
    ]
    return json.dumps(branches, indent=2)


def test_a_finding_in_every_field_is_placed_at_its_own_field_line():
    old = load_schema_text(_record(["int"] * 300), "old.avsc")
    new = load_schema_text(_record(["long"] * 300), "new.avsc")
    report = check_candidate(new, [old], subject="s", level=Level.FORWARD)
    assert len(report.findings) == 300
    text_lines = old.document.text.splitlines()
    for i, finding in enumerate(report.findings):
        assert finding.location.pointer == f"/fields/{i}/type"
        assert f'"f{i}"' in text_lines[finding.location.line - 2]


def test_navigating_with_a_shared_member_cache_finds_what_a_fresh_walk_finds():
    text = '{"a": [1, {"b": 2, "b": 3}, [4, 5]], "c": {"d": null}}'
    pointers = ["", "/a", "/a/0", "/a/1/b", "/a/2/1", "/a/3", "/c/d", "/c/x", "/a/x", "/z"]
    for last_wins in (False, True):
        shared: dict = {}
        for pointer in pointers * 2:
            assert _navigate(text, pointer, last_wins=last_wins, children=shared) == _navigate(
                text, pointer, last_wins=last_wins
            )


def test_diff_full_verdict_is_backward_and_forward_together_as_check_gives_it():
    old = load_schema_text(_record(["int", "string", "long"]), "old.avsc")
    new = load_schema_text(_record(["long", "bytes", "int"]), "new.avsc")
    result = diff(old, new)
    for level in (Level.NONE, Level.BACKWARD, Level.FORWARD, Level.FULL):
        report = check_candidate(new, [old], subject="", level=level)
        verdict = result.verdict(level)
        assert (verdict.compatible, verdict.findings) == (report.compatible, report.findings)


def test_diff_names_the_field_whose_union_lost_a_branch():
    def record(pay: list[str]) -> str:
        return json.dumps({"type": "record", "name": "R", "fields": [{"name": "pay", "type": pay}]})

    old, new = record(["null", "string", "long"]), record(["null", "string"])
    (finding,) = diff(old, new).verdict(Level.BACKWARD).findings
    assert finding.kind == MISSING_UNION_BRANCH
    assert finding.location.pointer == "/fields/0/type/2"
    assert finding.message.startswith("Field 'pay':")
    assert "At the top" not in finding.message


def test_a_union_of_many_records_missing_one_reports_only_that_branch():
    names = [f"B{i}" for i in range(2000)]
    old, new = _union(names), _union(names[:700] + names[701:])
    backward = check(new, old)
    assert not backward.compatible
    assert [(f.kind, f.location.pointer) for f in backward.findings] == [
        (MISSING_UNION_BRANCH, "/700")
    ]
    assert check(old, new).compatible


def test_a_branch_skipped_in_a_union_trial_replays_java_s_trial_location():
    # Java tries reader branch A against writer record B inside field u's union (on a fresh
    # location) and memoises it; field v meets the same pair again and reports that location.
    reader = {
        "type": "record",
        "name": "R",
        "fields": [
            {
                "name": "u",
                "type": [
                    {"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]},
                    {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]},
                ],
            },
            {"name": "v", "type": "A"},
        ],
    }
    writer = {
        "type": "record",
        "name": "R",
        "fields": [
            {
                "name": "u",
                "type": {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]},
            },
            {"name": "v", "type": "B"},
        ],
    }
    found = [(f.kind, f.location.pointer) for f in check(reader, writer).findings]
    assert found == [("NAME_MISMATCH", "/name")]
