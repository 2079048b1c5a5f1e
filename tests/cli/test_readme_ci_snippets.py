"""The CI snippets README.md shows name hooks, inputs and options that exist.

(The hooks and the action themselves are run in test_precommit_hooks.py and
test_github_action.py; these catch a README that drifts from them.)
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def snippet(first_line: str) -> dict:
    (block,) = re.findall(r"```yaml\n(" + re.escape(first_line) + r"\n.*?)```", README, re.S)
    return yaml.safe_load(block)


def test_the_pre_commit_snippet_uses_hooks_this_repository_defines():
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (repo,) = snippet("# .pre-commit-config.yaml")["repos"]
    assert {h["id"] for h in repo["hooks"]} == hooks


def test_the_workflow_snippet_gives_only_inputs_the_action_declares():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    workflow = snippet("# .github/workflows/schemas.yml")
    uses = [s for s in workflow["jobs"]["gate"]["steps"] if "schemacli" in s.get("uses", "")]
    (step,) = uses
    assert set(step["with"]) <= set(action["inputs"])
    from schemacli.contracts.evolution.levels import Level

    assert step["with"]["level"] in {level.value for level in Level}


def test_the_gitlab_snippet_writes_the_report_it_declares():
    job = snippet("# .gitlab-ci.yml")["schemas"]
    (command,) = job["script"]
    assert "-o gitlab" in command
    assert command.split("> ")[1] == job["artifacts"]["reports"]["codequality"]
