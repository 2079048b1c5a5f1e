"""Input from another party stays inside its root (docs/store.md): a store in a pull request,
a consumer's repository pulled with `readers pull`, a mapping's schema paths. A symbolic link
out of the root is refused by name, in every -o format, and what it names is never printed; a
link inside the root is read as usual. What schemacli writes stays inside the store too."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.folderstate import folder_state
from tests.output_documents import FORMATS, parse

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas/subjects/taxi-rides-value/v1.avsc"
TOKEN = "ghp_PLANTEDTOKEN0123456789abcd"


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside every root, holding what must never be printed."""
    path = tmp_path / "elsewhere" / "token.txt"
    path.parent.mkdir()
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture
def avro_elsewhere(tmp_path: Path) -> Path:
    """A valid schema outside every root: read, it would be copied into the store."""
    path = tmp_path / "elsewhere-avro" / "schema.avsc"
    path.parent.mkdir()
    path.write_text(V1.read_text())
    return path


def clean(result, *, code: int = 2) -> None:
    assert result.exit_code == code, result.output
    assert TOKEN not in result.output and "ghp_" not in result.output
    assert "Traceback" not in result.output


# -- the store ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ("text", *FORMATS))
def test_a_store_version_linked_out_of_the_store_is_refused_in_every_format(project, secret, fmt):
    evil = project / "schemas/subjects/evil-value"
    evil.mkdir()
    (evil / "v1.avsc").symlink_to(secret)
    result = run("gate", "-o", fmt)
    clean(result)
    assert "leads outside the store" in result.output
    if fmt != "text":
        parse(fmt, result.stdout)


def test_a_store_version_linked_to_a_schema_out_of_the_store_is_refused_too(
    project, avro_elsewhere
):
    evil = project / "schemas/subjects/evil-value"
    evil.mkdir()
    (evil / "v1.avsc").symlink_to(avro_elsewhere)
    result = run("gate", "-o", "json")
    assert result.exit_code == 2, result.output
    assert "leads outside the store" in result.output


def test_a_subject_folder_linked_out_of_the_store_is_refused(project, avro_elsewhere):
    (project / "schemas/subjects/evil-value").symlink_to(avro_elsewhere.parent)
    avro_elsewhere.rename(avro_elsewhere.with_name("v1.avsc"))
    result = run("gate")
    assert result.exit_code == 2, result.output
    assert "leads outside the store" in result.output


def test_a_link_inside_the_store_is_read_as_usual(project):
    shared = project / "schemas/shared"
    shared.mkdir()
    shutil.copy(V1, shared / "v1.avsc")
    linked = project / "schemas/subjects/linked-value"
    linked.mkdir()
    (linked / "v1.avsc").symlink_to("../../shared/v1.avsc")
    result = run("gate")
    assert result.exit_code == 0, result.output


def test_a_store_that_is_itself_a_link_is_the_folder_it_names(project, tmp_path):
    moved = tmp_path / "real-store"
    shutil.move(project / "schemas", moved)
    (project / "schemas").symlink_to(moved)
    result = run("gate")
    assert result.exit_code == 0, result.output


def test_a_declared_reader_linked_out_of_the_store_is_refused(project, secret):
    consumer = project / "schemas/readers/billing"
    consumer.mkdir(parents=True)
    (consumer / "reader.json").write_text('{"groups": ["billing-1"]}')
    (consumer / "taxi-rides-value.avsc").symlink_to(secret)
    result = run("readers", "list", "-o", "json")
    clean(result)
    assert "leads outside the store" in result.output


# -- readers pull --------------------------------------------------------------------------------


def _repository(path: Path, link: Path, *, as_folder: bool = False) -> Path:
    """A consumer's repository whose only reader schema (or whole consumer folder, with
    ``as_folder``) is a symbolic link to ``link``; committed, so a clone checks the link out."""
    readers = path / "readers"
    readers.mkdir(parents=True)
    if as_folder:
        (readers / "c1").symlink_to(link)
    else:
        (readers / "c1").mkdir()
        (readers / "c1/reader.json").write_text('{"groups": ["g1"]}')
        (readers / "c1/taxi-rides-value.avsc").symlink_to(link)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(path)], check=True)
    subprocess.run([*git, "-C", str(path), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(path), "commit", "-qm", "readers"], check=True)
    return path


@pytest.mark.parametrize("how", ["folder", "file-url"])
@pytest.mark.parametrize("target", ["token", "schema"])
def test_readers_pull_never_follows_a_link_out_of_the_repository(
    project, tmp_path, secret, avro_elsewhere, how, target
):
    repo = _repository(tmp_path / "repo", secret if target == "token" else avro_elsewhere)
    before = folder_state(project / "schemas")
    source = repo if how == "folder" else f"file://{repo}"
    result = run("readers", "pull", source, "-o", "json")
    clean(result)
    assert "leads outside the repository" in result.output
    assert folder_state(project / "schemas") == before  # nothing written
    json.loads(result.stdout)


def test_readers_pull_refuses_a_consumer_folder_linked_out_of_the_repository(
    project, tmp_path, avro_elsewhere
):
    (avro_elsewhere.parent / "reader.json").write_text('{"groups": ["g1"]}')
    avro_elsewhere.rename(avro_elsewhere.with_name("taxi-rides-value.avsc"))
    repo = _repository(tmp_path / "repo", avro_elsewhere.parent, as_folder=True)
    before = folder_state(project / "schemas")
    result = run("readers", "pull", repo)
    clean(result)
    assert "leads outside the repository" in result.output
    assert folder_state(project / "schemas") == before


def test_readers_pull_refuses_a_path_option_linked_out_of_the_repository(
    project, tmp_path, avro_elsewhere
):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "decl").symlink_to(tmp_path / "elsewhere-avro")
    result = run("readers", "pull", repo, "--path", "decl")
    clean(result)
    assert "outside the repository" in result.output


def test_readers_pull_reads_a_link_inside_the_repository(project, tmp_path):
    repo = tmp_path / "repo"
    shutil.copy(V1, tmp_path / "v1.avsc")
    (repo / "shared").mkdir(parents=True)
    shutil.copy(V1, repo / "shared/reader.avsc")
    _repository(repo, Path("../../shared/reader.avsc"))
    result = run("readers", "pull", f"file://{repo}")
    assert result.exit_code == 0, result.output
    copied = project / "schemas/readers/c1/taxi-rides-value.avsc"
    assert not copied.is_symlink() and copied.read_text() == V1.read_text()


# -- readers add -------------------------------------------------------------------------------


@pytest.mark.parametrize("linked", ["readers", "readers/billing"])
def test_readers_add_never_writes_through_a_linked_folder(project, tmp_path, linked):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "schemas" / linked).parent.mkdir(parents=True, exist_ok=True)
    (project / "schemas" / linked).symlink_to(outside)
    before = folder_state(project / "schemas")
    result = run("readers", "add", "billing", V1, "-s", "taxi-rides-value", "-g", "billing-1")
    assert result.exit_code == 2, result.output
    assert "leads outside" in result.output
    assert list(outside.iterdir()) == []
    assert folder_state(project / "schemas") == before


# -- a mapping's schema paths --------------------------------------------------------------------


def _mapping(folder: Path, source_schema: str) -> Path:
    text = (ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml").read_text()
    text = text.replace("../../schemas/migration/taxi-ride-v2-breaking.avsc", source_schema)
    text = text.replace("../../schemas/subjects/", f"{ROOT}/schemas/subjects/")
    path = folder / "m.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("command", ["rules", "validate"])
@pytest.mark.parametrize("written", ["dots", "absolute", "link"])
def test_a_mapping_in_a_repository_reads_no_schema_outside_it(tmp_path, secret, command, written):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)  # a work tree, as a checkout in CI is
    if written == "link":
        (repo / "v2.avsc").symlink_to(secret)
    path = {"dots": f"../{secret.parent.name}/{secret.name}", "absolute": str(secret)}.get(
        written, "v2.avsc"
    )
    mapping = _mapping(repo, path)
    for fmt in ("text", "json"):
        result = run("migrate", command, mapping, "-o", fmt)
        clean(result)
        assert "leads outside the repository" in result.output


def test_a_mapping_reads_a_schema_linked_inside_its_repository(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "schemas").mkdir()
    shutil.copy(ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc", repo / "schemas/v2.avsc")
    (repo / "maps").mkdir()
    (repo / "maps/v2.avsc").symlink_to("../schemas/v2.avsc")
    shutil.copytree(ROOT / "schemas/subjects", repo / "schemas/subjects")
    mapping = _mapping(repo / "maps", "v2.avsc")
    mapping.write_text(mapping.read_text().replace(f"{ROOT}/schemas/", "../schemas/"))
    result = run("migrate", "rules", mapping)
    assert result.exit_code == 0, result.output


def test_a_schema_that_is_not_json_is_never_quoted(tmp_path, secret):
    """Outside any work tree the path is read as written; the error still quotes nothing."""
    mapping = _mapping(tmp_path, str(secret))
    result = run("migrate", "rules", mapping)
    clean(result)
    assert "found a word without quotes" in result.output


def test_readers_remove_never_removes_through_a_linked_readers_folder(project, tmp_path):
    outside = tmp_path / "outside"
    (outside / "billing").mkdir(parents=True)
    (outside / "billing/reader.json").write_text('{"groups": ["g"]}')
    (project / "schemas/readers").symlink_to(outside)
    result = run("readers", "remove", "billing")
    assert result.exit_code == 2, result.output
    assert "leads outside the store" in result.output
    assert (outside / "billing/reader.json").is_file()
