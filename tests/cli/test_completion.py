"""Shell completion: scripts for bash, zsh and fish, and the values we know."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from schemacli.commands.completion import complete_level, complete_subject

# The console script: the shell knows the program by that name (_SCHEMACLI_COMPLETE)
SCHEMACLI = str(Path(sys.executable).parent / "schemacli")
CLI = [SCHEMACLI]


class Ctx:
    def __init__(self, **params):
        self.params = params


def complete(words: str, env: dict | None = None) -> list[str]:
    """What bash would be offered after ``words`` (the last word is the one being typed)."""
    parts = words.split(" ")
    done = subprocess.run(
        [SCHEMACLI],
        env={
            **os.environ,
            **(env or {}),
            "_SCHEMACLI_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_a_completion_script(shell):
    done = subprocess.run(
        [SCHEMACLI],
        env={**os.environ, "_SCHEMACLI_COMPLETE": f"source_{shell}"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "_SCHEMACLI_COMPLETE=complete_" in done.stdout


def test_help_offers_install_completion():
    out = subprocess.run([*CLI, "--help"], capture_output=True, text=True).stdout
    assert "--install-completion" in out and "--show-completion" in out


def test_commands_and_output_formats_complete():
    assert "check" in complete("schemacli ch")
    assert complete("schemacli gate -o ") == ["text", "json", "junit", "github", "sarif", "gitlab"]


def test_levels_complete_from_what_was_typed_in_any_case():
    assert complete_level("full") == ["FULL", "FULL_TRANSITIVE"]
    assert complete_level("")[0] == "NONE"


def test_subjects_complete_from_the_store_given_or_configured(tmp_path):
    for name in ("orders-value", "orders-key", "rides-value"):
        (tmp_path / "subjects" / name).mkdir(parents=True)
    (tmp_path / "subjects" / "README.md").write_text("not a subject")
    assert complete_subject(Ctx(store=tmp_path), "ord") == ["orders-key", "orders-value"]


def test_a_missing_store_completes_nothing_instead_of_failing(tmp_path):
    assert complete_subject(Ctx(store=tmp_path / "nope"), "") == []
    assert complete_subject(Ctx(store=Path("/dev/null")), "x") == []


def test_init_level_completes_through_the_shell():
    assert complete("schemacli init --level FULL_") == ["FULL_TRANSITIVE"]


def test_check_completes_levels_and_the_configured_stores_subjects(tmp_path):
    (tmp_path / "contracts/subjects/orders-value").mkdir(parents=True)
    (tmp_path / "schemacli.toml").write_text('store = "contracts"\n')
    env = {"SCHEMACLI_CONFIG": str(tmp_path / "schemacli.toml")}
    assert complete("schemacli check x.avsc --subject ord", env) == ["orders-value"]
    assert complete("schemacli check x.avsc --level BACKWARD_T") == ["BACKWARD_TRANSITIVE"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_clicks_spelling_of_the_completion_variable_works_too(shell):
    done = subprocess.run(
        [SCHEMACLI],
        env={**os.environ, "_SCHEMACLI_COMPLETE": f"{shell}_source"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "not supported" not in done.stdout + done.stderr
    assert "_SCHEMACLI_COMPLETE=complete_" in done.stdout
