"""The converter's state files: missing means "nothing yet"; corrupt is an error, never zeros."""

from __future__ import annotations

import pytest

from converters.ops.status import status
from converters.pipeline.progress import ProgressFile
from converters.state import read_state
from schemacli.errors import ExitCode, InputError


def test_a_missing_state_file_reads_as_empty(tmp_path):
    assert read_state(tmp_path / "progress.json") == {}


def test_a_corrupt_progress_file_is_an_error_with_its_line_and_column(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text('{"totals": {"in": 12,\n  "converted": }}')
    with pytest.raises(InputError) as caught:
        read_state(path)
    err = caught.value
    assert err.exit_code == ExitCode.INPUT_ERROR
    assert (err.location.source, err.location.line, err.location.column) == (str(path), 2, 16)
    assert "delete it to restart the counts" in err.hint


def test_a_state_file_that_is_not_an_object_is_an_error(tmp_path):
    path = tmp_path / "deploy.json"
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="not a JSON object"):
        read_state(path)


def test_status_refuses_corrupt_counts_instead_of_reporting_zeros(tmp_path):
    (tmp_path / "progress.json").write_text("{not json")
    with pytest.raises(InputError, match="corrupt converter state"):
        status(tmp_path, topic=None, bootstrap=None)


def test_the_job_resumes_its_totals_from_the_progress_file(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text('{"totals": {"in": 7, "converted": 5}, "last_batch": 3}')
    progress = ProgressFile(path)
    assert progress.data["totals"]["in"] == 7
    assert progress.data["last_batch"] == 3


def test_the_job_refuses_to_start_on_a_corrupt_progress_file(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text("{")
    with pytest.raises(InputError):
        ProgressFile(path)


def test_a_progress_file_that_is_not_utf8_is_an_error_not_zeros(tmp_path):
    path = tmp_path / "progress.json"
    path.write_bytes(b'{"totals": "\xff"}')
    with pytest.raises(InputError) as caught:
        read_state(path)
    assert (caught.value.location.line, caught.value.location.column) == (1, 13)


def _commit_batch_0(state, third_line: bytes):
    cp = state / "checkpoint"
    (cp / "commits").mkdir(parents=True)
    (cp / "offsets").mkdir()
    (cp / "commits" / "0").write_text("v1\n{}\n")
    (cp / "offsets" / "0").write_bytes(b'v1\n{"batchWatermarkMs":0}\n' + third_line + b"\n")
    return cp / "offsets" / "0"


@pytest.mark.parametrize(
    "deploy_json", ['{"checkpoint": 5}', '{"checkpoint": ["x"]}', '{"checkpoint": ""}']
)
def test_status_refuses_a_deploy_file_whose_checkpoint_is_not_a_location(tmp_path, deploy_json):
    (tmp_path / "deploy.json").write_text(deploy_json)
    with pytest.raises(InputError) as caught:
        status(tmp_path, topic=None, bootstrap=None)
    err = caught.value
    assert err.location.source == str(tmp_path / "deploy.json")
    assert err.location.pointer == "/checkpoint" and "restore the file" in err.hint


@pytest.mark.parametrize(
    ("progress", "pointer"),
    [
        ('{"totals": {"in": "abc"}}', "/totals/in"),
        ('{"totals": {"in": null}}', "/totals/in"),
        ('{"totals": {"in": 1e999}}', "/totals/in"),
        ('{"totals": {"in": -3}}', "/totals/in"),
        ('{"totals": [1, 2]}', "/totals"),
        ('{"processed_rows_per_second": "fast"}', "/processed_rows_per_second"),
    ],
)
def test_status_refuses_counts_that_are_not_whole_numbers(tmp_path, progress, pointer):
    (tmp_path / "progress.json").write_text(progress)
    with pytest.raises(InputError) as caught:
        status(tmp_path, topic=None, bootstrap=None)
    err = caught.value
    assert err.location.source == str(tmp_path / "progress.json")
    assert err.location.pointer == pointer and "corrupt converter state" in err.message


@pytest.mark.parametrize(
    "third_line", [b"{bad json", b'{"t": {"x": 5}}', b'{"t": [1]}', b'{"t": {"0": "5"}}']
)
def test_status_refuses_corrupt_checkpoint_offsets_naming_file_and_line(tmp_path, third_line):
    path = _commit_batch_0(tmp_path, third_line)
    with pytest.raises(InputError) as caught:
        status(tmp_path, topic=None, bootstrap=None)
    err = caught.value
    assert (err.location.source, err.location.line) == (str(path), 3)
    assert "corrupt checkpoint offsets" in err.message and "restore the checkpoint" in err.hint


def test_status_refuses_checkpoint_offsets_that_are_not_utf8(tmp_path):
    path = _commit_batch_0(tmp_path, b'{"t": {"0": 5\xff}}')
    with pytest.raises(InputError, match="not valid UTF-8") as caught:
        status(tmp_path, topic=None, bootstrap=None)
    assert (caught.value.location.source, caught.value.location.line) == (str(path), 3)


def test_the_status_command_reports_a_corrupt_state_file_as_exit_2_without_traceback(tmp_path):
    from typer.testing import CliRunner

    from schemacli.app import app

    (tmp_path / "progress.json").write_text('{"totals": {"in": 1e999}}')
    result = CliRunner().invoke(app, ["migrate", "status", "--state-dir", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "progress.json" in result.output and "not a whole number" in result.output


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"totals": {"in": ' + "9" * 5000 + "}}"],
    ids=["nested 100,000 deep", "a 5,000-digit number"],
)
def test_state_json_python_cannot_load_is_a_corrupt_file_error(tmp_path, text):
    path = tmp_path / "progress.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_state(path)
    assert caught.value.message.startswith("corrupt converter state: ")
    assert caught.value.location.source == str(path)
