"""A mapping whose v2 side names only a subject whose schema uses Confluent references (two levels:
a record in another subject that uses an enum in a third): `migrate validate`, `migrate rules`
and `migrate plan` take it through the one registry road, self-contained, and answer as for the
same mapping with the schema written inline. (It failed with "Undefined name: x.Address".)

Registry answers come from the in-process fake; the real stack runs the same in
tests/integration/test_registry_references_road.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.contracts.avro.canonical import canonical_form
from schemacli.contracts.avro.parse import parse_schema
from tests.referenced_schemas import (
    FIELDS,
    ORDER_V1,
    ORDER_V2,
    ORDER_V2_INLINE,
    reference,
    register_in_fake,
)

V1, V2, V2_INLINE = ORDER_V1, ORDER_V2, ORDER_V2_INLINE


def register(fake) -> None:
    register_in_fake(fake, "color-value", "address-value", "orders-v2-value")


def mappings(tmp_path: Path) -> tuple[Path, Path]:
    """(by subject, inline): the same mapping, v2 from the registry or from a file."""
    (tmp_path / "v1.avsc").write_text(json.dumps(V1))
    (tmp_path / "v2.avsc").write_text(json.dumps(V2_INLINE))
    target = "target: {subject: orders-value, schema: v1.avsc, topic: orders}\n"
    by_subject, inline = tmp_path / "by-subject.yaml", tmp_path / "inline.yaml"
    by_subject.write_text(
        "version: 1\nsource: {subject: orders-v2-value, topic: orders-v2}\n" + target + FIELDS
    )
    inline.write_text(
        "version: 1\nsource: {subject: orders-v2-value, schema: v2.avsc, topic: orders-v2}\n"
        + target
        + FIELDS
    )
    return by_subject, inline


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_migrate_validate_reads_a_referenced_v2_subject_as_the_inline_schema(fake, tmp_path):
    register(fake)
    by_subject, inline = mappings(tmp_path)
    got = run("migrate", "validate", str(by_subject), "--registry", fake.url, "-o", "json")
    want = run("migrate", "validate", str(inline), "--registry", fake.url, "-o", "json")
    assert got.exit_code == 0, got.output
    assert want.exit_code == 0, want.output
    shown, expected = json.loads(got.stdout), json.loads(want.stdout)
    for doc in (shown, expected):  # where each side's schema came from differs, by design
        doc.pop("mapping", None)
        doc.pop("source", None)
    assert shown == expected


@pytest.mark.parametrize("client", ["python", "java"])
def test_migrate_rules_compiles_a_referenced_v2_subject_as_the_inline_schema(
    fake, tmp_path, client
):
    register(fake)
    by_subject, inline = mappings(tmp_path)
    got = run("migrate", "rules", str(by_subject), "--registry", fake.url, "--client", client)
    want = run("migrate", "rules", str(inline), "--registry", fake.url, "--client", client)
    assert got.exit_code == 0, got.output
    assert want.exit_code == 0, want.output
    body, expected = json.loads(got.stdout), json.loads(want.stdout)
    assert body["ruleSet"] == expected["ruleSet"] and body["metadata"] == expected["metadata"]
    same = canonical_form(parse_schema(body["schema"]))
    assert same == canonical_form(parse_schema(expected["schema"]))


def test_migrate_plan_from_a_referenced_subject_writes_it_self_contained(fake, tmp_path):
    register(fake)
    (tmp_path / "v1.avsc").write_text(json.dumps(V1))
    got = run(
        "migrate", "plan", "--from", "orders-v2-value", "--to", str(tmp_path / "v1.avsc"),
        "--registry", fake.url,
    )  # fmt: skip
    assert got.exit_code == 0, got.output
    assert "Undefined name" not in got.output
    assert "ship_to: {from: ship_to, convert: copy}" in got.stdout


def test_the_job_finds_the_id_of_a_v1_registered_with_references(fake, tmp_path):
    """The mapping holds v1 self-contained; the registry holds it with references (another
    text), which its lookup does not match: the job finds it among the subject's versions."""
    from converters.mapping.reader import load
    from converters.mapping.schemas import with_registry_schemas
    from converters.pipeline.records import resolve_registry
    from schemacli.registry.client import RegistryClient
    from schemacli.registry.schemas import RegistrySchemas
    from schemacli.registry.settings import RegistrySettings

    register(fake)
    by_reference = {"name": "ship_to", "type": "x.Address"}
    v1_by_reference = {**V1, "fields": [V1["fields"][0], by_reference, V1["fields"][2]]}
    v1_id = fake.add(
        "orders-value", v1_by_reference, references=[reference("x.Address", "address-value")]
    )
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\nsource: {subject: orders-v2-value, topic: orders-v2}\n"
        "target: {subject: orders-value, topic: orders}\n" + FIELDS
    )
    with RegistryClient(RegistrySettings(url=fake.url, retries=0)) as client:
        mapping = with_registry_schemas(load(path), RegistrySchemas(client))
        plan = resolve_registry(mapping, client)
    assert plan.target_id == v1_id
    assert json.loads(plan.target_schema) == mapping.target.schema_json  # self-contained
    (writer,) = plan.writer_schemas.values()
    assert "x.Address" not in writer  # every referenced type defined inline
