"""What ``schemacli init`` writes: a store, its configuration and, on request, CI glue.

Pure planning: :func:`plan` reads what it must (pyproject.toml), validates the options and
returns every file with its full new content — nothing is written here. The command hands the
plan to :mod:`schemacli.atomicwrite`, which refuses before writing anything and writes all or
nothing. The configuration is edited through ``schemacli.tomlfile`` (tomlkit: comments and
layout survive) and parsed back to make sure the file says exactly what it said plus our table;
the workflow is emitted by a YAML emitter and read back, so no option value can add YAML of its
own.
"""

from __future__ import annotations

import copy
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schemacli.atomicwrite import Write, why
from schemacli.contracts.evolution.levels import Level
from schemacli.errors import ConfigError, InputError, Location, UsageError
from schemacli.textfile import UTF8_BOM, decode_utf8
from schemacli.tomlfile import (
    DEFAULT_LEVEL,
    STORE,
    TOOL_TABLE,
    KeyPath,
    TomlEditError,
    TomlError,
    add_table,
    dumps,
    key_positions,
    parse,
)

# A pyproject.toml is a few kilobytes; anything past this is not one (and not read whole).
MAX_PYPROJECT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Planned:
    path: Path
    content: str
    edit: bool = False  # an existing file edited (pyproject.toml gains [tool.schemacli])

    def write(self) -> Write:
        return Write(self.path, self.content.encode("utf-8"), replace=self.edit)


@dataclass(frozen=True)
class Plan:
    files: list[Planned]
    conflicts: list[str] = field(default_factory=list)  # why it would overwrite something


PRE_COMMIT = """\
# pre-commit (https://pre-commit.com): schemacli's hooks, run with the schemacli installed here.
repos:
  - repo: local
    hooks:
      - id: schemacli-validate
        name: schemacli validate
        entry: schemacli validate
        language: system
        files: \\.avsc$
      - id: schemacli-gate
        name: schemacli gate
        entry: schemacli gate --quiet
        language: system
        pass_filenames: false
        files: (\\.avsc|\\.references\\.json|schemacli\\.toml|pyproject\\.toml)$
"""

WORKFLOW_HEADER = """\
# The schema compatibility gate on every pull request (written by `schemacli init --github`).
# fetch-depth 0: the gate compares with the base branch's history.
"""


def workflow(install: str) -> dict[str, Any]:
    """The GitHub workflow as data: ``install`` is one string in it, whatever it holds."""
    return {
        "name": "schemas",
        "on": "pull_request",
        "jobs": {
            "gate": {
                "runs-on": "ubuntu-latest",
                "steps": [
                    {"uses": "actions/checkout@v4", "with": {"fetch-depth": 0}},
                    {"uses": "actions/setup-python@v5", "with": {"python-version": "3.11"}},
                    {"run": f"pip install {install}"},
                    {
                        "run": "schemacli gate --against git:origin/${{ github.base_ref }} "
                        "--output github"
                    },
                ],
            }
        },
    }


def workflow_text(install: str) -> str:
    """The workflow file, emitted by PyYAML and checked to read back as exactly the data."""
    data = workflow(install)
    text = WORKFLOW_HEADER + yaml.safe_dump(
        data, sort_keys=False, allow_unicode=True, width=1_000_000
    )
    if yaml.safe_load(text) != data:  # the emitter's job; checked because a workflow runs code
        raise UsageError(
            f"--install {install!r} cannot be written into the workflow as it is",
            hint="Give a pip requirement, such as schemacli==0.1.0 or a git URL.",
        )
    return text


def config_values(store: str, level: Level) -> dict[str, str]:
    return {STORE: store, DEFAULT_LEVEL: level.value}


def config_text(store: str, level: Level) -> str:
    """schemacli.toml: the two settings, written (and escaped) by tomlkit."""
    return dumps(config_values(store, level))


def _control_characters(value: str) -> list[str]:
    return sorted({repr(c) for c in value if unicodedata.category(c) in ("Cc", "Cs")})


def check_store(store: str) -> None:
    """UsageError unless ``store`` names a folder inside the project."""
    if not store.strip():
        raise UsageError(
            "--store is empty",
            hint="Give the store's folder inside the project, such as schemas (the default).",
        )
    bad = _control_characters(store)
    if bad:
        raise UsageError(
            f"--store {store!r} holds control characters ({', '.join(bad)})",
            hint="Give a plain folder name such as schemas.",
        )
    if Path(store).is_absolute() or ".." in Path(store).parts:
        raise UsageError(
            f"--store must be a folder inside the project, got {store!r}",
            hint="Give a relative path such as schemas.",
        )


def check_install(install: str) -> None:
    """UsageError unless ``install`` can be one pip requirement line."""
    if not install.strip():
        raise UsageError(
            "--install is empty", hint="Give what pip installs, such as schemacli==0.1.0."
        )
    bad = _control_characters(install)
    if bad:
        raise UsageError(
            f"--install {install!r} holds control characters ({', '.join(bad)})",
            hint="Give one pip requirement on one line, such as schemacli==0.1.0 or a git URL.",
        )


def plan(
    root: Path,
    *,
    store: str = "schemas",
    level: Level = Level.BACKWARD,
    pre_commit: bool = False,
    github: bool = False,
    install: str = "schemacli",
) -> Plan:
    """The files to write under ``root``, each with its whole new content. The configuration
    goes into pyproject.toml's ``[tool.schemacli]`` when there is a pyproject.toml, else into
    schemacli.toml. Raises UsageError for bad options and InputError for a pyproject.toml that
    cannot be read or edited; writes nothing."""
    check_store(store)
    if github:
        check_install(install)
    files = [Planned(root / store / "subjects" / ".gitkeep", "")]
    conflicts: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.exists() or pyproject.is_symlink():
        edited = _add_table(pyproject, store, level)
        if edited is None:
            conflicts.append(f"{pyproject} already has a [tool.schemacli] table")
        else:
            files.append(Planned(pyproject, edited, edit=True))
        beside = root / "schemacli.toml"
        if beside.exists() or beside.is_symlink():  # beside a pyproject table: ambiguous
            conflicts.append(f"{beside} exists")
    else:
        files.append(Planned(root / "schemacli.toml", config_text(store, level)))
    if pre_commit:
        files.append(Planned(root / ".pre-commit-config.yaml", PRE_COMMIT))
    if github:
        files.append(
            Planned(root / ".github" / "workflows" / "schemacli.yml", workflow_text(install))
        )
    return Plan(files, conflicts)


# -- [tool.schemacli] into pyproject.toml ---------------------------------------------------

_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a float",
    str: "a string",
    list: "an array",
}


def _type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), f"a {type(value).__name__}")


def _line(text: str, keys: KeyPath) -> int | None:
    """The line where the key path ``keys`` is first written in ``text`` (valid TOML)."""
    found = key_positions(text).get(keys)
    return found[0] if found else None


def _read_pyproject(path: Path) -> tuple[str, bool]:
    """The file's text and whether it began with a UTF-8 byte-order mark."""
    fix = "Make it a readable UTF-8 TOML file, then run schemacli init again."
    try:
        if not path.is_file():
            raise InputError("is not a regular file", location=Location(source=str(path)), hint=fix)
        with open(path, "rb") as handle:
            data = handle.read(MAX_PYPROJECT_BYTES + 1)
    except OSError as err:
        raise InputError(
            f"cannot read it: {why(err)}", location=Location(source=str(path)), hint=fix
        ) from None
    if len(data) > MAX_PYPROJECT_BYTES:
        raise InputError(
            f"is larger than {MAX_PYPROJECT_BYTES // (1024 * 1024)} MiB: not a pyproject.toml",
            location=Location(source=str(path)),
            hint=fix,
        )
    text = decode_utf8(data, str(path), hint="save it as UTF-8 (TOML files are UTF-8)")
    return text, data.startswith(UTF8_BOM)


def _add_table(path: Path, store: str, level: Level) -> str | None:
    """pyproject.toml's new text with ``[tool.schemacli]`` added; None when it has one already.

    Raises InputError (with line:col where TOML gives one) when the file is not valid TOML,
    when ``tool`` is not a table, or when the edit would change anything but our table.
    """
    text, bom = _read_pyproject(path)
    source = str(path)
    try:
        data = parse(text, source)
    except TomlError as err:
        if err.reason is None:
            raise ConfigError(
                "cannot add [tool.schemacli]: the TOML is nested too deeply to read",
                location=Location(source),
                hint="Remove the deep nesting, then run schemacli init again.",
            ) from None
        raise ConfigError(
            f"cannot add [tool.schemacli]: the file is not valid TOML ({err.reason})",
            location=err.location,
            hint="Fix the TOML syntax (https://toml.io), then run schemacli init again.",
        ) from None
    values = config_values(store, level)
    by_hand = "add by hand: [tool.schemacli] " + ", ".join(
        f"{k} = {v!r}" for k, v in values.items()
    )
    tool_key, ours = TOOL_TABLE
    tool = data.get(tool_key)
    if tool is not None and not isinstance(tool, dict):
        raise ConfigError(
            f"cannot add [tool.schemacli]: `tool` is {_type_name(tool)}, not a table",
            location=Location(source, line=_line(text, TOOL_TABLE[:1])),
            hint="In pyproject.toml `tool` holds the tools' tables ([tool.NAME]); "
            "rename that key, then run schemacli init again.",
        )
    if tool is not None and ours in tool:
        if isinstance(tool[ours], dict):
            return None
        raise ConfigError(
            f"`tool.schemacli` is {_type_name(tool[ours])}, not a table",
            location=Location(source, line=_line(text, TOOL_TABLE)),
            hint="Replace it with a [tool.schemacli] table (store = ..., default-level = ...), "
            "or remove it and run schemacli init again.",
        )
    try:  # tomlkit: comments and layout survive
        new_text = add_table(text, TOOL_TABLE, values)
    except TomlEditError as err:
        raise ConfigError(
            f"cannot add [tool.schemacli] to this file's layout ({err.message})",
            location=Location(source),
            hint=by_hand,
        ) from None
    expected = copy.deepcopy(data)
    expected.setdefault(tool_key, {})[ours] = values
    try:
        reread = parse(new_text, source)
    except TomlError:
        reread = None
    if reread != expected:
        raise ConfigError(
            "cannot add [tool.schemacli] without changing the rest of the file "
            "(the edited file did not read back as the same settings plus the table)",
            location=Location(source),
            hint=by_hand,
        )
    return ("\ufeff" if bom else "") + new_text
