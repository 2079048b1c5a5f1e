"""The lint rules, one module per small family: each rule's catalogue kind, metadata, check and
fix together (docs/lint.md documents each). A new rule is a ``Rule`` and its check in one of
these modules (or a new module listed below) and its section in docs/lint.md.

``FAMILIES`` is the order the walk calls the families' hooks in (``validate`` reports its
warnings in that order: the text's, then each node's names, fields, logical types, defaults);
``RULES`` is every rule, by category, as ``schemacli lint --list-rules`` shows them.
"""

from __future__ import annotations

from schemacli.contracts.lint.rule import Category, Family, Rule
from schemacli.contracts.lint.rules import (
    datarules,
    defaults,
    docs,
    evolution,
    logical,
    naming,
    portablenames,
    spark,
    text,
)

FAMILIES: tuple[Family, ...] = (
    naming.FAMILY,
    docs.FAMILY,
    evolution.FAMILY,
    portablenames.FAMILY,
    logical.FAMILY,
    defaults.FAMILY,
    spark.FAMILY,
    text.FAMILY,
    datarules.FAMILY,
)

RULES: tuple[Rule, ...] = tuple(
    rule for category in Category for family in FAMILIES for rule in family.rules
    if rule.category is category
)  # fmt: skip
