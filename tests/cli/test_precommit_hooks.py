"""The pre-commit hooks in .pre-commit-hooks.yaml, run as a user's repository would run them.

A user's repository names this checkout in its .pre-commit-config.yaml (a ``repo:`` entry with a
``rev:``), and ``pre-commit run`` installs it into pre-commit's own environment and runs a hook over
a temporary git repository holding a good and a bad schema. The checkout is first copied to a
repository of its own with the working tree's changes to tracked files committed (as ``pre-commit
try-repo`` does), so that what is tested is what is on disk; the environment is built once for the
module (``try-repo`` would build a new one for every call).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
GOOD = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
BAD = ROOT / "tests/fixtures/avsc/bad/duplicate_field.avsc"

pytestmark = pytest.mark.slow  # pre-commit builds an environment with schemacli in it


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    # One environment for the module: pre-commit caches it by repository and revision.
    return tmp_path_factory.mktemp("pre-commit-home")


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory) -> tuple[Path, str]:
    """This checkout as a repository of its own, the working tree's changes to tracked files
    committed on top of HEAD: its path and the revision a user's config names."""
    clone = tmp_path_factory.mktemp("hooks") / "schemacli"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    changes = subprocess.run(
        ["git", "diff", "HEAD", "--binary"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    if changes:
        subprocess.run(["git", "apply", "--index"], cwd=clone, input=changes, check=True)
        identity = ["-c", "user.name=tests", "-c", "user.email=tests@localhost"]
        _git(*identity, "commit", "-q", "-m", "the working tree", cwd=clone)
    return clone, _git("rev-parse", "HEAD", cwd=clone)


@pytest.fixture
def user_repo(tmp_path):
    repo = tmp_path / "user-repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


def run_hook(
    repo: Path, home: Path, hooks: tuple[Path, str], hook: str
) -> subprocess.CompletedProcess:
    assert PRE_COMMIT.exists(), "pre-commit is part of the dev extra"
    where, rev = hooks
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {where}\n  rev: {rev}\n  hooks:\n  - id: {hook}\n"
    )
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(home)}
    env["PRE_COMMIT_HOME"] = str(home)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return subprocess.run(
        [str(PRE_COMMIT), "run", hook, "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_validate_hook_passes_good_schemas_and_fails_on_a_bad_one(
    user_repo, pre_commit_home, hooks_repo
):
    shutil.copy(GOOD, user_repo / "ride.avsc")
    (user_repo / "notes.txt").write_text("not a schema: the hook leaves it alone\n")
    passed = run_hook(user_repo, pre_commit_home, hooks_repo, "schemacli-validate")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "schemacli validate" in passed.stdout and "Passed" in passed.stdout

    shutil.copy(BAD, user_repo / "broken.avsc")
    failed = run_hook(user_repo, pre_commit_home, hooks_repo, "schemacli-validate")
    assert failed.returncode == 1
    assert "Failed" in failed.stdout
    assert "broken.avsc" in failed.stdout and "DUPLICATE_FIELD" in failed.stdout


def test_the_gate_hook_refuses_a_version_that_breaks_its_subject(
    user_repo, pre_commit_home, hooks_repo
):
    shutil.copytree(ROOT / "schemas", user_repo / "schemas")
    passed = run_hook(user_repo, pre_commit_home, hooks_repo, "schemacli-gate")
    assert passed.returncode == 0, passed.stdout + passed.stderr

    breaking = ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc"
    shutil.copy(breaking, user_repo / "schemas/subjects/taxi-rides-value/v3.avsc")
    failed = run_hook(user_repo, pre_commit_home, hooks_repo, "schemacli-gate")
    assert failed.returncode == 1
    assert "TYPE_MISMATCH" in failed.stdout and "taxi-rides-value" in failed.stdout


def test_the_lint_hook_fails_on_an_optional_field_without_default(
    user_repo, pre_commit_home, hooks_repo
):
    shutil.copy(GOOD, user_repo / "ride.avsc")
    passed = run_hook(user_repo, pre_commit_home, hooks_repo, "schemacli-lint")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    (user_repo / "tip.avsc").write_text(
        '{"type": "record", "name": "R", "namespace": "n", "fields": '
        '[{"name": "tip", "type": ["null", "int"]}]}'
    )
    failed = run_hook(user_repo, pre_commit_home, hooks_repo, "schemacli-lint")
    assert failed.returncode == 1
    assert "tip.avsc" in failed.stdout and "E001" in failed.stdout
