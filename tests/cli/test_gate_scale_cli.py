"""`schemacli gate` at scale: every problem of a store in one run, deleted versions under
--against, and the verdict cache (--no-cache, cache-dir, SCHEMACLI_CACHE_DIR)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from schemacli.config import load_settings
from schemacli.contracts.evolution.cachedir import default_cache_dir

VALUE = "schemas/subjects/taxi-rides-value"
KEY = "schemas/subjects/taxi-rides-key"


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(project):
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "t@example.com")
    git(project, "config", "user.name", "t")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "store")
    return project


def test_every_layout_problem_and_invalid_schema_is_listed_in_one_run(project):
    value, key = project / VALUE, project / KEY
    (value / "V3.avsc").write_text("{}")  # bad name
    (value / "v04.avsc").write_text("{}")  # bad name (leading zero)
    (project / "schemas/subjects/stray.avsc").write_text("{}")  # outside any subject
    shutil.copy(key / "v1.avsc", key / "v3.avsc")  # a gap: v2 missing
    other = project / "schemas/subjects/orders-value"
    other.mkdir()
    (other / "v1.avsc").write_text('{"type": "record", "name": "O", "fields": [}')  # bad JSON
    third = project / "schemas/subjects/users-value"
    third.mkdir()
    (third / "v1.avsc").write_text('{"type": "recor", "name": "U", "fields": []}')  # bad Avro
    result = run("gate", "-o", "json")
    assert result.exit_code == 2, result.output
    found = {
        (case["name"], f["kind"], f["location"]["source"].rsplit("/", 1)[-1])
        for case in json.loads(result.stdout)["cases"]
        for f in case["findings"]
    }
    assert ("taxi-rides-value", "STORE_LAYOUT", "V3.avsc") in found
    assert ("taxi-rides-value", "STORE_LAYOUT", "v04.avsc") in found
    assert ("(store)", "STORE_LAYOUT", "stray.avsc") in found
    assert ("taxi-rides-key", "STORE_LAYOUT", "taxi-rides-key") in found  # the gap
    assert ("orders-value", "INVALID_SCHEMA", "v1.avsc") in found
    assert ("users-value", "INVALID_SCHEMA", "v1.avsc") in found


@pytest.mark.parametrize("deleted", ["the latest version", "a version in the middle"])
def test_a_deleted_version_is_a_violation_under_against(repo, deleted):
    value = repo / VALUE
    v3 = json.loads((value / "v2.avsc").read_text())
    v3["fields"].append({"name": "zone", "type": "int", "default": 0})
    (value / "v3.avsc").write_text(json.dumps(v3, indent=2))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v3")
    gone = 3 if deleted == "the latest version" else 2
    (value / f"v{gone}.avsc").unlink()
    result = run("gate", "--against", "git:main", "-o", "json")
    assert result.exit_code == 1, result.stdout
    case = next(c for c in json.loads(result.stdout)["cases"] if c["name"] == "taxi-rides-value")
    assert [f["kind"] for f in case["findings"]] == ["VERSION_DELETED"]
    assert f"v{gone} exists at git:main but not any more" in case["findings"][0]["message"]


def test_under_against_the_report_says_which_subjects_were_not_judged_again(repo):
    value = repo / VALUE
    v3 = json.loads((value / "v2.avsc").read_text())
    v3["fields"].append({"name": "zone", "type": "int"})  # no default: breaks BACKWARD
    (value / "v3.avsc").write_text(json.dumps(v3, indent=2))
    result = run("gate", "--against", "git:main", "-o", "json")
    assert result.exit_code == 1, result.stdout
    document = json.loads(result.stdout)
    case = next(c for c in document["cases"] if c["name"] == "taxi-rides-value")
    assert case["checked"] == [3] and case["findings"]
    others = [c for c in document["cases"] if c["name"] != "taxi-rides-value"]
    assert others and all(c["checked"] == [] and not c["findings"] for c in others)
    (note,) = document["notes"]
    assert f"{len(others)} subject(s) unchanged since git:main not judged again" in note
    text = run("gate", "--against", "git:main")
    assert "not judged again" in text.stdout


def long_history(project: Path, versions: int = 40, fields: int = 60) -> None:
    """A subject whose gate row costs enough to be worth a cache entry: each version adds an
    optional field to a wide record, checked FULL_TRANSITIVE."""
    folder = project / "schemas/subjects/wide-value"
    folder.mkdir(parents=True)
    base = [{"name": f"f{i}", "type": "long"} for i in range(fields)]
    for v in range(1, versions + 1):
        extra = [{"name": f"x{j}", "type": ["null", "int"], "default": None} for j in range(v - 1)]
        schema = {"type": "record", "name": "Wide", "fields": base + extra}
        (folder / f"v{v}.avsc").write_text(json.dumps(schema))
    config = project / "schemacli.toml"
    config.write_text(config.read_text() + '\n[subjects."wide-value"]\nlevel = "FULL_TRANSITIVE"\n')


class CpuClock:
    """``time.process_time`` as the cache's write rule reads it (a check is written when it
    cost at least 2 ms of CPU): each reading ``step`` seconds after the last, so whether a row
    counts as cheap is the test's choice, not the machine's speed."""

    def __init__(self, step: float) -> None:
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def cheap_checks(monkeypatch):
    monkeypatch.setattr(time, "process_time", CpuClock(0.0))


@pytest.fixture
def costly_checks(monkeypatch):
    monkeypatch.setattr(time, "process_time", CpuClock(1.0))


def test_a_cheap_gate_row_is_recomputed_rather_than_written(project, tmp_path, cheap_checks):
    cache = tmp_path / "verdicts"
    result = run("gate", "-o", "json", env={"SCHEMACLI_CACHE_DIR": str(cache)})
    assert result.exit_code == 0
    assert not list(cache.rglob("*.json"))  # a file would cost more than the check


def test_gate_writes_the_verdict_cache_and_no_cache_skips_it(project, tmp_path, costly_checks):
    long_history(project)
    cache = tmp_path / "verdicts"
    env = {"SCHEMACLI_CACHE_DIR": str(cache)}
    first = run("gate", "-o", "json", env=env)
    assert first.exit_code == 0 and list(cache.rglob("*.json"))
    shutil.rmtree(cache)
    assert run("gate", "--no-cache", "-o", "json", env=env).stdout == first.stdout
    assert not cache.exists()
    assert run("check", f"{VALUE}/v2.avsc", "-s", "x", "--no-cache", env=env).exit_code == 0
    assert not cache.exists()


def test_a_damaged_cache_entry_is_one_warning_on_stderr_and_the_same_result(
    project, tmp_path, costly_checks
):
    long_history(project)
    cache = tmp_path / "verdicts"
    env = {"SCHEMACLI_CACHE_DIR": str(cache)}
    first = run("gate", "-o", "json", env=env)
    for entry in [*cache.rglob("*.json"), *cache.rglob("*.table")]:  # the entries, the table
        entry.write_text(entry.read_text()[:10])
    again = run("gate", "-o", "json", env=env)
    assert again.stdout == first.stdout
    assert again.stderr.count("warning: ignoring the verdict cache entry") >= 1


def test_cache_dir_comes_from_the_config_file_or_the_environment(tmp_path):
    (tmp_path / "schemacli.toml").write_text('cache-dir = "build/verdicts"\n')
    assert load_settings(cwd=tmp_path, env={}).cache_dir == tmp_path / "build/verdicts"
    env = {"SCHEMACLI_CACHE_DIR": "/var/tmp/v"}
    assert load_settings(cwd=tmp_path, env=env).cache_dir == Path("/var/tmp/v")
    (tmp_path / "schemacli.toml").write_text("")
    assert load_settings(cwd=tmp_path, env={}).cache_dir is None


@pytest.mark.parametrize(
    ("platform", "environ", "expected"),
    [
        ("linux", {}, "/home/u/.cache/schemacli"),
        ("linux", {"XDG_CACHE_HOME": "/xdg"}, "/xdg/schemacli"),
        ("linux", {"XDG_CACHE_HOME": "relative"}, "/home/u/.cache/schemacli"),
        ("darwin", {}, "/home/u/Library/Caches/schemacli"),
        ("win32", {"LOCALAPPDATA": "/appdata"}, "/appdata/schemacli/Cache"),
        ("win32", {}, "/home/u/AppData/Local/schemacli/Cache"),
    ],
)
def test_the_default_cache_dir_follows_the_platform(platform, environ, expected):
    home = Path("/home/u")
    assert default_cache_dir(platform=platform, environ=environ, home=home) == Path(expected)
