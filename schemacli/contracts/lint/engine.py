"""Linting .avsc files: style and evolution rules (``contracts.lintrules``), with fixes.

``lint_paths`` loads each file with the reference-aware loader (as ``validate`` does), runs the
selected rules over the types the file defines, drops what the schema itself suppresses
(``"schemacli:ignore": ["CODE", ...]`` on any node: that node and everything under it; at the
root: the whole file) and attaches to each finding its fixes (``contracts.edits``: edits of the
file's text, each safe, unsafe or display-only).

A file in the store (``<store>/subjects/<subject>/v<N>.avsc``) is linted as a version of its
subject: at the subject's level (E003) and against the timestamp precision its earlier
versions use (T002).

With ``fix``, the applicable fixes are applied, the result re-parsed and linted again, until
nothing more applies (ruff's loop, at most ``MAX_ROUNDS``); a round whose result does not
parse is not taken. Nothing here writes a file: the caller gets the fixed text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.defaults import NoDefault, default_for
from schemacli.contracts.avro.loader import LoadedSchema, Loader, scan_names
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    Field,
    MapSchema,
    NamedSchema,
    Names,
    RecordSchema,
    Schema,
    UnionSchema,
    named_types,
)
from schemacli.contracts.evolution.check import INPUT_KINDS
from schemacli.contracts.evolution.gate import GateReport
from schemacli.contracts.evolution.levels import FORWARD, Level, SubjectLevels
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.contracts.fixes.edits import (
    Applicability,
    EditError,
    Fix,
    JsonEditor,
    TextEdit,
    apply_fixes,
)
from schemacli.contracts.jsontext.nesting import call_deep
from schemacli.contracts.jsontext.source import (
    Document,
    is_stdin,
    join_pointer,
    load_json,
    parse_text,
    source_name,
)
from schemacli.contracts.lint.ruleset import RULES, LintConfig, NameStyle, matches, rule_for
from schemacli.contracts.lint.validate import error_finding, expand_paths
from schemacli.contracts.rules.lint import lint_beside
from schemacli.errors import Location, SchemacliError

SUPPRESS = "schemacli:ignore"  # the JSON property that suppresses rules on a node
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


@dataclass(frozen=True)
class SubjectContext:
    """What a store version is linted against: its subject, level, and the first timestamp
    precision the subject's earlier versions use (``(logicalType, where)``)."""

    subject: str
    level: Level | None = None
    first_timestamp: tuple[str, str] | None = None


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
    except SchemacliError as err:
        return FileLint(source, path, (error_finding(err, source),))
    except RecursionError:
        return FileLint(source, path, (_too_deep(source),))
    original = loaded.document.text
    findings = _lint_loaded(loaded, rules, config, context)
    # the rule set beside a store version (R001-R003, docs/rules.md): not touched by fixes
    beside = tuple(lint_beside(path, rules)) if not is_stdin(path) else ()
    applied: list[Fix] = []
    if fix:
        for _ in range(MAX_ROUNDS):
            text, taken, _skipped = apply_fixes(
                loaded.document.text, (x for f in findings for x in f.fixes), unsafe=unsafe
            )
            if not taken:
                break
            try:
                again = call_deep(_reparse, loaded, text)
                findings = _lint_loaded(again, rules, config, context)
            except (SchemacliError, RecursionError, EditError):
                break  # a fix whose result does not parse is not taken
            loaded = again
            applied.extend(taken)
    return FileLint(
        source,
        path,
        tuple(findings) + beside,
        original,
        loaded.document.text,
        tuple(applied),
        loaded.document.encoding,
    )


def lint_loaded(
    loaded: LoadedSchema,
    config: LintConfig,
    *,
    context: SubjectContext | None = None,
    path: str | None = None,
) -> list[Finding]:
    """The lint findings of a schema already loaded (the gate's new versions)."""
    return _lint_loaded(loaded, config.rules_for(path), config, context)


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
    return _lint_loaded(loaded, config.rules_for(source), config, None)


def _too_deep(source: str) -> Finding:
    return Finding(
        kind=Kind.INVALID_SCHEMA,
        message="the schema is nested too deeply to process",
        location=Location(source=source),
        hint="define deep records once by name and refer to them",
    )


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
_TIMESTAMPS = {
    "timestamp-millis": "millis",
    "timestamp-micros": "micros",
    "timestamp-nanos": "nanos",
    "local-timestamp-millis": "millis",
    "local-timestamp-micros": "micros",
    "local-timestamp-nanos": "nanos",
}


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
                first = _first_timestamp(document.value, "")
                if first is not None:
                    where = f"{subject} v{match.group(1)} ({first[1] or '/'})"
                    found.append((int(match.group(1)), first[0], where))
            found.sort()
            self.firsts[subject] = found
        return found


def _first_timestamp(value: Any, pointer: str) -> tuple[str, str] | None:
    """The first timestamp logical type in a schema's JSON, in text order, and its pointer."""
    stack: list[tuple[Any, str]] = [(value, pointer)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            logical = node.get("logicalType")
            if isinstance(logical, str) and logical in _TIMESTAMPS:
                return logical, at
            stack.extend(reversed([(v, join_pointer(at, k)) for k, v in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(v, f"{at}/{i}") for i, v in enumerate(node)]))
    return None


# -- the rules ------------------------------------------------------------------------------------


@dataclass
class _Run:
    """One lint of one loaded schema: the rules on, the editor for fixes, the findings."""

    loaded: LoadedSchema
    rules: frozenset[Kind]
    config: LintConfig
    context: SubjectContext | None
    editor: JsonEditor = field(init=False)
    findings: list[Finding] = field(default_factory=list)
    first_timestamp: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        self.editor = JsonEditor(self.loaded.document)
        if self.context is not None:
            self.first_timestamp = self.context.first_timestamp

    def on(self, kind: Kind) -> bool:
        return kind in self.rules

    def report(
        self,
        kind: Kind,
        pointer: str,
        values: dict[str, Any],
        fixes: Callable[[], Iterable[Fix]] | None = None,
    ) -> None:
        made: tuple[Fix, ...] = ()
        if fixes is not None:
            try:
                made = tuple(fixes())
            except EditError:
                made = ()  # the text does not hold what the model says (cannot happen)
        subject = self.context.subject if self.context is not None else None
        self.findings.append(
            Finding(
                kind=kind,
                message=kind.message(**values),
                location=self.loaded.location(pointer),
                hint=kind.hint_for(**values),
                severity=kind.severity,
                subject=subject,
                fixes=made,
            )
        )

    def edit(self) -> JsonEditor:
        return self.editor


def _lint_loaded(
    loaded: LoadedSchema,
    rules: frozenset[Kind],
    config: LintConfig,
    context: SubjectContext | None,
) -> list[Finding]:
    run = _Run(loaded, rules, config, context)
    if rules:
        own = {id(n) for n in loaded.defines}
        imported = {id(n) for n in loaded.names.types.values()} - own
        _walk(run, loaded.schema, imported)
    found = _suppressed(run.findings, loaded.document)
    return sorted(found, key=lambda f: (f.location.line or 0, f.location.column or 0))


def _walk(run: _Run, root: Schema, imported: set[int]) -> None:
    seen: set[int] = set()
    stack: list[Schema] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in imported:
            continue
        seen.add(id(node))
        if isinstance(node, NamedSchema):
            _named(run, node)
        if isinstance(node, RecordSchema):
            _record(run, node)
            stack.extend(reversed([f.type for f in node.fields]))
        elif isinstance(node, ArraySchema):
            stack.append(node.items)
        elif isinstance(node, MapSchema):
            stack.append(node.values)
        elif isinstance(node, UnionSchema):
            _union(run, node)
            stack.extend(reversed(node.types))
        _logical(run, node)


# -- naming ---------------------------------------------------------------------------------------

_STYLE_PATTERNS = {
    NameStyle.PASCAL: re.compile(r"[A-Z][a-zA-Z0-9]*"),
    NameStyle.CAMEL: re.compile(r"[a-z][a-zA-Z0-9]*"),
    NameStyle.SNAKE: re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*"),
    NameStyle.UPPER_SNAKE: re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*"),
}


def fits(name: str, style: NameStyle) -> bool:
    """Whether ``name`` is written in ``style`` (``any`` / ``consistent``: always)."""
    pattern = _STYLE_PATTERNS.get(style)
    return pattern is None or pattern.fullmatch(name) is not None


def words(name: str) -> list[str]:
    """``"vendorID_2x"`` -> ``["vendor", "id", "2x"]``: a name's words, lower case."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def restyle(name: str, style: NameStyle) -> str:
    """``name`` written in ``style`` (unchanged for ``any`` / ``consistent``)."""
    parts = words(name)
    if not parts or style not in _STYLE_PATTERNS:
        return name
    if style is NameStyle.SNAKE:
        out = "_".join(parts)
    elif style is NameStyle.UPPER_SNAKE:
        out = "_".join(parts).upper()
    elif style is NameStyle.PASCAL:
        out = "".join(p.capitalize() for p in parts)
    else:
        out = parts[0] + "".join(p.capitalize() for p in parts[1:])
    return out if out[0].isalpha() else "_" + out if style is NameStyle.SNAKE else "X" + out


def _majority(names: Sequence[str]) -> NameStyle | None:
    """The style most of ``names`` show unambiguously (snake_case or camelCase), or None.
    A one-word lower-case name (``id``) is both and counts for neither; a tie goes to the
    style of the first name that shows one."""
    votes: dict[NameStyle, int] = {}
    first: NameStyle | None = None
    for name in names:
        snake, camel = fits(name, NameStyle.SNAKE), fits(name, NameStyle.CAMEL)
        if snake != camel:
            style = NameStyle.SNAKE if snake else NameStyle.CAMEL
            votes[style] = votes.get(style, 0) + 1
            first = first or style
    if not votes:
        return None
    best = max(votes.values())
    leaders = [s for s, n in votes.items() if n == best]
    return first if len(leaders) > 1 else leaders[0]


_AVRO_NAMES = frozenset(
    "null boolean int long float double bytes string record enum array map fixed error "
    "union".split()
)
_KEYWORDS = {
    "Java": frozenset(
        "abstract assert boolean break byte case catch char class const continue default do "
        "double else enum extends final finally float for goto if implements import instanceof "
        "int interface long native new package private protected public return short static "
        "strictfp super switch synchronized this throw throws transient try void volatile "
        "while".split()
    ),
    "Python": frozenset(
        "False None True and as assert async await break class continue def del elif else "
        "except finally for from global if import in is lambda nonlocal not or pass raise "
        "return try while with yield".split()
    ),
    "SQL": frozenset(
        "select from where group order by having join union table insert update delete into "
        "values create drop alter limit offset".split()
    ),
}


def _reserved(name: str) -> list[str]:
    where = ["Avro"] if name in _AVRO_NAMES else []
    where += [
        lang
        for lang, words_ in _KEYWORDS.items()
        if name in words_ or (lang == "SQL" and name.lower() in words_)
    ]
    return where


def _named(run: _Run, node: NamedSchema) -> None:
    what = node.type if not isinstance(node, RecordSchema) or not node.is_error else "error"
    name_at = node.pointer + "/name"
    style = run.config.type_style
    if run.on(Kind.N001) and not fits(node.simple_name, style):
        suggestion = restyle(node.simple_name, style)
        run.report(
            Kind.N001,
            name_at,
            {
                "type": what,
                "name": node.simple_name,
                "style": style.value,
                "suggestion": suggestion,
            },
            lambda: _rename_type_fixes(run, node, suggestion),
        )
    if run.on(Kind.N004) and not node.namespace:
        run.report(
            Kind.N004,
            name_at,
            {"type": what, "name": node.simple_name, "lower": node.simple_name.lower()},
            lambda: [Fix(f'Add a "namespace" to {what} {node.simple_name}', Applicability.DISPLAY)],
        )
    if run.on(Kind.N006):
        where = _reserved(node.simple_name)
        if where:
            run.report(
                Kind.N006,
                name_at,
                {"what": f"{what} name", "name": node.simple_name, "where": ", ".join(where)},
            )
    if run.on(Kind.D001) and not node.doc:
        run.report(Kind.D001, name_at, {"type": what, "name": node.simple_name})
    if isinstance(node, EnumSchema):
        _enum(run, node)


def _rename_type_fixes(run: _Run, node: NamedSchema, new: str) -> list[Fix]:
    """Rename a named type, every use of it in the file, and keep the old name as an alias."""
    editor = run.edit()
    old_full = node.fullname
    new_full = f"{node.namespace}.{new}" if node.namespace else new
    value = run.loaded.value
    written = _value_at(value, node.pointer + "/name")
    edits = [editor.replace(node.pointer + "/name", new_full if "." in str(written) else new)]
    _, uses = scan_names(value)
    for use in uses:
        if old_full not in use.candidates or not _resolves_to(run, use.candidates, old_full):
            continue
        at = use.pointer
        if isinstance(_value_at(value, at), dict):
            at += "/type"
        used = _value_at(value, at)
        edits.append(editor.replace(at, new_full if "." in str(used) else new))
    edits.append(_add_alias(run, node.pointer, old_full))
    return [
        Fix(
            f"Rename {node.type} {node.simple_name} to {new} (old name kept as an alias)",
            Applicability.UNSAFE,
            tuple(edits),
        )
    ]


def _resolves_to(run: _Run, candidates: tuple[str, ...], full: str) -> bool:
    """Java resolves a use to its first candidate that is defined."""
    for candidate in candidates:
        if candidate in run.loaded.names:
            return candidate == full
    return False


def _add_alias(run: _Run, pointer: str, alias: str) -> TextEdit:
    editor = run.edit()
    aliases = _value_at(run.loaded.value, pointer + "/aliases")
    if isinstance(aliases, list):
        return editor.insert_element(pointer + "/aliases", len(aliases), alias)
    return editor.set_member(pointer, "aliases", [alias])


def _value_at(value: Any, pointer: str) -> Any:
    for raw in pointer[1:].split("/") if pointer else ():
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list):
            value = value[int(token)]
        elif isinstance(value, dict):
            value = value.get(token)
        else:
            return None
    return value


def _enum(run: _Run, node: EnumSchema) -> None:
    style = run.config.symbol_style
    if run.on(Kind.N003):
        for index, symbol in enumerate(node.symbols):
            if not fits(symbol, style):
                run.report(
                    Kind.N003,
                    f"{node.pointer}/symbols/{index}",
                    {"name": symbol, "enum": node.simple_name, "style": style.value},
                )
    if run.on(Kind.E002) and node.default is None:
        run.report(
            Kind.E002,
            node.pointer + "/name",
            {"name": node.simple_name},
            lambda: [_enum_default_fix(run, node)],
        )


_FALLBACK_SYMBOLS = ("UNKNOWN", "UNSPECIFIED", "UNDEFINED", "OTHER", "NONE", "DEFAULT")


def _enum_default_fix(run: _Run, node: EnumSchema) -> Fix:
    by_fold = {s.upper(): s for s in node.symbols}
    for candidate in _FALLBACK_SYMBOLS:
        if candidate in by_fold:
            symbol = by_fold[candidate]
            edit = run.edit().set_member(node.pointer, "default", symbol)
            return Fix(
                f'Add "default": "{symbol}" to enum {node.simple_name}', Applicability.SAFE, (edit,)
            )
    return Fix(
        f'Add a fallback symbol (such as "UNKNOWN") to enum {node.simple_name} and make it '
        'the "default" (a new symbol is a change of type: check it with schemacli check)',
        Applicability.DISPLAY,
    )


def _record(run: _Run, node: RecordSchema) -> None:
    fields = node.fields
    style = run.config.field_style
    if style is NameStyle.CONSISTENT:
        majority = _majority([f.name for f in fields])
        style = majority if majority is not None else NameStyle.ANY
    by_fold: dict[str, Field] = {}
    names = {f.name: f for f in fields}
    aliases: dict[str, Field] = {}
    for fld in fields:
        for alias in fld.aliases:
            aliases.setdefault(alias, fld)
    for fld in fields:
        name_at = fld.pointer + "/name"
        if run.on(Kind.N002) and not fits(fld.name, style):
            suggestion = restyle(fld.name, style)
            if suggestion not in names:
                run.report(
                    Kind.N002,
                    name_at,
                    {"name": fld.name, "style": style.value, "suggestion": suggestion},
                    partial(_rename_field_fixes, run, fld, suggestion),
                )
        folded = fld.name.lower()
        if run.on(Kind.N005) and folded in by_fold:
            other = by_fold[folded]
            run.report(
                Kind.N005,
                name_at,
                {"name": fld.name, "other": other.name, "record": node.simple_name},
            )
        by_fold.setdefault(folded, fld)
        if run.on(Kind.N006):
            where = _reserved(fld.name)
            if where:
                run.report(
                    Kind.N006,
                    name_at,
                    {"what": "field name", "name": fld.name, "where": ", ".join(where)},
                )
        if run.on(Kind.N007):
            for index, alias in enumerate(fld.aliases):
                shadowed = names.get(alias)
                other_alias = aliases.get(alias)
                if shadowed is not None and shadowed is not fld:
                    what = f"the name of field {alias!r}"
                elif other_alias is not None and other_alias is not fld:
                    what = f"an alias of field {other_alias.name!r}"
                else:
                    continue
                run.report(
                    Kind.N007,
                    f"{fld.pointer}/aliases/{index}",
                    {"alias": alias, "name": fld.name, "other": what, "record": node.simple_name},
                    partial(_remove_alias_fix, run, fld, index),
                )
        if run.on(Kind.D002) and not fld.doc:
            run.report(Kind.D002, name_at, {"name": fld.name, "record": node.simple_name})
        _field_defaults(run, fld)


def _rename_field_fixes(run: _Run, fld: Field, new: str) -> list[Fix]:
    editor = run.edit()
    edits = (editor.replace(fld.pointer + "/name", new), _add_alias(run, fld.pointer, fld.name))
    return [
        Fix(
            f"Rename field {fld.name} to {new} (old name kept as an alias)",
            Applicability.UNSAFE,
            edits,
        )
    ]


def _remove_alias_fix(run: _Run, fld: Field, index: int) -> list[Fix]:
    editor = run.edit()
    alias = fld.aliases[index]
    if len(fld.aliases) == 1:
        edit = editor.remove_member(fld.pointer, "aliases")
    else:
        edit = editor.remove_element(fld.pointer + "/aliases", index)
    return [Fix(f"Remove alias {alias!r} from field {fld.name}", Applicability.UNSAFE, (edit,))]


def _field_defaults(run: _Run, fld: Field) -> None:
    kind = fld.type
    if run.on(Kind.E001) and isinstance(kind, UnionSchema) and not fld.has_default:
        nulls = [i for i, t in enumerate(kind.types) if t.type == "null"]
        if nulls:
            run.report(
                Kind.E001,
                fld.pointer,
                {"name": fld.name, "type": _union_text(kind), "problem": "has no default"},
                lambda: [_null_default_fix(run, fld, kind, nulls[0])],
            )
            return
    level = run.context.level if run.context is not None else None
    if (
        run.on(Kind.E003)
        and level is not None
        and FORWARD in level.directions
        and not fld.has_default
    ):
        run.report(
            Kind.E003,
            fld.pointer,
            {"name": fld.name, "level": level.value},
            lambda: _zero_default_fixes(run, fld),
        )


def _null_default_fix(run: _Run, fld: Field, union: UnionSchema, null_at: int) -> Fix:
    editor = run.edit()
    add = editor.set_member(fld.pointer, "default", None)
    if null_at == 0:
        return Fix(f"Add \"default\": null to field '{fld.name}'", Applicability.SAFE, (add,))
    where = union.pointer
    move = (editor.remove_element(where, null_at), editor.insert_element(where, 0, "null"))
    return Fix(
        f'Move "null" first in the type of field \'{fld.name}\' and add "default": null '
        "(a change of type: check it with schemacli check)",
        Applicability.UNSAFE,
        (*move, add),
    )


def _zero(schema: Schema) -> tuple[bool, Any]:
    """A default of ``schema``'s type that says "nothing": (found, value). A record's is not
    offered (a whole record of zeros is rarely what its author means)."""
    while isinstance(schema, UnionSchema) and schema.types:
        schema = schema.types[0]
    if isinstance(schema, (RecordSchema, UnionSchema)):
        return False, None
    try:
        return True, default_for(schema)
    except NoDefault:
        return False, None


def _zero_default_fixes(run: _Run, fld: Field) -> list[Fix]:
    found, value = _zero(fld.type)
    if not found:
        return [
            Fix(
                f"Give field '{fld.name}' a default (a record needs one written out)",
                Applicability.DISPLAY,
            )
        ]
    edit = run.edit().set_member(fld.pointer, "default", value)
    shown = _json(value)
    return [
        Fix(
            f"Add \"default\": {shown} to field '{fld.name}' (readers of old data see it)",
            Applicability.UNSAFE,
            (edit,),
        )
    ]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _union_text(union: UnionSchema) -> str:
    return "[" + ", ".join(_json(t.fullname) for t in union.types) + "]"


def _union(run: _Run, node: UnionSchema) -> None:
    if not run.on(Kind.S001):
        return
    branches = [t for t in node.types if t.type != "null"]
    if len(branches) > 1:
        run.report(Kind.S001, node.pointer, {"type": _union_text(node), "count": len(branches)})


def _logical(run: _Run, node: Schema) -> None:
    logical = node.logical_type
    if logical is None:
        return
    if logical == "decimal" and run.on(Kind.T001) and node.type in ("bytes", "fixed"):
        problem = _decimal_problem(node)
        if problem is not None:
            run.report(Kind.T001, node.pointer, {"problem": problem})
    if logical in _TIMESTAMPS and run.on(Kind.T002):
        first = run.first_timestamp
        if first is None:
            run.first_timestamp = (logical, node.pointer or "/")
        elif _TIMESTAMPS[first[0]] != _TIMESTAMPS[logical]:
            run.report(
                Kind.T002,
                node.pointer,
                {
                    "name": f"this {node.type}",
                    "logical": logical,
                    "first": first[0],
                    "where": first[1],
                },
            )


def _decimal_problem(node: Schema) -> str | None:
    precision = node.props.get("precision")
    scale = node.props.get("scale", 0)
    if precision is None:
        return "without a precision"
    if not isinstance(precision, int) or isinstance(precision, bool) or precision < 1:
        return f"precision {precision!r} is not a whole number of 1 or more"
    if not isinstance(scale, int) or isinstance(scale, bool) or scale < 0:
        return f"scale {scale!r} is not a whole number of 0 or more"
    if scale > precision:
        return f"scale {scale} is greater than its precision {precision}"
    return None


# -- suppression -------------------------------------------------------------------------------


def _suppressions(value: Any) -> Iterator[tuple[str, Any]]:
    """(pointer of the node, its ``schemacli:ignore`` value) for every node that has one."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            if SUPPRESS in node:
                yield at, node[SUPPRESS]
            stack.extend((v, join_pointer(at, k)) for k, v in node.items() if k != SUPPRESS)
        elif isinstance(node, list):
            stack.extend((v, f"{at}/{i}") for i, v in enumerate(node))


def _suppressed(findings: list[Finding], document: Document) -> list[Finding]:
    """``findings`` minus those a ``schemacli:ignore`` at or above them names; a bad
    ``schemacli:ignore`` (not a list of rule codes) is itself a finding."""
    if SUPPRESS not in document.text:
        return findings
    scopes: list[tuple[str, tuple[str, ...]]] = []
    problems: list[Finding] = []
    for pointer, given in _suppressions(document.value):
        at = join_pointer(pointer, SUPPRESS)
        if not isinstance(given, list) or not all(isinstance(s, str) for s in given):
            problems.append(_bad_suppression(document, at, "is not a list of rule codes"))
            continue
        unknown = [s for s in given if not any(matches(s, r) for r in RULES)]
        if unknown:
            problems.append(
                _bad_suppression(document, at, f"names no rule: {', '.join(map(repr, unknown))}")
            )
        scopes.append((pointer, tuple(given)))
    kept = []
    for finding in findings:
        rule = rule_for(finding.kind)
        where = finding.location.pointer or ""
        if rule is not None and any(
            (where == scope or where.startswith(scope + "/") or scope == "")
            and any(matches(s, rule) for s in selectors)
            for scope, selectors in scopes
        ):
            continue
        kept.append(finding)
    return kept + problems


def _bad_suppression(document: Document, pointer: str, problem: str) -> Finding:
    return Finding(
        kind=Kind.INVALID_INPUT,
        message=f'"{SUPPRESS}" {problem}',
        location=document.location(pointer),
        hint=f'write "{SUPPRESS}": ["E001", "N"] (codes, prefixes or categories; see '
        "schemacli lint --list-rules)",
        severity=Severity.WARNING,
    )


# -- the gate ----------------------------------------------------------------------------------


def lint_gate(
    report: GateReport,
    version_path: Callable[[str, int], Path],
    config: LintConfig,
    *,
    store: Path,
    levels: SubjectLevels,
    relative_to: Path | None = None,
) -> GateReport:
    """``report`` with the lint findings of every version the gate checked added to its
    subject's row (``gate = true`` in ``[tool.schemacli.lint]``): a lint error fails the row
    as an incompatibility does. ``version_path(subject, n)``: the file of version ``n``."""
    rows = []
    for row in report.subjects:
        if not row.checked or any(f.kind in INPUT_KINDS for f in row.findings):
            rows.append(row)
            continue
        paths = [version_path(row.subject, n) for n in row.checked]
        linted = lint_paths(paths, config, store=store, levels=levels, relative_to=relative_to)
        found = tuple(replace(f, subject=row.subject) for f in linted.findings)
        rows.append(replace(row, findings=row.findings + found))
    return replace(report, subjects=tuple(rows))
