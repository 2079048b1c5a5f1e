"""Linting .avsc files: the rules of ``contracts.lint.rules``, with their fixes.

``lint_paths`` loads each file with the reference-aware loader (as ``validate`` does), runs the
selected rules over the types the file defines (``walk.check``), drops what the schema itself
suppresses (``suppress``) and keeps with each finding its fixes (``contracts.fixes.edits``:
edits of the file's text, each safe, unsafe or display-only); findings come out in the order of
the text.

A file in the store (``<store>/subjects/<subject>/v<N>.avsc``) is linted as a version of its
subject: at the subject's level (E003) and against the timestamp precision its earlier
versions use (T002).

With ``fix``, the applicable fixes are applied, the result re-parsed and linted again, until
nothing more applies (ruff's loop, at most ``MAX_ROUNDS``); a fix whose result would not parse
is dropped with the reason (``FileLint.dropped``) and the others still apply. Nothing here writes
a file: the caller gets the fixed text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from schemacli.contracts.avro.loader import LoadedSchema, Loader
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import Names, named_types
from schemacli.contracts.evolution.levels import SubjectLevels
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.fixes.edits import Dropped, Fix, apply_checked
from schemacli.contracts.jsontext.nesting import call_deep
from schemacli.contracts.jsontext.source import is_stdin, load_json, parse_text, source_name
from schemacli.contracts.lint.files import error_finding, expand_paths, too_deep
from schemacli.contracts.lint.rule import SubjectContext
from schemacli.contracts.lint.rules.logical import first_timestamp
from schemacli.contracts.lint.ruleset import LintConfig
from schemacli.contracts.lint.walk import check
from schemacli.errors import SchemacliError
from schemacli.kinds import Kind

MAX_ROUNDS = 10  # fix rounds per file (ruff stops at 100; our fixes converge in two)


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileLint:
    """One file: its findings (after fixing, what remains), and with fixing, the text before and
    after (``fixed`` is every fix applied, over all rounds)."""

    source: str
    path: Path | None
    findings: tuple[Finding, ...] = ()
    original: str | None = None
    text: str | None = None  # the fixed text; None when the file did not load
    fixed: tuple[Fix, ...] = ()
    encoding: str = "UTF-8"
    dropped: tuple[Dropped, ...] = ()  # fixes not applied: their result would not parse

    @property
    def changed(self) -> bool:
        return self.text is not None and self.original is not None and self.text != self.original

    @property
    def loaded(self) -> bool:
        return self.text is not None


@dataclass(frozen=True)
class LintReport:
    files: tuple[FileLint, ...]
    path_problems: tuple[Finding, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.path_problems + tuple(f for r in self.files for f in r.findings)

    @property
    def invalid(self) -> bool:
        """A path or file could not be read or parsed (exit 2)."""
        return bool(self.path_problems) or any(not r.loaded for r in self.files)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def fixed(self) -> int:
        return sum(len(r.fixed) for r in self.files)


# -- entry points -------------------------------------------------------------------------------


def lint_paths(
    paths: Iterable[Path | str],
    config: LintConfig,
    *,
    store: Path | None = None,
    levels: SubjectLevels | None = None,
    fix: bool = False,
    unsafe: bool = False,
    search_paths: Sequence[Path] = (),
    relative_to: Path | None = None,
) -> LintReport:
    """Lint files and folders (``*.avsc`` recursively; ``-``: standard input). Never raises for
    bad input: a file that cannot be read or parsed is a finding (``LintReport.invalid``).

    ``store`` and ``levels``: files under ``<store>/subjects/`` are linted as their subject's
    versions. ``relative_to``: per-file-ignores globs match paths relative to it (the config
    file's folder)."""
    given = [Path(p) for p in paths]
    files, problems = expand_paths(given)
    loader = Loader(search_paths=search_paths, roots=[p for p in given if not is_stdin(p)])
    subjects = _StoreSubjects(store, levels)
    results = []
    for path in files:
        context = subjects.context(path)
        results.append(
            lint_file(
                path,
                config,
                loader=loader,
                context=context,
                fix=fix,
                unsafe=unsafe,
                shown_path=_shown(path, relative_to),
            )
        )
    return LintReport(tuple(results), tuple(problems))


def lint_file(
    path: Path,
    config: LintConfig,
    *,
    loader: Loader | None = None,
    context: SubjectContext | None = None,
    fix: bool = False,
    unsafe: bool = False,
    shown_path: str | None = None,
) -> FileLint:
    """Lint one file (and, with ``fix``, fix it in memory); see ``lint_paths``."""
    loader = loader or Loader()
    source = source_name(path)
    rules = config.rules_for(None if is_stdin(path) else (shown_path or path.as_posix()))
    try:
        loaded = call_deep(loader.load, path)
        findings = call_deep(_lint, loaded, rules, config, context)
    except SchemacliError as err:
        return FileLint(source, path, (error_finding(err, source),))
    except RecursionError:
        return FileLint(source, path, (too_deep(source),))
    original = loaded.document.text
    applied: list[Fix] = []
    dropped: dict[tuple[str, str], Dropped] = {}
    if fix:
        for _ in range(MAX_ROUNDS):
            # a fix whose result does not parse is dropped (and said why), the others applied
            text, taken, refused = apply_checked(
                loaded.document.text,
                (x for f in findings for x in f.fixes),
                partial(_refusal, loaded),
                unsafe=unsafe,
            )
            for one in refused:
                dropped.setdefault((one.fix.title, one.reason), one)
            if not taken:
                break
            loaded = call_deep(_reparse, loaded, text)
            findings = call_deep(_lint, loaded, rules, config, context)
            applied.extend(taken)
    return FileLint(
        source,
        path,
        tuple(findings),
        original,
        loaded.document.text,
        tuple(applied),
        loaded.document.encoding,
        tuple(dropped.values()),
    )


def _refusal(loaded: LoadedSchema, text: str) -> str | None:
    """Why ``text`` cannot replace ``loaded``'s (None when it parses as a schema, with no key
    repeated in an object unless ``loaded`` repeated one)."""
    try:
        again = call_deep(_reparse, loaded, text)
    except SchemacliError as err:
        return f"the result would not parse: {err.message}"
    except RecursionError:
        return "the result would nest too deeply"
    if again.document.has_duplicates and not loaded.document.has_duplicates:
        return "it adds a member another fix adds too (applied on the next round)"
    return None


def lint_text(text: str, config: LintConfig, *, source: str = "<input>") -> list[Finding]:
    """The lint findings of one self-contained schema's text (tests and benchmarks)."""
    document = parse_text(text, source)
    schema = parse_schema(document.value)
    loaded = LoadedSchema(
        source=source,
        document=document,
        schema=schema,
        defines=tuple(named_types(schema)),
        names=Names({n.fullname: n for n in named_types(schema)}),
    )
    return _lint(loaded, config.rules_for(source), config, None)


def _lint(
    loaded: LoadedSchema,
    rules: frozenset[Kind],
    config: LintConfig,
    context: SubjectContext | None,
) -> list[Finding]:
    found = check(loaded, rules, config.styles, context)
    return sorted(found, key=lambda f: (f.location.line or 0, f.location.column or 0))


def _shown(path: Path, base: Path | None) -> str:
    if base is None or is_stdin(path):
        return path.as_posix()
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        return path.as_posix()


def _reparse(loaded: LoadedSchema, text: str) -> LoadedSchema:
    """``loaded`` with ``text`` as its new text: the same named types from other files."""
    document = replace(parse_text(text, loaded.source), encoding=loaded.document.encoding)
    own_ids = {id(n) for n in loaded.defines}
    imported = {k: v for k, v in loaded.names.types.items() if id(v) not in own_ids}
    names = Names(dict(imported))
    schema = parse_schema(document.value, names=names)
    own = tuple(n for n in named_types(schema) if names.get(n.fullname) is not n)
    visible = dict(imported)
    for named in own:
        visible.setdefault(named.fullname, named)
    return replace(loaded, document=document, schema=schema, defines=own, names=Names(visible))


# -- the store: which subject a file is a version of -------------------------------------------

_VERSION = re.compile(r"v([1-9][0-9]*)\.avsc")


class _StoreSubjects:
    """Files under ``<store>/subjects/<subject>/`` and their subjects' contexts (each once)."""

    def __init__(self, store: Path | None, levels: SubjectLevels | None) -> None:
        self.base = (store / "subjects").resolve() if store is not None else None
        self.levels = levels
        self.firsts: dict[str, list[tuple[int, str, str]]] = {}

    def context(self, path: Path) -> SubjectContext | None:
        if self.base is None or is_stdin(path):
            return None
        try:
            full = path.resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            return None
        if full.parent.parent != self.base:
            return None
        match = _VERSION.fullmatch(full.name)
        subject = full.parent.name
        level = self.levels.level_for(subject) if self.levels is not None else None
        if match is None:
            return SubjectContext(subject, level)
        version = int(match.group(1))
        earlier = [t for t in self._timestamps(subject, full.parent) if t[0] < version]
        first = (earlier[0][1], earlier[0][2]) if earlier else None
        return SubjectContext(subject, level, first)

    def _timestamps(self, subject: str, folder: Path) -> list[tuple[int, str, str]]:
        """(version, logicalType, where) of the first timestamp of each version, oldest first."""
        found = self.firsts.get(subject)
        if found is None:
            found = []
            try:
                names = sorted(p.name for p in folder.iterdir())
            except OSError:
                names = []
            for name in names:
                match = _VERSION.fullmatch(name)
                if match is None:
                    continue
                try:
                    document = load_json(folder / name)
                except SchemacliError:
                    continue  # it gets its own error when it is linted
                first = first_timestamp(document.value)
                if first is not None:
                    where = f"{subject} v{match.group(1)} ({first[1] or '/'})"
                    found.append((int(match.group(1)), first[0], where))
            found.sort()
            self.firsts[subject] = found
        return found
