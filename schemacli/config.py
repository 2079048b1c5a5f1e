"""The settings object: built once at the edge, validated, frozen, passed down explicitly.

Precedence, highest first: command-line flag > environment (``SCHEMACLI_*``) > config file >
defaults. The config file is the first of ``schemacli.toml`` (top-level table) or
``pyproject.toml`` (``[tool.schemacli]``) found walking up from the current directory;
``SCHEMACLI_CONFIG`` names one explicitly. A relative ``store`` in a file is relative to that
file's directory; from a flag or the environment it is relative to the current directory.
"""

from __future__ import annotations

import os
import re
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from schemacli.contracts.levels import Level, SubjectLevels
from schemacli.contracts.naming import NamingStrategy
from schemacli.errors import ConfigError, Location, SchemacliWarning, UsageError
from schemacli.textfile import SETTINGS_LIMIT, UnreadableInput, read_input, read_utf8, resolved

__all__ = ["Level", "NamingStrategy", "Settings", "load_settings", "parse_level"]


CONFIG_FILE = "schemacli.toml"
PYPROJECT = "pyproject.toml"

# Every key the file may hold; anything else is a typo and rejected.
FILE_KEYS = (
    "store", "default-level", "naming-strategy", "subjects", "registry", "cache-dir"
)
SUBJECT_KEYS = ("level",)
# The [registry] table is validated here by key name only and handed, raw, to
# schemacli.registry.settings.RegistrySettings.build(file_values=...), which checks the values.
REGISTRY_KEYS = ("url", "user", "password", "token", "ca", "cert", "key", "timeout", "retries")

ENV_PREFIX = "SCHEMACLI_"
ENV_CONFIG = "SCHEMACLI_CONFIG"
ENV_KEYS = {  # environment variable -> file key
    "SCHEMACLI_STORE": "store",
    "SCHEMACLI_DEFAULT_LEVEL": "default-level",
    "SCHEMACLI_NAMING_STRATEGY": "naming-strategy",
    "SCHEMACLI_CACHE_DIR": "cache-dir",
}

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
    # Raw [registry] values of the file (secrets possible): never printed, never in repr.
    registry: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )
    config_file: Path | None = None
    # Where verdicts are cached between runs (cache-dir / SCHEMACLI_CACHE_DIR; None: the
    # platform's user cache directory, contracts.cachedir.default_cache_dir()).
    cache_dir: Path | None = None

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
) -> Settings:
    """Build the settings from flags (file-key names, None = not given), env and the config file.

    Raises ConfigError (file or environment) or UsageError (flag) naming the key, the bad value
    and the allowed values.
    """
    cwd = (cwd or Path.cwd()).resolve()
    env = os.environ if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}

    config_file = _find_config(cwd, env)
    table, text = _read_table(config_file) if config_file else ({}, "")
    file_origin = _FileOrigin(config_file, text) if config_file else None
    for key in table:
        if key not in FILE_KEYS:
            raise ConfigError(
                f"unknown key {key!r}",
                location=file_origin.at(key) if file_origin else None,
                hint=f"allowed keys: {', '.join(FILE_KEYS)}",
            )

    def pick(key: str) -> tuple[Any, _Origin] | None:
        if key in flags:
            return flags[key], _FlagOrigin(key)
        env_name = next((e for e, k in ENV_KEYS.items() if k == key), None)
        if env_name and env.get(env_name):
            return env[env_name], _EnvOrigin(env_name)
        if key in table:
            assert file_origin is not None
            return table[key], file_origin.keyed(key)
        return None

    store = (config_file.parent if config_file else cwd) / DEFAULT_STORE
    if (picked := pick("store")) is not None:
        value, origin = picked
        if not isinstance(value, str | Path) or not str(value).strip():
            raise origin.error("store", value, "a directory path, e.g. \"schemas\"")
        base = config_file.parent if isinstance(origin, _FileOrigin) and config_file else cwd
        store = base / Path(value)

    default_level = DEFAULT_LEVEL
    if (picked := pick("default-level")) is not None:
        default_level = _level(*picked, key="default-level")

    strategy = DEFAULT_STRATEGY
    if (picked := pick("naming-strategy")) is not None:
        strategy = _strategy(*picked)

    cache_dir = None
    if (picked := pick("cache-dir")) is not None:
        value, origin = picked
        if not isinstance(value, str | Path) or not str(value).strip():
            raise origin.error("cache-dir", value, "a directory path, e.g. \".cache/schemacli\"")
        base = config_file.parent if isinstance(origin, _FileOrigin) and config_file else cwd
        cache_dir = base / Path(value).expanduser()

    registry = table.get("registry", {})
    if file_origin is not None and not isinstance(registry, dict):
        raise file_origin.keyed("registry").error(
            "registry", "...", 'a table, e.g. [tool.schemacli.registry] url = "http://host:8081"'
        )
    for key in registry:
        if key not in REGISTRY_KEYS:
            assert file_origin is not None
            raise ConfigError(
                f"unknown key {key!r} in the registry table",
                location=file_origin.at(key),
                hint=f"allowed keys: {', '.join(REGISTRY_KEYS)}",
            )

    subject_levels: dict[str, Level] = {}
    subjects = table.get("subjects", {})
    if file_origin is not None and not isinstance(subjects, dict):
        raise file_origin.keyed("subjects").error(
            "subjects", subjects, 'a table, e.g. [tool.schemacli.subjects."orders-value"]'
        )
    for subject, entry in subjects.items():
        assert file_origin is not None
        origin = file_origin.keyed(subject)
        if not isinstance(entry, dict):
            raise origin.error(f"subjects.{subject}", entry, 'a table such as { level = "FULL" }')
        for key in entry:
            if key not in SUBJECT_KEYS:
                raise ConfigError(
                    f"unknown key {key!r} for subject {subject!r}",
                    location=origin.location(),
                    hint=f"allowed keys: {', '.join(SUBJECT_KEYS)}",
                )
        if "level" in entry:
            subject_levels[subject] = _level(
                entry["level"], file_origin.keyed(subject), key=f"subjects.{subject}.level"
            )

    return Settings(
        store=store,
        default_level=default_level,
        subject_levels=MappingProxyType(subject_levels),
        naming_strategy=strategy,
        registry=MappingProxyType(dict(registry)),
        config_file=config_file,
        cache_dir=cache_dir,
    )


def parse_level(value: str, *, what: str = "--level") -> Level:
    """A level name from the command line (case-insensitive); UsageError if unknown."""
    return _level(value, _FlagOrigin(what), key=what)


def _level(value: Any, origin: _Origin, *, key: str) -> Level:
    if isinstance(value, Level):
        return value
    if isinstance(value, str) and value.strip().upper() in Level.__members__:
        return Level[value.strip().upper()]
    raise origin.error(key, value, ", ".join(level.value for level in Level))


def _strategy(value: Any, origin: _Origin) -> NamingStrategy:
    if isinstance(value, NamingStrategy):
        return value
    if isinstance(value, str):
        # Accept the bare name or Confluent's fully qualified class name.
        short = value.strip().rsplit(".", 1)[-1]
        for strategy in NamingStrategy:
            if strategy.value.lower() == short.lower():
                return strategy
    raise origin.error("naming-strategy", value, ", ".join(s.value for s in NamingStrategy))


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


def _read_table(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = read_utf8(
            path,
            hint="save it as UTF-8 (TOML files are UTF-8)",
            error=ConfigError,
            limit=SETTINGS_LIMIT,
            what="config file",
        )
    except UnreadableInput as err:
        raise ConfigError(
            f"cannot read the config file: {err.message}", location=err.location, hint=err.hint
        ) from err
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        line, column = _toml_position(str(err))
        raise ConfigError(
            f"invalid TOML: {str(err).split(' (at ')[0]}",
            location=Location(source=str(path), line=line, column=column),
            hint="fix the TOML syntax (https://toml.io)",
        ) from err
    except RecursionError:
        raise ConfigError(
            "the TOML is nested too deeply to read (arrays or inline tables inside each other)",
            location=Location(source=str(path)),
            hint="a schemacli config is a few flat tables; remove the deep nesting",
        ) from None
    if path.name == PYPROJECT:
        tool = data.get("tool", {})  # `tool = 1` parses: a value, not the [tool] table
        table = tool.get("schemacli", {}) if isinstance(tool, dict) else tool
    else:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(
            "the schemacli settings must be a table",
            location=Location(source=str(path)),
            hint="write [tool.schemacli] followed by key = value lines",
        )
    return table, text


def _toml_position(message: str) -> tuple[int | None, int | None]:
    match = re.search(r"line (\d+), column (\d+)", message)
    return (int(match.group(1)), int(match.group(2))) if match else (None, None)


class _Origin:
    """Where a value came from, so the error can point at it."""

    def error(self, key: str, value: Any, allowed: str) -> ConfigError | UsageError:
        raise NotImplementedError


@dataclass(frozen=True)
class _FlagOrigin(_Origin):
    flag: str

    def error(self, key: str, value: Any, allowed: str) -> UsageError:
        positional = self.flag.isupper()  # a metavar such as LEVEL, not an option name
        name = self.flag if self.flag.startswith("-") or positional else f"--{self.flag}"
        return UsageError(f"{name}: {value!r} is not valid", hint=f"allowed: {allowed}")


@dataclass(frozen=True)
class _EnvOrigin(_Origin):
    variable: str

    def error(self, key: str, value: Any, allowed: str) -> ConfigError:
        return ConfigError(
            f"environment variable {self.variable}: {value!r} is not valid",
            hint=f"allowed: {allowed}",
        )


@dataclass(frozen=True)
class _FileOrigin(_Origin):
    path: Path
    text: str
    key: str | None = None

    def keyed(self, key: str) -> _FileOrigin:
        return _FileOrigin(self.path, self.text, key)

    def at(self, key: str) -> Location:
        return self.keyed(key).location()

    def location(self) -> Location:
        line = None
        if self.key is not None:
            # tomllib keeps no positions; the first line that sets or opens the key is close enough.
            pattern = re.compile(
                rf'^\s*(\[[^\]]*)?["\']?{re.escape(self.key)}["\']?\s*(=|\]|\.)', re.MULTILINE
            )
            match = pattern.search(self.text)
            if match:
                line = self.text.count("\n", 0, match.start()) + 1
        return Location(source=str(self.path), line=line)

    def error(self, key: str, value: Any, allowed: str) -> ConfigError:
        return ConfigError(
            f"{key}: {value!r} is not valid", location=self.location(), hint=f"allowed: {allowed}"
        )
