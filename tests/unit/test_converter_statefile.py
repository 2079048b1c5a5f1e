"""The converter's state files: missing means "nothing yet"; corrupt is an error, never zeros."""

from __future__ import annotations

import pytest

from converters.deploy import status
from converters.job import ProgressFile
from converters.statefile import read_state
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
