"""The composite GitHub Action (action.yml), its steps run the way the runner runs them.

Each ``run:`` step goes to ``bash --noprofile --norc -eo pipefail`` (the runner's ``shell:
bash``) with the step's ``env:`` (inputs substituted as the runner would), ``GITHUB_*`` files in a
temporary folder, and ``GITHUB_PATH`` additions carried to later steps. The install step really
installs this checkout into a fresh virtual environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}")

pytestmark = pytest.mark.slow  # the install step builds schemacli into a new venv


class Runner:
    """Just enough of the Actions runner for a composite action's bash steps."""

    def __init__(self, workspace: Path, temp: Path) -> None:
        self.workspace = workspace
        self.files = {name: temp / name.lower() for name in ("OUTPUT", "PATH", "STEP_SUMMARY")}
        for path in self.files.values():
            path.write_text("")
        self.temp = temp
        self.path = os.environ["PATH"]

    def run_step(self, step: dict, inputs: dict[str, str]) -> subprocess.CompletedProcess:
        defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        given = {**defaults, **inputs}
        env = {
            "PATH": self.path,
            "HOME": os.environ.get("HOME", str(self.temp)),
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.temp),
            "XDG_CACHE_HOME": str(self.temp / "cache"),  # the verdict cache: not the user's
            **{f"GITHUB_{name}": str(path) for name, path in self.files.items()},
        }
        for name, value in (step.get("env") or {}).items():
            env[name] = EXPRESSION.sub(lambda m: given[m.group(1)], str(value))
        if os.environ.get("PIP_CACHE_DIR"):
            env["PIP_CACHE_DIR"] = os.environ["PIP_CACHE_DIR"]
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        added = self.files["PATH"].read_text().split()
        self.path = ":".join([*reversed(added), os.environ["PATH"]])
        return done

    def outputs(self) -> dict[str, str]:
        lines = self.files["OUTPUT"].read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)


def step(step_id_or_name: str) -> dict:
    (found,) = [
        s for s in ACTION["runs"]["steps"] if step_id_or_name in (s.get("id"), s.get("name"))
    ]
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The install step, once: the PATH it leaves for the later steps."""
    temp = tmp_path_factory.mktemp("runner-temp")
    runner = Runner(tmp_path_factory.mktemp("workspace"), temp)
    done = runner.run_step(step("Install schemacli"), {})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("schemacli ")
    return runner.path


@pytest.fixture
def runner(installed, tmp_path):
    workspace = tmp_path / "repo"
    shutil.copytree(ROOT / "schemas", workspace / "schemas")
    temp = tmp_path / "temp"
    temp.mkdir()
    r = Runner(workspace, temp)
    r.path = installed
    return r


def test_no_input_is_pasted_into_a_script_only_passed_through_env():
    # ${{ inputs.x }} inside run: would let a crafted input run shell code
    for s in ACTION["runs"]["steps"]:
        assert "${{" not in s.get("run", ""), s["name"]


def test_a_passing_gate_passes_the_step_and_writes_the_summary(runner):
    done = runner.run_step(step("gate"), {})
    assert done.returncode == 0, done.stdout + done.stderr
    assert runner.outputs()["exit-code"] == "0"
    summary = runner.files["STEP_SUMMARY"].read_text()
    assert summary.startswith("### schemacli gate: ") and "| taxi-rides-value |" in summary


def test_a_breaking_version_fails_the_job_with_an_annotation_on_its_line(runner):
    breaking = runner.workspace / "schemas/migration/taxi-ride-v2-breaking.avsc"
    shutil.copy(breaking, runner.workspace / "schemas/subjects/taxi-rides-value/v3.avsc")
    done = runner.run_step(step("gate"), {})
    assert done.returncode == 1
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any(
        "file=schemas/subjects/taxi-rides-value/v3.avsc,line=" in a and "TYPE_MISMATCH" in a
        for a in annotations
    ), done.stdout
    assert "::error title=schemacli gate::the gate failed with exit 1: incompatible" in done.stdout
    assert runner.outputs()["exit-code"] == "1"
    assert "incompatible" in runner.files["STEP_SUMMARY"].read_text()


def test_the_level_input_sets_the_default_level(runner):
    done = runner.run_step(step("gate"), {"level": "FULL_TRANSITIVE"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FULL_TRANSITIVE" in runner.files["STEP_SUMMARY"].read_text()


def test_an_input_error_fails_with_exit_2_and_says_so(runner):
    done = runner.run_step(step("gate"), {"store": "no-such-store"})
    assert done.returncode == 2
    assert (
        "::error title=schemacli gate::the gate failed with exit 2: usage or input" in done.stdout
    )


def test_an_unreachable_registry_fails_with_exit_3(runner):
    done = runner.run_step(step("gate"), {"registry": "http://127.0.0.1:9"})
    assert done.returncode == 3
    assert "exit 3: registry or network error" in done.stdout


def test_the_lint_input_lints_those_paths_and_fails_on_a_lint_error(runner):
    installed = runner.path  # run_step keeps only what a step adds to GITHUB_PATH
    clean = runner.run_step(step("gate"), {"lint": "schemas"})
    runner.path = installed
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert runner.outputs()["lint-exit-code"] == "0"
    (runner.workspace / "schemas/extra.avsc").write_text(
        '{"type": "record", "name": "R", "namespace": "n", "fields": '
        '[{"name": "tip", "type": ["null", "int"]}]}'
    )
    failed = runner.run_step(step("gate"), {"lint": "schemas/extra.avsc schemas/subjects"})
    assert failed.returncode == 1
    assert "::error file=schemas/extra.avsc,line=1" in failed.stdout and "E001" in failed.stdout
    assert "::error title=schemacli lint::lint failed with exit 1" in failed.stdout
