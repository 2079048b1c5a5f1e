"""pull writes only inside the store, all or nothing, and says why when it cannot (never a
traceback): hostile subject names, symbolic links, unwritable stores, config edits that fail."""

from __future__ import annotations

import errno
import json
import os
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli import atomicwrite
from schemacli.app import app
from tests.folderstate import folder_state

ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "schemas" / "subjects" / "taxi-rides-value" / "v1.avsc"
V2 = ROOT / "schemas" / "subjects" / "taxi-rides-value" / "v2.avsc"


@pytest.fixture
def cli(fake, tmp_path, monkeypatch, clean_registry_env):
    """Run schemacli in an empty project directory (tmp_path/project) against the fake registry."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.delenv("SCHEMACLI_STORE", raising=False)
    runner = CliRunner()

    def run(*args: object):
        return runner.invoke(app, [str(a) for a in args], env={"SCHEMACLI_REGISTRY_URL": fake.url})

    return run


def tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` with what it is (and a file's text): to prove nothing changed."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = path.read_text(errors="replace")
    return found


def assert_clean_error(result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not a crash
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.stderr


# ---- subject names the store cannot hold ----------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    ["../../escaped", "..", ".", "nested/name", "back\\slash", "nul\x00byte", "bell\x07"],
)
def test_pull_refuses_a_registry_subject_that_is_not_one_folder_name_and_writes_nothing(
    cli, fake, tmp_path, hostile
):
    fake.add("taxi-rides-value", V1.read_text())
    fake.add(hostile, V1.read_text())
    before = tree(tmp_path)
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, repr(hostile), "hint: pull the other subjects by naming them")
    assert tree(tmp_path) == before


def test_pull_refuses_an_absolute_path_as_a_subject(cli, fake, tmp_path):
    outside = tmp_path / "outside"
    fake.add(str(outside), V1.read_text())
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, repr(str(outside)))
    assert not outside.exists()
    assert not (tmp_path / "project" / "schemas").exists()


def test_the_other_subjects_can_still_be_pulled_by_name(cli, fake, tmp_path):
    fake.add("taxi-rides-value", V1.read_text())
    fake.add("../../escaped", V1.read_text())
    result = cli("pull", "taxi-rides-value", "--store", tmp_path / "project" / "schemas")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "project/schemas/subjects/taxi-rides-value/v1.avsc").is_file()


def test_a_named_subject_the_store_cannot_hold_is_refused_before_any_request(cli, fake, tmp_path):
    result = cli("pull", "../escaped", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "'../escaped'")
    assert fake.requests == []


def test_pull_refuses_subjects_that_differ_only_in_case(cli, fake, tmp_path):
    fake.add("Orders-value", V1.read_text())
    fake.add("orders-value", V2.read_text())
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "'Orders-value'", "'orders-value'", "differ only in case")
    assert not (tmp_path / "project" / "schemas").exists()


# ---- symbolic links -------------------------------------------------------------------------


def test_pull_force_replaces_a_symlinked_version_instead_of_writing_through_it(cli, fake, tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("not a schema\n")
    subject_dir = tmp_path / "project/schemas/subjects/taxi-rides-value"
    subject_dir.mkdir(parents=True)
    (subject_dir / "v1.avsc").symlink_to(precious)
    fake.add("taxi-rides-value", V1.read_text())

    kept = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert kept.exit_code == 1, kept.output  # differs: a conflict, left alone
    assert (subject_dir / "v1.avsc").is_symlink()

    forced = cli("pull", "--store", tmp_path / "project" / "schemas", "--force")
    assert forced.exit_code == 0, forced.output
    assert precious.read_text() == "not a schema\n"
    assert not (subject_dir / "v1.avsc").is_symlink()
    assert json.loads((subject_dir / "v1.avsc").read_text()) == json.loads(V1.read_text())


def test_pull_refuses_a_subject_folder_that_links_outside_the_store(cli, fake, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    subjects = tmp_path / "project/schemas/subjects"
    subjects.mkdir(parents=True)
    (subjects / "taxi-rides-value").symlink_to(elsewhere, target_is_directory=True)
    fake.add("taxi-rides-value", V1.read_text())
    result = cli("pull", "--store", tmp_path / "project" / "schemas", "--force")
    assert_clean_error(result, "leads outside the store", str(elsewhere))
    assert list(elsewhere.iterdir()) == []


def test_pull_writes_through_a_subject_folder_link_that_stays_in_the_store(cli, fake, tmp_path):
    subjects = tmp_path / "project/schemas/subjects"
    (subjects / "real-folder").mkdir(parents=True)
    (subjects / "taxi-rides-value").symlink_to("real-folder", target_is_directory=True)
    fake.add("taxi-rides-value", V1.read_text())
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert result.exit_code == 0, result.output
    assert (subjects / "real-folder" / "v1.avsc").is_file()


# ---- a store that cannot be written -----------------------------------------------------------


def _store_is_a_file(store: Path) -> Path:
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("a file\n")
    return store


def _subjects_is_a_file(store: Path) -> Path:
    store.mkdir(parents=True)
    (store / "subjects").write_text("a file\n")
    return store / "subjects"


def _version_is_a_folder(store: Path) -> Path:
    (store / "subjects/taxi-rides-value/v1.avsc").mkdir(parents=True)
    return store / "subjects/taxi-rides-value/v1.avsc"


def _subject_is_a_dangling_link(store: Path) -> Path:
    (store / "subjects").mkdir(parents=True)
    (store / "subjects/taxi-rides-value").symlink_to("gone", target_is_directory=True)
    return store / "subjects/taxi-rides-value"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_store_is_a_file, "is a file, but pull needs a folder there"),
        (_subjects_is_a_file, "is a file, but pull needs a folder there"),
        (_version_is_a_folder, "is a directory, but pull writes a file there"),
        (_subject_is_a_dangling_link, "is a symbolic link to gone, which does not exist"),
    ],
)
def test_pull_into_a_store_that_cannot_hold_the_files_exits_2_naming_the_path(
    cli, fake, tmp_path, make, says
):
    store = tmp_path / "project" / "schemas"
    culprit = make(store)
    fake.add("taxi-rides-value", V1.read_text())
    before = tree(tmp_path)
    result = cli("pull", "--store", store, "--force")
    assert_clean_error(result, str(culprit), says, "hint:")
    assert tree(tmp_path) == before


def test_pull_on_a_read_only_file_system_exits_2_and_leaves_nothing(
    cli, fake, tmp_path, monkeypatch
):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(atomicwrite.tempfile, "mkstemp", read_only)
    fake.add("taxi-rides-value", V1.read_text())
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "the file system is read-only", "v1.avsc")
    assert not (tmp_path / "project" / "schemas").exists()


def test_pull_into_a_read_only_store_is_refused_before_anything_is_written(cli, fake, tmp_path):
    """The shared writer checks every file first: a read-only subject folder (its mode, which
    even root is held to) stops the pull before the first file, and the config edit, is written."""
    store = tmp_path / "project" / "schemas"
    (store / "subjects/b-value").mkdir(parents=True)
    (store / "subjects/b-value").chmod(0o555)
    fake.add("a-value", V1.read_text())
    fake.add("b-value", V1.read_text())
    fake.configs["a-value"] = "FULL"
    before = folder_state(tmp_path)
    try:
        result = cli("pull", "--store", store)
    finally:
        (store / "subjects/b-value").chmod(0o755)
    assert_clean_error(result, "b-value is read-only", "nothing was written")
    assert folder_state(tmp_path) == before | {
        "project/schemas/subjects/b-value": ("folder", 0o755, None)
    }


def test_a_write_failing_half_way_undoes_what_pull_already_wrote(cli, fake, tmp_path, monkeypatch):
    store = tmp_path / "project" / "schemas"
    forced = store / "subjects/a-value/v1.avsc"
    forced.parent.mkdir(parents=True)
    forced.write_text(V2.read_text())
    before = tree(tmp_path)
    real_replace = os.replace

    def fail_for_b(src, dst):
        if "b-value" in str(dst):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(atomicwrite.os, "replace", fail_for_b)
    fake.add("a-value", V1.read_text())
    fake.add("b-value", V1.read_text())
    result = cli("pull", "--store", store, "--force")
    assert_clean_error(result, "no space left on the device", "b-value")
    assert tree(tmp_path) == before  # a-value's v1 is back as it was, no temporary files left


def test_an_undo_that_fails_too_says_the_store_may_be_half_written(
    cli, fake, tmp_path, monkeypatch
):
    store = tmp_path / "project" / "schemas"
    forced = store / "subjects/a-value/v1.avsc"
    forced.parent.mkdir(parents=True)
    forced.write_text(V2.read_text())
    real_replace = os.replace
    broken: list[str] = []

    def fail_for_b(src, dst):
        if "b-value" in str(dst) or broken:  # and from then on, the undo cannot write either
            broken.append(str(dst))
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(atomicwrite.os, "replace", fail_for_b)
    fake.add("a-value", V1.read_text())
    fake.add("b-value", V1.read_text())
    result = cli("pull", "--store", store, "--force")
    assert_clean_error(
        result, "undoing the earlier writes failed for", "a-value/v1.avsc", "half-written"
    )


# ---- levels in the config file --------------------------------------------------------------


def test_pull_writes_the_level_of_an_emoji_subject_as_valid_toml(cli, fake, tmp_path):
    fake.add("🚀-value", V1.read_text())
    fake.configs["🚀-value"] = "FULL"
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "project" / "schemacli.toml").read_text(encoding="utf-8")
    assert '[subjects."🚀-value"]' in text
    assert tomllib.loads(text)["subjects"]["🚀-value"] == {"level": "FULL"}
    assert (tmp_path / "project/schemas/subjects/🚀-value/v1.avsc").is_file()


def test_a_config_edit_pull_cannot_make_leaves_the_store_untouched(cli, fake, tmp_path):
    config = tmp_path / "project" / "schemacli.toml"
    config.write_text('subjects = { "taxi-rides-value" = { level = "NONE" } }\n')
    fake.add("taxi-rides-value", V1.read_text())
    fake.configs["taxi-rides-value"] = "FULL"
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "could not add the pulled levels", 'level = "FULL"')
    assert not (tmp_path / "project" / "schemas").exists()


def test_a_config_file_that_cannot_be_written_undoes_the_store_writes(
    cli, fake, tmp_path, monkeypatch
):
    real_replace = os.replace

    def config_read_only(src, dst):
        if str(dst).endswith("schemacli.toml"):
            raise OSError(errno.EACCES, "Permission denied")
        real_replace(src, dst)

    monkeypatch.setattr(atomicwrite.os, "replace", config_read_only)
    fake.add("taxi-rides-value", V1.read_text())
    fake.configs["taxi-rides-value"] = "FULL"
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "schemacli.toml", "permission denied")
    assert tree(tmp_path / "project") == {}


def test_a_pipe_in_the_store_is_refused_instead_of_blocking_pull(cli, fake, tmp_path):
    fake.add("taxi-rides-value", V1.read_text())
    subject_dir = tmp_path / "project/schemas/subjects/taxi-rides-value"
    subject_dir.mkdir(parents=True)
    os.mkfifo(subject_dir / "v1.avsc")
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "v1.avsc is not a regular file")
    os.unlink(subject_dir / "v1.avsc")
    os.mkfifo(tmp_path / "pipe")
    (subject_dir / "v1.avsc").symlink_to(tmp_path / "pipe")  # through a link: a conflict
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert result.exit_code == 1, result.output


def test_a_folder_another_pull_creates_meanwhile_is_used_not_an_error(
    cli, fake, tmp_path, monkeypatch
):
    fake.add("taxi-rides-value", V1.read_text())
    real_mkdir = Path.mkdir

    def racing_mkdir(self, *args, **kwargs):  # the other pull wins the race for every folder
        real_mkdir(self, *args, **kwargs)
        raise FileExistsError(errno.EEXIST, "File exists", str(self))

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    result = cli("pull", "--store", tmp_path / "project" / "schemas", "--no-levels")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "project/schemas/subjects/taxi-rides-value/v1.avsc").is_file()


def test_pull_reads_a_huge_local_version_only_up_to_its_cap_and_refuses_naming_it(
    cli, fake, tmp_path
):
    fake.add("taxi-rides-value", V1.read_text())
    subject_dir = tmp_path / "project" / "schemas" / "subjects" / "taxi-rides-value"
    subject_dir.mkdir(parents=True)
    huge = subject_dir / "v1.avsc"
    with huge.open("wb") as handle:  # sparse: 65 MiB on paper, nothing on disk
        handle.truncate(65 * 1024 * 1024)
    before = folder_state(tmp_path)
    result = cli("pull", "--store", tmp_path / "project" / "schemas")
    assert_clean_error(result, "v1.avsc: is larger than 8 MiB")
    assert folder_state(tmp_path) == before  # nothing written
