"""The harness's seeds: one run per defect class of issue 26, through the same invariants as the
generated runs (fuzzkit.violations), with the exit code each class calls for. Generation
(test_fuzz_cli.py) starts from these values; these make sure every class runs on every CI run."""

from __future__ import annotations

import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from fuzzkit import (
    GOOD_MAPPING,
    GOOD_SCHEMA,
    MAPPING,
    Case,
    FileSpec,
    Secrets,
    closed_port,
    effective_output,
    run_and_check,
)

SECRET = "Sx5eed5ec7"
PORT = closed_port()
HOST = f"127.0.0.1:{PORT}"
STORE = "schemas/subjects/taxi-rides-value"


@dataclass
class Seed:
    name: str
    args: list[str]
    expect: int | None = None
    env: dict[str, str] = field(default_factory=dict)
    files: list[FileSpec] = field(default_factory=list)
    stdin: bytes | None = None
    process: bool = False  # through a real process (FIFOs, devices, memory)
    stdin_path: str | None = None
    inspect: object = None
    url_from_env: bool = True  # SCHEMACLI_REGISTRY_URL at the closed port, under the flags


def _parses_toml(name: str):
    def inspect(ws, out):
        if out.exit_code == 0:
            tomllib.loads((ws.work / name).read_text())

    return inspect


def _parses_workflow(ws, out):
    if out.exit_code == 0:
        for path in (ws.work / ".github/workflows").glob("*.yml"):
            yaml.safe_load(path.read_text())


SEEDS = [
    # 1. a secret printed: URL without a scheme or with a mangled one, flag / env / config file
    *[
        Seed(f"secret-in-url-{i}", ["subjects", "list", "-r", url], 2)
        for i, url in enumerate(
            [
                f"alice:{SECRET}@{HOST}",
                f"http:/alice:{SECRET}@{HOST}",
                f"http//alice:{SECRET}@{HOST}",
            ]
        )
    ],
    Seed(
        "secret-in-env-url",
        ["subjects", "list"],
        2,
        env={"SCHEMACLI_REGISTRY_URL": f"http:/alice:{SECRET}@{HOST}"},
    ),
    Seed(
        "secret-in-config-url",
        ["subjects", "list"],
        2,
        files=[
            FileSpec(
                "schemacli.toml",
                content=f'[registry]\nurl = "alice:{SECRET}@{HOST}"\n'.encode(),
            )
        ],
        url_from_env=False,
    ),
    Seed(
        "secret-in-gate-sarif",
        ["gate", "--register", "-o", "sarif"],
        2,
        env={"SCHEMACLI_REGISTRY_URL": f"http:/alice:{SECRET}@{HOST}"},
    ),
    # 2. unbounded work from a version's name (memory-capped process)
    *[
        Seed(
            f"huge-version-{v}",
            ["gate", "-o", "json"],
            files=[FileSpec(f"{STORE}/v{v}.avsc", content=GOOD_SCHEMA)],
            process=True,
        )
        for v in ("100000000000000000000", "20251125")
    ],
    # 3. unbounded or blocking reads
    *[
        Seed(
            f"properties-{special}-{command}",
            ["migrate", command, MAPPING, "-b", HOST, "--kafka-properties", special],
            2,
            process=True,
        )
        for special in ("/dev/zero", "fifo")
        for command in ("status", "finish", "replay")
    ],
    Seed("validate-stdin-dev-zero", ["validate", "-"], 2, process=True, stdin_path="/dev/zero"),
    *[
        Seed(
            f"deploy-mapping-{special}",
            ["migrate", "deploy", special, "-b", HOST, "--dry-run"],
            2,
            process=True,
        )
        for special in ("adir", "/dev/null", "fifo")
    ],
    # 4. odd files: a self-symlink version in every document format; an odd pyproject.toml
    *[
        Seed(
            f"self-symlink-version-{fmt}",
            ["gate", "-o", fmt],
            2,
            files=[FileSpec(f"{STORE}/v2.avsc", kind="selfloop")],
        )
        for fmt in ("text", "json", "junit", "sarif", "gitlab", "github")
    ],
    Seed(
        "init-pyproject-not-utf8",
        ["init"],
        2,
        files=[FileSpec("pyproject.toml", content=b"\xff\xfe")],
    ),
    Seed(
        "init-pyproject-tool-value",
        ["init"],
        2,
        files=[FileSpec("pyproject.toml", content=b"tool = 1\n")],
    ),
    # 5. partial writes: nothing written when .github is a file
    Seed(
        "init-github-is-a-file",
        ["init", "--github"],
        2,
        files=[FileSpec(".github", content=b"not a folder")],
    ),
    # 6. corrupting writes that exit 0: what init writes parses back
    Seed(
        "init-pyproject-inline-tool",
        ["init"],
        files=[
            FileSpec("pyproject.toml", content=b"tool = {black = {line-length = 100}}\n"),
            FileSpec("schemacli.toml", kind="dir"),  # not a candidate: init edits pyproject
        ],
        inspect=_parses_toml("pyproject.toml"),
    ),
    *[
        Seed(f"init-store-{i}", ["init", "--store", store], inspect=_parses_toml("schemacli.toml"))
        for i, store in enumerate(['my"store', "back\\slash", "new\nline"])
    ],
    Seed(
        "init-install-newline",
        ["init", "--github", "--install", "schemacli\n  - run: echo injected"],
        inspect=_parses_workflow,
    ),
    # 7. numbers not validated
    *[
        Seed(f"watch-every-{v}", ["migrate", "status", MAPPING, "--watch", "--every", v], 2)
        for v in ("nan", "inf", "1e300")
    ],
    Seed(
        "mapping-default-wrong-type",
        ["migrate", "validate", MAPPING, "-o", "json"],
        files=[
            FileSpec(
                MAPPING,
                content=GOOD_MAPPING.replace(
                    b"on_error: fail", b"on_error: default, default: 'not a float'"
                ),
            )
        ],
    ),
    # 8. output documents: control characters and URI-hostile names in file names
    *[
        Seed(
            f"odd-name-{fmt}-{i}",
            ["validate", name, "-o", fmt],
            files=[FileSpec(name, content=b'{"type": "record", "name": "R", "fields": [}')],
        )
        for fmt in ("junit", "sarif", "gitlab", "github", "json")
        for i, name in enumerate(
            ["a b,c:d.avsc", "new\nline.avsc", "esc\x1b[31m.avsc", "ctl\x01.avsc"]
        )
    ],
    Seed(
        "junit-control-chars-in-schema-name",
        ["validate", "ctl.avsc", "-o", "junit"],
        files=[
            FileSpec(
                "ctl.avsc",
                content=b'{"type": "record", "name": "R\\u0001\\u001b", "fields": []}',
            )
        ],
    ),
    Seed(
        "status-watch-json-error",
        ["migrate", "status", MAPPING, "--watch", "--count", "2", "-o", "json"],
        2,
    ),
    # 9. order: no deployment is an input error before Kafka is asked
    Seed("finish-without-deployment", ["migrate", "finish", MAPPING, "-b", HOST], 2),
    # 10. completion
    Seed("complete-without-comp-words", [], env={"_SCHEMACLI_COMPLETE": "bash_complete"}),
    Seed(
        "complete-non-numeric-cword",
        [],
        env={
            "_SCHEMACLI_COMPLETE": "bash_complete",
            "COMP_WORDS": "schemacli mi",
            "COMP_CWORD": "x",
        },
    ),
    Seed(
        "install-completion-home-is-a-file",
        ["--install-completion", "bash"],
        env={"HOME": "/dev/null"},
    ),
]


@pytest.fixture(scope="module")
def scratch():
    base = Path(tempfile.mkdtemp(prefix="schemacli-seeds-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("seed", SEEDS, ids=[s.name for s in SEEDS])
def test_each_defect_class_of_issue_26_keeps_the_invariants(seed: Seed, scratch):
    files = [FileSpec(MAPPING, content=GOOD_MAPPING), FileSpec("adir", kind="dir"), *seed.files]
    case = Case(
        command=" ".join(a for a in seed.args[:2] if not a.startswith("-")),
        args=seed.args,
        env=seed.env,
        files=files,
        stdin=seed.stdin,
        secrets=Secrets([SECRET]),
        output=effective_output(seed.args),
        base_env={"SCHEMACLI_REGISTRY_URL": f"http://{HOST}"} if seed.url_from_env else {},
        expect=seed.expect,
        why=seed.name,
    )
    run_and_check(
        case,
        scratch,
        in_process=not seed.process,
        fifo=seed.process,
        subprocess_stdin=seed.stdin_path,
        inspect=seed.inspect,
    )
