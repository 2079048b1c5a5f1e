"""Data-quality rules through the CLI: `gate` and `check` judge the rule sets of the store with
line:col in the contract file (one fixture per RULE_* kind), and `rules test` runs them over
sample records; every bad input is refused with exit 2, a located message and a valid document
in every -o format, never a traceback."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.kinds import Kind
from tests.output_documents import parse

runner = CliRunner()
FORMATS = ("text", "json", "junit", "github", "sarif", "gitlab")

V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "acme",
    "fields": [
        {"name": "total", "type": "double"},
        {"name": "count", "type": "int", "default": 0},
        {"name": "email", "type": ["null", "string"], "default": None, "confluent:tags": ["PII"]},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
            "default": "",
        },  # fmt: skip
    ],
}
V2_DROPS_COUNT = {**V1, "fields": [f for f in V1["fields"] if f["name"] != "count"]}
V2_RETYPES_COUNT = {
    **V1,
    "fields": [
        {**f, "type": "string", "default": "0"} if f["name"] == "count" else f for f in V1["fields"]
    ],
}


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def cel(name: str, expr: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "kind": more.pop("kind", "CONDITION"), "mode": "WRITE",
            "type": more.pop("type", "CEL"), "expr": expr, **more}  # fmt: skip


def store(tmp_path: Path, rules: list[dict[str, Any]], *versions: dict[str, Any],
          metadata: dict[str, Any] | None = None, config: str = "") -> Path:  # fmt: skip
    folder = tmp_path / "schemas/subjects/orders-value"
    folder.mkdir(parents=True)
    for n, schema in enumerate(versions or (V1,), start=1):
        (folder / f"v{n}.avsc").write_text(json.dumps(schema, indent=2))
    contract = {"metadata": metadata or {}, "ruleSet": {"domainRules": rules}}
    (folder / "v1.contract.json").write_text(json.dumps(contract, indent=2))
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n' + config)
    return folder


# One store per kind the gate reports: (rules, versions, metadata, config).
FIXTURES: dict[Kind, tuple[list[dict[str, Any]], tuple[dict[str, Any], ...], dict, str]] = {
    Kind.RULE_SYNTAX: ([cel("broken", "message.total >= ")], (V1,), {}, ""),
    Kind.RULE_UNKNOWN_FIELD: ([cel("typo", "message.totl >= 0.0")], (V1,), {}, ""),
    Kind.RULE_TYPE_MISMATCH: ([cel("intLiteral", "message.total >= 0")], (V1,), {}, ""),
    Kind.RULE_UNKNOWN_NAME: ([cel("noSuchFn", "isPositive(message.total)")], (V1,), {}, ""),
    Kind.RULE_UNSUPPORTED_VALUE: ([cel("decimal", "message.price != null")], (V1,), {}, ""),
    Kind.RULE_FIELD_REMOVED: ([cel("counted", "message.count >= 0")], (V1, V2_DROPS_COUNT), {}, ""),
    Kind.RULE_FIELD_RETYPED: (
        [cel("counted", "message.count >= 0")],
        (V1, V2_RETYPES_COUNT),
        {},
        "",
    ),
    Kind.RULE_SELECTS_NO_FIELD: (
        [cel("phi", "value != ''", type="CEL_FIELD", tags=["PHI"])],
        (V1,),
        {},
        "",
    ),
    Kind.RULE_REQUIRED_FOR_TAG: (
        [cel("positive", "message.total >= 0.0")],
        (V1,),
        {},
        '[rules]\nrequire-tags = ["PII"]\n',
    ),
}
JUDGED = (
    Kind.RULE_SYNTAX, Kind.RULE_UNKNOWN_FIELD, Kind.RULE_TYPE_MISMATCH, Kind.RULE_UNKNOWN_NAME,
    Kind.RULE_UNSUPPORTED_VALUE, Kind.RULE_FIELD_REMOVED, Kind.RULE_FIELD_RETYPED,
    Kind.RULE_SELECTS_NO_FIELD, Kind.RULE_REQUIRED_FOR_TAG,
)  # fmt: skip


def test_every_kind_the_judge_reports_has_a_fixture():
    assert set(JUDGED) == set(FIXTURES)
    assert {k for k in Kind if k.anchor == "docs/rules.md#finding-kinds"} == set(JUDGED)


@pytest.mark.parametrize("kind", JUDGED, ids=str)
def test_gate_reports_each_rule_kind_with_line_and_column(kind, tmp_path, monkeypatch):
    rules, versions, metadata, config = FIXTURES[kind]
    store(tmp_path, rules, *versions, metadata=metadata, config=config)
    monkeypatch.chdir(tmp_path)
    r = run("gate", "--no-cache", "-o", "json")
    doc = json.loads(r.stdout)
    found = [f for case in doc["cases"] for f in case["findings"] if f["kind"] == kind.value]
    assert found, r.stdout
    where = found[0]["location"]
    assert where["line"] and where["column"], where
    assert r.exit_code == (0 if kind.severity.value == "warning" else 1), r.output


def test_a_rule_error_is_placed_at_its_character_inside_the_expr_string(tmp_path, monkeypatch):
    folder = store(tmp_path, [cel("typo", "message.total >= 0.0 && message.cnt > 0")])
    monkeypatch.chdir(tmp_path)
    r = run("gate", "--no-cache", "-o", "json")
    (finding,) = json.loads(r.stdout)["cases"][0]["findings"]
    text = (folder / "v1.contract.json").read_text().splitlines()
    line = text[finding["location"]["line"] - 1]
    assert line[finding["location"]["column"] - 1 :].startswith("cnt > 0")


def test_check_reports_a_candidate_dropping_a_field_the_latest_rules_read(tmp_path, monkeypatch):
    store(tmp_path, [cel("counted", "message.count >= 0")])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "next.avsc").write_text(json.dumps(V2_DROPS_COUNT))
    r = run("check", "next.avsc", "--subject", "orders-value", "--no-cache", "-o", "json")
    assert r.exit_code == 1, r.output
    kinds = [f["kind"] for c in json.loads(r.stdout)["cases"] for f in c["findings"]]
    assert "RULE_FIELD_REMOVED" in kinds


def test_a_store_without_domain_rules_gates_as_before(tmp_path, monkeypatch):
    store(tmp_path, [cel("positive", "message.total >= 0.0")])
    monkeypatch.chdir(tmp_path)
    r = run("gate", "--no-cache")
    assert r.exit_code == 0, r.output


# -- rules test ------------------------------------------------------------------------------


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    rules = [
        cel("positive", "message.total >= 0.0", onFailure="DLQ", params={"dlq.topic": "bad"}),
        cel("emailShape", "value == null || value.contains('@')", type="CEL_FIELD", tags=["PII"]),
    ]
    folder = store(tmp_path, rules)
    return folder / "v1.contract.json"


def records(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {"total": 1.5, "count": 1, "email": "a@b.c", "price": "\u0000"}
BAD = {"total": -1.0, "count": 1, "email": "nobody", "price": "\u0000"}


def test_rules_test_passes_records_that_keep_the_rules(tmp_path, contract):
    r = run("rules", "test", contract, records(tmp_path, GOOD, GOOD))
    assert r.exit_code == 0, r.output
    assert "2 records, mode WRITE; 0 refused" in r.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_rules_test_prints_each_violation_with_its_record_and_rule(tmp_path, contract, fmt):
    r = run("rules", "test", contract, records(tmp_path, GOOD, BAD), "-o", fmt)
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output
    if fmt != "text":
        parse(fmt, r.stdout)
    if fmt == "json":
        doc = json.loads(r.stdout)
        by_rule = {c["name"]: c for c in doc["cases"]}
        (failed,) = by_rule["positive"]["findings"]
        assert failed["kind"] == "RULE_FAILED" and failed["location"]["line"] == 2
        assert "DLQ -> bad" in failed["message"] and '"total": -1.0' in failed["message"]
        assert by_rule["emailShape"]["findings"][0]["kind"] == "RULE_FAILED"


def test_rules_test_reads_avro_container_files(tmp_path, contract):
    path = tmp_path / "samples.avro"
    out = io.BytesIO()
    rows = [dict(GOOD, price=b"\x00"), dict(BAD, price=b"\x00")]
    fastavro.writer(out, fastavro.parse_schema(V1), rows)
    path.write_bytes(out.getvalue())
    r = run("rules", "test", contract, path, "-o", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    (failed,) = next(c for c in doc["cases"] if c["name"] == "positive")["findings"]
    assert failed["location"]["pointer"] == "/records/1"


def test_rules_test_in_read_mode_runs_no_write_rule(tmp_path, contract):
    r = run("rules", "test", contract, records(tmp_path, BAD), "--mode", "read")
    assert r.exit_code == 0, r.output


def _bad_inputs(tmp_path: Path, contract: Path) -> dict[str, list[object]]:
    samples = records(tmp_path, GOOD)
    schema = contract.with_name("v1.avsc")
    not_json = tmp_path / "not.contract.json"
    not_json.write_text('{"ruleSet": ')
    bad_mode = tmp_path / "mode.contract.json"
    bad_mode.write_text(json.dumps({"ruleSet": {"domainRules": [cel("x", "true", mode="ALWAYS")]}}))
    not_object = tmp_path / "list.contract.json"
    not_object.write_text(json.dumps({"ruleSet": {"domainRules": ["message.total > 0.0"]}}))
    lonely = tmp_path / "lonely.json"
    lonely.write_text(json.dumps({"ruleSet": {"domainRules": []}}))
    broken_line = tmp_path / "broken.jsonl"
    broken_line.write_text(json.dumps(GOOD) + "\n{nope\n")
    misfit = tmp_path / "misfit.jsonl"
    misfit.write_text(json.dumps({"total": "lots"}) + "\n")
    garbage_avro = tmp_path / "garbage.avro"
    garbage_avro.write_bytes(b"Obj\x01" + b"\xff" * 40)
    return {
        "missing contract": ["rules", "test", tmp_path / "none.contract.json", samples],
        "contract is a folder": ["rules", "test", tmp_path, samples],
        "contract not JSON": ["rules", "test", not_json, samples, "--schema", schema],
        "unknown mode in a rule": ["rules", "test", bad_mode, samples],
        "a rule that is not an object": ["rules", "test", not_object, samples],
        "no schema anywhere": ["rules", "test", lonely, samples],
        "missing --schema": ["rules", "test", lonely, samples, "--schema", tmp_path / "no.avsc"],
        "missing records": ["rules", "test", contract, tmp_path / "none.jsonl"],
        "records is a device": ["rules", "test", contract, "/dev/zero"],
        "records line not JSON": ["rules", "test", contract, broken_line],
        "record misfits the schema": ["rules", "test", contract, misfit],
        "garbage Avro": ["rules", "test", contract, garbage_avro],
        "bad --mode": ["rules", "test", contract, samples, "--mode", "SOMETIMES"],
        "negative --examples": ["rules", "test", contract, samples, "--examples", "-1"],
    }  # fmt: skip


BAD_INPUTS = (
    "missing contract", "contract is a folder", "contract not JSON", "unknown mode in a rule",
    "a rule that is not an object", "no schema anywhere", "missing --schema", "missing records",
    "records is a device", "records line not JSON", "record misfits the schema", "garbage Avro",
    "bad --mode", "negative --examples",
)  # fmt: skip


@pytest.mark.parametrize("case", BAD_INPUTS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_rules_test_refuses_bad_input_with_exit_2_in_every_format(case, fmt, tmp_path, contract):
    args = _bad_inputs(tmp_path, contract)[case]
    r = run(*args, "-o", fmt)
    assert r.exit_code == 2, r.output
    assert (
        "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit)
    )
    if fmt != "text" and r.stdout.strip():
        parse(fmt, r.stdout)


def test_every_bad_input_case_is_listed(tmp_path, contract):
    assert set(_bad_inputs(tmp_path, contract)) == set(BAD_INPUTS)


def test_a_located_error_names_the_line_of_the_records_file(tmp_path, contract):
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(GOOD) + "\n{nope\n")
    r = run("rules", "test", contract, broken)
    assert r.exit_code == 2 and "broken.jsonl:2:" in r.stderr, r.output


def test_a_bad_require_tags_setting_is_refused_with_its_line(tmp_path, monkeypatch):
    store(tmp_path, [], config="[rules]\nrequire-tags = 5\n")
    monkeypatch.chdir(tmp_path)
    r = run("gate", "--no-cache")
    assert r.exit_code == 2 and "schemacli.toml:3" in r.stderr, r.output


# -- register --rules CONTRACT (without --major-version) -------------------------------------


def test_register_sends_the_contracts_rule_set_and_a_registry_dropping_it_is_exit_3(
    fake_registry_cli, fake, tmp_path
):
    folder = store(tmp_path, [cel("positive", "message.total >= 0.0", onFailure="ERROR")],
                   metadata={"tags": {"acme.Order.total": ["MONEY"]}})  # fmt: skip
    r = fake_registry_cli("register", folder / "v1.avsc", "-s", "orders-value",
                          "--rules", folder / "v1.contract.json")  # fmt: skip
    assert r.exit_code == 3, r.output  # the in-process fake keeps no ruleSet (like Apicurio)
    assert "did not keep the ruleSet" in r.output and "stored, as version 1" in r.output
    (sent,) = [s.body for s in fake.requests if s.method == "POST" and s.path.endswith("/versions")]
    assert sent["ruleSet"]["domainRules"][0]["name"] == "positive"
    assert sent["metadata"] == {"tags": {"acme.Order.total": ["MONEY"]}}


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"ruleSet": {"domainRules": [', "v1.contract.json:1:"),
        (
            '{"ruleSet": {"domainRules": [{"kind": "SOMETIMES", "mode": "WRITE", "type": "CEL"}]}}',
            "unknown rule kind",
        ),  # fmt: skip
        ('{"metadata": {"tags": {"a": "PII"}}}', "metadata.tags"),
    ],
)
def test_register_refuses_a_bad_contract_before_the_registry(fake_registry_cli, fake, tmp_path,
                                                             content, words):  # fmt: skip
    folder = store(tmp_path, [])
    (folder / "v1.contract.json").write_text(content)
    r = fake_registry_cli("register", folder / "v1.avsc", "-s", "orders-value",
                          "--rules", folder / "v1.contract.json")  # fmt: skip
    assert r.exit_code == 2 and words in r.output, r.output
    assert not fake.requests


def test_register_rules_without_major_version_refuses_dry_run(fake_registry_cli, fake, tmp_path):
    folder = store(tmp_path, [])
    r = fake_registry_cli("register", folder / "v1.avsc", "-s", "orders-value", "--dry-run",
                          "--rules", folder / "v1.contract.json")  # fmt: skip
    assert r.exit_code == 2 and "does not combine" in r.output and not fake.requests
