"""A run that exhausts memory ends as an input error (exit 2, the format's error document),
never a MemoryError traceback; the cap on a schema's size (8 MiB) is what keeps a run within
2 GiB (docs/store.md; bench/bench_wide_schema.py measures the curve)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.output_documents import FORMATS, parse


def _exhausted(*args, **kwargs):
    raise MemoryError


@pytest.mark.parametrize("fmt", ["text", *FORMATS])
def test_running_out_of_memory_is_an_input_error_in_every_format(project, monkeypatch, fmt):
    import schemacli.contracts.lint.validate as validate

    monkeypatch.setattr(validate, "validate_file", _exhausted)
    result = CliRunner().invoke(app, ["validate", "schemas", "-o", fmt])
    assert result.exit_code == 2, result.output
    assert "ran out of memory" in result.stderr and "Traceback" not in result.output
    if fmt != "text":
        parse(fmt, result.stdout)


def test_a_schema_over_the_cap_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.avsc"
    with big.open("wb") as handle:
        handle.truncate(8 * 1024 * 1024 + 1)  # sparse: one byte past the cap
    result = CliRunner().invoke(app, ["validate", str(big), "-o", "json"])
    assert result.exit_code == 2 and "larger than 8 MiB" in result.output
