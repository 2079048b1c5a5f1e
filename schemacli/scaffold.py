"""What ``schemacli init`` writes: a store, its configuration and, on request, CI glue.

Pure planning (``plan``) apart from the one function that writes (``write``): the command plans,
refuses when any planned file exists (nothing is written then), and writes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from schemacli.contracts.levels import Level
from schemacli.errors import InputError, Location, UsageError


@dataclass(frozen=True)
class Planned:
    path: Path
    content: str
    append: bool = False  # add to an existing file (the [tool.schemacli] table of pyproject.toml)


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

WORKFLOW = """\
# The schema compatibility gate on every pull request (written by `schemacli init --github`).
name: schemas
on: pull_request
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0  # the gate compares with the base branch's history
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: pip install {install}
      - run: schemacli gate --against git:origin/${{{{ github.base_ref }}}} --output github
"""


def config_table(store: str, level: Level) -> str:
    return f'store = "{store}"\ndefault-level = "{level.value}"\n'


def plan(
    root: Path,
    *,
    store: str = "schemas",
    level: Level = Level.BACKWARD,
    pre_commit: bool = False,
    github: bool = False,
    install: str = "schemacli",
) -> list[Planned]:
    """The files to write under ``root``. The configuration goes into pyproject.toml's
    ``[tool.schemacli]`` when there is a pyproject.toml, else into schemacli.toml."""
    if Path(store).is_absolute() or ".." in Path(store).parts:
        raise UsageError(
            f"--store must be a folder inside the project, got {store!r}",
            hint="Give a relative path such as schemas.",
        )
    planned = [Planned(root / store / "subjects" / ".gitkeep", "")]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        planned.append(
            Planned(pyproject, "\n[tool.schemacli]\n" + config_table(store, level), append=True)
        )
    else:
        planned.append(Planned(root / "schemacli.toml", config_table(store, level)))
    if pre_commit:
        planned.append(Planned(root / ".pre-commit-config.yaml", PRE_COMMIT))
    if github:
        workflow = WORKFLOW.format(install=install)
        planned.append(Planned(root / ".github" / "workflows" / "schemacli.yml", workflow))
    return planned


def conflicts(planned: list[Planned]) -> list[str]:
    """Why each planned file cannot be written without overwriting something (empty: none)."""
    reasons = []
    for item in planned:
        if item.append:
            text = item.path.read_text(encoding="utf-8")
            try:
                tool = tomllib.loads(text).get("tool", {})
            except tomllib.TOMLDecodeError as exc:
                raise InputError(
                    f"cannot add [tool.schemacli]: the file is not valid TOML ({exc})",
                    location=Location(source=str(item.path)),
                    hint="Fix the file first, then run schemacli init again.",
                ) from exc
            if "schemacli" in tool:
                reasons.append(f"{item.path} already has a [tool.schemacli] table")
        elif item.path.exists() or item.path.is_symlink():
            reasons.append(f"{item.path} exists")
    for item in planned:  # a schemacli.toml beside a pyproject.toml table would be ambiguous
        if item.append and (item.path.parent / "schemacli.toml").exists():
            reasons.append(f"{item.path.parent / 'schemacli.toml'} exists")
    return reasons


def write(planned: list[Planned]) -> None:
    """Write (or append) every planned file; folders are created as needed."""
    for item in planned:
        item.path.parent.mkdir(parents=True, exist_ok=True)
        if item.append:
            with open(item.path, "a", encoding="utf-8") as handle:
                if not item.path.read_text(encoding="utf-8").endswith("\n"):
                    handle.write("\n")
                handle.write(item.content)
        else:
            with open(item.path, "x", encoding="utf-8") as handle:  # never overwrite
                handle.write(item.content)
