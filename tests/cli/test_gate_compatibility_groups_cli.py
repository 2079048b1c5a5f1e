"""`gate` with data contracts in the store (subjects/<s>/contract.json, v<N>.contract.json, as
`pull` writes them): versions of different compatibility groups are not compared, as Confluent
does, and a version that starts a new group needs a DOWNGRADE migration rule; a contract file
that is not the JSON pull writes is an input error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

runner = CliRunner()
V1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
V2 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]}  # a break
V3 = {**V2, "fields": [*V2["fields"], {"name": "b", "type": ["null", "int"], "default": None}]}
DOWN = {"migrationRules": [{"name": "d", "kind": "TRANSFORM", "type": "JSONATA",
                            "mode": "DOWNGRADE", "expr": "$"}]}  # fmt: skip


def contract(major: int, rules: dict | None = None) -> dict:
    return {"metadata": {"properties": {"major_version": str(major)}}, "ruleSet": rules or {}}


def store(tmp_path: Path, files: dict[str, object]) -> Path:
    folder = tmp_path / "store/subjects/s-value"
    folder.mkdir(parents=True)
    for name, content in files.items():
        (folder / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return tmp_path / "store"


def gate(root: Path):
    return runner.invoke(app, ["gate", "--store", str(root), "--no-cache", "-o", "json"])


def kinds(result) -> list[str]:
    doc = json.loads(result.stdout)
    return [f["kind"] for s in doc["cases"] for f in s["findings"]]


GROUP = {"compatibilityGroup": "major_version"}


def test_a_break_into_a_new_group_with_a_downgrade_rule_passes(tmp_path):
    root = store(tmp_path, {"v1.avsc": V1, "v2.avsc": V2, "contract.json": GROUP,
                            "v1.contract.json": contract(1),
                            "v2.contract.json": contract(2, DOWN)})  # fmt: skip
    r = gate(root)
    assert r.exit_code == 0, r.output


def test_a_new_group_without_a_downgrade_rule_fails_naming_the_version(tmp_path):
    root = store(tmp_path, {"v1.avsc": V1, "v2.avsc": V2, "contract.json": GROUP,
                            "v1.contract.json": contract(1),
                            "v2.contract.json": contract(2)})  # fmt: skip
    r = gate(root)
    assert r.exit_code == 1 and kinds(r) == ["MISSING_MIGRATION_RULE"]


def test_within_a_group_versions_are_still_checked(tmp_path):
    root = store(tmp_path, {"v1.avsc": V1, "v2.avsc": V2, "contract.json": GROUP,
                            "v1.contract.json": contract(2),
                            "v2.contract.json": contract(2)})  # fmt: skip
    r = gate(root)
    assert r.exit_code == 1 and "TYPE_MISMATCH" in kinds(r)


def test_a_compatible_version_in_the_new_group_is_checked_against_its_group_only(tmp_path):
    root = store(tmp_path, {"v1.avsc": V1, "v2.avsc": V2, "v3.avsc": V3, "contract.json": GROUP,
                            "v1.contract.json": contract(1), "v2.contract.json": contract(2, DOWN),
                            "v3.contract.json": contract(2)})  # fmt: skip
    r = gate(root)
    assert r.exit_code == 0, r.output


def test_without_a_compatibility_group_a_break_is_a_break(tmp_path):
    root = store(tmp_path, {"v1.avsc": V1, "v2.avsc": V2, "v2.contract.json": contract(2, DOWN)})
    r = gate(root)
    assert r.exit_code == 1 and "TYPE_MISMATCH" in kinds(r)


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("contract.json", '{"compatibilityGroup": ', "contract.json"),
        ("contract.json", {"compatibilityGroup": 3}, "compatibilityGroup must be"),
        ("v2.contract.json", "[1]", "a contract file is a JSON object"),
        ("v2.contract.json", {"metadata": {"properties": []}}, "metadata.properties must be"),
    ],
)
def test_a_bad_contract_file_is_an_input_error_naming_it(tmp_path, name, content, words):
    root = store(tmp_path, {"v1.avsc": V1, "v2.avsc": V3, name: content})
    r = gate(root)
    assert r.exit_code == 2, r.output
    assert words in r.output and "Traceback" not in r.output
