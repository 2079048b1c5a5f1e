"""`schemacli register --major-version N --rules FILE`: bad flags and rules files refused before
any registry call (exit 2, located, nothing registered); a registry that drops what it was given
(the in-process fake keeps no metadata, like Apicurio) is exit 3 naming it. The real round trip
is tests/integration/test_migration_rules_registry.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
RULES = {
    "metadata": {"properties": {"major_version": "2"}},
    "ruleSet": {"migrationRules": [{"name": "d", "kind": "TRANSFORM", "type": "JSONATA",
                                    "mode": "DOWNGRADE", "expr": "$", "onFailure": "ERROR"}]},
}  # fmt: skip


def _rules(tmp_path: Path, content: object) -> Path:
    p = tmp_path / "rules.json"
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content if isinstance(content, str) else json.dumps(content))
    return p


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{\n  "ruleSet": [\n', "rules.json:3:1"),
        (b"\x00\xff\xfe" * 50, "rules.json"),
        ({"ruleSet": {}}, "no ruleSet.migrationRules"),
        ({"ruleSet": {"migrationRules": [{"name": "x"}]}}, "each with an expr"),
        ({**RULES, "metadata": []}, "metadata is not an object"),
        ([1, 2], "no ruleSet.migrationRules"),
        ("[" * 100_000 + "]" * 100_000, "nested 100000 levels"),
        ('{"ruleSet": {"migrationRules": [{"n": ' + "9" * 5000 + "}]}}", "5000 digits"),
        ('{"ruleSet": {"migrationRules": [{"expr": "$", "n": NaN}]}}', "NaN is not a JSON value"),
        ('{"ruleSet": {"migrationRules": [{"expr": "$", "n": 1e400}]}}', "too large for a double"),
        ('{"ruleSet": {"migrationRules": [{"expr": "$", "n": -Infinity}]}}', "not a JSON value"),
    ],
)
def test_a_bad_rules_file_is_refused_before_the_registry(fake_registry_cli, fake, tmp_path,
                                                         content, words):  # fmt: skip
    r = fake_registry_cli("register", V1, "-s", "t-value", "--major-version", "2",
                          "--rules", _rules(tmp_path, content))  # fmt: skip
    assert r.exit_code == 2, r.output
    assert words in r.output and "Traceback" not in r.output
    assert not fake.requests


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_a_rules_path_that_is_no_file_is_refused(fake_registry_cli, fake, tmp_path, kind):
    p = tmp_path / "rules.json"
    if kind == "directory":
        p.mkdir()
    r = fake_registry_cli("register", V1, "-s", "t-value", "--major-version", "2", "--rules", p)
    assert r.exit_code == 2 and "rules.json" in r.output and not fake.requests


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--compatibility-group"], "give --major-version"),
        (["--major-version", "2", "--dry-run"], "does not combine"),
        (["--major-version", "0"], "--major-version"),
        (["--major-version", "x"], "--major-version"),
        (["--major-version", "\u0662"], "--major-version"),  # an Arabic-Indic two
        (["--major-version", "\uff12"], "--major-version"),  # a fullwidth two
        (["--major-version", "2", "--property", ""], "not a metadata property name"),
        (["--major-version", "2", "--property", "  "], "not a metadata property name"),
        (["--major-version", "2", "--property", "a\nb"], "not a metadata property name"),
    ],
)
def test_bad_major_version_flags_are_usage_errors(fake_registry_cli, fake, tmp_path, args, words):
    rules = _rules(tmp_path, RULES)
    args = [str(rules) if a == "RULES" else a for a in args]
    r = fake_registry_cli("register", V1, "-s", "t-value", *args)
    assert r.exit_code == 2 and words in r.output and not fake.requests


def test_a_registry_that_drops_the_metadata_is_exit_3_naming_it(fake_registry_cli, fake, tmp_path):
    r = fake_registry_cli("register", V1, "-s", "t-value", "--major-version", "2",
                          "--rules", _rules(tmp_path, RULES))  # fmt: skip
    assert r.exit_code == 3, r.output
    assert f"the registry at {fake.url}" in r.output
    assert "did not keep metadata.properties.major_version" in r.output
    assert "stored, as version 1" in r.output
    sent = [s.body for s in fake.requests if s.method == "POST" and s.path.endswith("/versions")]
    assert sent[0]["metadata"] == RULES["metadata"] and sent[0]["ruleSet"] == RULES["ruleSet"]


def test_a_registry_that_drops_the_compatibility_group_stops_before_registering(
    fake_registry_cli, fake, tmp_path
):
    r = fake_registry_cli("register", V1, "-s", "t-value", "--major-version", "2",
                          "--rules", _rules(tmp_path, RULES), "--compatibility-group")  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "did not keep the subject's compatibilityGroup" in r.output
    assert not [s for s in fake.requests if s.method == "POST"]
