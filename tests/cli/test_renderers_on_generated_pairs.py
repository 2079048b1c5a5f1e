"""Every renderer takes every finding the engine makes: `diff` over generated schema pairs (all
incompatibility kinds, diff changes, warnings), in every output format, without a crash."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.oracle.generator import pairs

FORMATS = ("text", "json", "junit", "github")


def _pair_files(tmp_path: Path, count: int) -> list[tuple[Path, Path]]:
    out = []
    for i, (a, b) in enumerate(pairs(20261122, count)):
        old, new = tmp_path / f"{i}-old.avsc", tmp_path / f"{i}-new.avsc"
        old.write_text(json.dumps(a))
        new.write_text(json.dumps(b))
        out.append((old, new))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("output", FORMATS)
def test_every_renderer_takes_every_finding_of_generated_pairs(tmp_path, output):
    runner = CliRunner()
    kinds: set[str] = set()
    for old, new in _pair_files(tmp_path, 150):
        result = runner.invoke(app, ["diff", str(old), str(new), "-o", output])
        assert result.exit_code in (0, 2), (old, result.output)  # 2: a schema Java refuses
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            old.read_text(),
            new.read_text(),
            result.output,
        )
        if output == "json" and result.exit_code == 0:
            report = json.loads(result.stdout)
            kinds |= {f["kind"] for case in report["cases"] for f in case["findings"]}
        if output == "junit":  # well-formed XML, also when a schema is refused (exit 2)
            ET.fromstring(result.stdout)
    if output == "json":  # the pairs reach every incompatibility kind Avro Java names
        assert {
            "TYPE_MISMATCH",
            "NAME_MISMATCH",
            "FIXED_SIZE_MISMATCH",
            "MISSING_ENUM_SYMBOLS",
            "READER_FIELD_MISSING_DEFAULT_VALUE",
            "MISSING_UNION_BRANCH",
        } <= kinds


@pytest.mark.slow
def test_plan_validate_and_ddl_take_every_generated_schema_without_a_crash(tmp_path):
    # The planner, the validator's fastavro dry run and the Spark DDL meet every construct the
    # generator makes (unions, logical types fastavro refuses, recursion, renamed types, ...):
    # each ends in an answer or a clean error, never an exception.
    runner = CliRunner()
    for i, (old, new) in enumerate(_pair_files(tmp_path, 120)):
        mapping = tmp_path / f"{i}.yaml"
        commands = [
            ["migrate", "plan", "--from", str(new), "--to", str(old), "--out", str(mapping)],
            ["migrate", "validate", str(mapping)],
            ["spark", "ddl", str(new)],
        ]
        for args in commands:
            if args[1] == "validate" and not mapping.exists():
                continue  # plan refused the pair (a recursive schema): nothing to validate
            result = runner.invoke(app, args)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                args,
                new.read_text(),
                result.output,
            )
            assert result.exit_code in (0, 1, 2), (args, result.output)
