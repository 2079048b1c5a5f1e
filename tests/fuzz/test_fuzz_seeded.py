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
    FIXABLE_CHECK,
    FIXABLE_LINT,
    GOOD_MAPPING,
    GOOD_SCHEMA,
    HOSTILE_JSON,
    MAPPING,
    OUTSIDE_SCHEMA,
    REPO,
    TOKEN,
    V1_SCHEMA,
    Case,
    FileSpec,
    Secrets,
    closed_port,
    command_tree,
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


# ---- issue 38 ----------------------------------------------------------------------------------

FORMATS = ("text", "json", "junit", "sarif", "gitlab", "github")
LONG = "N" * 251
LONG_TYPE = (
    b'{"type": "record", "name": "R", "fields": [{"name": "a", "type": "%s"}]}' % LONG.encode()
)


def _repo(link: str) -> list[FileSpec]:
    return [
        FileSpec(f"{REPO}/readers/c1/reader.json", content=b'{"groups": ["g1"]}'),
        FileSpec(f"{REPO}/readers/c1/taxi-rides-value.avsc", kind="symlink", target=link),
    ]


SEEDS_38 = [
    # 1. links out of the root: refused by name, the token never printed, nothing written
    *[
        Seed(
            f"store-version-linked-out-{fmt}-{target.rsplit('/', 1)[-1]}",
            ["gate", "-o", fmt],
            2,
            files=[FileSpec(f"{STORE}/v3.avsc", kind="symlink", target=target)],
        )
        for fmt in FORMATS
        for target in (TOKEN, OUTSIDE_SCHEMA)
    ],
    *[
        Seed(
            f"declared-reader-linked-out-{what}",
            ["readers", "list", "-o", "json"],
            2,
            files=files,
        )
        for what, files in (
            (
                "schema",
                [
                    FileSpec("schemas/readers/c1/reader.json", content=b'{"groups": ["g"]}'),
                    FileSpec(
                        "schemas/readers/c1/taxi-rides-value.avsc", kind="symlink", target=TOKEN
                    ),
                ],
            ),
            (
                "manifest",
                [FileSpec("schemas/readers/c1/reader.json", kind="symlink", target=TOKEN)],
            ),
            ("consumer", [FileSpec("schemas/readers/c1", kind="symlink", target="@outside")]),
        )
    ],  # fmt: skip
    *[
        Seed(f"readers-pull-linked-out-{i}", ["readers", "pull", REPO, "-o", fmt], 2, files=files)
        for i, (fmt, files) in enumerate(
            [
                ("json", _repo(TOKEN)),
                ("text", _repo(OUTSIDE_SCHEMA)),
                ("text", [FileSpec(f"{REPO}/readers/c1", kind="symlink", target="@outside")]),
            ]
        )
    ],
    Seed(
        "readers-pull-linked-inside",
        ["readers", "pull", REPO],
        0,
        files=_repo("../../gen.avsc") + [FileSpec("repo/gen.avsc", content=V1_SCHEMA)],
    ),
    *[
        Seed(
            f"readers-add-through-linked-{linked.replace('/', '-')}",
            ["readers", "add", "c1", STORE + "/v1.avsc", "-s", "taxi-rides-value", "-g", "g1"],
            2,
            files=[FileSpec(f"schemas/{linked}", kind="symlink", target="@outside")],
        )
        for linked in ("readers", "readers/c1")
    ],
    *[
        Seed(
            f"mapping-schema-out-of-the-repository-{i}",
            ["migrate", command, MAPPING, "-o", "json"],
            2,
            files=[
                FileSpec(".git", kind="dir"),
                FileSpec("linked-out.avsc", kind="symlink", target=TOKEN),
                FileSpec(
                    MAPPING,
                    content=GOOD_MAPPING.replace(
                        b"schemas/migration/taxi-ride-v2-breaking.avsc", path
                    ),
                ),
            ],
        )
        for i, (command, path) in enumerate(
            [
                ("rules", b"linked-out.avsc"),
                ("validate", b"../outside/token.txt"),
                ("rules", b"../outside/schema.avsc"),
            ]
        )
    ],  # fmt: skip
    Seed(
        "mapping-schema-not-json-never-quoted",
        ["migrate", "rules", MAPPING],
        2,
        files=[
            FileSpec(
                MAPPING,
                content=GOOD_MAPPING.replace(
                    b"schemas/migration/taxi-ride-v2-breaking.avsc", b"../outside/token.txt"
                ),
            )
        ],
    ),  # fmt: skip
    # 3. names of 251 characters where a name is looked up as a file
    *[
        Seed(
            f"long-undefined-type-{'-'.join(args[:2])}",
            args,
            2,
            files=[FileSpec("long.avsc", content=LONG_TYPE)],
        )
        for args in (
            ["validate", "long.avsc", "-o", "json"],
            ["lint", "long.avsc", "-o", "sarif"],
            ["check", "long.avsc", "-s", "taxi-rides-value", "-o", "junit"],
            ["diff", "long.avsc", "long.avsc", "-o", "json"],
            ["spark", "ddl", "long.avsc"],
            ["migrate", "plan", "--from", "long.avsc", "--to", STORE + "/v1.avsc"],
            ["readers", "add", "c1", "long.avsc", "-s", "taxi-rides-value", "-g", "g1"],
        )
    ],  # fmt: skip
    Seed("report-into-a-name-of-300", ["report", "--html", "d" * 300, "-o", "json"], 2),
    # 3. nested and huge-number JSON for every JSON input
    *[
        Seed(
            f"rules-{i}",
            [
                "register",
                STORE + "/v2.avsc",
                "-s",
                "taxi-rides-value",
                "-r",
                f"http://{HOST}",
                "--major-version",
                "2",
                "--rules",
                "rules.json",
                "-o",
                "json",
            ],
            2,
            files=[FileSpec("rules.json", content=json_text)],
        )
        for i, json_text in enumerate(HOSTILE_JSON)
    ],  # fmt: skip
    *[
        Seed(
            f"census-{i}",
            ["report", "--html", "site", "--census", "census.json"],
            2,
            files=[FileSpec("census.json", content=json_text)],
        )
        for i, json_text in enumerate([*HOSTILE_JSON, b'{"census_format": true, "topic": "t"}'])
    ],  # fmt: skip
    *[
        Seed(
            f"store-json-{name}-{i}",
            ["gate", "-o", "json"],
            2,
            files=[FileSpec(f"{STORE}/{name}", content=json_text)],
        )
        for name in ("contract.json", "v2.contract.json", "v2.references.json")
        for i, json_text in enumerate(HOSTILE_JSON[:3])
    ],  # fmt: skip
    *[
        Seed(
            f"manifest-{i}",
            ["readers", "list", "-o", "json"],
            2,
            files=[FileSpec("schemas/readers/c1/reader.json", content=json_text)],
        )
        for i, json_text in enumerate(HOSTILE_JSON[:3])
    ],  # fmt: skip
    *[
        Seed(
            f"report-marker-{i}",
            ["report", "--html", "site"],
            2,
            files=[
                FileSpec("site/index.html", content=b"mine"),
                FileSpec("site/.schemacli-report.json", content=json_text),
            ],
        )
        for i, json_text in enumerate([b"", b"{}", *HOSTILE_JSON[:3]])
    ],  # fmt: skip
    # 6. refusals: non-ASCII digits, an empty property
    Seed(
        "major-version-arabic-digit",
        ["register", STORE + "/v2.avsc", "-s", "taxi-rides-value", "--major-version", "\u0662"],
        2,
    ),  # fmt: skip
    Seed(
        "property-empty",
        [
            "register",
            STORE + "/v2.avsc",
            "-s",
            "taxi-rides-value",
            "--major-version",
            "2",
            "--property",
            "",
        ],
        2,
    ),  # fmt: skip
]

# 6. -o FORMAT with every combination of lint's and check's fix flags: one document, always
FIX_FLAGS = [[], ["--fix"], ["--diff"], ["--unsafe-fixes"], ["--fix", "--diff"],
             ["--fix", "--unsafe-fixes"], ["--diff", "--unsafe-fixes"],
             ["--fix", "--diff", "--unsafe-fixes"]]  # fmt: skip
SEEDS_FIX_FLAGS = [
    Seed(
        f"{command}-{'+'.join(flags) or 'no-flags'}-{fmt}",
        [command, "fixme.avsc", *(["-s", "taxi-rides-value"] if command == "check" else []),
         *flags, "-o", fmt],
        2 if ("--fix" in flags and "--diff" in flags)
        or ("--diff" in flags and fmt != "text")
        or (flags == ["--unsafe-fixes"]) else None,
        files=[FileSpec("fixme.avsc",
                        content=FIXABLE_LINT if command == "lint" else FIXABLE_CHECK)],
    )
    for command in ("lint", "check")
    for flags in FIX_FLAGS
    for fmt in FORMATS
]  # fmt: skip


@pytest.fixture(scope="module")
def scratch():
    base = Path(tempfile.mkdtemp(prefix="schemacli-seeds-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("seed", SEEDS, ids=[s.name for s in SEEDS])
def test_each_defect_class_of_issue_26_keeps_the_invariants(seed: Seed, scratch):
    _run(seed, scratch)


@pytest.mark.parametrize("seed", SEEDS_38, ids=[s.name for s in SEEDS_38])
def test_each_defect_class_of_issue_38_keeps_the_invariants(seed: Seed, scratch):
    _run(seed, scratch)


@pytest.mark.parametrize("seed", SEEDS_FIX_FLAGS, ids=[s.name for s in SEEDS_FIX_FLAGS])
def test_every_fix_flag_and_format_of_lint_and_check_gives_one_document(seed: Seed, scratch):
    _run(seed, scratch)


def _command(args: list[str]) -> str:
    """The command's words: the longest start of ``args`` that names a command of the CLI."""
    tree = command_tree()
    for n in (2, 1):
        if " ".join(args[:n]) in tree:
            return " ".join(args[:n])
    return " ".join(a for a in args[:2] if not a.startswith("-"))


def _run(seed: Seed, scratch: Path) -> None:
    files = [FileSpec(MAPPING, content=GOOD_MAPPING), FileSpec("adir", kind="dir"), *seed.files]
    case = Case(
        command=_command(seed.args),
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
