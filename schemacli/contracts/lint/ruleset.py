"""The lint rules as data: one row per rule, and which rules a file gets.

Each :class:`Rule` names its finding kind (the catalogue, ``contracts.kinds``: code, severity,
message template, hint, docs anchor), a kebab-case name, a category, whether it is on by
default, whether it can fix itself (safe, unsafe or not at all) and whether its fix may change
the schema's Parsing Canonical Form. ``docs/lint.md`` documents every row, and argues each
from real schemas.

Selection follows ruff: ``select`` replaces the default set, ``ignore`` removes from it; a
selector is ``ALL``, a category name (``naming``), or a code or code prefix (``N``, ``N00``,
``N001``). ``per-file-ignores`` maps a glob to selectors ignored in matching files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase

from schemacli.kinds import Kind

__all__ = [
    "RULES",
    "Category",
    "Fixable",
    "LintConfig",
    "NameStyle",
    "Rule",
    "UnknownSelector",
    "rule_for",
    "select_rules",
]


class Category(StrEnum):
    NAMING = "naming"
    DOCS = "docs"
    EVOLUTION = "evolution"
    TYPES = "types"
    SPARK = "spark"
    RULES = "rules"  # the data-quality rule set beside a version (v<N>.contract.json)


class Fixable(StrEnum):
    """How a rule's fix may be applied: ruff's applicability, or no fix at all."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    SOMETIMES = "sometimes"  # safe in the common case; unsafe or advice only otherwise
    NONE = "none"


@dataclass(frozen=True)
class Rule:
    kind: Kind
    name: str
    category: Category
    default: bool
    fixable: Fixable
    summary: str  # one line, for --list-rules
    # The fix may change the Parsing Canonical Form (a rename, a union reordered): such fixes
    # are unsafe, and the lint tests prove every other fix leaves the form as it was.
    changes_canonical_form: bool = False

    @property
    def code(self) -> str:
        return self.kind.value

    @property
    def severity(self) -> str:
        return self.kind.severity.value


N, D, E, T, S, R = (
    Category.NAMING,
    Category.DOCS,
    Category.EVOLUTION,
    Category.TYPES,
    Category.SPARK,
    Category.RULES,
)

RULES: tuple[Rule, ...] = (
    Rule(Kind.N001, "record-name-style", N, True, Fixable.UNSAFE,
         "record, enum and fixed names in the configured style (PascalCase)", True),
    Rule(Kind.N002, "field-name-style", N, True, Fixable.UNSAFE,
         "field names in the configured style (consistent: the record's majority)", True),
    Rule(Kind.N003, "enum-symbol-style", N, True, Fixable.NONE,
         "enum symbols in the configured style (UPPER_SNAKE_CASE)"),
    Rule(Kind.N004, "missing-namespace", N, True, Fixable.NONE,
         "every named type has a namespace (its own or its parent's)"),
    Rule(Kind.N005, "case-insensitive-duplicate", N, True, Fixable.NONE,
         "no two fields of a record differ only by case"),
    Rule(Kind.N006, "reserved-name", N, True, Fixable.NONE,
         "no Avro type name or Java/Python/SQL keyword as a name"),
    Rule(Kind.N007, "alias-shadows-field", N, True, Fixable.UNSAFE,
         "a field alias is not another field's name or alias"),
    Rule(Kind.D001, "record-without-doc", D, False, Fixable.NONE,
         "every record, enum and fixed has a doc"),
    Rule(Kind.D002, "field-without-doc", D, False, Fixable.NONE, "every field has a doc"),
    Rule(Kind.E001, "optional-field-without-null-default", E, True, Fixable.SOMETIMES,
         'an optional field is ["null", T] with "default": null', True),
    Rule(Kind.E002, "enum-without-default", E, True, Fixable.SOMETIMES,
         "every enum has a default symbol for symbols added later"),
    Rule(Kind.E003, "field-without-default-at-level", E, True, Fixable.UNSAFE,
         "at FORWARD or FULL levels, every field has a default (or it can never be removed)"),
    Rule(Kind.T001, "invalid-decimal", T, True, Fixable.NONE,
         "a decimal has a precision of 1 or more and a scale from 0 to the precision"),
    Rule(Kind.T002, "mixed-timestamp-precision", T, True, Fixable.NONE,
         "one timestamp precision (millis or micros) across a file and its subject"),
    Rule(Kind.S001, "positional-union", S, True, Fixable.NONE,
         "a union has at most one non-null branch (Spark names the others by position)"),
    Rule(Kind.R001, "rule-without-name", R, True, Fixable.NONE,
         "every rule of a version's rule set has a name"),
    Rule(Kind.R002, "write-rule-without-on-failure", R, True, Fixable.NONE,
         "a rule that runs on WRITE says what a failing record does (onFailure)"),
    Rule(Kind.R003, "always-true-expression", R, True, Fixable.NONE,
         "a CONDITION can fail for some record"),
)  # fmt: skip

_BY_KIND = {rule.kind: rule for rule in RULES}

# Where the docs are read on the web (SARIF's helpUri must be an absolute URI).
DOCS_BASE = "https://github.com/schemacli/schemacli/blob/main/"


def docs_url(rule: Rule) -> str:
    """The rule's section of docs/lint.md on the web."""
    return DOCS_BASE + rule.kind.anchor


def rule_for(kind: Kind) -> Rule | None:
    """The lint rule reporting ``kind`` (None for a kind no lint rule reports)."""
    return _BY_KIND.get(kind)


def find_rule(code: str) -> Rule | None:
    """The rule with this code or name (case-insensitive), or None."""
    wanted = code.strip()
    for rule in RULES:
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    return None


class UnknownSelector(ValueError):
    """A selector that names no rule; the caller places it (a flag, a line of the config)."""

    def __init__(self, selector: str) -> None:
        self.selector = selector
        super().__init__(
            f"{selector!r} selects no rule; use ALL, a category "
            f"({', '.join(c.value for c in Category)}), or a code or its prefix "
            f"({', '.join(r.code for r in RULES[:3])}, ...; see schemacli lint --list-rules)"
        )


def matches(selector: str, rule: Rule) -> bool:
    """Whether ``selector`` (ALL, a category, a rule's name, a code or a code prefix) names
    ``rule``."""
    text = selector.strip()
    if text.upper() == "ALL":
        return True
    if text.lower() in (rule.category.value, rule.name):
        return True
    return bool(text) and rule.code.startswith(text.upper())


def check_selectors(selectors: Iterable[str]) -> None:
    """Raise UnknownSelector for the first selector that names no rule."""
    for selector in selectors:
        if not any(matches(selector, rule) for rule in RULES):
            raise UnknownSelector(selector)


def select_rules(select: Sequence[str] | None, ignore: Sequence[str] = ()) -> frozenset[Kind]:
    """The rules ``select`` (None: the default ones) names, minus those ``ignore`` names."""
    chosen = [
        rule
        for rule in RULES
        if (rule.default if select is None else any(matches(s, rule) for s in select))
    ]
    return frozenset(r.kind for r in chosen if not any(matches(s, r) for s in ignore))


class NameStyle(StrEnum):
    """How names should look. ``consistent``: as most names beside it look; ``any``: no rule."""

    PASCAL = "PascalCase"
    CAMEL = "camelCase"
    SNAKE = "snake_case"
    UPPER_SNAKE = "UPPER_SNAKE_CASE"
    CONSISTENT = "consistent"
    ANY = "any"

    @classmethod
    def parse(cls, text: str) -> NameStyle:
        """A style by its name, case and ``-``/``_`` insensitively; ValueError if unknown."""
        folded = text.strip().lower().replace("-", "_")
        for style in cls:
            if style.value.lower().replace("-", "_") == folded:
                return style
        raise ValueError(text)


@dataclass(frozen=True)
class LintConfig:
    """What to lint with: the selected rules, per-file ignores, the naming styles, and whether
    the gate lints new versions. Built at the edge (flags over ``[tool.schemacli.lint]``)."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    type_style: NameStyle = NameStyle.PASCAL
    field_style: NameStyle = NameStyle.CONSISTENT
    symbol_style: NameStyle = NameStyle.UPPER_SNAKE
    gate: bool = False

    def rules_for(self, path: str | None) -> frozenset[Kind]:
        """The rules that apply to the file at ``path`` (POSIX form; None: standard input)."""
        ignore = list(self.ignore)
        if path is not None:
            for pattern, selectors in self.per_file_ignores:
                if _glob_matches(pattern, path):
                    ignore.extend(selectors)
        return select_rules(self.select, ignore)


def _glob_matches(pattern: str, path: str) -> bool:
    """ruff's per-file-ignores matching: the glob against the whole path, or against its end
    (``*.avsc``, ``legacy/*.avsc`` match ``schemas/legacy/a.avsc``); ``**/`` spans folders."""
    path = path.replace("\\", "/").removeprefix("./")
    pattern = pattern.replace("\\", "/").removeprefix("./")
    if fnmatchcase(path, pattern):
        return True
    parts = path.split("/")
    return any(fnmatchcase("/".join(parts[i:]), pattern) for i in range(1, len(parts)))
