"""What a lint rule is, and the run of the rules over one loaded schema.

A :class:`Rule` is a finding kind of the catalogue (``schemacli.kinds``: its code, default
severity, docs anchor and, where it has one, its message template and hint) and the rule's own
metadata: a kebab-case name, a category, whether it is on by default, how it fixes itself, and
whether ``validate`` reports it too. A :class:`Family` is the few rules one module of
``contracts.lint.rules`` checks together, and the hooks the walk calls it at: once per file
(``start``, ``end``), and at each named type, record, field, union or any node.

A :class:`Run` is one file being linted: the rules on, the naming styles, the subject the file
is a version of, the editor fixes are made with, and the findings so far.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.schema import (
    ArraySchema,
    Field,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding
from schemacli.errors import Location
from schemacli.frozen import frozen_dataclass
from schemacli.kinds import Kind

if TYPE_CHECKING:  # the fixes' editor is loaded when a rule makes a fix (validate seldom does)
    from schemacli.contracts.fixes.edits import Fix, JsonEditor

__all__ = [
    "Category",
    "Family",
    "Fixable",
    "NameStyle",
    "Rule",
    "Run",
    "Styles",
    "SubjectContext",
    "describe",
    "shown",
    "union_text",
]


class Category(StrEnum):
    NAMING = "naming"
    DOCS = "docs"
    EVOLUTION = "evolution"
    TYPES = "types"
    SPARK = "spark"
    # Java accepts it, another common reader or the Avro specification does not
    PORTABILITY = "portability"
    RULES = "rules"  # the data-quality rule set beside a version (v<N>.contract.json)


class Fixable(StrEnum):
    """How a rule's fix may be applied: ruff's applicability, or no fix at all."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    SOMETIMES = "sometimes"  # safe in the common case; unsafe or advice only otherwise
    NONE = "none"


@frozen_dataclass
class Rule:
    """A lint rule: its finding kind and its own metadata (module docstring)."""

    kind: Kind
    name: str
    category: Category
    default: bool
    fixable: Fixable
    summary: str  # one line, for --list-rules
    # The fix may change the Parsing Canonical Form (a rename, a union reordered): such fixes
    # are unsafe, and the lint tests prove every other fix leaves the form as it was.
    changes_canonical_form: bool = False
    # ``validate`` reports it too, as a warning: Java accepts the schema, but another common
    # reader or the specification does not (docs/lint.md, README's validate section).
    validate: bool = False

    @property
    def code(self) -> str:
        return self.kind.value

    @property
    def severity(self) -> str:
        return self.kind.severity.value


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


@frozen_dataclass
class Styles:
    """The naming styles the naming rules check (``type-style``, ``field-style``,
    ``symbol-style`` of ``[tool.schemacli.lint]``)."""

    types: NameStyle = NameStyle.PASCAL
    fields: NameStyle = NameStyle.CONSISTENT
    symbols: NameStyle = NameStyle.UPPER_SNAKE


@frozen_dataclass
class SubjectContext:
    """What a store version is linted against: its subject, level, and the first timestamp
    precision the subject's earlier versions use (``(logicalType, where)``)."""

    subject: str
    level: Level | None = None
    first_timestamp: tuple[str, str] | None = None


@dataclass
class Run:
    """One lint of one loaded schema: the rules on, the editor for fixes (made when the first
    fix is), the findings."""

    loaded: LoadedSchema
    rules: frozenset[Kind]
    styles: Styles
    context: SubjectContext | None
    findings: list[Finding] = field(default_factory=list)
    first_timestamp: tuple[str, str] | None = None  # T002: the first one met so far
    memo: dict[str, Any] = field(default_factory=dict)  # what a family keeps between hooks
    _editor: JsonEditor | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
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
        """A finding of ``kind`` at ``pointer``, its message and hint the kind's templates
        filled with ``values``; ``fixes`` makes its fixes."""
        self.add(
            kind,
            self.loaded.location(pointer),
            kind.message(**values),
            kind.hint_for(**values),
            fixes,
        )

    def add(
        self,
        kind: Kind,
        location: Location,
        message: str,
        hint: str | None,
        fixes: Callable[[], Iterable[Fix]] | None = None,
        *,
        old: object = None,
        new: object = None,
    ) -> None:
        """A finding of ``kind`` whose rule wrote its own message and hint."""
        made: tuple[Fix, ...] = ()
        if fixes is not None:
            from schemacli.contracts.fixes.edits import EditError

            try:
                made = tuple(fixes())
            except EditError:
                made = ()  # the text does not hold what the model says (cannot happen)
        subject = self.context.subject if self.context is not None else None
        self.findings.append(
            Finding(
                kind=kind,
                message=message,
                location=location,
                hint=hint,
                severity=kind.severity,
                old=old,
                new=new,
                subject=subject,
                fixes=made,
            )
        )

    def edit(self) -> JsonEditor:
        """The editor of this file's text, made the first time a fix asks for it."""
        if self._editor is None:
            from schemacli.contracts.fixes.edits import JsonEditor

            self._editor = JsonEditor(self.loaded.document)
        return self._editor


@frozen_dataclass
class Family:
    """The rules one module checks, and the hooks the walk calls (each only when one of the
    family's rules is on): ``start`` and ``end`` once per file, the others at each node of
    their kind among the types the file defines (a record's ``field`` hooks after its
    ``record`` hooks; ``node`` at every node, last)."""

    rules: tuple[Rule, ...]
    start: Callable[[Run], None] | None = None
    named: Callable[[Run, NamedSchema], None] | None = None
    record: Callable[[Run, RecordSchema], None] | None = None
    field: Callable[[Run, Field], None] | None = None
    union: Callable[[Run, UnionSchema], None] | None = None
    node: Callable[[Run, Schema], None] | None = None
    end: Callable[[Run], None] | None = None


def union_text(union: UnionSchema) -> str:
    """A union as messages show it: ``["null", "string"]`` (named branches by full name)."""
    return "[" + ", ".join(json.dumps(t.fullname, ensure_ascii=False) for t in union.types) + "]"


def shown(value: object) -> str:
    """A JSON value as a message quotes it: at most 40 characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def describe(schema: Schema | None) -> str:
    """A type in a few words: ``record com.x.Ride``, ``array``, ``string``."""
    if schema is None:
        return "nothing"
    if isinstance(schema, NamedSchema):
        return f"{schema.type} {schema.fullname}"
    if isinstance(schema, ArraySchema):
        return "array"
    if isinstance(schema, MapSchema):
        return "map"
    return schema.type
