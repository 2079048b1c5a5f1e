"""Which lint rules a file gets: ruff's selection over the rules of ``contracts.lint.rules``.

``select`` replaces the default set, ``ignore`` removes from it; a selector is ``ALL``, a
category name (``naming``), a rule's name (``invalid-decimal``), a code, or a prefix of a
short code (``N``, ``N00``, ``N001``; the rules named by a catalogue kind, ``INVALID_DECIMAL``,
match whole). ``per-file-ignores`` maps a glob to selectors ignored in matching files. A code
a rule had before (``T001``, now ``INVALID_DECIMAL``) still selects it (``REDIRECTS``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from schemacli.contracts.lint.rule import Category, NameStyle, Rule, Styles
from schemacli.contracts.lint.rules import RULES
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind

__all__ = [
    "REDIRECTS",
    "RULES",
    "LintConfig",
    "UnknownSelector",
    "check_selectors",
    "docs_url",
    "find_rule",
    "matches",
    "rule_for",
    "select_rules",
]

# Codes rules had before they were merged or renamed -> the rule's code now (ruff's redirects).
REDIRECTS: dict[str, str] = {"T001": Kind.INVALID_DECIMAL.value}
_SHORT_CODE = re.compile(r"[A-Z]+[0-9]+")

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
    wanted = REDIRECTS.get(code.strip().upper(), code.strip())
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
    text = REDIRECTS.get(text.upper(), text)
    if text.upper() == "ALL":
        return True
    if text.lower() in (rule.category.value, rule.name):
        return True
    code = text.upper()
    if code == rule.code:
        return True
    return (
        bool(code) and rule.code.startswith(code) and _SHORT_CODE.fullmatch(rule.code) is not None
    )


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


@frozen_dataclass
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

    @property
    def styles(self) -> Styles:
        """The naming rules' styles."""
        return Styles(self.type_style, self.field_style, self.symbol_style)

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
