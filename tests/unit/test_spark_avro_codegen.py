"""``schemacli spark codegen`` / ``ddl`` through typer's CliRunner, and the generated module.

The generated reader is compared with tests/golden/spark/taxi_rides_value_reader.py
(regenerate with SCHEMACLI_UPDATE_GOLDEN=1), and must be ruff-clean, ruff-formatted and free of
schemacli imports. tests/spark/test_spark_avro_generated_reader.py runs it in Spark.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

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
GOLDEN = ROOT / "tests" / "golden" / "spark" / "taxi_rides_value_reader.py"
V1 = (ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
V2 = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()
STORE_ARGS = ["--store", str(ROOT / "schemas"), "--schema-id", "1=1", "--schema-id", "2=2"]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def generate_golden(tmp_path: Path) -> str:
    out = tmp_path / GOLDEN.name
    result = run(
        "spark", "codegen", "--subject", "taxi-rides-value", "--topic", "taxi-rides",
        *STORE_ARGS, "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out.read_text()


def test_generated_reader_matches_the_golden_module(tmp_path):
    source = generate_golden(tmp_path)
    if os.environ.get("SCHEMACLI_UPDATE_GOLDEN"):
        GOLDEN.write_text(source)
    assert source == GOLDEN.read_text()


@needs_ruff
def test_generated_reader_is_ruff_clean_and_ruff_formatted(tmp_path):
    path = tmp_path / GOLDEN.name
    path.write_text(generate_golden(tmp_path))
    assert_ruff_clean(path)


def test_generated_reader_imports_only_pyspark_and_the_standard_library(tmp_path):
    assert imported_modules(generate_golden(tmp_path)) == STANDALONE_IMPORTS


def test_generated_reader_embeds_every_version_by_id_and_says_how_to_run_it(tmp_path):
    source = generate_golden(tmp_path)
    namespace: dict = {}
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert "spark-submit --packages" in docstring
    assert "org.apache.spark:spark-avro_2.13:4.0.1" in docstring
    assert "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.1" in docstring
    assert "PERMISSIVE" in docstring and "FAILFAST" in docstring
    schemas = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id.startswith("SCHEMA_V")
    ]
    exec(compile(ast.Module(body=schemas, type_ignores=[]), "gen", "exec"), namespace)
    assert namespace["SCHEMA_V1"] == json.loads(V1)
    assert namespace["SCHEMA_V2"] == json.loads(V2)


def test_codegen_reads_versions_and_ids_from_the_registry(fake, tmp_path):
    fake.add("taxi-rides-key", {"type": "string"})  # takes id 1, so the value ids are 2 and 3
    v1_id = fake.add("taxi-rides-value", V1)
    v2_id = fake.add("taxi-rides-value", V2)
    out = tmp_path / "reader.py"
    result = run(
        "spark", "codegen", "--subject", "taxi-rides-value", "--topic", "taxi-rides",
        "--registry", fake.url, "--reader-version", "1", "--out", str(out), "-o", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["writers"] == [{"version": 1, "id": v1_id}, {"version": 2, "id": v2_id}]
    assert summary["reader"] == {"version": 1, "id": v1_id}
    source = out.read_text()
    assert f"    {v1_id}: json.dumps(SCHEMA_V1),  # version 1" in source
    assert "READER_SCHEMA = json.dumps(SCHEMA_V1)" in source


def test_codegen_without_out_prints_the_module(tmp_path):
    result = run("spark", "codegen", "-s", "taxi-rides-value", "-t", "taxi-rides", *STORE_ARGS)
    assert result.exit_code == 0
    assert result.stdout.startswith('r"""PySpark reader for a Kafka topic')
    assert "STREAMING_BY_DEFAULT = False" in result.stdout


def test_codegen_streaming_makes_the_module_stream_by_default():
    result = run(
        "spark", "codegen", "-s", "taxi-rides-value", "-t", "taxi-rides", *STORE_ARGS, "--streaming"
    )
    assert result.exit_code == 0
    assert "STREAMING_BY_DEFAULT = True" in result.stdout


def test_codegen_from_the_store_needs_the_registry_ids():
    result = run("spark", "codegen", "-s", "taxi-rides-value", "-t", "t", "--store", "schemas")
    assert result.exit_code == 2
    assert "--schema-id VERSION=ID" in result.stderr


def test_codegen_refuses_a_malformed_schema_id_pair():
    result = run(
        "spark", "codegen", "-s", "taxi-rides-value", "-t", "t", "--store", "schemas",
        "--schema-id", "one=1",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "is not VERSION=ID" in result.stderr


@pytest.mark.parametrize(
    ("topic", "problem"),
    [
        ("", "is empty"),
        ("..", "cannot be '..'"),
        ('a"""b', "contains '\"', which Kafka does not allow"),
        ("rides v2", "contains ' ', which Kafka does not allow"),
        ("t" * 250, "is 250 characters long; Kafka allows at most 249"),
    ],
)
def test_codegen_refuses_a_topic_kafka_would_refuse(topic, problem):
    result = run("spark", "codegen", "-s", "taxi-rides-value", "-t", topic, *STORE_ARGS)
    assert result.exit_code == 2
    assert problem in result.stderr and "1 to 249 characters" in result.stderr


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["1=1", "2=1"], "gives id 1 to versions 1 and 2"),
        (["1=1", "2=4294967296"], "ids are 1 to 2147483647"),
        (["1=0", "2=2"], "ids are 1 to 2147483647"),
        (["1=1", "2=2", "3=3"], "names version(s) 3, which the store does not hold"),
    ],
)
def test_codegen_refuses_schema_ids_the_registry_cannot_have_given(ids, message):
    pairs = [arg for pair in ids for arg in ("--schema-id", pair)]
    result = run(
        "spark", "codegen", "-s", "taxi-rides-value", "-t", "t", "--store", "schemas", *pairs
    )
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_subject_with_quotes_and_line_breaks_still_gives_a_module_python_can_read(fake):
    subject = 'odd"""subject\\\nwith a break'
    fake.add(subject, V1)
    result = run("spark", "codegen", "-s", subject, "-t", "t", "--registry", fake.url)
    assert result.exit_code == 0, result.output
    tree = ast.parse(result.stdout)
    assert json.dumps(subject) in ast.get_docstring(tree)
    assert f"SUBJECT = {json.dumps(subject)}" in result.stdout


def test_codegen_refuses_a_reader_version_the_subject_does_not_have():
    result = run(
        "spark", "codegen", "-s", "taxi-rides-value", "-t", "t", *STORE_ARGS,
        "--reader-version", "5",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "has no version 5" in result.stderr


def test_codegen_against_an_unreachable_registry_exits_3():
    result = run(
        "spark", "codegen", "-s", "taxi-rides-value", "-t", "t",
        "--registry", "http://127.0.0.1:9", "--retries", "0", "--timeout", "1",
    )  # fmt: skip
    assert result.exit_code == 3
    assert "Traceback" not in result.output


def test_ddl_prints_the_ddl_string_and_the_struct_type_json():
    result = run("spark", "ddl", "schemas/subjects/taxi-rides-value/v2.avsc")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[1] == (
        "vendorId INT NOT NULL,passenger_count INT NOT NULL,trip_distance FLOAT NOT NULL,"
        "payment_type INT NOT NULL,total_amount FLOAT NOT NULL,tip_amount FLOAT NOT NULL,"
        "store_and_fwd_flag STRING"
    )
    struct = json.loads(result.stdout.split("StructType JSON:\n", 1)[1])
    assert struct["type"] == "struct" and len(struct["fields"]) == 7


def test_ddl_json_output_has_ddl_and_struct_type():
    result = run("spark", "ddl", "-o", "json", "schemas/subjects/taxi-rides-value/v1.avsc")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["ddl"].startswith("vendorId INT NOT NULL,")
    assert [f["name"] for f in payload["struct_type"]["fields"]][:2] == [
        "vendorId",
        "passenger_count",
    ]


def test_ddl_permissive_makes_every_field_nullable():
    result = run(
        "spark", "ddl", "--permissive", "-o", "json", "schemas/subjects/taxi-rides-value/v1.avsc"
    )
    payload = json.loads(result.stdout)
    assert "NOT NULL" not in payload["ddl"]
    assert all(f["nullable"] for f in payload["struct_type"]["fields"])


def test_ddl_stable_union_names_prints_the_members_as_the_readers_name_them(tmp_path):
    path = tmp_path / "payment.avsc"
    path.write_text(
        json.dumps(
            {
                "type": "record",
                "name": "Payment",
                "fields": [{"name": "amount", "type": ["int", "string"]}],
            }
        )
    )
    positional = json.loads(run("spark", "ddl", "-o", "json", str(path)).stdout)
    assert positional["ddl"] == "amount STRUCT<member0: INT, member1: STRING> NOT NULL"
    result = run("spark", "ddl", "--stable-union-names", "--permissive", "-o", "json", str(path))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ddl"] == (
        "amount STRUCT<member_int: INT, member_string: STRING>"
    )


def test_ddl_of_a_recursive_schema_is_an_input_error_at_file_line_col(tmp_path):
    path = tmp_path / "node.avsc"
    path.write_text(
        '{"type": "record", "name": "Node", "fields": [\n'
        '  {"name": "next", "type": ["null", "Node"], "default": null}\n'
        "]}\n"
    )
    result = run("spark", "ddl", str(path))
    assert result.exit_code == 2
    assert f"{path}:2:" in result.stderr and "(at /fields/0/type/1)" in result.stderr
    assert "refers to itself" in result.stderr


def test_ddl_of_invalid_json_names_the_file_and_position(tmp_path):
    path = tmp_path / "broken.avsc"
    path.write_text('{"type": "record",\n "name": }')
    result = run("spark", "ddl", str(path))
    assert result.exit_code == 2
    assert f"{path}:2:" in result.stderr
    assert "Traceback" not in result.output


def test_two_ids_for_one_version_are_refused_not_overwritten():
    result = run(
        "spark", "codegen", "--subject", "taxi-rides-value", "--topic", "taxi-rides",
        "--store", str(ROOT / "schemas"), "--schema-id", "1=1", "--schema-id", "1=9",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "version 1 two ids: 1 and 9" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["spark", "ddl", str(ROOT / "schemas/subjects/taxi-rides-value/v1.avsc")],
        ["subjects", "list", "--registry", "http://127.0.0.1:1"],
        ["register", str(ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"), "-s", "x"],
    ],
    ids=["spark ddl", "subjects list", "register"],
)
def test_commands_without_findings_refuse_junit_and_github_instead_of_printing_text(args):
    for fmt in ("junit", "github"):
        result = run(*args, "-o", fmt)
        assert result.exit_code == 2
        assert f"'{fmt}' is not one of 'text', 'json'" in result.output


def test_codegen_on_a_subject_without_versions_exits_2_saying_so(fake, monkeypatch):
    from schemacli.registry.client import RegistryClient

    # AxonOps answers `null`, others `[]`, for a subject whose versions are all deleted.
    monkeypatch.setattr(RegistryClient, "list_versions", lambda self, subject, **kw: [])
    result = run("spark", "codegen", "-s", "empty-value", "-t", "t", "--registry", fake.url)
    assert result.exit_code == 2
    assert "subject 'empty-value' has no versions in the registry" in result.stderr


def test_codegen_from_a_store_embeds_the_types_a_version_references(tmp_path):
    store = ROOT / "tests/fixtures/avsc/refs/store"
    out = tmp_path / "customers.py"
    result = run(
        "spark", "codegen", "--store", str(store), "--subject", "customer-value",
        "--topic", "customers", "--schema-id", "1=9", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    namespace: dict = {}
    source = out.read_text()
    exec(compile(source.split("MODES = ")[0], str(out), "exec"), namespace)  # the schemas only
    home = namespace["SCHEMA_V1"]["fields"][1]["type"]
    assert home["name"] == "Address" and home["namespace"] == "com.acme"

    from schemacli.contracts.avro.parse import parse_schema

    parse_schema(json.loads(namespace["WRITER_SCHEMAS"][9]))  # stands alone


def test_codegen_from_the_registry_embeds_referenced_types(fake, tmp_path):
    money = {"type": "fixed", "name": "Money", "namespace": "m", "size": 8}
    order = {"type": "record", "name": "Order", "namespace": "o",
             "fields": [{"name": "total", "type": "m.Money"}]}  # fmt: skip
    fake.subjects["money"] = [{"subject": "money", "version": 1, "id": 31,
                               "schema": json.dumps(money)}]  # fmt: skip
    fake.subjects["orders-value"] = [
        {"subject": "orders-value", "version": 1, "id": 32, "schema": json.dumps(order),
         "references": [{"name": "m.Money", "subject": "money", "version": 1}]}
    ]  # fmt: skip
    out = tmp_path / "orders.py"
    result = run(
        "spark", "codegen", "--subject", "orders-value", "--topic", "orders",
        "--registry", fake.url, "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '"name": "Money"' in out.read_text() and '"size": 8' in out.read_text()


NARROW_V1 = {
    "type": "record",
    "name": "Order",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string"}],
}
NARROW_V2 = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}


def render_narrow_reader() -> str:
    from spark_avro.codegen import ReaderModuleSpec, WriterVersion, render_reader_module

    spec = ReaderModuleSpec(
        subject="orders-value",
        topic="orders",
        writers=(WriterVersion(7, 1, NARROW_V1), WriterVersion(8, 2, NARROW_V2)),
        reader_version=1,
    )
    return render_reader_module(spec)


def test_generated_reader_embeds_the_engine_finding_for_a_writer_the_reader_cannot_read():
    namespace: dict = {}
    tree = ast.parse(render_narrow_reader())
    (node,) = [
        n
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and n.target.id == "INCOMPATIBLE_WRITERS"
    ]
    exec(compile(ast.Module(body=[node], type_ignores=[]), "gen", "exec"), namespace)
    (finding,) = namespace["INCOMPATIBLE_WRITERS"].values()
    assert list(namespace["INCOMPATIBLE_WRITERS"]) == [8]
    assert finding.startswith("READER_FIELD_MISSING_DEFAULT_VALUE at /fields/1: ")


def test_golden_reader_has_no_incompatible_writers_and_sets_utc(tmp_path):
    source = generate_golden(tmp_path)
    assert "INCOMPATIBLE_WRITERS: dict[int, str] = {}" in source
    assert 'TIME_ZONE = "UTC"' in source


@needs_ruff
def test_generated_reader_with_an_embedded_finding_is_ruff_clean(tmp_path):
    path = tmp_path / "orders_reader.py"
    path.write_text(render_narrow_reader())
    assert_ruff_clean(path)
