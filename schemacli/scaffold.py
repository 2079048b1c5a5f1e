"""What ``schemacli init`` writes: a store, its configuration and, on request, CI glue.

Pure planning: :func:`plan` reads what it must (pyproject.toml), validates the options and
returns every file with its full new content — nothing is written here. The command hands the
plan to :mod:`schemacli.atomicwrite`, which refuses before writing anything and writes all or
nothing. The configuration is edited with tomlkit (comments and layout survive) and parsed back
with tomllib to make sure the file says exactly what it said plus our table; the workflow is
emitted by a YAML emitter and read back, so no option value can add YAML of its own.
"""

from __future__ import annotations

import copy
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schemacli.atomicwrite import Write
from schemacli.contracts.levels import Level
from schemacli.errors import ConfigError, InputError, Location, UsageError
from schemacli.textfile import UTF8_BOM, decode_utf8

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
    return {"store": store, "default-level": level.value}


def config_text(store: str, level: Level) -> str:
    """schemacli.toml: the two settings, written (and escaped) by tomlkit."""
    import tomlkit

    return tomlkit.dumps(config_values(store, level))


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


def _line_of(text: str, pattern: str) -> int | None:
    """The 1-based line of the first match of ``pattern`` (a multi-line regex), if any."""
    match = re.search(pattern, text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _schemacli_line(text: str) -> int | None:
    """The line of a ``tool.schemacli = ...`` key, or of ``schemacli = ...`` under ``[tool]``
    (not one under another table, such as [project.scripts])."""
    dotted = _line_of(text, r"^[ \t]*[\"']?tool[\"']?[ \t]*\.[ \t]*[\"']?schemacli[\"']?[ \t]*=")
    if dotted is not None:
        return dotted
    header = re.search(r"^[ \t]*\[[ \t]*[\"']?tool[\"']?[ \t]*\][ \t]*(#.*)?$", text, re.MULTILINE)
    if header is None:
        return None
    section = text[header.end() :]
    section = (
        section[: m.start()] if (m := re.search(r"^[ \t]*\[", section, re.MULTILINE)) else section
    )
    line = _line_of(section, r"^[ \t]*[\"']?schemacli[\"']?[ \t]*=")
    return None if line is None else text.count("\n", 0, header.end()) + line


def _read_pyproject(path: Path) -> tuple[str, bool]:
    """The file's text and whether it began with a UTF-8 byte-order mark."""
    fix = "Make it a readable UTF-8 TOML file, then run schemacli init again."
    try:
        if not path.is_file():
            raise InputError("is not a regular file", location=Location(source=str(path)), hint=fix)
        with open(path, "rb") as handle:
            data = handle.read(MAX_PYPROJECT_BYTES + 1)
    except OSError as err:
        from schemacli.atomicwrite import why

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
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        match = re.search(r"line (\d+), column (\d+)", str(err))
        raise ConfigError(
            f"cannot add [tool.schemacli]: the file is not valid TOML "
            f"({str(err).split(' (at ')[0]})",
            location=Location(
                source,
                line=int(match.group(1)) if match else None,
                column=int(match.group(2)) if match else None,
            ),
            hint="Fix the TOML syntax (https://toml.io), then run schemacli init again.",
        ) from None
    except RecursionError:
        raise ConfigError(
            "cannot add [tool.schemacli]: the TOML is nested too deeply to read",
            location=Location(source),
            hint="Remove the deep nesting, then run schemacli init again.",
        ) from None
    values = config_values(store, level)
    by_hand = "add by hand: [tool.schemacli] " + ", ".join(
        f"{k} = {v!r}" for k, v in values.items()
    )
    tool = data.get("tool")
    if tool is not None and not isinstance(tool, dict):
        raise ConfigError(
            f"cannot add [tool.schemacli]: `tool` is {_type_name(tool)}, not a table",
            location=Location(source, line=_line_of(text, r"^[ \t]*[\"']?tool[\"']?[ \t]*=")),
            hint="In pyproject.toml `tool` holds the tools' tables ([tool.NAME]); "
            "rename that key, then run schemacli init again.",
        )
    if tool is not None and "schemacli" in tool:
        if isinstance(tool["schemacli"], dict):
            return None
        raise ConfigError(
            f"`tool.schemacli` is {_type_name(tool['schemacli'])}, not a table",
            location=Location(source, line=_schemacli_line(text)),
            hint="Replace it with a [tool.schemacli] table (store = ..., default-level = ...), "
            "or remove it and run schemacli init again.",
        )
    new_text = _tomlkit_add(text, values, path, by_hand)
    expected = copy.deepcopy(data)
    expected.setdefault("tool", {})["schemacli"] = values
    try:
        reread = tomllib.loads(new_text)
    except (tomllib.TOMLDecodeError, RecursionError):
        reread = None
    if reread != expected:
        raise ConfigError(
            "cannot add [tool.schemacli] without changing the rest of the file "
            "(the edited file did not read back as the same settings plus the table)",
            location=Location(source),
            hint=by_hand,
        )
    return ("\ufeff" if bom else "") + new_text


def _tomlkit_add(text: str, values: dict[str, str], path: Path, by_hand: str) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import InlineTable

    try:
        doc = tomlkit.parse(text)
        tool = doc.get("tool")
        if tool is None:
            table = tomlkit.table()
            table.update(values)
            tools = tomlkit.table(is_super_table=True)
            tools.add("schemacli", table)
            doc.add("tool", tools)
        else:  # the same style as the user's: an inline `tool = {...}` gets an inline table
            table = tomlkit.inline_table() if isinstance(tool, InlineTable) else tomlkit.table()
            table.update(values)
            if not isinstance(tool, InlineTable):
                table.add(tomlkit.nl())  # a blank line before whatever table follows
            tool.add("schemacli", table)
        new_text = tomlkit.dumps(doc)
        if new_text.endswith("\n\n") and not text.endswith("\n\n"):
            new_text = new_text[:-1]  # ... but none added at the end of the file
        return new_text
    except (TOMLKitError, ValueError, TypeError, RecursionError) as err:
        raise ConfigError(
            f"cannot add [tool.schemacli] to this file's layout ({err})",
            location=Location(str(path)),
            hint=by_hand,
        ) from None
