"""The settings object: built once at the edge, validated, frozen, passed down explicitly.

Precedence, highest first: command-line flag > environment (``SCHEMACLI_*``) > config file >
defaults. The config file is the first of ``schemacli.toml`` (top-level table) or
``pyproject.toml`` (``[tool.schemacli]``) found walking up from the current directory;
``SCHEMACLI_CONFIG`` names one explicitly. A relative ``store`` in a file is relative to that
file's directory; from a flag or the environment it is relative to the current directory.
"""

from __future__ import annotations

import os
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.lint.rule import NameStyle
from schemacli.contracts.lint.ruleset import LintConfig, UnknownSelector, check_selectors
from schemacli.contracts.rules.model import RulesPolicy
from schemacli.contracts.store.naming import NamingStrategy
from schemacli.errors import ConfigError, Location, SchemacliError, SchemacliWarning
from schemacli.origin import Kind, Origin, Setting, Sources, resolve
from schemacli.textfile import SETTINGS_LIMIT, UnreadableInput, read_input, resolved
from schemacli.tomlfile import (
    CACHE_DIR,
    CONFIG_FILE,
    FILE_KEYS,
    JOBS,
    LEVEL,
    LINT,
    LINT_FIELD_STYLE,
    LINT_GATE,
    LINT_IGNORE,
    LINT_KEYS,
    LINT_PER_FILE_IGNORES,
    LINT_SELECT,
    LINT_SYMBOL_STYLE,
    LINT_TYPE_STYLE,
    NAMING_STRATEGY,
    PYPROJECT,
    REGISTRY,
    REGISTRY_KEYS,
    RULES,
    RULES_KEYS,
    RULES_REQUIRE_TAGS,
    STORE,
    SUBJECT_KEYS,
    SUBJECTS,
    Table,
    TomlFile,
    read,
    settings_path,
)
from schemacli.tomlfile import DEFAULT_LEVEL as DEFAULT_LEVEL_KEY

if TYPE_CHECKING:  # a registry command hands in its flags; config calls their .resolve()
    from schemacli.registry.settings import RegistryFlags, RegistrySettings

__all__ = ["Level", "NamingStrategy", "Settings", "load_settings", "parse_level"]


# The file's layout (CONFIG_FILE, PYPROJECT, FILE_KEYS, ...) is schemacli.tomlfile's. The
# [registry] table is validated here by key name only; for a registry command it is handed to
# RegistryFlags.resolve (registry.settings.RegistrySettings.build), which checks the values.

ENV_CONFIG = "SCHEMACLI_CONFIG"
# The project's settings, each named once: file key, environment variable, flag. All four are
# decided by one rule, origin.resolve (flag > environment > file > default).
STORE_SETTING = Setting(STORE, "SCHEMACLI_STORE", "--store")
LEVEL_SETTING = Setting(DEFAULT_LEVEL_KEY, "SCHEMACLI_DEFAULT_LEVEL", "--default-level")
STRATEGY_SETTING = Setting(NAMING_STRATEGY, "SCHEMACLI_NAMING_STRATEGY", "--naming-strategy")
CACHE_DIR_SETTING = Setting(CACHE_DIR, "SCHEMACLI_CACHE_DIR", "--cache-dir")
JOBS_SETTING = Setting(JOBS, "SCHEMACLI_JOBS", "--jobs")

DEFAULT_STORE = "schemas"
DEFAULT_LEVEL = Level.BACKWARD  # Confluent Schema Registry's default
DEFAULT_STRATEGY = NamingStrategy.TOPIC


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know about where contracts live and how they are checked."""

    store: Path = Path(DEFAULT_STORE)
    default_level: Level = DEFAULT_LEVEL
    subject_levels: Mapping[str, Level] = field(default_factory=lambda: MappingProxyType({}))
    naming_strategy: NamingStrategy = DEFAULT_STRATEGY
    # A registry command's registry settings (flag > SCHEMACLI_REGISTRY_* > the file's
    # [registry] table > default), built in the same pass; None for an offline command.
    registry: RegistrySettings | None = field(default=None, repr=False)
    config_file: Path | None = None
    # Where verdicts are cached between runs (cache-dir / SCHEMACLI_CACHE_DIR; None: the
    # platform's user cache directory, contracts.cachedir.default_cache_dir()).
    cache_dir: Path | None = None
    # How many processes the gate may check subjects in (jobs / SCHEMACLI_JOBS / --jobs;
    # None: the CPUs this process may use, contracts.gate.pool.default_jobs()).
    jobs: int | None = None
    # [lint]: the rules, per-file ignores, naming styles, and whether the gate lints.
    lint: LintConfig = field(default_factory=LintConfig)
    # [rules]: what gate and check require of data-quality rule sets (docs/rules.md)
    rules: RulesPolicy = field(default_factory=RulesPolicy)

    @property
    def levels(self) -> SubjectLevels:
        """The configured levels, as the core takes them."""
        return SubjectLevels(
            self.default_level,
            self.subject_levels,
            str(self.config_file) if self.config_file else None,
        )

    def level_for(self, subject: str) -> Level:
        """The subject's own level if configured, else the default level."""
        return self.levels.level_for(subject)


def load_settings(
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    registry: RegistryFlags | None = None,
) -> Settings:
    """Build the settings from flags (file-key names, None = not given), env and the config file.

    ``registry``: a registry command's flags; its registry settings are built too, else
    ``Settings.registry`` is None and no SCHEMACLI_REGISTRY_* variable is read.
    Raises ConfigError (file or environment) or UsageError (flag) naming the key, the bad value
    and the allowed values.
    """
    cwd = (cwd or Path.cwd()).resolve()
    env = os.environ if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}

    config_file = _find_config(cwd, env)
    file = read(config_file) if config_file else None
    table = file.settings() if file else {}
    for key in table:
        if key not in FILE_KEYS:
            assert file is not None
            raise ConfigError(
                f"unknown key {key!r}",
                location=file.settings_location(key),
                hint=f"allowed keys: {', '.join(FILE_KEYS)}",
            )

    def file_origin(key: str) -> Origin:
        return Origin.file(key, file.settings_location(key) if file is not None else None)

    sources = Sources(flags=flags, env=env, file=table, file_origin=file_origin)

    def path(setting: Setting, example: str, *, expand: bool = False) -> Path | None:
        """A directory path: relative to the file's folder when the file gives it."""
        value, origin = resolve(setting, sources, None)
        if origin.kind is Kind.DEFAULT:
            return None
        if not isinstance(value, str | Path) or not str(value).strip():
            raise _invalid(origin, value, f"a directory path, e.g. {example}")
        base = config_file.parent if origin.kind is Kind.FILE and config_file else cwd
        return base / (Path(value).expanduser() if expand else Path(value))

    default_store = (config_file.parent if config_file else cwd) / DEFAULT_STORE
    store = path(STORE_SETTING, '"schemas"') or default_store
    default_level = _level(*resolve(LEVEL_SETTING, sources, DEFAULT_LEVEL))
    strategy = _strategy(*resolve(STRATEGY_SETTING, sources, DEFAULT_STRATEGY))
    cache_dir = path(CACHE_DIR_SETTING, '".cache/schemacli"', expand=True)
    jobs = _jobs(*resolve(JOBS_SETTING, sources, None))
    registry_table = Table(MappingProxyType(dict(_registry_table(file, table))), file, (REGISTRY,))
    subject_levels = _subject_levels(file, table)
    lint = _lint_table(file, table)
    rules = _rules_table(file, table)
    return Settings(
        store=store,
        default_level=default_level,
        subject_levels=MappingProxyType(subject_levels),
        naming_strategy=strategy,
        registry=(
            registry.resolve(registry_table, config_file, env) if registry is not None else None
        ),
        config_file=config_file,
        cache_dir=cache_dir,
        jobs=jobs,
        lint=lint,
        rules=rules,
    )


def _rules_table(file: TomlFile | None, table: Mapping[str, Any]) -> RulesPolicy:
    """The [rules] table: ``require-tags``, a list of tag names (line:col on a bad value)."""
    if file is None or RULES not in table:
        return RulesPolicy()
    rules = table[RULES]

    def where(*keys: str) -> Location:
        found = file.position(settings_path(file.path, RULES, *keys))
        line, column = found if found is not None else (None, None)
        return Location(source=str(file.path), line=line, column=column)

    if not isinstance(rules, dict):
        raise ConfigError(
            "rules must be a table",
            location=where(),
            hint='write [tool.schemacli.rules] followed by require-tags = ["PII"]',
        )
    for key in rules:
        if key not in RULES_KEYS:
            raise ConfigError(
                f"unknown key {key!r} in the rules table",
                location=where(key),
                hint=f"allowed keys: {', '.join(RULES_KEYS)}",
            )
    tags = rules.get(RULES_REQUIRE_TAGS, [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise ConfigError(
            f"rules.{RULES_REQUIRE_TAGS} = {tags!r} is not valid",
            location=where(RULES_REQUIRE_TAGS),
            hint='allowed: a list of tag names, e.g. ["PII"]',
        )
    return RulesPolicy(require_tags=tuple(tags))


def _registry_table(file: TomlFile | None, table: Mapping[str, Any]) -> Mapping[str, Any]:
    """The [registry] table, its keys checked (its values are the registry settings')."""
    registry: Mapping[str, Any] = table.get(REGISTRY, {})
    if file is None:
        return registry
    if not isinstance(registry, dict):
        raise _invalid(
            Origin.file(REGISTRY, file.settings_location(REGISTRY)),
            "...",
            'a table, e.g. [tool.schemacli.registry] url = "http://host:8081"',
        )
    for key in registry:
        if key not in REGISTRY_KEYS:
            raise ConfigError(
                f"unknown key {key!r} in the registry table",
                location=file.settings_location(REGISTRY, key),
                hint=f"allowed keys: {', '.join(REGISTRY_KEYS)}",
            )
    return registry


def _subject_levels(file: TomlFile | None, table: Mapping[str, Any]) -> dict[str, Level]:
    """The [subjects."<name>"] tables' levels, checked; an error points at the subject."""
    if file is None:
        return {}
    subjects = table.get(SUBJECTS, {})
    if not isinstance(subjects, dict):
        raise _invalid(
            Origin.file(SUBJECTS, file.settings_location(SUBJECTS)),
            subjects,
            'a table, e.g. [tool.schemacli.subjects."orders-value"]',
        )
    levels: dict[str, Level] = {}
    for subject, entry in subjects.items():
        where = file.settings_location(SUBJECTS, subject)
        if not isinstance(entry, dict):
            raise _invalid(
                Origin.file(f"subjects.{subject}", where),
                entry,
                'a table such as { level = "FULL" }',
            )
        for key in entry:
            if key not in SUBJECT_KEYS:
                raise ConfigError(
                    f"unknown key {key!r} for subject {subject!r}",
                    location=where,
                    hint=f"allowed keys: {', '.join(SUBJECT_KEYS)}",
                )
        if LEVEL in entry:
            levels[subject] = _level(
                entry[LEVEL], Origin.file(f"{SUBJECTS}.{subject}.{LEVEL}", where)
            )
    return levels


def _lint_table(file: TomlFile | None, table: Mapping[str, Any]) -> LintConfig:
    """The [lint] table, checked: every error names the key with its line:col."""
    if file is None or LINT not in table:
        return LintConfig()
    lint = table[LINT]

    def where(*keys: str) -> Location:
        found = file.position(settings_path(file.path, LINT, *keys))
        line, column = found if found is not None else (None, None)
        return Location(source=str(file.path), line=line, column=column)

    def bad(keys: tuple[str, ...], value: Any, allowed: str) -> ConfigError:
        return ConfigError(
            f"lint.{'.'.join(keys)} = {value!r} is not valid",
            location=where(*keys),
            hint=f"allowed: {allowed}",
        )

    if not isinstance(lint, dict):
        raise ConfigError(
            "lint must be a table",
            location=where(),
            hint='write [tool.schemacli.lint] followed by e.g. select = ["ALL"]',
        )
    for key in lint:
        if key not in LINT_KEYS:
            raise ConfigError(
                f"unknown key {key!r} in the lint table",
                location=where(key),
                hint=f"allowed keys: {', '.join(LINT_KEYS)}",
            )

    def selectors(keys: tuple[str, ...], value: Any) -> tuple[str, ...]:
        allowed = 'a list of rule codes, prefixes or categories, e.g. ["E", "N001", "docs"]'
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            raise bad(keys, value, allowed)
        try:
            check_selectors(value)
        except UnknownSelector as err:
            raise ConfigError(
                f"lint.{'.'.join(keys)}: {err}", location=where(*keys), hint=allowed
            ) from None
        return tuple(value)

    def style(key: str, default: NameStyle) -> NameStyle:
        if key not in lint:
            return default
        value = lint[key]
        try:
            return NameStyle.parse(value) if isinstance(value, str) else NameStyle.parse("")
        except ValueError:
            raise bad((key,), value, ", ".join(s.value for s in NameStyle)) from None

    select = selectors((LINT_SELECT,), lint[LINT_SELECT]) if LINT_SELECT in lint else None
    ignore = selectors((LINT_IGNORE,), lint[LINT_IGNORE]) if LINT_IGNORE in lint else ()
    per_file = lint.get(LINT_PER_FILE_IGNORES, {})
    if not isinstance(per_file, dict):
        raise bad((LINT_PER_FILE_IGNORES,), per_file, 'a table, e.g. { "legacy/*.avsc" = ["N"] }')
    per_file_ignores = tuple(
        (glob, selectors((LINT_PER_FILE_IGNORES, glob), codes)) for glob, codes in per_file.items()
    )
    gate = lint.get(LINT_GATE, False)
    if not isinstance(gate, bool):
        raise bad((LINT_GATE,), gate, "true or false")
    defaults = LintConfig()
    return LintConfig(
        select=select,
        ignore=ignore,
        per_file_ignores=per_file_ignores,
        type_style=style(LINT_TYPE_STYLE, defaults.type_style),
        field_style=style(LINT_FIELD_STYLE, defaults.field_style),
        symbol_style=style(LINT_SYMBOL_STYLE, defaults.symbol_style),
        gate=gate,
    )


def parse_level(value: str, *, what: str = "--level") -> Level:
    """A level name from the command line (case-insensitive); UsageError if unknown."""
    return _level(value, Origin.flag(what))


def _invalid(origin: Origin, value: Any, allowed: str) -> SchemacliError:
    return origin.error(f"{value!r} is not valid", f"allowed: {allowed}")


def _level(value: Any, origin: Origin) -> Level:
    if isinstance(value, Level):
        return value
    if isinstance(value, str) and value.strip().upper() in Level.__members__:
        return Level[value.strip().upper()]
    raise _invalid(origin, value, ", ".join(level.value for level in Level))


MAX_JOBS = 256  # more processes than any machine a gate runs on has cores for


def _jobs(value: Any, origin: Origin) -> int | None:
    """A count of processes, 1 to :data:`MAX_JOBS` (an integer, or its digits from the
    environment); None when not set."""
    if value is None:
        return None
    number = value
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= MAX_JOBS:
        return number
    raise _invalid(origin, value, f"a whole number of processes from 1 to {MAX_JOBS}")


def _strategy(value: Any, origin: Origin) -> NamingStrategy:
    if isinstance(value, NamingStrategy):
        return value
    if isinstance(value, str):
        # Accept the bare name or Confluent's fully qualified class name.
        short = value.strip().rsplit(".", 1)[-1]
        for strategy in NamingStrategy:
            if strategy.value.lower() == short.lower():
                return strategy
    raise _invalid(origin, value, ", ".join(s.value for s in NamingStrategy))


def _find_config(cwd: Path, env: Mapping[str, str]) -> Path | None:
    explicit = env.get(ENV_CONFIG)
    if explicit:
        path = resolved(cwd / explicit)
        if not path.is_file():
            raise ConfigError(
                f"{ENV_CONFIG} names {explicit!r}, which is not a file",
                hint=f"point {ENV_CONFIG} at a schemacli.toml or pyproject.toml, or unset it",
            )
        return path
    for directory in (cwd, *cwd.parents):
        for name in (CONFIG_FILE, PYPROJECT):
            candidate = directory / name
            if not candidate.is_symlink() and not candidate.exists():
                continue
            if not candidate.is_file():  # never pass over it silently to a parent's config
                raise ConfigError(
                    f"{name} is not a regular file (a folder, a pipe, or a link that leads "
                    "nowhere)",
                    location=Location(source=str(candidate)),
                    hint=f"replace it with the config file, or remove it; schemacli reads the "
                    f"nearest {CONFIG_FILE}, or pyproject.toml with [tool.schemacli]",
                )
            if name == CONFIG_FILE or _has_tool_table(candidate):
                pyproject = directory / PYPROJECT
                if name == CONFIG_FILE and pyproject.is_file() and _has_tool_table(pyproject):
                    warnings.warn(
                        f"{candidate} and the [tool.schemacli] table of {pyproject} both "
                        f"configure schemacli; using {CONFIG_FILE} (the table is ignored). "
                        "Keep one of them.",
                        SchemacliWarning,
                        stacklevel=2,
                    )
                return candidate
    return None


_OUR_NAME = b"schemacli"
_OUR_NAME_UTF16 = ("schemacli".encode("utf-16-le"), "schemacli".encode("utf-16-be"))


def _has_tool_table(pyproject: Path) -> bool:
    """Whether ``pyproject`` has a [tool.schemacli] entry, or mentions schemacli in a form
    only the config reader can judge (broken TOML, not UTF-8): that reader then says what is
    wrong instead of the search moving on to a parent folder's config."""
    try:
        data = read_input(pyproject, limit=SETTINGS_LIMIT, what="pyproject.toml")
    except UnreadableInput as err:
        # too large or a link loop: the config reader says so; gone or unreadable: no table
        return err.reason in ("too-large", "loop")
    if b"tool.schemacli" in data:  # the usual case, without parsing
        return True
    if _OUR_NAME not in data:
        return any(name in data for name in _OUR_NAME_UTF16)
    try:
        tool = tomllib.loads(data.decode("utf-8")).get("tool")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return True
    return isinstance(tool, dict) and "schemacli" in tool
