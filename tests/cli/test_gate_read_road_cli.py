"""The store's read road resolves each folder once and joins the names in it (a file resolved on
its own only where it is a link itself): fed the same trees, it resolves every path exactly as
``os.path.realpath`` per file did, reads the same bytes or refuses with the same reason, and the
gate's document is the same byte for byte."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemacli import textfile
from schemacli.app import app
from schemacli.textfile import Root, UnreadableInput, read_input

VALUE = "subjects/taxi-rides-value"


def _per_file(self: Root, path: Path | str, info: os.stat_result | None = None) -> str | None:
    """The old road: every file resolved on its own."""
    return textfile._real(path)


def linked_store(store: Path, outside: Path) -> None:
    """Every kind of link into the example store: a subject's folder that is a link, files that
    are links (one a chain of two), a link whose ``..`` counts from the folder a linked folder
    names (not from the link's spelling), links that leave the store, a dangling link and a
    loop."""
    value = store / VALUE
    kept, files = store / "kept", store / "files"
    kept.mkdir()
    files.mkdir()
    shutil.copytree(value, kept / "linked-folder")
    (store / "subjects/linked-folder").symlink_to("../kept/linked-folder")
    linked = store / "subjects/linked-files"
    linked.mkdir()
    shutil.copy(value / "v1.avsc", files / "v1.avsc")
    shutil.copy(value / "v2.avsc", files / "v2.avsc")
    (linked / "v1.avsc").symlink_to("../../files/v1.avsc")
    (files / "v2-link.avsc").symlink_to("v2.avsc")
    (linked / "v2.avsc").symlink_to("../../files/v2-link.avsc")
    # kept/dotted/v1.avsc -> ../dotted-files/v1.avsc is kept/dotted-files/v1.avsc, though it
    # is read as subjects/dotted/v1.avsc; subjects/dotted-files holds a decoy the spelling names.
    (kept / "dotted").mkdir()
    (kept / "dotted-files").mkdir()
    shutil.copy(value / "v1.avsc", kept / "dotted-files/v1.avsc")
    (kept / "dotted/v1.avsc").symlink_to("../dotted-files/v1.avsc")
    (store / "subjects/dotted").symlink_to("../kept/dotted")
    (store / "subjects/dotted-files").mkdir()
    (store / "subjects/dotted-files/v1.avsc").write_text('"string"')
    outside.mkdir()
    (outside / "v1.avsc").write_text('"int"')
    (store / "loose").mkdir()
    (store / "loose/out-file.avsc").symlink_to(outside / "v1.avsc")
    (store / "loose/out-folder").symlink_to(outside)
    (store / "loose/dangling.avsc").symlink_to("nowhere.avsc")
    (store / "loose/loop.avsc").symlink_to("loop.avsc")


def spellings(root: Path) -> list[Path]:
    """Every entry under ``root`` (links followed into folders, loops left), spelt as found,
    and each also through a ``..`` and a ``.``, and names that are no file."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(root, followlinks=True):
        base = Path(folder)
        for name in [*dirs, *names, "missing.avsc"]:
            found.append(base / name)
            found.append(Path(f"{base}/../{base.name}/{name}"))
            found.append(Path(f"{base}/./{name}"))
        found.append(Path(f"{folder}/.."))
        found.append(Path(f"{folder}/."))
    return found


def outcome(path: Path, root: Root) -> bytes | str:
    try:
        return read_input(path, limit=1 << 20, within=root)
    except UnreadableInput as err:
        return f"{err.reason}: {err.message}"


@pytest.mark.parametrize("through_link", [False, True], ids=["store", "store-through-a-link"])
def test_each_path_resolves_and_reads_as_realpath_per_file_has_it(
    project, monkeypatch, through_link
):
    linked_store(project / "schemas", project / "outside")
    store = project / "schemas"
    if through_link:
        (project / "via").symlink_to("schemas")
        store = project / "via"
    paths = spellings(store)
    assert len(paths) > 100
    new, old = Root(store, "the store"), Root(store, "the store")
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            info = None
        assert new.resolve(path, info) == os.path.realpath(path), path
    read_new = [outcome(path, new) for path in paths]
    monkeypatch.setattr(Root, "resolve", _per_file)
    assert [outcome(path, old) for path in paths] == read_new
    assert read_new.count(b'"int"') == 0  # nothing outside the store was read
    assert any(isinstance(seen, str) and seen.startswith("outside") for seen in read_new)
    assert any(isinstance(seen, str) and seen.startswith("loop") for seen in read_new)


@pytest.mark.parametrize("output", ["json", "text"])
@pytest.mark.parametrize("store", ["schemas", "via"])
def test_the_gate_document_is_the_one_realpath_per_file_gives(project, monkeypatch, output, store):
    linked_store(project / "schemas", project / "outside")
    (project / "via").symlink_to("schemas")
    args = ["gate", "--no-cache", "--store", store, "-o", output]
    resolved: list[str] = []
    real = textfile._real
    monkeypatch.setattr(textfile, "_real", lambda path: resolved.append(str(path)) or real(path))
    new = CliRunner().invoke(app, args)
    # each folder once, and each file that is a link itself; no plain version file on its own
    assert len(resolved) == len(set(resolved))
    assert not [p for p in resolved if p.endswith(".avsc") and not os.path.islink(p)]
    monkeypatch.setattr(Root, "resolve", _per_file)
    old = CliRunner().invoke(app, args)
    assert (new.exit_code, new.stdout) == (old.exit_code, old.stdout)
    assert new.exit_code == 0, new.stdout
    assert "linked-folder" in new.stdout and "dotted-files" in new.stdout
