"""The settings file: where schemacli's table lives in it, and how it is read, located and edited.

The layout of ``[tool.schemacli]`` (in pyproject.toml) or of a whole schemacli.toml — table
names and key names — is known here and nowhere else. Reading is bounded (``textfile``),
parsing is ``tomllib``'s, and every error names the file and, where TOML gives one, line:col.
A key's line:col comes from one scan of the (already valid) text that records where each
key path is first written: a header, a dotted key, a key in an inline table. Edits go through
tomlkit, so comments and layout survive, and are parsed back before they are handed out.

Imports neither ``schemacli.config`` nor ``schemacli.registry``: both build on it. It is imported
when ``schemacli --help`` starts (through the registry settings the options name), so tomllib,
the bounded reader and tomlkit are imported where a file is read or edited, not here.
"""

from __future__ import annotations

import bisect
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from schemacli.errors import ConfigError, Location
from schemacli.textfile import SETTINGS_LIMIT, UnreadableInput, read_utf8

# -- the layout ---------------------------------------------------------------------------------

CONFIG_FILE = "schemacli.toml"
PYPROJECT = "pyproject.toml"
TOOL_TABLE = ("tool", "schemacli")  # where pyproject.toml keeps our table

STORE = "store"
DEFAULT_LEVEL = "default-level"
NAMING_STRATEGY = "naming-strategy"
CACHE_DIR = "cache-dir"
JOBS = "jobs"
SUBJECTS = "subjects"
REGISTRY = "registry"
LEVEL = "level"
LINT = "lint"
RULES = "rules"
# Every key our table may hold; anything else is a typo and rejected.
FILE_KEYS = (
    STORE,
    DEFAULT_LEVEL,
    NAMING_STRATEGY,
    SUBJECTS,
    REGISTRY,
    CACHE_DIR,
    JOBS,
    LINT,
    RULES,
)
# [rules]: what the gate requires of data-quality rule sets (docs/rules.md)
RULES_REQUIRE_TAGS = "require-tags"
RULES_KEYS = (RULES_REQUIRE_TAGS,)
# [lint]: ruff's selection keys, the naming styles, and whether the gate lints new versions.
LINT_SELECT = "select"
LINT_IGNORE = "ignore"
LINT_PER_FILE_IGNORES = "per-file-ignores"
LINT_TYPE_STYLE = "type-style"
LINT_FIELD_STYLE = "field-style"
LINT_SYMBOL_STYLE = "symbol-style"
LINT_GATE = "gate"
LINT_KEYS = (
    LINT_SELECT,
    LINT_IGNORE,
    LINT_PER_FILE_IGNORES,
    LINT_TYPE_STYLE,
    LINT_FIELD_STYLE,
    LINT_SYMBOL_STYLE,
    LINT_GATE,
)
SUBJECT_KEYS = (LEVEL,)
REGISTRY_KEYS = (
    "url",
    "user",
    "password",
    "token",
    "ca",
    "cert",
    "key",
    "timeout",
    "retries",
    "concurrency",
)

KeyPath = tuple[str, ...]


def settings_path(file: Path, *keys: str) -> KeyPath:
    """The absolute key path of ``keys`` of our table in ``file`` (``tool.schemacli.`` in front
    in a pyproject.toml)."""
    return (*TOOL_TABLE, *keys) if file.name == PYPROJECT else keys


def dotted(keys: Iterable[str]) -> str:
    """``keys`` as TOML writes a dotted key, each part quoted only when it must be."""
    return ".".join(k if _is_bare(k) else toml_key(k) for k in keys)


# -- reading ------------------------------------------------------------------------------------


class TomlError(ConfigError):
    """A settings file that is not TOML. ``reason`` is TOML's own (None: nested too deeply for
    Python to read); ``location`` names the file and, where TOML says, line:col."""

    def __init__(self, reason: str | None, location: Location) -> None:
        if reason is None:
            message = (
                "the TOML is nested too deeply to read (arrays or inline tables inside each other)"
            )
            hint = "a schemacli config is a few flat tables; remove the deep nesting"
        else:
            message, hint = f"invalid TOML: {reason}", "fix the TOML syntax (https://toml.io)"
        super().__init__(message, location=location, hint=hint)
        self.reason = reason


def parse(text: str, source: str) -> dict[str, Any]:
    """``text`` as TOML data; TomlError (file, line:col) when it is not TOML."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        reason, _, where = str(err).partition(" (at ")
        line, column = _line_column(where)
        raise TomlError(reason, Location(source, line=line, column=column)) from err
    except RecursionError:
        raise TomlError(None, Location(source)) from None


def _line_column(where: str) -> tuple[int | None, int | None]:
    """(line, column) from tomllib's ``line 2, column 16)``; (None, None) for ``end of
    document)``."""
    words = where.replace(",", " ").replace(")", " ").split()
    if len(words) == 4 and words[0] == "line" and words[2] == "column":
        return int(words[1]), int(words[3])
    return None, None


@dataclass(frozen=True)
class TomlFile:
    """A settings file read once: its path, text and data, and where each key is written.
    Text and data stay out of ``repr`` (the registry table may hold secrets)."""

    path: Path
    text: str = field(repr=False)
    data: dict[str, Any] = field(repr=False)

    @cached_property
    def positions(self) -> dict[KeyPath, tuple[int, int]]:
        return key_positions(self.text)

    def position(self, keys: KeyPath) -> tuple[int, int] | None:
        """The 1-based line:col where the key path ``keys`` is first written, if it is."""
        return self.positions.get(keys)

    def settings_location(self, *keys: str) -> Location:
        """The file, and the line where ``keys`` of our table is first written (no line when it
        is not written). Errors name the line only, as they always have; :meth:`position` has
        the column too."""
        found = self.position(settings_path(self.path, *keys))
        return Location(source=str(self.path), line=found[0] if found else None)

    def settings(self) -> dict[str, Any]:
        """Our table: ``[tool.schemacli]`` of a pyproject.toml (empty when it has none), the
        whole of a schemacli.toml. ConfigError when it is not a table."""
        if self.path.name == PYPROJECT:
            tool = self.data.get("tool", {})  # `tool = 1` parses: a value, not the [tool] table
            table = tool.get("schemacli", {}) if isinstance(tool, dict) else tool
        else:
            table = self.data
        if not isinstance(table, dict):
            raise ConfigError(
                "the schemacli settings must be a table",
                location=Location(source=str(self.path)),
                hint="write [tool.schemacli] followed by key = value lines",
            )
        return table


@dataclass(frozen=True, eq=False)
class Table(Mapping[str, Any]):
    """One table of our settings (``registry``, say) as a mapping of its values, which knows
    where each of its keys is written. ``values`` stay out of ``repr`` (secrets live there)."""

    # not `values`: that is Mapping's method, which a field of that name would hide
    entries: Mapping[str, Any] = field(default_factory=dict, repr=False)
    file: TomlFile | None = None
    key_path: KeyPath = ()  # where the table is in ours, e.g. ("registry",)

    def __getitem__(self, key: str) -> Any:
        return self.entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def location(self, key: str) -> Location | None:
        """Where ``key`` of this table is written; None when the file is not known."""
        return None if self.file is None else self.file.settings_location(*self.key_path, key)


def read(path: Path) -> TomlFile:
    """The settings file at ``path``, read through the bounded reader and parsed.

    Raises ConfigError for a file that cannot be read (too large, not a regular file, ...) or
    is not UTF-8 (line:col of the bad byte), TomlError when it is not TOML.
    """
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
    return TomlFile(path, text, parse(text, str(path)))


# -- where a key is written -----------------------------------------------------------------


def key_positions(text: str) -> dict[KeyPath, tuple[int, int]]:
    """Every key path of the TOML ``text`` (valid TOML: it has been parsed) with the 1-based
    line:col where it is first written: in a table header, as (part of) a dotted key, or in an
    inline table. Keys inside arrays are not recorded (an array has no key path)."""
    return _Scanner(text).run()


_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_BLANK = " \t\r"


class _Scanner:
    """One left-to-right pass over valid TOML, recording where each key path starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.starts = [0] + [n + 1 for n, ch in enumerate(text) if ch == "\n"]
        self.found: dict[KeyPath, tuple[int, int]] = {}

    def run(self) -> dict[KeyPath, tuple[int, int]]:
        table: KeyPath = ()
        while self.i < len(self.text):
            self.skip(_BLANK + "\n")
            ch = self.peek()
            if ch == "#":
                self.skip_comment()
            elif ch == "[":
                self.i += 2 if self.text.startswith("[[", self.i) else 1
                table = self.key(())
                self.i = self.text.index("]", self.i) + 1
                self.skip_line()
            elif ch:
                self.key_value(table, record=True)
                self.skip_line()
        return self.found

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def skip(self, chars: Container[str]) -> None:
        while self.i < len(self.text) and self.text[self.i] in chars:
            self.i += 1

    def skip_comment(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    def skip_line(self) -> None:
        self.skip(_BLANK + "]")
        if self.peek() == "#":
            self.skip_comment()

    def key(self, prefix: KeyPath, *, record: bool = True) -> KeyPath:
        """A (dotted) key at ``self.i``; records each part under ``prefix``."""
        path = prefix
        while True:
            self.skip(_BLANK)
            start = self.i
            ch = self.peek()
            if ch in "\"'":
                end = self.string_end(start)
                part = str(parse(f"k = {self.text[start:end]}", "<key>")["k"])
                self.i = end
            else:
                self.skip(_BARE)
                part = self.text[start : self.i]
            path = (*path, part)
            if record:
                self.found.setdefault(path, self.line_column(start))
            self.skip(_BLANK)
            if self.peek() != ".":
                return path
            self.i += 1

    def key_value(self, table: KeyPath, *, record: bool) -> None:
        path = self.key(table, record=record)
        self.skip(_BLANK)
        self.i += 1  # the '='
        self.skip(_BLANK)
        self.value(path if record else None)

    def value(self, path: KeyPath | None) -> None:
        ch = self.peek()
        if ch in "\"'":
            self.i = self.string_end(self.i)
        elif ch == "{":  # an inline table: its keys have paths
            self.i += 1
            while True:
                self.skip(_BLANK + "\n")
                if self.peek() == "}":
                    self.i += 1
                    return
                if self.peek() == ",":
                    self.i += 1
                    continue
                self.key_value(path or (), record=path is not None)
        elif ch == "[":  # an array: its values have none
            self.i += 1
            while True:
                self.skip(_BLANK + "\n,")
                if self.peek() == "#":
                    self.skip_comment()
                elif self.peek() == "]":
                    self.i += 1
                    return
                else:
                    self.value(None)
        else:  # a number, a boolean, a date (which may hold a space)
            while self.i < len(self.text) and self.text[self.i] not in ",]}\n#":
                self.i += 1

    def string_end(self, start: int) -> int:
        """The index after the string (basic, literal, or either multi-line) at ``start``."""
        quote = self.text[start]
        if self.text.startswith(quote * 3, start):
            end = start + 3
            while True:
                end = self.text.index(quote * 3, end)
                if quote == '"' and _escaped(self.text, end):
                    end += 1
                    continue
                end += 3
                while self.text.startswith(quote, end):  # up to two quotes end the content
                    end += 1
                return end
        end = start + 1
        while True:
            end = self.text.index(quote, end)
            if quote == '"' and _escaped(self.text, end):
                end += 1
                continue
            return end + 1

    def line_column(self, index: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, index)
        return line, index - self.starts[line - 1] + 1


def _escaped(text: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd number of backslashes."""
    count = 0
    while index - count - 1 >= 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


# -- editing ------------------------------------------------------------------------------------


class TomlEditError(ConfigError):
    """An edit the file's layout does not allow (a key where a table must be, an inline table
    on the way), or whose result did not parse back as meant. Nothing is written."""


def set_value(text: str, keys: KeyPath, value: str) -> str:
    """``text`` with the string ``keys`` = ``value`` set, written into the tables the file
    already has (missing ones added as ``[a.b."c"]`` headers); comments and layout survive.

    Raises TomlEditError when a key on the way is not a table or is an inline table, or when
    the result would not read back as the same data with just this value set.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import InlineTable, SingleKey

    before = parse(text, "<settings>")
    if text and not text.endswith("\n"):
        text += "\n"  # the last line ends before a table is added after it
    try:
        doc = tomlkit.parse(text)
        container: Any = doc
        added = None
        for n, key in enumerate(keys[:-1]):
            if key not in container:
                added = tomlkit.table(is_super_table=n < len(keys) - 2)
                container.append(_key(key, SingleKey), added)
            container = container[key]
            if isinstance(container, InlineTable) or not isinstance(container, Mapping):
                raise TomlEditError(
                    f"{dotted(keys[: n + 1])} is an inline table or a value, not a table this "
                    "edit can add to"
                )
        container[keys[-1]] = value
        if added is not None:
            added.add(tomlkit.nl())  # a blank line before whatever table follows
        new_text = tomlkit.dumps(doc)
    except (TOMLKitError, ValueError, TypeError, AttributeError, RecursionError) as err:
        raise TomlEditError(f"cannot edit {dotted(keys)}: {err}") from None
    if new_text.endswith("\n\n") and not text.endswith("\n\n"):
        new_text = new_text[:-1]  # the blank line goes between tables, not at the end
    _check_reads_back(new_text, before, keys, value)
    return new_text


def dumps(values: Mapping[str, str]) -> str:
    """A new settings file holding ``values`` (keys and values escaped by tomlkit)."""
    import tomlkit

    return tomlkit.dumps(dict(values))


def add_table(text: str, keys: KeyPath, values: Mapping[str, str]) -> str:
    """``text`` with the table ``keys`` (which must not exist yet) holding ``values``; an
    inline parent (``tool = {...}``) gets an inline table, as the user writes it.

    Raises TomlEditError when the file's layout does not allow it; the caller checks the
    result reads back as meant.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import InlineTable

    try:
        doc = tomlkit.parse(text)
        parent: Any = doc
        for n, key in enumerate(keys[:-1]):
            if key not in parent:
                super_table = tomlkit.table(is_super_table=True)
                parent.add(key, super_table)
            parent = parent[key]
            if n == len(keys) - 2:
                break
        table = tomlkit.inline_table() if isinstance(parent, InlineTable) else tomlkit.table()
        table.update(values)
        if not isinstance(parent, InlineTable):
            table.add(tomlkit.nl())  # a blank line before whatever table follows
        parent.add(keys[-1], table)
        new_text = tomlkit.dumps(doc)
    except (TOMLKitError, ValueError, TypeError, RecursionError) as err:
        raise TomlEditError(str(err)) from None
    if new_text.endswith("\n\n") and not text.endswith("\n\n"):
        new_text = new_text[:-1]  # ... but none added at the end of the file
    return new_text


_LAYOUT_NAMES = frozenset(
    (*TOOL_TABLE, SUBJECTS, REGISTRY, *FILE_KEYS, *SUBJECT_KEYS, *REGISTRY_KEYS)
)


def _key(name: str, single_key: Any) -> Any:
    """A tomlkit key for a new table: our layout's names bare, any other (a subject's name)
    quoted as :func:`toml_key` quotes it, as pull has always written them."""
    return single_key(name) if name in _LAYOUT_NAMES else single_key(name, original=toml_key(name))


def _check_reads_back(new_text: str, before: dict[str, Any], keys: KeyPath, value: str) -> None:
    try:
        after = parse(new_text, "<edited>")
    except TomlError as err:
        raise TomlEditError(f"the edit would break the file ({err.message})") from None
    expected = before  # changed in place into what the file must now say
    table: Any = expected
    for key in keys[:-1]:
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            raise TomlEditError(f"{dotted(keys)} cannot be set in this file's layout")
    table[keys[-1]] = value
    if after != expected:
        raise TomlEditError(f"setting {dotted(keys)} would change more than that key")


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f"}
_TOML_ESCAPES["\r"] = "\\r"


def toml_key(name: str) -> str:
    """``name`` as a TOML basic string: any Unicode as itself (TOML files are UTF-8), escaping
    only what TOML requires — the quote, the backslash and control characters.

    (``json.dumps`` is not the same: it escapes characters beyond U+FFFF as surrogate pairs,
    ``"\\ud83d\\ude80"``, which TOML refuses.)
    """
    out = []
    for ch in name:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _is_bare(name: str) -> bool:
    return bool(name) and all(c in _BARE for c in name)
