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
# --install-completion finds the shell from the processes above it (typer asks shellingham), not
# from $SHELL: run it as a child of bash, whatever started pytest (a CI runner need not be a shell).
INSTALL_UNDER_BASH = ["bash", "-c", '"$0" --install-completion bash; exit $?', SCHEMACLI]
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


# -- a completion request that cannot be served: one error line, exit 2, no traceback --------


def _request(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("COMP_WORDS", "COMP_CWORD")}
    return subprocess.run(
        [SCHEMACLI], env={**clean, **env}, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"_SCHEMACLI_COMPLETE": "bash_complete"}, "COMP_WORDS=unset, COMP_CWORD=unset"),
        ({"_SCHEMACLI_COMPLETE": "complete_bash"}, "COMP_WORDS=unset"),
        (
            {"_SCHEMACLI_COMPLETE": "complete_bash", "COMP_WORDS": "schemacli ch"},
            "COMP_CWORD=unset",
        ),
        (
            {"_SCHEMACLI_COMPLETE": "complete_bash", "COMP_WORDS": "schemacli", "COMP_CWORD": "x"},
            "COMP_CWORD='x'",
        ),
        (
            {"_SCHEMACLI_COMPLETE": "complete_bash", "COMP_WORDS": "schemacli", "COMP_CWORD": ""},
            "COMP_CWORD=''",
        ),
        ({"_SCHEMACLI_COMPLETE": "weird_thing"}, "not a completion request schemacli knows"),
        ({"_SCHEMACLI_COMPLETE": "complete_tcsh"}, "not a completion request schemacli knows"),
        ({"_SCHEMACLI_COMPLETE": "nounderscore"}, "not a completion request schemacli knows"),
    ],
    ids=[
        "click-spelling",
        "no-words",
        "no-cword",
        "cword-text",
        "cword-empty",
        "weird",
        "tcsh",
        "no-underscore",
    ],
)
def test_a_completion_request_that_cannot_be_served_is_an_error_not_a_traceback(env, says):
    done = _request(env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and says in done.stderr
    assert "hint: " in done.stderr and "Traceback" not in done.stderr + done.stdout
    assert done.stdout == ""


@pytest.mark.parametrize("cword", ["-1", "99", "0"])
def test_an_out_of_range_word_number_completes_without_failing(cword):
    done = _request(
        {"_SCHEMACLI_COMPLETE": "complete_bash", "COMP_WORDS": "schemacli ch", "COMP_CWORD": cword}
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_an_unclosed_quote_on_the_command_line_completes_without_failing():
    done = _request(
        {
            "_SCHEMACLI_COMPLETE": "complete_bash",
            "COMP_WORDS": 'schemacli check "unclosed',
            "COMP_CWORD": "2",
        }
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr


def test_a_completion_request_is_answered_in_process_too(monkeypatch):
    """typer's CliRunner goes through the same group: the guard is not only in main()."""
    from typer.testing import CliRunner

    from schemacli.app import app

    monkeypatch.delenv("COMP_WORDS", raising=False)
    result = CliRunner().invoke(app, [], env={"_SCHEMACLI_COMPLETE": "bash_complete"})
    assert result.exit_code == 2 and "COMP_WORDS=unset" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    ok = CliRunner().invoke(
        app,
        [],
        env={
            "_SCHEMACLI_COMPLETE": "bash_complete",
            "COMP_WORDS": "schemacli gate -o ",
            "COMP_CWORD": "3",
        },
    )
    assert ok.exit_code == 0 and ok.output.split() == [
        "text",
        "json",
        "junit",
        "github",
        "sarif",
        "gitlab",
    ]


@pytest.mark.parametrize(
    "home",
    ["/dev/null", "file", "read-only"],
)
def test_installing_completion_where_it_cannot_be_written_is_an_error(tmp_path, home):
    if home == "file":
        (tmp_path / "file").write_text("")
        home = str(tmp_path / "file")
    elif home == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder; /dev/null and a file cover it")
        (tmp_path / "ro").mkdir()
        (tmp_path / "ro").chmod(0o555)
        home = str(tmp_path / "ro")
    done = subprocess.run(
        INSTALL_UNDER_BASH,
        env={**os.environ, "HOME": home, "SHELL": "/bin/bash"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: cannot install the shell completion: cannot write")
    assert "Traceback" not in done.stderr and "hint: " in done.stderr


def test_installing_completion_into_a_writable_home_still_works(tmp_path):
    done = subprocess.run(
        INSTALL_UNDER_BASH,
        env={**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".bash_completions/schemacli.sh").is_file()
