"""`migrate replay` without Kafka or Spark: a dead letter back to its source row, the
converter's output sorted into what to write and what still fails, the report, and the usage
errors of the command (through typer's CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from converters.ops.replay import (
    Failure,
    ReplayReport,
    outcome,
    record,
    source_row,
    transactional_id,
    unique_rows,
)
from converters.pipeline.headers import MARKER_HEADER, marker_value
from schemacli.app import app
from schemacli.output.migrate import replay_text

ROOT = Path(__file__).resolve().parents[2]
V2 = str(ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc")
V1 = str(ROOT / "schemas/subjects/taxi-rides-value/v1.avsc")
runner = CliRunner()

JOB_HEADERS = [
    ("schemacli.error", b"total_amount: cannot convert n/a to float"),
    ("schemacli.error-stage", b"convert"),
    ("schemacli.source", b"rides-v2/1/42"),
    ("schemacli.source-timestamp", b"1767225600000"),
]


def test_a_dead_letter_becomes_its_source_row_without_the_jobs_headers():
    own = [("trace-id", b"t1"), ("schemacli.source", b"the producer's own")]
    row = source_row(b"k1", b"\x00raw", own + JOB_HEADERS)
    assert (row.topic, row.partition, row.offset, row.timestamp_ms) == (
        "rides-v2",
        1,
        42,
        1767225600000,
    )
    assert (row.key, row.value, row.position) == (b"k1", b"\x00raw", "rides-v2/1/42")
    # the job appends its headers last: an earlier header of the same name was the message's
    assert row.headers == own


def test_a_topic_name_with_slashes_keeps_them_in_the_source_position():
    headers = [*JOB_HEADERS[:2], ("schemacli.source", b"a/b/3/7"), JOB_HEADERS[3]]
    row = source_row(None, None, headers)
    assert (row.topic, row.partition, row.offset) == ("a/b", 3, 7)


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ([], "schemacli.source"),
        ([("schemacli.source", b"rides-v2/x/1"), JOB_HEADERS[3]], "schemacli.source"),
        ([JOB_HEADERS[2]], "schemacli.source-timestamp"),
        ([JOB_HEADERS[2], ("schemacli.source-timestamp", b"soon")], "schemacli.source-timestamp"),
    ],
)
def test_a_message_that_is_not_the_converters_dead_letter_is_refused_naming_the_header(
    headers, problem
):
    with pytest.raises(ValueError, match=f"no {problem} header"):
        source_row(b"k", b"v", headers)


def test_dead_letters_written_twice_for_one_source_position_count_once():
    a = source_row(b"a", b"1", JOB_HEADERS)
    again = source_row(b"a", b"1", JOB_HEADERS)
    other = source_row(
        b"b", b"2", [*JOB_HEADERS[:2], ("schemacli.source", b"rides-v2/0/1"), JOB_HEADERS[3]]
    )
    assert unique_rows([a, again, other]) == [a, other]


def test_the_converters_output_splits_into_v1_rows_by_marker_and_failures_by_error():
    marker = marker_value("rides-v2-value/1", "rides-v2", 1, 42, 1767225600000)
    again = [*JOB_HEADERS[:2], ("schemacli.source", b"rides-v2/0/9"), JOB_HEADERS[3]]
    rows = [
        {"topic": "rides", "key": bytearray(b"k1"), "value": bytearray(b"v1"),
         "headers": [{"key": "trace-id", "value": b"t1"}, {"key": MARKER_HEADER, "value": marker}]},
        {"topic": "dlq", "key": b"k2", "value": b"raw",
         "headers": [{"key": k, "value": v} for k, v in again]},
        {"topic": "dlq", "key": b"k3", "value": b"raw",
         "headers": [{"key": k, "value": v} for k, v in JOB_HEADERS]},
    ]  # fmt: skip
    out = outcome(rows, "rides")
    assert out.to_v1 == {
        "rides-v2/1/42": {
            "key": b"k1",
            "value": b"v1",
            "headers": [("trace-id", b"t1"), (MARKER_HEADER, marker)],
        }
    }
    error = "total_amount: cannot convert n/a to float"
    assert out.failing == [  # in source order
        Failure("rides-v2/0/9", error, "convert"),
        Failure("rides-v2/1/42", error, "convert"),
    ]


def report(**changes) -> ReplayReport:
    base = dict(
        dead_letter_topic="rides-v2.dead-letter",
        v1_topic="rides",
        mapping="fixed.yaml",
        dry_run=False,
        read=10,
        unique=8,
        converted=4,
        written=4,
        already_in_v1=0,
        v1_scanned=31,
        still_failing=[
            Failure(f"rides-v2/0/{i}", "magic byte is not 0", "decode") for i in range(3)
        ]
        + [Failure("rides-v2/1/1", "unknown schema id 9", "decode")],
        would_write=["rides-v2/0/3", "rides-v2/0/13", "rides-v2/1/3", "rides-v2/1/13"],
    )
    return ReplayReport(**{**base, **changes})


def test_the_text_report_counts_and_groups_what_still_fails_by_stage_and_error():
    text = replay_text(report())
    assert "replay rides-v2.dead-letter -> rides with fixed.yaml" in text
    assert "read 10 dead letter(s): 8 source position(s)" in text
    assert "converted 4: wrote 4, already in v1 0" in text
    assert "  3  [decode] magic byte is not 0\n          1  [decode] unknown schema id 9" in text
    assert "would write 4" in replay_text(report(dry_run=True, written=0))
    assert not report().ok and report(still_failing=[]).ok


def test_each_replay_is_recorded_with_its_time_and_counts(tmp_path: Path):
    record(tmp_path, report())
    record(tmp_path, report(written=0, already_in_v1=4, would_write=[]))
    entries = json.loads((tmp_path / "replays.json").read_text())["replays"]
    assert [(e["written"], e["already_in_v1"], e["still_failing"]) for e in entries] == [
        (4, 0, 4),
        (0, 4, 4),
    ]
    assert all(isinstance(e["at"], float) for e in entries)


def test_replays_into_one_v1_topic_share_a_transactional_id_so_the_later_fences_the_earlier():
    assert transactional_id("rides") == transactional_id("rides") != transactional_id("other")


# ---------------------------------------------------------------------------------------------
# the command's usage errors (exit 2, before Kafka, the registry or Spark)


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def deployed(tmp_path: Path) -> tuple[Path, Path]:
    """A planned mapping and a state dir that looks deployed."""
    mapping = tmp_path / "m.yaml"
    r = run("migrate", "plan", "--from", V2, "--to", V1, "--source-subject", "rides-v2-value",
            "--source-topic", "rides-v2", "--target-topic", "rides",
            "--out", str(mapping))  # fmt: skip
    assert r.exit_code == 0, r.output
    state = tmp_path / "state"
    state.mkdir()
    (state / "deploy.json").write_text("{}")
    return mapping, state


def test_replay_without_a_deployment_exits_2_naming_the_state_dir(deployed, tmp_path: Path):
    mapping, _ = deployed
    r = run("migrate", "replay", str(mapping), "-b", "h:1", "--state-dir", str(tmp_path / "typo"))
    assert r.exit_code == 2 and "no converter state in" in r.output and "typo" in r.output


def test_replay_without_mapping_or_state_dir_exits_2():
    r = run("migrate", "replay", "-b", "h:1")
    assert r.exit_code == 2 and "give the mapping file or --state-dir" in r.output


def test_replay_from_a_state_dir_without_its_mapping_json_exits_2_naming_it(deployed):
    _, state = deployed
    r = run("migrate", "replay", "-b", "h:1", "--state-dir", str(state))
    assert r.exit_code == 2 and "mapping.json" in r.output and "does not exist" in r.output


def test_replay_without_bootstrap_exits_2(deployed):
    mapping, state = deployed
    r = run("migrate", "replay", str(mapping), "--state-dir", str(state))
    assert r.exit_code == 2 and "--bootstrap" in r.output


def test_a_corrected_mapping_with_an_error_exits_2_at_its_file_line_and_column(
    deployed, tmp_path: Path
):
    mapping, state = deployed
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(mapping.read_text().replace("convert: parse_number", "convert: parse_numbr"))
    r = run("migrate", "replay", str(mapping), "-b", "h:1", "--state-dir", str(state),
            "--mapping", str(fixed))  # fmt: skip
    assert r.exit_code == 2
    assert f"{fixed}:" in r.output and "unknown conversion 'parse_numbr'" in r.output


def test_a_corrected_mapping_that_does_not_exist_exits_2_naming_it(deployed, tmp_path: Path):
    mapping, state = deployed
    missing = tmp_path / "nope.yaml"
    r = run("migrate", "replay", str(mapping), "-b", "h:1", "--state-dir", str(state),
            "--mapping", str(missing))  # fmt: skip
    assert r.exit_code == 2 and "nope.yaml" in r.output


def test_a_corrected_mapping_writing_another_topic_exits_2(deployed, tmp_path: Path):
    mapping, state = deployed
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(mapping.read_text().replace("topic: rides\n", "topic: elsewhere\n"))
    r = run("migrate", "replay", str(mapping), "-b", "h:1", "--state-dir", str(state),
            "--mapping", str(fixed))  # fmt: skip
    assert r.exit_code == 2
    assert "writes topic 'elsewhere', the deployed one 'rides'" in r.output
    assert "/target/topic" in r.output
