"""``schemacli spark codegen --migrate MAPPING``: a reader that converts v2 records to v1 with the
mapping's compiled SQL, and every way the mapping can be wrong for it: exit code, a message with
its location, no traceback, nothing written. The registry is the in-process fake (error paths);
tests/integration/test_spark_reader_migrate.py runs a generated reader on the real stack."""

from __future__ import annotations

import json
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
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
V2_COMPATIBLE = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def taxi(fake):
    """The converter's two subjects: v1 under taxi-rides-value, v2 under taxi-rides-v2-value."""
    ids = {"v1": fake.add("taxi-rides-value", V1.read_text())}
    ids["v2"] = fake.add("taxi-rides-v2-value", V2.read_text())
    return ids


def codegen(fake, *extra: object, subject: str = "taxi-rides-v2-value"):
    return run(
        "spark", "codegen", "-s", subject, "-t", "taxi-rides-v2", "--registry", fake.url, *extra
    )


def mapping(tmp_path: Path, *, source: Path = V2, fields: str | None = None) -> Path:
    rules = fields or (
        "  vendorId: {from: vendorId}\n  passenger_count: {from: passenger_count}\n"
        "  trip_distance: {from: trip_distance}\n  payment_type: {from: payment_type}\n"
        "  total_amount: {from: total_amount, convert: parse_number, on_error: fail}\n"
    )
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\n"
        f"source: {{subject: taxi-rides-v2-value, schema: {source}, topic: taxi-rides-v2}}\n"
        f"target: {{subject: taxi-rides-value, schema: {V1}, topic: taxi-rides}}\n"
        "dead_letter_topic: dlq\n"
        f"fields:\n{rules}"
    )
    return path


def refused(result, code: int, *words: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for word in words:
        assert word in result.stderr, result.stderr


def test_a_migrating_reader_embeds_the_mapping_sql_and_both_subjects(fake, taxi, tmp_path):
    out = tmp_path / "reader.py"
    result = codegen(fake, "--migrate", EXAMPLE, "--out", out, "-o", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["migrate"] == {
        "mapping": str(EXAMPLE),
        "v1_writer_ids": [taxi["v1"]],
        "incompatible_writer_ids": [],
    }
    assert {(w["subject"], w["id"]) for w in summary["writers"]} == {
        ("taxi-rides-value", taxi["v1"]),
        ("taxi-rides-v2-value", taxi["v2"]),
    }
    source = out.read_text()
    assert "try_cast(`total_amount` AS FLOAT) + CAST(0 AS FLOAT) AS `total_amount`" in source
    assert f"V1_WRITER_IDS: tuple[int, ...] = ({taxi['v1']},)" in source
    assert "return decode_migrated(" in source and "def convert_decoded(" in source
    assert imported_modules(source) == STANDALONE_IMPORTS


@needs_ruff
def test_a_migrating_reader_is_ruff_clean_and_ruff_formatted(fake, taxi, tmp_path):
    out = tmp_path / "reader.py"
    assert codegen(fake, "--migrate", EXAMPLE, "--out", out).exit_code == 0
    assert_ruff_clean(out)


def test_a_missing_mapping_file_is_an_input_error_and_nothing_is_written(fake, taxi, tmp_path):
    out = tmp_path / "reader.py"
    result = codegen(fake, "--migrate", tmp_path / "nope.yaml", "--out", out)
    refused(result, 2, "nope.yaml")
    assert not out.exists()


def test_a_directory_or_binary_file_as_mapping_is_refused(fake, taxi, tmp_path):
    refused(codegen(fake, "--migrate", tmp_path), 2, str(tmp_path))
    binary = tmp_path / "m.yaml"
    binary.write_bytes(b"\x00\xff\xfe binary")
    refused(codegen(fake, "--migrate", binary), 2, "m.yaml")


def test_bad_yaml_is_refused_at_its_line_and_column(fake, taxi, tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("version: 1\nsource: {subject: [\n")
    refused(codegen(fake, "--migrate", bad), 2, "m.yaml:", "not valid YAML")


def test_a_mapping_the_converter_would_not_deploy_exits_1_at_the_rule(fake, taxi, tmp_path):
    undeployable = mapping(
        tmp_path,
        fields="  vendorId: {from: vendorId}\n  passenger_count: {from: passenger_count}\n"
        "  trip_distance: {from: trip_distance}\n  payment_type: {from: payment_type}\n"
        "  total_amount: {from: total_amount, unresolved: string to float}\n",
    )
    out = tmp_path / "reader.py"
    result = codegen(fake, "--migrate", undeployable, "--out", out)
    refused(result, 1, "m.yaml:10:", "total_amount", "unresolved")
    assert not out.exists()


def test_a_mapping_written_for_other_schemas_than_the_subjects_is_refused(fake, taxi, tmp_path):
    # the mapping's v2 is the compatible v2 (tip_amount, ...), the subject holds the breaking one
    other = mapping(
        tmp_path,
        source=V2_COMPATIBLE,
        fields="  vendorId: {from: vendorId}\n  passenger_count: {from: passenger_count}\n"
        "  trip_distance: {from: trip_distance}\n  payment_type: {from: payment_type}\n"
        "  total_amount: {from: total_amount}\n",
    )
    refused(
        codegen(fake, "--migrate", other),
        2,
        "the mapping's v2 schema is not a version of subject 'taxi-rides-v2-value'",
        "m.yaml:2:",
    )


def test_a_subject_the_mapping_does_not_convert_is_refused(fake, taxi, tmp_path):
    fake.add("orders-value", {"type": "record", "name": "O", "fields": []})
    refused(
        codegen(fake, "--migrate", mapping(tmp_path), subject="orders-value"),
        2,
        "the mapping converts subject 'taxi-rides-v2-value'",
        "not 'orders-value'",
    )


def test_migrate_with_reader_version_is_a_usage_error_before_the_registry(tmp_path):
    result = run(
        "spark", "codegen", "-s", "s", "-t", "t", "--registry", "http://127.0.0.1:9",
        "--migrate", EXAMPLE, "--reader-version", "1",
    )  # fmt: skip
    refused(result, 2, "--reader-version does not apply")


def test_a_mapping_side_without_schema_whose_subject_is_unknown_is_a_registry_error(
    fake, taxi, tmp_path
):
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\nsource: {subject: taxi-rides-v2-value}\n"
        "target: {subject: no-such-subject}\nfields:\n  vendorId: {from: vendorId}\n"
    )
    refused(codegen(fake, "--migrate", path), 3, "no-such-subject")
