"""Hostile files and streams given to the CLI: each is an input error (exit 2) naming the file and
what it is, with no traceback, no hang and bounded work, and with `-o FORMAT` still one valid
document of that format.

Commands that could hang (a FIFO, an endless stream) or eat the machine (work sized by a file
name) run in a child process with a timeout only a hang reaches and an address-space limit only
runaway memory reaches, so a regression fails instead of hanging the suite or the machine.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
HANG = 60  # seconds: only a hang reaches it
MEMORY = 2 * 1024**3  # bytes of address space: only runaway work reaches it
RECORD = '{"type": "record", "name": "A", "fields": []}'
RECORD_V2 = (
    '{"type": "record", "name": "A", "fields": [{"name": "x", "type": "int", "default": 1}]}'
)
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def cli(*args: object, cwd: Path, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    """schemacli in a child process, bounded in time and memory."""

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEMACLI_")}
    return subprocess.run(
        [sys.executable, "-m", "schemacli", *map(str, args)],
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=HANG,
        env={**env, "SCHEMACLI_CACHE_DIR": str(cwd / ".cache")},
        preexec_fn=bound,
    )


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    """A store with one subject, a-value (v1, v2), as the current directory's config says."""
    folder = tmp_path / "schemas" / "subjects" / "a-value"
    folder.mkdir(parents=True)
    (folder / "v1.avsc").write_text(RECORD)
    (folder / "v2.avsc").write_text(RECORD_V2)
    (tmp_path / "schemacli.toml").write_text('store = "schemas"\n')
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_CONFIG", "SCHEMACLI_DEFAULT_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCHEMACLI_CACHE_DIR", str(tmp_path / ".cache"))
    return folder


def assert_clean(result, *needles: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    for needle in needles:
        assert needle in output, (needle, output)


# -- class 2: work bounded by the number of files, not by the numbers in their names ---------


def test_a_version_far_past_the_last_is_one_short_gap_message(store):
    (store / "v20251125.avsc").write_text(RECORD_V2)
    result = cli("gate", "--no-cache", cwd=store.parents[2])
    assert_clean(result, "a gap in its versions: v3..v20251124 missing")
    assert len(result.stdout) < 4096  # one range, not twenty million version names


def test_a_version_past_a_java_int_is_a_layout_error_naming_the_file(store):
    (store / "v100000000000000000000.avsc").write_text(RECORD_V2)
    result = cli("gate", "--no-cache", cwd=store.parents[2])
    assert_clean(result, "v100000000000000000000.avsc", "past the largest version", "2147483647")
    assert len(result.stdout) < 4096


def test_the_last_int32_version_is_still_just_a_gap(store):
    (store / "v2147483647.avsc").write_text(RECORD_V2)
    result = cli("gate", "--no-cache", "-o", "json", cwd=store.parents[2])
    assert result.returncode == 2, result.stderr
    (case,) = json.loads(result.stdout)["cases"]
    (finding,) = case["findings"]
    assert finding["message"].endswith("v3..v2147483646 missing")


# -- class 4: odd files in the store, in every output format --------------------------------


def _self_link(store: Path) -> str:
    (store / "v2.avsc").unlink()
    (store / "v2.avsc").symlink_to("v2.avsc")
    return "symbolic links in a loop"


def _folder(store: Path) -> str:
    (store / "v3.avsc").mkdir()
    return "is a directory"


def _fifo(store: Path) -> str:
    os.mkfifo(store / "v3.avsc")
    return "is a FIFO (named pipe)"


ODD_FILES = {"self-symlink": _self_link, "folder": _folder, "fifo": _fifo}


def _one_document(output: str, fmt: str) -> str:
    """The one document ``fmt`` prints, checked to parse; returns it as text."""
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(output)
    elif fmt == "junit":
        ET.fromstring(output)
    elif fmt == "github":
        commands = [line for line in output.splitlines() if line.startswith("::")]
        assert commands and all(
            line.startswith(("::error ", "::warning ", "::notice ")) and "\n" not in line
            for line in commands
        ), output
    return output


@needs_fifo
@pytest.mark.parametrize("odd", sorted(ODD_FILES))
@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "gitlab", "github"])
def test_an_odd_store_file_is_an_input_error_in_every_format(store, odd, fmt):
    words = ODD_FILES[odd](store)
    name = "v2.avsc" if odd == "self-symlink" else "v3.avsc"
    result = cli("gate", "--no-cache", "-o", fmt, cwd=store.parents[2])
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    document = _one_document(result.stdout, fmt)
    if fmt != "gitlab":  # GitLab's document carries the description, not the fix
        assert f"subjects/a-value/{name}" in document
    assert words in document or words in json.dumps(document)


def test_an_unreadable_store_file_is_an_input_error_naming_it(store, monkeypatch):
    import schemacli.textfile

    real_open = schemacli.textfile.os.open

    def open_file(path, flags, *args):
        if Path(path).name == "v2.avsc":  # root ignores chmod 000: refuse as the OS would
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(schemacli.textfile.os, "open", open_file)
    result = CliRunner().invoke(app, ["gate", "--no-cache", "-o", "json"])
    assert result.exit_code == 2, result.output
    (case,) = json.loads(result.stdout)["cases"]
    (finding,) = case["findings"]
    assert finding["location"]["source"].endswith("subjects/a-value/v2.avsc")
    assert finding["message"] == "permission denied while reading the file"


# -- class 3: endless and blocking inputs -----------------------------------------------------


def test_validate_of_an_endless_stdin_stops_at_the_cap(tmp_path):
    with open("/dev/zero", "rb") as zero:
        result = cli("validate", "-", cwd=tmp_path, stdin=zero)
    assert_clean(result, "<stdin>", "larger than 8 MiB")


def test_check_of_a_schema_file_that_is_a_device_is_refused_by_name(tmp_path):
    result = cli("check", "/dev/zero", "--subject", "a-value", cwd=tmp_path)
    assert_clean(result, "/dev/zero", "is a device")


@needs_fifo
def test_validate_of_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "s.avsc")
    result = cli("validate", "s.avsc", cwd=tmp_path)
    assert_clean(result, "s.avsc", "is a FIFO (named pipe)")


def _deployment(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "progress.json").write_text('{"totals": {"in": 0}}')
    return state


MIGRATE = {
    "status": lambda state: ["status", EXAMPLE, "--state-dir", state, "-b", "127.0.0.1:1"],
    "finish": lambda state: [
        "finish",
        EXAMPLE,
        "--state-dir",
        state,
        "-b",
        "127.0.0.1:1",
        "--interval",
        "0",
    ],
    "replay": lambda state: ["replay", EXAMPLE, "--state-dir", state, "-b", "127.0.0.1:1"],
    "deploy": lambda state: [
        "deploy",
        EXAMPLE,
        "--state-dir",
        state.with_name("new"),
        "-b",
        "127.0.0.1:1",
        "--dry-run",
    ],
}


def _fifo_props(tmp_path: Path) -> tuple[Path, str]:
    os.mkfifo(tmp_path / "kafka.properties")
    return tmp_path / "kafka.properties", "is a FIFO (named pipe)"


def _folder_props(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "kafka.properties").mkdir()
    return tmp_path / "kafka.properties", "is a directory, not a Kafka properties file"


def _huge_props(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "kafka.properties").write_text("# padding\n" * 120_000)
    return tmp_path / "kafka.properties", "larger than 1 MiB"


PROPERTIES = {
    "device": lambda tmp_path: (Path("/dev/zero"), "is a device"),
    "fifo": _fifo_props,
    "folder": _folder_props,
    "too large": _huge_props,
}


@needs_fifo
@pytest.mark.parametrize("props", sorted(PROPERTIES))
@pytest.mark.parametrize("command", sorted(MIGRATE))
def test_a_kafka_properties_file_that_is_no_regular_file_is_exit_2_at_once(
    tmp_path, command, props
):
    path, words = PROPERTIES[props](tmp_path)
    args = MIGRATE[command](_deployment(tmp_path))
    result = cli("migrate", *args, "--kafka-properties", path, cwd=tmp_path)
    assert_clean(result, str(path), words)
    assert "does not exist" not in result.stderr
    assert not (tmp_path / "new").exists()


@needs_fifo
@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_a_mapping_file_that_is_no_regular_file_is_named_as_what_it_is(tmp_path, kind):
    mapping = Path("/dev/null") if kind == "device" else tmp_path / "m.yaml"
    if kind == "fifo":
        os.mkfifo(mapping)
    elif kind == "folder":
        mapping.mkdir()
    words = {"fifo": "is a FIFO", "folder": "is a directory", "device": "is a device"}[kind]
    for command in (["validate", mapping], ["deploy", mapping, "-b", "127.0.0.1:1", "--dry-run"]):
        result = cli("migrate", *command, cwd=tmp_path)
        assert_clean(result, str(mapping), words)


def test_a_config_file_past_its_cap_is_a_config_error(tmp_path):
    (tmp_path / "schemacli.toml").write_text("# padding\n" * 120_000)
    result = cli("gate", cwd=tmp_path)
    assert_clean(result, "schemacli.toml", "larger than 1 MiB")
