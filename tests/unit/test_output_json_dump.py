"""The JSON report's writer (``json_out.dumps_indented``) gives the very text ``json.dumps``
with ``indent=2, ensure_ascii=False`` gives: the same document, byte for byte, only faster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.evolution.diff import diff
from schemacli.output import diff_report, render
from schemacli.output.json_out import dumps_indented

ROOT = Path(__file__).resolve().parents[2]


def _nested(depth: int) -> object:
    value: object = {"leaf": [1, "x"]}
    for level in range(depth):
        value = {"level": level, "inner": [value, []]}
    return value


VALUES = {
    "empty dict": {},
    "empty list": [],
    "scalars": ["s", 1, -0.0, 1.5e300, True, False, None],
    "text json escapes": ['é \u2028 \x00 \x1b \\ " / \t\n', "\ud83d\ude00"],
    "not numbers": [float("nan"), float("inf"), float("-inf")],
    "flat dict": {"line": 3, "column": 5, "text": '"long"'},
    "empty containers inside": {"a": {}, "b": [], "c": [[], {}], "d": [{"e": {}}]},
    "number and boolean keys": {7: "seven", 2.5: ["x"], True: {"k": 1}, None: None, "s": 1},
    "flat dict with a number key": {1: 2, "a": 3},
    "tuples": {"pair": (1, "a"), "nested": [(1, (2, {"q": ()}))]},
    "a report's shape": {
        "cases": [{"findings": [{"location": {"line": 1}, "fixes": [{"edits": [{}]}]}]}]
    },
    "deeper than the fast writer goes": _nested(80),
}


@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
def test_the_fast_writer_gives_json_dumps_own_text(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_wide_diff_report_renders_as_json_dumps_writes_it():
    # every finding with its fixes proven: the bench's input (bench/bench_fix_scale.py), small
    fields = [{"name": f"f{i}", "type": "long"} for i in range(30)]
    old = {"type": "record", "name": "Wide", "namespace": "bench", "fields": fields}
    new = {**old, "fields": [{**f, "type": "string"} for f in fields[:20]] + fields[20:]}
    report = diff_report(
        diff(
            load_schema_text(json.dumps(old, indent=2), "old.avsc"),
            load_schema_text(json.dumps(new, indent=2), "new.avsc"),
        )
    )
    text = render(report, "json")
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    assert sum(len(f.get("fixes", ())) for c in json.loads(text)["cases"] for f in c["findings"])
