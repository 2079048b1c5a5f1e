"""Where a setting came from — a flag, an environment variable, the settings file (with its
line:col) or the default — so that an error about its value can say so; and the one rule that
decides where it comes from (:func:`resolve`: flag > environment > file > default).

One type and one rule for every setting: the project's (``schemacli.config``) and the
registry's (``schemacli.registry.settings``). A setting is named once (:class:`Setting`: its
key in the settings file, its environment variable, its flag); a command's input is looked up in
:class:`Sources`. A value from a flag is a usage error (exit 2, UsageError); from the
environment or the file a configuration error (ConfigError), the file's with its location.
Imports neither config nor registry: both build on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

from schemacli.errors import ConfigError, Location, UsageError


class Kind(Enum):
    FLAG = "flag"
    ENV = "env"
    FILE = "file"
    DEFAULT = "default"


@dataclass(frozen=True)
class Origin:
    """``name`` is the flag (``--timeout``, or a metavar such as ``LEVEL``), the environment
    variable, the key in our table (``registry.timeout``, ``subjects.orders.level``) or the
    setting a default stands for; ``location`` the file and line:col of a file's key."""

    kind: Kind
    name: str
    location: Location | None = None

    @classmethod
    def flag(cls, name: str) -> Origin:
        """A flag, by its option name; a bare key (``store``) becomes ``--store``; a metavar
        (``LEVEL``, an argument) stays as it is."""
        if not (name.startswith("-") or name.isupper()):
            name = f"--{name}"
        return cls(Kind.FLAG, name)

    @classmethod
    def env(cls, variable: str) -> Origin:
        return cls(Kind.ENV, variable)

    @classmethod
    def file(cls, key: str, location: Location | None) -> Origin:
        """A key of the settings file; ``location`` None when the file is not known."""
        return cls(Kind.FILE, key, location)

    @classmethod
    def default(cls, name: str) -> Origin:
        return cls(Kind.DEFAULT, name)

    @property
    def label(self) -> str:
        """How an error names the value's source."""
        if self.kind is Kind.ENV:
            return f"environment variable {self.name}"
        if self.kind is Kind.FILE and self.location is None:
            return f"{self.name} (config file)"
        if self.kind is Kind.DEFAULT:
            return f"the default {self.name}"
        return self.name

    def error(self, problem: str, hint: str) -> UsageError | ConfigError:
        """``<label>: <problem>`` — a UsageError for a flag, else a ConfigError at the file's
        key (when it came from the file)."""
        message = f"{self.label}: {problem}"
        if self.kind is Kind.FLAG:
            return UsageError(message, hint=hint)
        return ConfigError(message, location=self.location, hint=hint)


@dataclass(frozen=True)
class Setting:
    """One setting's names: ``key`` in the settings file's table (and in the flags a command
    hands in), ``env`` its environment variable, ``flag`` its command-line option, which also
    names the setting when its default is meant."""

    key: str
    env: str
    flag: str


def _nowhere(key: str) -> Origin:
    return Origin.file(key, None)


@dataclass(frozen=True)
class Sources:
    """What a command was given, by setting key: its flags (None: not given), the environment
    (an empty variable counts as unset), the settings file's table, and ``file_origin``, which
    places a key of that table (its name as errors show it, its line:col)."""

    flags: Mapping[str, object] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    file: Mapping[str, object] = field(default_factory=dict)
    file_origin: Callable[[str], Origin] = _nowhere


T = TypeVar("T")


def resolve(setting: Setting, sources: Sources, default: T) -> tuple[object | T, Origin]:
    """The setting's value and where it came from: the flag, else the environment variable,
    else the file's key, else ``default`` (``Origin.default`` named by the flag). The value is
    as given (a string from the environment); checking it is the caller's."""
    flag = sources.flags.get(setting.key)
    if flag is not None:
        return flag, Origin.flag(setting.flag)
    if sources.env.get(setting.env):
        return sources.env[setting.env], Origin.env(setting.env)
    if setting.key in sources.file:
        return sources.file[setting.key], sources.file_origin(setting.key)
    return default, Origin.default(setting.flag)
