"""``schemacli spark codegen --rules``: a reader that applies the reader version's data-quality
rules with the stage ``read_topic(rules=)`` runs, and every way the request can be wrong: exit
code, a message with its location, no traceback, a valid JSON document, nothing written. The
registry is the in-process fake; tests/spark/test_rules_sql_equals_python.py runs a generated
reader in Spark against read_topic(rules=PATH)."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.generated_module import (
    STANDALONE_IMPORTS,
    assert_ruff_clean,
    imported_modules,
    needs_ruff,
)

ROOT = Path(__file__).resolve().parents[2]
MAPPING = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
SUBJECT = "orders-value"
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "acme",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "total", "type": "double"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}


def rule(name: str, expr: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": "CONDITION", "mode": "READ", "type": "CEL", "expr": expr,
            "onFailure": "ERROR", **extra}  # fmt: skip


RULES = [
    rule("positive", "message.total >= 0.0", mode="WRITEREAD", onFailure="DLQ",
         params={"dlq.topic": "orders-dlq"}),
    rule("emailHasAt", "message.email.contains('@')", doc="an email has an at sign: ünïcode"),
    rule("advisory", "message.id != ''", onFailure="NONE"),
    rule("writeOnly", "false", mode="WRITE"),
]  # fmt: skip


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def store_with(tmp_path: Path, contract: Any = None, *, text: str | None = None) -> Path:
    """A store holding ORDER as orders-value v1 and, unless None, its contract file."""
    folder = tmp_path / "store" / "subjects" / SUBJECT
    folder.mkdir(parents=True)
    (folder / "v1.avsc").write_text(json.dumps(ORDER, indent=2))
    if text is None and contract is not None:
        text = json.dumps(contract, indent=2)
    if text is not None:
        (folder / "v1.contract.json").write_text(text)
    return tmp_path / "store"


def from_store(store: Path, *extra: object):
    return run(
        "spark", "codegen", "-s", SUBJECT, "-t", "orders", "--store", store, "--schema-id",
        "1=5", "--rules", *extra,
    )  # fmt: skip


def refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for word in words:
        assert word in result.stderr, result.stderr


def constants(source: str, *names: str) -> dict[str, Any]:
    """The module-level constants ``names`` of a generated module, evaluated alone."""
    wanted = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.AnnAssign | ast.Assign)
        and (node.target if isinstance(node, ast.AnnAssign) else node.targets[0]).id in names
    ]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "gen", "exec"), namespace)
    return namespace


def test_a_reader_with_rules_embeds_the_tables_the_library_builds_for_both_layouts(tmp_path):
    from schemacli.contracts.avro.parse import parse_schema
    from schemacli.contracts.rules.model import read_contract
    from spark_avro.rules import compile_rules, rule_table

    store = store_with(tmp_path, {"ruleSet": {"domainRules": RULES}})
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out, "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rules"] == {
        "from": "store",
        "source": "subjects/orders-value/v1.contract.json",
        "names": ["emailHasAt", "positive"],  # READ runs the rules in reverse order
        "not_acted_on": ["advisory"],
        "transforms": [],
    }
    source = out.read_text()
    contract = read_contract(store / "subjects" / SUBJECT / "v1.contract.json")
    schema = parse_schema(ORDER)
    embedded = constants(source, "RULES_FLAT", "RULES_NESTED")
    assert embedded["RULES_FLAT"] == rule_table(
        compile_rules(contract, schema, "READ", transforms=True)
    )
    assert embedded["RULES_NESTED"] == rule_table(
        compile_rules(contract, schema, "READ", root="`record`", transforms=True)
    )
    assert "def decode_with_rules(" in source and "def apply_rules(" in source
    docstring = ast.get_docstring(ast.parse(source))
    assert "subjects/orders-value/v1.contract.json in the store" in docstring
    assert "in the order they run: emailHasAt, positive." in " ".join(docstring.split())
    assert "(onFailure NONE): advisory" in docstring
    assert imported_modules(source) == STANDALONE_IMPORTS


@needs_ruff
def test_a_reader_with_rules_is_ruff_clean_and_ruff_formatted(tmp_path):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": RULES}})
    out = tmp_path / "orders.py"
    assert from_store(store, "--out", out).exit_code == 0
    assert_ruff_clean(out)


MASK = rule("mask", "typeName == 'STRING' ; value + '!'", type="CEL_FIELD", kind="TRANSFORM",
            tags=["PII"], onFailure="NONE")  # fmt: skip
TAGGED = {**ORDER, "fields": [{**f, "confluent:tags": ["PII"]} if f["name"] == "email" else f
                              for f in ORDER["fields"]]}  # fmt: skip


def test_a_reader_with_a_field_transform_embeds_it_and_names_it(tmp_path):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": [*RULES, MASK]}})
    (store / "subjects" / SUBJECT / "v1.avsc").write_text(json.dumps(TAGGED, indent=2))
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out, "-o", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["rules"]
    assert summary["transforms"] == ["mask"] and summary["names"] == ["emailHasAt", "positive"]
    source = out.read_text()
    (first, *_) = constants(source, "RULES_FLAT")["RULES_FLAT"]  # READ: mask runs first
    assert first[4] is False and list(first[5]) == ["email"]  # onFailure NONE: not acted on
    docstring = ast.get_docstring(ast.parse(source))
    assert "replace the values of the fields their tags select in good records: mask." in (
        " ".join(docstring.split())
    )
    plain = run("spark", "codegen", "-s", SUBJECT, "-t", "orders", "--store", store,
                "--schema-id", "1=5", "--rules", "--out", tmp_path / "again.py")  # fmt: skip
    assert "; transforms: mask" in plain.stderr


@needs_ruff
def test_a_reader_with_a_field_transform_is_ruff_clean_and_ruff_formatted(tmp_path):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": [*RULES, MASK]}})
    (store / "subjects" / SUBJECT / "v1.avsc").write_text(json.dumps(TAGGED, indent=2))
    out = tmp_path / "orders.py"
    assert from_store(store, "--out", out).exit_code == 0
    assert_ruff_clean(out)


def test_the_text_summary_names_the_rules_and_where_they_came_from(tmp_path):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": RULES}})
    result = from_store(store, "--out", tmp_path / "orders.py")
    assert result.exit_code == 0, result.output
    assert (
        "rules of subjects/orders-value/v1.contract.json in the store: emailHasAt, positive; "
        "not acted on (onFailure NONE): advisory"
    ) in result.stderr


def test_a_reader_with_rules_reads_permissive_only(tmp_path):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": RULES}})
    out = tmp_path / "orders_reader.py"
    assert from_store(store, "--out", out).exit_code == 0
    spec = importlib.util.spec_from_file_location("orders_reader", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # pyspark is imported; no JVM starts
    with pytest.raises(ValueError, match="reads PERMISSIVE only"):
        module.read(None, "localhost:9092", mode="FAILFAST")  # refused before Spark is asked
    with pytest.raises(SystemExit) as caught:
        module.main(["--bootstrap-servers", "localhost:9092", "--mode", "FAILFAST"])
    assert caught.value.code == 2  # argparse: FAILFAST is not a choice


def test_a_reader_with_rules_from_the_registry_takes_the_reader_versions_rule_set(fake, tmp_path):
    fake.keeps_rule_sets = True
    v1 = fake.add(SUBJECT, ORDER, ruleSet={"domainRules": [RULES[0]]})
    second = {**ORDER, "fields": [*ORDER["fields"], {"name": "note", "type": "string",
                                                      "default": ""}]}  # fmt: skip
    v2 = fake.add(SUBJECT, second, ruleSet={"domainRules": RULES[:2]})
    out = tmp_path / "orders.py"
    common = ["spark", "codegen", "-s", SUBJECT, "-t", "orders", "--registry", fake.url,
              "--rules", "--out", out, "--force", "-o", "json"]  # fmt: skip
    latest = run(*common)
    assert latest.exit_code == 0, latest.output
    assert json.loads(latest.stdout)["rules"] == {
        "from": "registry",
        "source": f"{SUBJECT}:2",
        "names": ["emailHasAt", "positive"],
        "not_acted_on": [],
        "transforms": [],
    }
    assert f"{SUBJECT}:2 in the registry" in ast.get_docstring(ast.parse(out.read_text()))
    first = run(*common, "--reader-version", "1")
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["rules"]["names"] == ["positive"]
    assert summary["reader"] == {"version": 1, "id": v1} and v2 != v1


def test_a_rule_set_with_no_read_condition_gives_a_reader_applying_none_and_says_so(tmp_path):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": [RULES[3]]}})
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out, "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rules"]["names"] == []
    source = out.read_text()
    assert "RULES_FLAT: tuple[tuple[str, str, str, str, bool, dict[str, str]], ...] = ()" in source
    docstring = " ".join(ast.get_docstring(ast.parse(source)).split())
    assert "no rule: the rule set has no CEL CONDITION whose failure a deserializer" in docstring


def test_rules_with_migrate_is_a_usage_error_before_anything_is_read(tmp_path):
    out = tmp_path / "reader.py"
    result = run(
        "spark", "codegen", "-s", SUBJECT, "-t", "orders", "--registry", "http://127.0.0.1:1",
        "--rules", "--migrate", MAPPING, "--out", out, "-o", "json",
    )  # fmt: skip
    refused(result, "--rules", "--migrate")
    assert json.loads(result.stdout)["error"]
    assert not out.exists()


def test_a_version_without_a_contract_file_is_refused_naming_the_file(tmp_path):
    store = store_with(tmp_path)
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out, "-o", "json")
    refused(result, "version 1 of 'orders-value' has no contract file", "v1.contract.json")
    assert json.loads(result.stdout)["error"]
    assert not out.exists()


def test_a_version_whose_rule_set_has_no_domain_rules_is_refused(fake, tmp_path):
    fake.add(SUBJECT, ORDER)  # registered without a rule set
    out = tmp_path / "orders.py"
    result = run(
        "spark", "codegen", "-s", SUBJECT, "-t", "orders", "--registry", fake.url, "--rules",
        "--out", out,
    )  # fmt: skip
    refused(result, "version 1 of 'orders-value' has no data-quality rules", "without --rules")
    assert not out.exists()


def test_a_contract_file_that_is_not_json_is_refused_at_its_line_and_column(tmp_path):
    store = store_with(tmp_path, text='{"ruleSet": {"domainRules": [\n  {"name": }]}}')
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out)
    refused(result, "v1.contract.json:2:")
    assert not out.exists()


@pytest.mark.parametrize(
    "bad, words",
    [
        (
            rule("fieldMask", "'***'", type="CEL_FIELD", kind="TRANSFORM"),
            "a CEL_FIELD TRANSFORM gives string on field acme.Order.total, which holds double",
        ),
        (rule("setDefault", "message", kind="TRANSFORM"), "a CEL TRANSFORM (the whole record"),
        (rule("hours", "message.at.getHours() > 1"), "function getHours()"),
        (rule("unknown", "message.nope == 1"), "nope"),
    ],
    ids=[
        "CEL_FIELD TRANSFORM of another type",
        "CEL TRANSFORM",
        "timestamp getter",
        "unknown field",
    ],  # fmt: skip
)
def test_a_rule_with_no_spark_sql_form_is_refused_naming_rule_and_construct(tmp_path, bad, words):
    store = store_with(tmp_path, {"ruleSet": {"domainRules": [RULES[0], bad]}})
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out, "-o", "json")
    refused(result, f"rule {bad['name']}", words, "v1.contract.json:")
    assert json.loads(result.stdout)["error"]
    assert not out.exists()


def test_a_contract_file_without_domain_rules_is_refused_at_its_rule_set(tmp_path):
    migration_only = {"ruleSet": {"migrationRules": [{"name": "m", "kind": "TRANSFORM",
                      "mode": "UPGRADE", "type": "JSONATA", "expr": "$"}]}}  # fmt: skip
    store = store_with(tmp_path, migration_only)
    out = tmp_path / "orders.py"
    result = from_store(store, "--out", out)
    refused(result, "v1.contract.json:2:", "has no data-quality rules")
    assert not out.exists()
