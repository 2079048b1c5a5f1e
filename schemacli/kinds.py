"""The catalogue of finding kinds: every kind any module reports, each one entry.

A :class:`Kind` is a ``StrEnum``: its value is the id every output prints (``TYPE_MISMATCH``), so
a kind compares, hashes, formats and serialises as that string. Each entry also says its default
severity, the docs heading that explains it (``anchor``: a path under the repository and a
GitHub heading slug, checked by ``tests/unit/test_kinds.py``), and, where the kind has a fixed
message shape, the message template and hint; otherwise the caller builds the message and the
entry carries ``None``.

Adding a kind is one entry here. Imports nothing of the project: the contract core, the registry
checks, the converters and the renderers all read it.
"""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


ERROR = Severity.ERROR
WARNING = Severity.WARNING

# Where each family of kinds is described (a file and a heading's slug).
COMPAT = "docs/compatibility.md#incompatibility-kinds"
PARSE = "README.md#schemacli-validate-path"  # what validate reports, errors and warnings
REFERENCES = "docs/store.md#references-between-schemas"
STORE = "docs/store.md#finding-kinds-the-store-adds"
REGISTRY_CHECK = "docs/registry.md#commands"
REGISTRY_GATE = "docs/registry.md#gate---registry-what-is-checked-and-all-or-nothing"
MAPPING = "docs/migration.md#validate-is-it-deployable-what-does-each-field-become"
LINT = "docs/lint.md#"  # + the heading's slug: "### N001 record-name-style" -> n001-record-...
READERS = "docs/readers.md#finding-kinds"
CENSUS = "docs/census.md#a-side-keys-values"
QUALITY = "docs/quality.md#finding-kinds"
RULES = "docs/rules.md#finding-kinds"  # data-quality rules (CEL domain rules, field tags)
RULES_TEST = "docs/rules.md#rules-test-the-rules-over-sample-records"


class Kind(StrEnum):
    """A finding kind: ``Kind.TYPE_MISMATCH == "TYPE_MISMATCH"``, with its catalogue entry.

    Compatibility templates' fields: where (a readable place), reader / writer (the values
    involved), name (the named type), extra (kind-specific)."""

    severity: Severity
    anchor: str
    template: str | None
    hint: str | None

    def __new__(
        cls,
        id: str,
        anchor: str,
        severity: Severity = ERROR,
        template: str | None = None,
        hint: str | None = None,
    ) -> Kind:
        member = str.__new__(cls, id)
        member._value_ = id
        member.severity = severity
        member.anchor = anchor
        member.template = template
        member.hint = hint
        return member

    # -- compatibility: Java's SchemaIncompatibilityType names, plus AMBIGUOUS_FIELD_MATCH (ours,
    # where Java throws instead of answering)
    TYPE_MISMATCH = (
        "TYPE_MISMATCH",
        COMPAT,
        ERROR,
        "{where}: the reader's type {reader} cannot read the writer's {writer}.",
        "Keep the type {writer} (or a promotion Avro allows: int -> long -> float -> double, "
        "string <-> bytes); to change it, add a new field with a default and deprecate the old "
        "one.",
    )
    NAME_MISMATCH = (
        "NAME_MISMATCH",
        COMPAT,
        ERROR,
        "{where}: the reader's {extra} is named {reader} but the writer's is {writer}.",
        'Keep the name, or add the old full name to the reader\'s "aliases": ["{writer}"].',
    )
    FIXED_SIZE_MISMATCH = (
        "FIXED_SIZE_MISMATCH",
        COMPAT,
        ERROR,
        "{where}: fixed {name} has size {reader} in the reader but {writer} in the writer.",
        "A fixed type's size cannot change; add a new field with a new fixed type instead.",
    )
    MISSING_ENUM_SYMBOLS = (
        "MISSING_ENUM_SYMBOLS",
        COMPAT,
        ERROR,
        "{where}: the reader's enum {name} lacks the writer's symbol(s) {extra}.",
        'Keep every symbol the writer may send, or give the reader\'s enum a "default" symbol '
        "to use for unknown ones.",
    )
    READER_FIELD_MISSING_DEFAULT_VALUE = (
        "READER_FIELD_MISSING_DEFAULT_VALUE",
        COMPAT,
        ERROR,
        "{where}: field '{reader}' is not in the writer's record {name} and has no default.",
        'Give field \'{reader}\' a default (e.g. type ["null", ...] with "default": null), or '
        "keep the field in the writer.",
    )
    MISSING_UNION_BRANCH = (
        "MISSING_UNION_BRANCH",
        COMPAT,
        ERROR,
        "{where}: the reader's union {reader} has no branch that can read the writer's {writer}.",
        "Add a branch that can read {writer} to the reader's union, or keep the writer's type.",
    )
    AMBIGUOUS_FIELD_MATCH = (
        "AMBIGUOUS_FIELD_MATCH",
        COMPAT,
        ERROR,
        "{where}: the reader's field '{reader}' matches several writer fields by name and "
        "aliases ({extra}); Apache Avro Java stops with an error, so the registry rejects it.",
        "Remove the alias that names another field of the writer's record.",
    )

    # -- a schema Java's Schema.Parser refuses (SchemaParseError.kind)
    INVALID_SCHEMA = "INVALID_SCHEMA", PARSE  # anything else Java refuses
    INVALID_JSON = "INVALID_JSON", PARSE
    UNDEFINED_NAME = "UNDEFINED_NAME", PARSE
    INVALID_DEFAULT = "INVALID_DEFAULT", PARSE
    DUPLICATE_FIELD = "DUPLICATE_FIELD", PARSE
    DUPLICATE_SYMBOL = "DUPLICATE_SYMBOL", PARSE
    INVALID_NAME = "INVALID_NAME", PARSE
    INVALID_FIXED_SIZE = "INVALID_FIXED_SIZE", PARSE
    DUPLICATE_UNION_BRANCH = "DUPLICATE_UNION_BRANCH", PARSE
    NESTED_UNION = "NESTED_UNION", PARSE
    MISSING_ATTRIBUTE = "MISSING_ATTRIBUTE", PARSE
    # -- the paths and files validate is given
    PATH_NOT_FOUND = "PATH_NOT_FOUND", PARSE
    NO_SCHEMA_FILES = "NO_SCHEMA_FILES", PARSE
    UNREADABLE_FILE = "UNREADABLE_FILE", PARSE
    INVALID_INPUT = "INVALID_INPUT", PARSE  # any other input error, as validate reports it
    # -- references between schema files
    BAD_REFERENCE = "BAD_REFERENCE", REFERENCES
    CIRCULAR_REFERENCE = "CIRCULAR_REFERENCE", REFERENCES
    DUPLICATE_DEFINITION = "DUPLICATE_DEFINITION", REFERENCES

    # -- Java accepts it, another common reader or the specification does not: lint rules that
    # validate reports too (contracts/lint/rules: each one's name, category, check and message).
    # REDEFINED_NAME is also the parser's refusal of a name defined twice differently (an error,
    # as every refusal is); defined twice identically, Java accepts it and this rule warns.
    UNION_DEFAULT_NOT_FIRST = (
        "UNION_DEFAULT_NOT_FIRST",
        LINT + "union_default_not_first-union-default-not-first",
        WARNING,
    )
    ENUM_DEFAULT_NOT_SYMBOL = (
        "ENUM_DEFAULT_NOT_SYMBOL",
        LINT + "enum_default_not_symbol-enum-default-not-symbol",
        WARNING,
    )
    FIXED_DEFAULT_SIZE = (
        "FIXED_DEFAULT_SIZE",
        LINT + "fixed_default_size-fixed-default-size",
        WARNING,
    )
    BYTES_DEFAULT_NOT_LATIN1 = (
        "BYTES_DEFAULT_NOT_LATIN1",
        LINT + "bytes_default_not_latin1-bytes-default-not-latin1",
        WARNING,
    )
    INVALID_DECIMAL = "INVALID_DECIMAL", LINT + "invalid_decimal-invalid-decimal", WARNING
    LOGICAL_TYPE_IGNORED = (
        "LOGICAL_TYPE_IGNORED",
        LINT + "logical_type_ignored-logical-type-ignored",
        WARNING,
    )
    NON_ASCII_NAME = "NON_ASCII_NAME", LINT + "non_ascii_name-non-ascii-name", WARNING
    REDEFINED_NAME = "REDEFINED_NAME", LINT + "redefined_name-redefined-name", WARNING
    NULL_NAMESPACE_FALLBACK = (
        "NULL_NAMESPACE_FALLBACK",
        LINT + "null_namespace_fallback-null-namespace-fallback",
        WARNING,
    )
    JSON_COMMENT = "JSON_COMMENT", LINT + "json_comment-json-comment", WARNING
    DUPLICATE_KEY = "DUPLICATE_KEY", LINT + "duplicate_key-duplicate-key", WARNING
    ENCODING_NOT_UTF8 = "ENCODING_NOT_UTF8", LINT + "encoding_not_utf8-encoding-not-utf8", WARNING

    # -- the local store and the gate
    STORE_LAYOUT = "STORE_LAYOUT", STORE  # a badly named file or a gap in the versions
    HISTORY_REWRITTEN = "HISTORY_REWRITTEN", STORE  # an existing version changed since the ref
    VERSION_DELETED = "VERSION_DELETED", STORE  # an existing version is gone since the ref
    SUBJECT_DELETED = "SUBJECT_DELETED", STORE, WARNING  # a whole subject is gone: may be intended
    UNKNOWN_SUBJECT = "UNKNOWN_SUBJECT", STORE, WARNING  # the config names a subject not stored
    DUPLICATE_VERSION = "DUPLICATE_VERSION", STORE  # identical to an earlier version
    # -- declared readers (docs/readers.md); a reader that cannot read a writer keeps the
    # engine's kind (TYPE_MISMATCH, ...) and names the consumer (Finding.reader)
    READER_OF_UNKNOWN_SUBJECT = "READER_OF_UNKNOWN_SUBJECT", READERS, WARNING
    # a new compatibility group (major version) without a DOWNGRADE rule (docs/store.md)
    MISSING_MIGRATION_RULE = "MISSING_MIGRATION_RULE", STORE

    # -- data-quality rules in a contract (docs/rules.md); located in the contract file
    RULE_SYNTAX = "RULE_SYNTAX", RULES  # a CEL expression that does not parse
    RULE_UNKNOWN_FIELD = "RULE_UNKNOWN_FIELD", RULES  # names a field the schema does not have
    RULE_TYPE_MISMATCH = "RULE_TYPE_MISMATCH", RULES  # no such operator/function for the types
    RULE_UNKNOWN_NAME = "RULE_UNKNOWN_NAME", RULES  # a name or function the executors lack
    RULE_UNSUPPORTED_VALUE = "RULE_UNSUPPORTED_VALUE", RULES, WARNING  # a decimal, a time-*
    RULE_FIELD_REMOVED = "RULE_FIELD_REMOVED", RULES  # a new version drops a field a rule reads
    RULE_FIELD_RETYPED = "RULE_FIELD_RETYPED", RULES  # a new version retypes a field a rule reads
    RULE_SELECTS_NO_FIELD = "RULE_SELECTS_NO_FIELD", RULES  # a CEL_FIELD rule's tags match none
    RULE_REQUIRED_FOR_TAG = "RULE_REQUIRED_FOR_TAG", RULES  # a tagged field no rule covers
    # -- rules over sample records (rules test)
    RULE_FAILED = "RULE_FAILED", RULES_TEST  # a record breaks a rule (a condition is false)
    RULE_ERRORED = "RULE_ERRORED", RULES_TEST  # a rule's expression failed on a record
    RULE_NOT_RUN = "RULE_NOT_RUN", RULES_TEST, WARNING  # no executor here (JSONATA, ENCRYPT, ...)

    # -- the registry's verdicts next to the engine's (check --registry)
    REGISTRY_INCOMPATIBLE = "REGISTRY_INCOMPATIBLE", REGISTRY_CHECK  # the registry's own reasons
    REGISTRY_DISAGREEMENT = "REGISTRY_DISAGREEMENT", REGISTRY_CHECK  # registry and engine differ
    REGISTRY_NOT_ASKED = "REGISTRY_NOT_ASKED", REGISTRY_CHECK, WARNING
    # -- gate --registry
    LEVEL_DIFFERS = (
        "LEVEL_DIFFERS",
        REGISTRY_GATE,
        WARNING,
    )  # the config's level is not the registry's
    REGISTRY_HISTORY_DIVERGES = "REGISTRY_HISTORY_DIVERGES", REGISTRY_GATE
    REFERENCE_NOT_IN_REGISTRY = "REFERENCE_NOT_IN_REGISTRY", REGISTRY_GATE

    # -- the migration mapping (converters/sql.py, converters/mapcheck.py); TYPE_MISMATCH above
    # is reported there too, for a rule whose result the v1 field's type cannot hold
    UNKNOWN_TARGET = "UNKNOWN_TARGET", MAPPING
    MISSING_RULE = "MISSING_RULE", MAPPING
    BAD_DEFAULT = "BAD_DEFAULT", MAPPING
    UNKNOWN_SOURCE = "UNKNOWN_SOURCE", MAPPING
    UNRESOLVED = "UNRESOLVED", MAPPING
    NO_DEFAULT = "NO_DEFAULT", MAPPING
    SQL_UNKNOWN_NAME = "SQL_UNKNOWN_NAME", MAPPING, WARNING
    SQL_SYNTAX = "SQL_SYNTAX", MAPPING
    SPARK_SQL = "SPARK_SQL", MAPPING
    PREVIEW_MISMATCH = "PREVIEW_MISMATCH", MAPPING, WARNING
    ENCODE_FAILED = "ENCODE_FAILED", MAPPING

    # -- lint rules (contracts/lint/rules/ holds each one's name, category, check and fix)
    N001 = (
        "N001",
        LINT + "n001-record-name-style",
        WARNING,
        "{type} name {name!r} is not {style}",
        "rename it {suggestion!r} (the old full name stays readable as an alias)",
    )
    N002 = (
        "N002",
        LINT + "n002-field-name-style",
        WARNING,
        "field {name!r} is not {style}",
        "rename it {suggestion!r} and keep {name!r} as an alias",
    )
    N003 = (
        "N003",
        LINT + "n003-enum-symbol-style",
        WARNING,
        "symbol {name!r} of enum {enum} is not {style}",
        "name new symbols {style}; renaming an existing symbol breaks data already written",
    )
    N004 = (
        "N004",
        LINT + "n004-missing-namespace",
        WARNING,
        "{type} {name!r} has no namespace",
        'add a "namespace" (e.g. "com.example.{lower}") so that its full name cannot clash',
    )
    N005 = (
        "N005",
        LINT + "n005-case-insensitive-duplicate",
        ERROR,
        "fields {name!r} and {other!r} of {record} differ only by case",
        "rename one: Spark, Hive, BigQuery and most SQL engines do not tell them apart",
    )
    N006 = (
        "N006",
        LINT + "n006-reserved-name",
        WARNING,
        "{what} {name!r} is a reserved word ({where})",
        "choose another name; generated code and SQL must quote or mangle it",
    )
    N007 = (
        "N007",
        LINT + "n007-alias-shadows-field",
        ERROR,
        "alias {alias!r} of field {name!r} is also {other} in {record}",
        "remove the alias: a writer's field {alias!r} would match two reader fields",
    )
    D001 = (
        "D001",
        LINT + "d001-record-without-doc",
        WARNING,
        "{type} {name!r} has no doc",
        'say what it is in a "doc" attribute',
    )
    D002 = (
        "D002",
        LINT + "d002-field-without-doc",
        WARNING,
        "field {name!r} of {record} has no doc",
        'say what it holds (and its unit) in a "doc" attribute',
    )
    E001 = (
        "E001",
        LINT + "e001-optional-field-without-null-default",
        ERROR,
        "field {name!r} is optional ({type}) but {problem}",
        'write it as ["null", ...] with "default": null, so it can be added and removed freely',
    )
    E002 = (
        "E002",
        LINT + "e002-enum-without-default",
        WARNING,
        "enum {name!r} has no default: a reader that meets a symbol added later fails",
        'give it a "default" symbol readers fall back to (such as UNKNOWN)',
    )
    E003 = (
        "E003",
        LINT + "e003-field-without-default-at-level",
        WARNING,
        "field {name!r} has no default: at level {level} it can never be removed",
        'add a "default"; a field without one cannot be deleted at {level}',
    )
    T002 = (
        "T002",
        LINT + "t002-mixed-timestamp-precision",
        WARNING,
        "{name} is {logical} but {first} is used at {where}",
        "use one precision across the subject; readers mixing them are off by a factor of 1000",
    )
    S001 = (
        "S001",
        LINT + "s001-positional-union",
        WARNING,
        "union {type} has {count} non-null branches: Spark reads it as a struct of member0, "
        "member1, ... by position",
        "use a record with one optional field per alternative, or a single type",
    )
    R001 = (
        "R001",
        LINT + "r001-rule-without-name",
        ERROR,
        "the rule at {pointer} has no name",
        "give it a name: DLQ headers, logs and `rules test` name a rule by it, and a DLQ "
        "replay skips the rule named in its header",
    )
    R002 = (
        "R002",
        LINT + "r002-write-rule-without-on-failure",
        WARNING,
        "rule {name!r} runs on WRITE without onFailure: a producer's send fails (ERROR) when it "
        "fails",
        'say what a failing record does: "onFailure": "ERROR", "DLQ" (with params dlq.topic) or '
        '"NONE"',
    )
    R003 = (
        "R003",
        LINT + "r003-always-true-expression",
        WARNING,
        "rule {name!r} is true for every record: {expr}",
        "a condition that cannot fail checks nothing; compare a field of the record",
    )
    # -- the census of a topic's data (topics census)
    CENSUS_UNFRAMED = "CENSUS_UNFRAMED", CENSUS, WARNING  # keys/values without a Confluent header
    CENSUS_UNKNOWN_ID = "CENSUS_UNKNOWN_ID", CENSUS, WARNING  # an id neither registry nor store has
    # -- a topic's data run through its subject's domain rules (topics check)
    CHECK_RULE_FAILED = "CHECK_RULE_FAILED", QUALITY  # records a rule's condition refuses
    CHECK_RULE_ERROR = "CHECK_RULE_ERROR", QUALITY  # records a rule's expression fails on
    CHECK_UNDECODABLE = "CHECK_UNDECODABLE", QUALITY  # records their writer schema cannot decode
    CHECK_OTHER_ID = "CHECK_OTHER_ID", QUALITY, WARNING  # records of a schema id not the subject's

    def message(self, **values: object) -> str:
        """The kind's template filled with ``values``; ValueError for a kind without one."""
        if self.template is None:
            raise ValueError(f"{self.value} has no message template: the caller writes it")
        return self.template.format(**values)

    def hint_for(self, **values: object) -> str | None:
        """The kind's hint filled with ``values`` (None when it has none)."""
        return None if self.hint is None else self.hint.format(**values)


# The compatibility engine's kinds, in Java's order (one fixture each in the tests).
INCOMPATIBILITIES: tuple[Kind, ...] = tuple(k for k in Kind if k.anchor == COMPAT)
