"""The wide change of bench/bench_fix_scale.py keeps its documents while its fixes get cheaper.

``diff`` and ``check`` of a record whose fields turn from ``long`` to ``string`` (every one, and
half of them) report every finding with its fixes proven at each level. Making the proof cheaper
(edits made once per plan, the field road's shortcuts, the JSON report written without the
redaction's walk when nothing in it could be masked) must not change which fixes users see:
the same fixes, titles, order and edits. These are the SHA-256 digests of the documents as
``409b6a6`` wrote them, before that work; a change that means to alter the documents updates
them (and says why in its commit).
"""

from __future__ import annotations

import functools
import hashlib
import json

import pytest

from bench.bench_fix_scale import pair
from schemacli.contracts.avro.loader import load_schema_text
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.diff import diff
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.fixes import proof, suggest
from schemacli.contracts.fixes.fixing import fix_candidate
from schemacli.contracts.fixes.proof import Proof
from schemacli.output import OutputFormat, Report, check_report, diff_report, render

# (fields, changed, command, format) -> the document's digest as 409b6a6 wrote it
WRITTEN = {
    (100, 100, "diff", "json"): "f991aec5336b5cceccf28a5416e5d19bd3d68bb9bb8163e6afc8612011701a6e",
    (100, 100, "diff", "text"): "e016c0b8090c2797192e0ff724b2172b47c51e7ffcbd153a726cc0c3baa3bf9f",
    (100, 100, "check", "json"): "b40d0809cb8e192724baa6d1e417313ce1209001cf6b20cff7ff34685854246d",
    (100, 100, "check", "text"): "16898741385678383bb974588dd66a7b338857bff8186708a4f1ec2151ae3e6b",
    (100, 50, "diff", "json"): "75566fe033816c7c21ea46117ae5dc15ea0fb05efacd200fd0d52342aa3b4d04",
    (100, 50, "diff", "text"): "118241d730457e59a247ebb9309d0a8eed0ed562c0d4382543dd4c0df7a3907b",
    (100, 50, "check", "json"): "d34fe9b22fe4c3f9fc14ae01cca722277cbb0026cecbd2756f4d38f71e1b6117",
    (100, 50, "check", "text"): "b456f774fbf237aed33777084fcf12ffbb1128e4563d2dc2e86a5bf621a98a1e",
}


def _report(fields: int, changed: int, command: str) -> Report:
    old, new = pair(fields, changed)
    candidate = load_schema_text(new, "new.avsc")
    if command == "diff":
        return diff_report(diff(load_schema_text(old, "old.avsc"), candidate))
    earlier = load_schema_text(old, "v1.avsc", version=1)
    checked = check_candidate(candidate, [earlier], subject="wide-value", level=Level.FULL)
    return check_report(checked)


@pytest.mark.parametrize(("fields", "changed", "command", "fmt"), sorted(WRITTEN))
def test_a_wide_changes_document_and_its_fixes_are_the_ones_written_before(
    fields, changed, command, fmt
):
    document = render(_report(fields, changed, command), OutputFormat(fmt))
    digest = hashlib.sha256(document.encode("utf-8")).hexdigest()
    assert digest == WRITTEN[(fields, changed, command, fmt)]


def _documents(old: str, new: str) -> list[str]:
    """Every document ``diff`` and ``check`` (FULL, FORWARD_TRANSITIVE over two versions)
    write of the change, in every format, and the text ``check --fix --unsafe-fixes`` writes."""
    out = []
    candidate = load_schema_text(new, "new.avsc")
    earlier = load_schema_text(old, "v1.avsc", version=1)
    reports = [diff_report(diff(load_schema_text(old, "old.avsc"), candidate))]
    for level, history in ((Level.FULL, [earlier]), (Level.FORWARD_TRANSITIVE, [earlier] * 2)):
        checked = check_candidate(candidate, history, subject="wide-value", level=level)
        reports.append(check_report(checked))
    for report in reports:
        out += [render(report, fmt) for fmt in OutputFormat]
    fixed = fix_candidate(candidate, [earlier], subject="wide-value", level=Level.FULL, unsafe=True)
    out.append(fixed.text)
    return out


def _mixed(fields: int) -> tuple[str, str]:
    """A wide change of several shapes: types changed, defaults added, aliases, a field
    renamed, a field split's name taken, a field removed, a union."""
    old = json.loads(pair(fields, 0)[0])
    old["fields"].append({"name": "f3_string", "type": "long"})
    new = json.loads(json.dumps(old))
    for i, f in enumerate(new["fields"][:fields]):
        f["type"] = [
            "string",
            ["null", "string"],
            "int",
            "long",
            {"type": "array", "items": "long"},
            "double",
        ][i % 6]
        if i % 7 == 0:
            kind = f["type"]
            f["default"] = [] if isinstance(kind, dict) else None if isinstance(kind, list) else 0
            if kind == "string":
                f["default"] = ""
        if i % 11 == 0:
            f["aliases"] = [f"old_{i}"]
    del new["fields"][fields // 2]
    new["fields"][5] = {"name": "g5", "type": "string", "aliases": ["f5"]}  # renamed
    return json.dumps(old, indent=2) + "\n", json.dumps(new, indent=2) + "\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [pair(60, 60), pair(60, 30), _mixed(40)],
    ids=["all changed", "half changed", "mixed shapes"],
)
def test_fixes_proven_once_per_shape_write_the_documents_of_fixes_proven_one_by_one(
    old, new, monkeypatch
):
    shared = _documents(old, new)
    monkeypatch.setattr(suggest, "Proof", functools.partial(Proof, by_shape=False))
    one_by_one = _documents(old, new)
    assert len(shared) == len(one_by_one) == 3 * len(OutputFormat) + 1
    for a, b in zip(shared, one_by_one, strict=True):
        assert a == b


def test_fixes_proven_once_per_shape_run_out_of_proving_where_one_by_one_would(monkeypatch):
    # about one proof per field: the bound falls in the middle of the wide change
    monkeypatch.setattr(proof, "BUDGET_PER_FIELD", 1)
    monkeypatch.setattr(proof, "BUDGET_FLOOR", 0)
    old, new = pair(60, 60)
    shared = _documents(old, new)
    assert "Not proven here" in shared[0] and "(unsafe)" in shared[0]
    monkeypatch.setattr(suggest, "Proof", functools.partial(Proof, by_shape=False))
    assert shared == _documents(old, new)
