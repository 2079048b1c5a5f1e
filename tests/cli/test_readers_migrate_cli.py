"""migrate plan says which declared v1 readers the converter keeps alive; migrate status labels
each v1 consumer group with its declared reader, or "undeclared"."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from converters.ops.dependents import Dependents, Group, Member, with_declared_readers
from schemacli.app import app
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.output.migrate import dependents_lines

ROOT = Path(__file__).resolve().parents[2]
V1 = "schemas/subjects/taxi-rides-value/v2.avsc"  # the subject's latest: what v1 consumers read
V2 = "schemas/migration/taxi-ride-v2-breaking.avsc"


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def add(consumer: str, schema: Path | str, group: str, owner: str | None = None) -> None:
    extra = ["--owner", owner] if owner else []
    result = run("readers", "add", consumer, schema, "-s", "taxi-rides-value", "-g", group, *extra)
    assert result.exit_code == 0, result.output


def needing_zone(tmp_path: Path) -> Path:
    schema = json.loads((ROOT / V1).read_text())
    schema["fields"].append({"name": "zone", "type": "string"})
    path = tmp_path / "needs-zone.avsc"
    path.write_text(json.dumps(schema, indent=2))
    return path


def test_plan_says_which_v1_readers_the_converter_keeps_alive(project, tmp_path):
    add("billing", V1, "billing-1", owner="team-billing")
    add("audit", needing_zone(tmp_path), "audit-1")
    result = run("migrate", "plan", "--from", V2, "--to", V1, "-o", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["v1_subject"] == "taxi-rides-value"
    alive = {r["consumer"]: r["kept_alive"] for r in report["readers"]}
    assert alive == {"audit": False, "billing": True}
    audit = next(r for r in report["readers"] if r["consumer"] == "audit")
    finding = audit["findings"][0]
    assert finding["kind"] == "READER_FIELD_MISSING_DEFAULT_VALUE"
    assert finding["reader"]["location"]["source"].endswith("readers/audit/taxi-rides-value.avsc")
    assert finding["location"]["source"] == V1


def test_plan_text_lists_them_on_stderr(project, tmp_path):
    add("billing", V1, "billing-1", owner="team-billing")
    add("audit", needing_zone(tmp_path), "audit-1")
    result = run("migrate", "plan", "--from", V2, "--to", V1)
    assert result.exit_code == 0
    assert "kept alive: billing (owner team-billing), group(s) billing-1" in result.stderr
    assert "NOT kept alive: audit, group(s) audit-1" in result.stderr
    assert "fields:" in result.stdout  # the mapping itself is unchanged on stdout


def test_plan_without_declared_readers_says_nothing_of_them(project):
    result = run("migrate", "plan", "--from", V2, "--to", V1)
    assert "declared readers" not in result.stderr
    as_json = run("migrate", "plan", "--from", V2, "--to", V1, "-o", "json")
    assert json.loads(as_json.stdout)["readers"] == []


def test_plan_with_a_broken_declaration_exits_2_with_its_line(project):
    add("billing", V1, "billing-1")
    (project / "schemas/readers/billing/reader.json").write_text('{"groups": [1]}')
    result = run("migrate", "plan", "--from", V2, "--to", V1)
    assert result.exit_code == 2
    assert "readers/billing/reader.json:1:" in result.output
    assert "Traceback" not in result.output


# -- status: each v1 group labelled --------------------------------------------------------------


def dependents(*groups: str) -> Dependents:
    return Dependents(
        v1_topic="taxi-rides",
        v2_topic="taxi-rides-v2",
        looked_at=0.0,
        window_seconds=900,
        v1_groups=tuple(Group(g, "Stable", (Member("c", "/10.0.0.1"),), (), None) for g in groups),
        v2_groups=(),
        direct_writes=(),
    )


def reader(consumer: str, *groups: str, subject: str = "taxi-rides-value") -> DeclaredReader:
    return DeclaredReader(
        consumer, subject, Path(f"readers/{consumer}/{subject}.avsc"), groups, "team-x", None
    )


def test_status_labels_each_v1_group_with_its_declared_reader_or_undeclared():
    deps = with_declared_readers(
        dependents("billing-1", "legacy-etl", "audit-1"),
        "taxi-rides-value",
        [reader("billing", "billing-1"), reader("audit", "audit-1", subject="other-value")],
    )
    assert deps.declared == {
        "billing-1": "billing (owner team-x)",
        "legacy-etl": None,
        "audit-1": None,  # its reader is of another subject: not a reader of v1
    }
    lines = "\n".join(dependents_lines(deps))
    assert "consumer group billing-1 (Stable) [declared reader billing (owner team-x)]" in lines
    assert "consumer group legacy-etl (Stable) [undeclared]" in lines


def test_status_without_labels_reads_as_before():
    lines = "\n".join(dependents_lines(dependents("billing-1")))
    assert "consumer group billing-1 (Stable): " in lines
    assert "undeclared" not in lines
