"""`schemacli readers add|list|remove|pull`, and every bad input each one takes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.folderstate import folder_state as snapshot
from tests.output_documents import parse

ROOT = Path(__file__).resolve().parents[2]
V2 = ROOT / "schemas/subjects/taxi-rides-value/v2.avsc"
FORMATS = ("text", "json", "junit", "github", "sarif", "gitlab")


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def readers(project: Path) -> Path:
    return project / "schemas" / "readers"


def add_billing(project: Path, *extra: str):
    return run(
        "readers", "add", "billing", V2, "-s", "taxi-rides-value",
        "--group", "billing-1", "--owner", "team-billing", "--contact", "b@example.com", *extra,
    )  # fmt: skip


def no_traceback(result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# -- add ---------------------------------------------------------------------------------------


def test_add_writes_the_schema_and_the_manifest(project):
    result = add_billing(project)
    assert result.exit_code == 0, result.output
    folder = readers(project) / "billing"
    assert (folder / "taxi-rides-value.avsc").read_text() == V2.read_text()
    assert json.loads((folder / "reader.json").read_text()) == {
        "owner": "team-billing",
        "contact": "b@example.com",
        "groups": ["billing-1"],
    }


def test_add_again_adds_groups_and_keeps_the_owner(project):
    add_billing(project)
    result = run("readers", "add", "billing", V2, "-s", "taxi-rides-key", "-g", "billing-2")
    assert result.exit_code == 0, result.output
    manifest = json.loads((readers(project) / "billing" / "reader.json").read_text())
    assert manifest["groups"] == ["billing-1", "billing-2"]
    assert manifest["owner"] == "team-billing"
    assert (readers(project) / "billing" / "taxi-rides-key.avsc").is_file()


def test_add_takes_the_subject_from_the_naming_strategy(project):
    result = run("readers", "add", "billing", V2, "-g", "g", "-o", "json")
    assert result.exit_code == 0, result.output
    written = json.loads(result.output)["written"]
    assert any(p.endswith(".avsc") for p in written)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["billing", "missing.avsc", "-s", "s", "-g", "g"], "missing.avsc"),
        (["billing", ".", "-s", "s", "-g", "g"], "directory"),
        (["-bad", str(V2), "-s", "s", "-g", "g"], ""),
        (["bil ling", str(V2), "-s", "s", "-g", "g"], "not a consumer name"),
        (["billing", str(V2), "-s", ".hidden", "-g", "g"], "not a subject name"),
        (["billing", str(V2), "-s", "a/b", "-g", "g"], "not a subject name"),
        (["billing", str(V2), "-s", "s"], "say which consumer group"),
        (["billing", str(V2), "-s", "s", "-g", " "], "not a consumer group name"),
        (["billing", str(V2), "-s", "s", "-g", "g", "--owner", ""], "--owner is empty"),
        (["billing", str(V2), "-s", "s", "-g", "g", "--contact", " "], "--contact is empty"),
        (["billing", str(V2), "-s", "s", "-g", "g", "--store", "nowhere"], "does not exist"),
        (["billing", str(V2), "-s", "s", "-g", "g", "--bogus"], "No such option"),
    ],
)
def test_add_refuses_bad_input_and_writes_nothing(project, args, words):
    before = snapshot(project)
    result = run("readers", "add", *args)
    assert result.exit_code == 2, result.output
    assert words in result.output
    no_traceback(result)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\x00\x01\x02binary", ""),
        (b'{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}', "nope"),
        (b'{"type": "record",', "1:"),
        (b"", "empty"),
    ],
)
def test_add_refuses_a_schema_that_is_not_avro(project, tmp_path, content, words):
    bad = tmp_path / "bad.avsc"
    bad.write_bytes(content)
    before = snapshot(project)
    result = run("readers", "add", "billing", bad, "-s", "s", "-g", "g")
    assert result.exit_code == 2
    assert words in result.output and "bad.avsc" in result.output
    no_traceback(result)
    assert snapshot(project) == before


def test_add_refuses_a_huge_schema(project, tmp_path):
    huge = tmp_path / "huge.avsc"
    with open(huge, "wb") as handle:
        handle.truncate(65 * 1024 * 1024)
    result = run("readers", "add", "billing", huge, "-s", "s", "-g", "g")
    assert result.exit_code == 2
    assert "large" in result.output


def test_add_refuses_when_the_existing_manifest_is_broken(project):
    add_billing(project)
    manifest = readers(project) / "billing" / "reader.json"
    manifest.write_text('{"groups": 3}')
    before = snapshot(project)
    result = run("readers", "add", "billing", V2, "-s", "taxi-rides-key", "-g", "g")
    assert result.exit_code == 2
    assert "reader.json:1:" in result.output
    assert snapshot(project) == before


def test_add_refuses_a_read_only_store_and_writes_nothing(project):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    add_billing(project)
    folder = readers(project) / "billing"
    folder.chmod(0o500)
    try:
        result = run("readers", "add", "billing", V2, "-s", "taxi-rides-key", "-g", "g2")
        assert result.exit_code == 2
        assert "nothing was written" in result.output
        assert not (folder / "taxi-rides-key.avsc").exists()
    finally:
        folder.chmod(0o700)


# -- remove ------------------------------------------------------------------------------------


def test_remove_one_reader_keeps_the_consumer(project):
    add_billing(project)
    result = run("readers", "remove", "billing", "-s", "taxi-rides-value")
    assert result.exit_code == 0, result.output
    assert not (readers(project) / "billing" / "taxi-rides-value.avsc").exists()
    assert (readers(project) / "billing" / "reader.json").exists()


def test_remove_the_consumer_removes_its_folder(project):
    add_billing(project)
    result = run("readers", "remove", "billing", "-o", "json")
    assert result.exit_code == 0, result.output
    assert not (readers(project) / "billing").exists()
    assert "readers/billing/reader.json" in json.loads(result.output)["removed"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["nobody"], "declares no readers"),
        (["billing", "-s", "nothing-value"], "declares no reader of 'nothing-value'"),
        (["billing", "-s", "../x"], "not a subject name"),
        (["../etc"], "not a consumer name"),
        (["billing", "--store", "nowhere"], "does not exist"),
    ],
)
def test_remove_refuses_what_is_not_declared_and_removes_nothing(project, args, words):
    add_billing(project)
    before = snapshot(project)
    result = run("readers", "remove", *args)
    assert result.exit_code == 2, result.output
    assert words in result.output
    no_traceback(result)
    assert snapshot(project) == before


# -- list --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_list_in_every_format(project, fmt):
    add_billing(project)
    result = run("readers", "list", "-o", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "text":
        assert "billing" in result.output and "team-billing" in result.output
        assert "taxi-rides-value v2" in result.output
    else:
        document = parse(fmt, result.output)
        if fmt == "json":
            case = document["cases"][0]
            assert case["name"] == "billing" and case["owner"] == "team-billing"
            assert case["groups"] == "billing-1" and case["reads"] == "taxi-rides-value v2"


@pytest.mark.parametrize("fmt", FORMATS)
def test_list_fails_for_a_reader_that_cannot_read_the_latest_version(project, tmp_path, fmt):
    reader = json.loads(V2.read_text())
    reader["fields"].append({"name": "zone", "type": "string"})
    schema = tmp_path / "reader.avsc"
    schema.write_text(json.dumps(reader))
    run("readers", "add", "billing", schema, "-s", "taxi-rides-value", "-g", "g")
    result = run("readers", "list", "-o", fmt)
    assert result.exit_code == 1
    assert "billing" in result.output
    if fmt != "text":
        parse(fmt, result.output)


def test_list_filters_by_subject_and_consumer(project):
    add_billing(project)
    run("readers", "add", "audit", V2, "-s", "taxi-rides-value", "-g", "a")
    names = lambda r: [c["name"] for c in json.loads(r.output)["cases"]]  # noqa: E731
    assert names(run("readers", "list", "-o", "json")) == ["audit", "billing"]
    assert names(run("readers", "list", "-c", "audit", "-o", "json")) == ["audit"]
    assert names(run("readers", "list", "taxi-rides-key", "-o", "json")) == []


def test_list_of_a_store_without_readers_says_so(project):
    result = run("readers", "list")
    assert result.exit_code == 0
    assert "no declared readers" in result.output


def test_list_of_an_unknown_consumer_is_a_usage_error(project):
    add_billing(project)
    result = run("readers", "list", "-c", "nobody")
    assert result.exit_code == 2
    assert "nobody" in result.output and "billing" in result.output


@pytest.mark.parametrize("fmt", FORMATS)
def test_list_with_a_broken_manifest_exits_2_in_every_format(project, fmt):
    add_billing(project)
    (readers(project) / "billing" / "reader.json").write_text("{nope")
    result = run("readers", "list", "-o", fmt)
    assert result.exit_code == 2
    no_traceback(result)
    if fmt != "text":
        parse(fmt, result.stdout)


# -- pull --------------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.fixture
def consumer_repo(tmp_path):
    """A consumer's own repository (a bare one, reached by file://) declaring 'shipping'."""
    work = tmp_path / "shipping-service"
    folder = work / "readers" / "shipping"
    folder.mkdir(parents=True)
    (folder / "reader.json").write_text('{"owner": "team-ship", "groups": ["shipping-1"]}')
    (folder / "taxi-rides-value.avsc").write_text(V2.read_text())
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.email", "t@example.com")
    git(work, "config", "user.name", "t")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "reader")
    git(work, "branch", "release")
    bare = tmp_path / "shipping.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, capture_output=True
    )
    return work, bare


def test_pull_from_a_local_folder(project, consumer_repo):
    work, _ = consumer_repo
    result = run("readers", "pull", work)
    assert result.exit_code == 0, result.output
    assert (readers(project) / "shipping" / "taxi-rides-value.avsc").read_text() == V2.read_text()
    assert "shipping: 2 written" in result.output


def test_pull_from_a_git_url_at_a_ref(project, consumer_repo):
    _, bare = consumer_repo
    result = run("readers", "pull", f"file://{bare}", "--ref", "release", "-o", "json")
    assert result.exit_code == 0, result.output
    pulled = json.loads(result.output)["consumers"][0]
    assert pulled["consumer"] == "shipping" and pulled["groups"] == ["shipping-1"]
    assert run("gate", "-q").exit_code == 0  # and the gate now judges against it


def test_pull_again_changes_nothing_and_removes_what_the_repository_dropped(project, consumer_repo):
    work, _ = consumer_repo
    run("readers", "pull", work)
    stale = readers(project) / "shipping" / "old-value.avsc"
    stale.write_text(V2.read_text())
    result = run("readers", "pull", work, "-o", "json")
    pulled = json.loads(result.output)["consumers"][0]
    assert pulled["written"] == [] and len(pulled["unchanged"]) == 2
    assert pulled["removed"] == ["readers/shipping/old-value.avsc"]
    assert not stale.exists()


def test_pull_leaves_other_consumers_alone(project, consumer_repo):
    add_billing(project)
    run("readers", "pull", consumer_repo[0])
    assert (readers(project) / "billing" / "taxi-rides-value.avsc").exists()


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["nowhere-at-all"], 2, "neither a folder nor a git URL"),
        (["ext::sh -c touch% /tmp/x"], 2, "only https://"),
        (["fd::3"], 2, "only https://"),
        (["REPO", "--path", "../x"], 2, "inside the repository"),
        (["REPO", "--path", "/etc"], 2, "inside the repository"),
        (["REPO", "--path", "nothing-here"], 2, "not a folder"),
        (["REPO", "--consumer", "nobody"], 2, "declares no consumer 'nobody'"),
        (["URL", "--ref", "no-such-branch"], 3, "cannot clone"),
        (["URL", "--ref", "--upload-pack=x"], 2, "not a branch or tag"),
        (["URL", "--timeout", "0"], 2, "--timeout"),
        (["URL", "--timeout", "nan"], 2, ""),
        (["file:///nonexistent/repo.git"], 3, "cannot clone"),
        (["REPO", "--store", "nowhere"], 2, "does not exist"),
    ],
)
def test_pull_refuses_bad_input_and_writes_nothing(project, consumer_repo, args, code, words):
    work, bare = consumer_repo
    args = [str(work) if a == "REPO" else f"file://{bare}" if a == "URL" else a for a in args]
    before = snapshot(project)
    result = run("readers", "pull", *args)
    assert result.exit_code == code, result.output
    assert words in result.output
    no_traceback(result)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("reader.json", '{\n  "groups": []\n}', "readers/shipping/reader.json:2:"),
        ("reader.json", "\x00binary", "readers/shipping/reader.json"),
        ("taxi-rides-value.avsc", '{"type": "nope"}', "readers/shipping/taxi-rides-value.avsc:1:"),
    ],
)
def test_pull_of_a_broken_declaration_names_its_file_and_writes_nothing(
    project, tmp_path, name, content, where
):
    work = tmp_path / "repo"
    folder = work / "readers" / "shipping"
    folder.mkdir(parents=True)
    (folder / "reader.json").write_text('{"groups": ["g"]}')
    (folder / "taxi-rides-value.avsc").write_text(V2.read_text())
    (folder / name).write_text(content)
    before = snapshot(project / "schemas")
    result = run("readers", "pull", work)
    assert result.exit_code == 2, result.output
    assert where in result.output
    assert snapshot(project / "schemas") == before
    # and through git, the file is named from the URL, not the temporary clone
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "x")
    result = run("readers", "pull", f"file://{work}")
    assert result.exit_code == 2
    assert f"file://{work}:{where}" in result.output
    assert "schemacli-readers-" not in result.output
    assert snapshot(project / "schemas") == before


def test_pull_of_a_repository_without_readers_says_where_to_put_them(project, tmp_path):
    (tmp_path / "empty").mkdir()
    result = run("readers", "pull", tmp_path / "empty")
    assert result.exit_code == 2
    assert "holds no readers/<consumer>/ folder" in result.output


def test_pull_never_shows_a_urls_password(project, consumer_repo):
    result = run("readers", "pull", "https://user:s3cret@127.0.0.1:9/x.git", "--timeout", "20")
    assert result.exit_code == 3
    assert "s3cret" not in result.output
