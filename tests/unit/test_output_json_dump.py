"""The JSON report's writer (``json_out.dumps_indented``) gives the very text ``json.dumps``
with ``indent=2, ensure_ascii=False`` gives: the same document, byte for byte, only faster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.evolution.diff import diff
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding, Kind
from schemacli.contracts.gate.gate import gate
from schemacli.contracts.store.tree import FileTree
from schemacli.errors import Location
from schemacli.output import Case, Report, diff_report, gate_report, render
from schemacli.output.json_out import dumps_indented, finding_json
from schemacli.output.json_out import render as render_json

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


def _as_dicts(report) -> str:
    """The report's JSON as the dict road writes every case (``json.dumps`` itself)."""
    from schemacli.output import to_jsonable

    payload = {
        "command": report.command,
        "title": report.title,
        "verdict": report.verdict,
        "cases": [
            {
                "name": case.name,
                "verdict": case.verdict,
                **({"source": case.source} if case.source else {}),
                **{key: to_jsonable(value) for key, value in case.columns},
                "findings": [finding_json(f) for f in case.findings],
            }
            for case in report.cases
        ],
        "notes": list(report.notes),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def test_cases_without_findings_written_at_once_give_the_dict_roads_text():
    finding = Finding(Kind.TYPE_MISMATCH, "changed", Location("s/v2.avsc", "/f", 3, 5))
    cases = (
        Case(
            "orders-value",
            "compatible",
            columns=(("level", "BACKWARD"), ("versions", 20), ("checked", tuple(range(2, 21)))),
        ),  # fmt: skip
        Case(
            "one-value", "compatible", columns=(("level", "FULL"), ("versions", 1), ("checked", ()))
        ),  # fmt: skip
        Case('é "quoted" \u2028 \x1b', "compatible", columns=(("note", "x\ny"),)),
        Case("no-columns", "compatible"),
        Case("with-source", "compatible", source="s/v1.avsc"),
        Case("broken", "incompatible", findings=(finding,), columns=(("versions", 2),)),
        Case("named-twice", "compatible", columns=(("name", "other"), ("n", 1))),
        Case("same-key", "compatible", columns=(("n", 1), ("n", 2))),
        Case("a-flag", "compatible", columns=(("on", True), ("big", 10**30))),
        Case("a-list", "compatible", columns=(("checked", [1, 2]), ("level", Level.FULL))),
        Case("strings", "compatible", columns=(("checked", ("a", "b")),)),
    )
    report = Report(command="gate", title="gate s", verdict="incompatible", cases=cases)
    assert render_json(report) == _as_dicts(report)


def test_a_gate_reports_json_is_the_dict_roads_text(tmp_path):
    from tests.unit.test_store import levels_for, make_store, ride

    store = make_store(
        tmp_path,
        {
            "rides-value": [ride(), ride()],
            "broken-value": [ride(), ride(total_type="string")],
            "one-value": [ride()],
        },
    )
    report = gate_report(gate(FileTree(store), levels_for(store)))
    assert any(case.findings for case in report.cases)
    assert render_json(report) == _as_dicts(report)
