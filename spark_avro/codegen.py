"""Write a standalone PySpark reader module for one subject: schemas embedded, no schemacli import.

The module is ``templates/reader_module.py.tmpl`` filled in, with the body of
``spark_avro/decode.py`` copied in after its ``codegen: begin`` marker, so the generated reader
and ``spark_avro.read_topic`` decode with the very same code. A migrating reader (``--migrate``)
also gets ``spark_avro/migrate.py``'s body and the mapping's compiled Spark SQL, so it converts
v2 records with the code and the SQL the converter runs. A reader with rules (``--rules``) also
gets ``spark_avro/rulestage.py``'s body and the rule tables ``spark_avro.rules.rule_table``
builds, so it applies a contract's rules with the stage ``read_topic(rules=)`` runs. The output
is ruff-clean and laid out as ``ruff format`` would (tests check both).
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from spark_avro.compat import incompatible_writers

CODEGEN_MARKER = "# --- codegen: begin ---\n"
DEFAULT_SPARK_VERSION = "4.0.1"
LINE_LENGTH = 100


@dataclass(frozen=True)
class WriterVersion:
    """One registered version of the subject: its registry id, version and schema (parsed JSON)."""

    schema_id: int
    version: int
    schema: Any
    subject: str | None = None  # None: the spec's subject


@dataclass(frozen=True)
class MigrationSpec:
    """What a migrating reader embeds: the mapping's two schemas (parsed JSON), its compiled
    Spark SQL and the writer ids read into v1 as written (``spark_avro.onread``)."""

    mapping_file: str
    source_schema: Any  # v2
    target_schema: Any  # v1
    v1_ids: tuple[int, ...]
    columns: tuple[str, ...]
    error_sql: str
    incompatible: dict[int, str]  # v2-road writers the v2 schema cannot read


RuleRows = tuple[tuple[str, str, str, str, bool, dict[str, str]], ...]  # rulestage.RuleRow


@dataclass(frozen=True)
class RulesSpec:
    """What a reader with rules embeds: the rule tables (``spark_avro.rules.rule_table``) of the
    reader version's READ CONDITIONs for both layouts ``read(flatten=...)`` offers, where the
    rule set came from, and the names of the rules it applies and of those it does not act on
    (their onFailure is NONE), in the order they run."""

    origin: str  # "registry" or "store"
    source: str  # "<subject>:<version>" in the registry, the contract file's path in the store
    applied: tuple[str, ...]
    not_acted_on: tuple[str, ...]
    flat: RuleRows  # the record's fields as columns
    nested: RuleRows  # the record as the struct column ``record``
    transforms: tuple[str, ...] = ()  # the CEL_FIELD TRANSFORMs, in the order they run


@dataclass(frozen=True)
class ReaderModuleSpec:
    """Everything the generated module embeds; ``reader_version`` must be one of ``writers``."""

    subject: str
    topic: str
    writers: tuple[WriterVersion, ...]
    reader_version: int
    streaming: bool = False
    module_file: str = "reader.py"
    spark_version: str = DEFAULT_SPARK_VERSION
    migration: MigrationSpec | None = None
    rules: RulesSpec | None = None

    @property
    def reader(self) -> WriterVersion:
        for writer in self.writers:
            if writer.version == self.reader_version:
                return writer
        raise ValueError(f"reader version {self.reader_version} is not among the writer versions")


def render_reader_module(spec: ReaderModuleSpec) -> str:
    """The source text of the reader module for ``spec``."""
    writers = sorted(spec.writers, key=lambda w: w.schema_id)
    constants = []
    for writer in sorted(spec.writers, key=lambda w: (w.subject is not None, w.version)):
        name = _constant_name(writer)
        constants.append(
            f"# Version {writer.version} of {_doc_text(writer.subject or spec.subject)}, "
            f"registry id {writer.schema_id}.\n"
            f"{name} = {python_literal(writer.schema, indent=0, prefix=len(name) + 3)}\n"
        )
    entries = "\n".join(
        f"    {w.schema_id}: json.dumps({_constant_name(w)}),  # "
        f"{'' if spec.migration is None else _doc_text(w.subject or spec.subject) + ' '}"
        f"version {w.version}"
        for w in writers
    )
    ids = ", ".join(str(w.schema_id) for w in writers)
    migration = spec.migration
    if migration is None:
        reader = spec.reader
        reader_constant = _constant_name(reader)
        reader_summary = f"version {reader.version} (id {reader.schema_id})"
        unreadable = incompatible_writers(
            {w.schema_id: json.dumps(w.schema) for w in writers}, json.dumps(reader.schema)
        )
    else:
        reader_constant = "MAPPING_V1_SCHEMA"
        reader_summary = "the mapping's v1 schema"
        unreadable = migration.incompatible
    rules = spec.rules
    if rules is not None and migration is not None:
        raise ValueError("a migrating reader does not apply rules")
    body = decode_body()
    if migration is not None:
        body += "\n\n" + migrate_body()
    if rules is not None:
        body += "\n\n" + rulestage_body()
    fields = dict(
        topic_repr=_string(spec.topic),
        subject_repr=_string(spec.subject),
        topic=_doc_text(spec.topic),
        subject=_doc_text(spec.subject),
        spark_version=spec.spark_version,
        writer_summary=f"ids {ids}" if len(writers) > 1 else f"id {ids}",
        reader_summary=reader_summary,
        module_file=_doc_text(spec.module_file),
        streaming=str(spec.streaming),
        schema_constants="\n".join(constants).rstrip("\n"),
        writer_entries=entries,
        reader_constant=reader_constant,
        incompatible_entries=_incompatible_literal(unreadable),
        migration_doc="" if migration is None else _migration_doc(migration),
        migration_constants="" if migration is None else _migration_constants(migration),
        rules_doc="" if rules is None else _rules_doc(rules),
        rules_constants="" if rules is None else _rules_constants(rules),
        abc_imports="Mapping" if rules is None else "Callable, Mapping, Sequence",
        decode_body=body,
        decode_call=(
            _RULES_CALL
            if rules is not None
            else _DECODE_CALL
            if migration is None
            else _MIGRATE_CALL
        ),
        read_columns=_READ_COLUMNS if rules is None else _RULES_READ_COLUMNS,
        mode_check="" if rules is None else _RULES_MODE_CHECK,
        mode_option=_MODE_OPTION if rules is None else _RULES_MODE_OPTION,
    )
    return Template(_template()).substitute(fields)


def _incompatible_literal(unreadable: dict[int, str]) -> str:
    if not unreadable:
        return "{}"
    lines = [
        f"    {schema_id}: {python_literal(text, indent=4, prefix=len(str(schema_id)) + 2)},"
        for schema_id, text in sorted(unreadable.items())
    ]
    return "{\n" + "\n".join(lines) + "\n}"


def _migration_doc(migration: MigrationSpec) -> str:
    v1 = ", ".join(str(i) for i in migration.v1_ids) or "none"
    text = (
        f"It migrates on read, with the mapping {_doc_text(migration.mapping_file)} (``schemacli "
        f"spark codegen --migrate``): records of the v1 writers (V1_WRITER_IDS: {v1}) are read "
        "into v1 as written; every other record is decoded into the mapping's v2 schema and "
        "converted to v1 by the mapping's Spark SQL (V1_COLUMNS, ERROR_SQL), as schemacli's "
        "converter converts it. A record the converter would dead-letter is a bad record of "
        "kind ``convert``, with the rule's reason. Union members are named ``member0..N``, as "
        "the mapping names them (``stable_union_names`` does not apply)."
    )
    return "\n" + textwrap.fill(text, width=LINE_LENGTH - 4, break_on_hyphens=False) + "\n"


def _migration_constants(migration: MigrationSpec) -> str:
    columns = "\n".join(f"    {python_literal(c, indent=4)}," for c in migration.columns)
    v1_ids = "".join(f"{i}, " for i in migration.v1_ids).rstrip(" ")
    parts = [
        f"# Migrate on read: the mapping {_doc_text(migration.mapping_file)}, compiled by "
        "schemacli's converter.",
        "# Its v2 schema: every writer not in V1_WRITER_IDS is decoded into it, then converted.",
        "MAPPING_V2_SCHEMA = "
        + python_literal(migration.source_schema, indent=0, prefix=len("MAPPING_V2_SCHEMA = ")),
        "# Its v1 schema: what every row is.",
        "MAPPING_V1_SCHEMA = "
        + python_literal(migration.target_schema, indent=0, prefix=len("MAPPING_V1_SCHEMA = ")),
        "# Writers read into v1 as written (the v1 schema, or one v1 reads and v2 does not).",
        f"V1_WRITER_IDS: tuple[int, ...] = ({v1_ids})",
        "# The Spark SQL of each v1 field over the v2 record's fields, in v1's order.",
        f"V1_COLUMNS: tuple[str, ...] = (\n{columns}\n)",
        "# The reasons a record cannot be converted ('' when it can).",
        "ERROR_SQL = " + python_literal(migration.error_sql, indent=0, prefix=len("ERROR_SQL = ")),
    ]
    return "\n" + "\n".join(parts) + "\n"


def _rules_doc(rules: RulesSpec) -> str:
    if rules.applied or rules.transforms:
        which = (
            "the CEL and CEL_FIELD CONDITIONs a deserializer runs (READ, WRITEREAD), compiled to "
            "Spark SQL by schemacli (RULES_FLAT, RULES_NESTED), in the order they run: "
            + ", ".join(_doc_text(name) for name in rules.applied)
            + ". The first whose failure is acted on makes a good record a bad record of kind "
            "``rule``: ``decode_error`` names the rule, ``raw_value`` holds its bytes and "
            "``rule_dlq_topic`` the rule's DLQ topic when its action is DLQ (null otherwise)."
            if rules.applied
            else ""
        )
        if rules.transforms:
            which += (
                " The CEL_FIELD TRANSFORMs a deserializer runs, in the same order, each reading "
                "what the rules before it left, replace the values of the fields their tags "
                "select in good records: "
                + ", ".join(_doc_text(name) for name in rules.transforms)
                + ". One that errs leaves the record as it was (a bad record of kind ``rule`` "
                "unless its onFailure is NONE)."
            )
        which = which.strip()
    else:
        which = (
            "no rule: the rule set has no CEL CONDITION whose failure a deserializer acts on "
            "(none runs on READ, or each one's onFailure is NONE), so every row's "
            "``rule_dlq_topic`` is null."
        )
    if rules.not_acted_on:
        which += (
            " Not acted on (onFailure NONE): "
            + ", ".join(_doc_text(name) for name in rules.not_acted_on)
            + "."
        )
    text = (
        f"It applies the data-quality rules of {_doc_text(rules.source)} in the {rules.origin} "
        f"(``schemacli spark codegen --rules``): {which} It reads PERMISSIVE only (a refused "
        'record is a bad record): ``read(mode="FAILFAST")`` raises ValueError.'
    )
    return "\n" + textwrap.fill(text, width=LINE_LENGTH - 4, break_on_hyphens=False) + "\n"


def _rules_constants(rules: RulesSpec) -> str:
    comment = (
        f"Data-quality rules: the rule set of {_doc_text(rules.source)} in the {rules.origin}, "
        "compiled to Spark SQL by schemacli. Per rule acted on and per TRANSFORM, in the order "
        "they run: (its code: 0 pass, 1 fail, 2 error; the reason if it fails; the reason if it "
        "errors; its DLQ topic or a typed NULL; whether its failure is acted on; a TRANSFORM's "
        "new value of each column it replaces), all Spark SQL. RULES_FLAT reads the record's "
        "fields as columns (read(flatten=True)), RULES_NESTED the struct column `record` "
        "(flatten=False)."
    )
    parts = [
        textwrap.fill(
            comment,
            width=LINE_LENGTH - 4,
            initial_indent="# ",
            subsequent_indent="# ",
            break_long_words=False,
            break_on_hyphens=False,
        ),
        _rule_rows("RULES_FLAT", rules.flat),
        _rule_rows("RULES_NESTED", rules.nested),
        "# The bad-record modes a reader with rules offers: a refused record is a bad record.",
        'RULES_MODES = ("PERMISSIVE",)',
    ]
    return "\n" + "\n".join(parts) + "\n"


def _rule_rows(name: str, rows: RuleRows) -> str:
    head = f"{name}: tuple[tuple[str, str, str, str, bool, dict[str, str]], ...] = "
    if not rows:
        return head + "()"
    lines = []
    for row in rows:
        cells = "\n".join(f"        {python_literal(cell, indent=8)}," for cell in row)
        lines.append(f"    (\n{cells}\n    ),")
    return head + "(\n" + "\n".join(lines) + "\n)"


_READ_COLUMNS = "Columns: see ``decode_confluent``."
_RULES_READ_COLUMNS = (
    "Columns: see ``decode_confluent``, and ``rule_dlq_topic`` (``apply_rules``): the\n"
    "    contract's rules applied. PERMISSIVE only: ValueError for another ``mode``."
)
_RULES_MODE_CHECK = """\
    if mode.upper() not in RULES_MODES:
        raise ValueError(
            "this reader applies data-quality rules and reads PERMISSIVE only (a refused "
            f"record is a bad record); got mode={mode!r}"
        )
"""

_MODE_OPTION = (
    '    parser.add_argument("--mode", choices=MODES, default="PERMISSIVE", '
    'help="bad-record policy")'
)
_RULES_MODE_OPTION = """\
    parser.add_argument(
        "--mode",
        choices=RULES_MODES,
        default="PERMISSIVE",
        help="bad-record policy (a reader with rules reads PERMISSIVE only)",
    )"""

_RULES_CALL = """\
    # The raw value carried through a PERMISSIVE decode, then the rule stage over the rule
    # table of this layout.
    return decode_with_rules(
        raw,
        lambda frame, carried: decode_confluent(
            frame,
            writer_schemas=WRITER_SCHEMAS,
            reader_schema=READER_SCHEMA,
            mode="PERMISSIVE",
            flatten=flatten,
            incompatible=INCOMPATIBLE_WRITERS,
            stable_union_names=stable_union_names,
            passthrough=carried,
        ),
        RULES_FLAT if flatten else RULES_NESTED,
    )"""

_DECODE_CALL = """    return decode_confluent(
        raw,
        writer_schemas=WRITER_SCHEMAS,
        reader_schema=READER_SCHEMA,
        mode=mode,
        flatten=flatten,
        incompatible=INCOMPATIBLE_WRITERS,
        stable_union_names=stable_union_names,
    )"""

_MIGRATE_CALL = """\
    # Union members are named member0..N, as the mapping names them (stable_union_names
    # does not apply).
    return decode_migrated(
        raw,
        writer_schemas=WRITER_SCHEMAS,
        v1_ids=V1_WRITER_IDS,
        source_schema=json.dumps(MAPPING_V2_SCHEMA),
        target_schema=READER_SCHEMA,
        columns=V1_COLUMNS,
        error_sql=ERROR_SQL,
        mode=mode,
        flatten=flatten,
        incompatible=INCOMPATIBLE_WRITERS,
    )"""


def decode_body() -> str:
    """The part of ``spark_avro/decode.py`` after its codegen marker."""
    return _body("decode.py")


def migrate_body() -> str:
    """The part of ``spark_avro/migrate.py`` after its codegen marker."""
    return _body("migrate.py")


def rulestage_body() -> str:
    """The part of ``spark_avro/rulestage.py`` after its codegen marker."""
    return _body("rulestage.py")


def _body(module: str) -> str:
    text = resources.files("spark_avro").joinpath(module).read_text(encoding="utf-8")
    _, marker, body = text.partition(CODEGEN_MARKER)
    if not marker:
        raise RuntimeError(f"spark_avro/{module} lost its codegen marker")
    return body.rstrip("\n") + "\n"


def _template() -> str:
    path = resources.files("spark_avro").joinpath("templates", "reader_module.py.tmpl")
    return path.read_text(encoding="utf-8")


def _constant_name(writer: WriterVersion) -> str:
    # a writer of the mapping's other subject (a migrating reader): its own names
    return (
        f"SCHEMA_V{writer.version}" if writer.subject is None else f"V1_SUBJECT_V{writer.version}"
    )


def _doc_text(text: str) -> str:
    """``text`` as written in the module's docstring and comments: as is if plain, else quoted
    with escapes (a subject may hold quotes, backslashes or line breaks)."""
    return text if _PLAIN.fullmatch(text) else json.dumps(text)


_PLAIN = re.compile(r"[\w.:/@+ -]+", re.ASCII)


def _string(text: str) -> str:
    # JSON string escapes are all valid Python escapes; double quotes as ruff format writes them.
    return json.dumps(text)


_SPLIT_AT = re.compile(r"(?<= )")


def python_literal(value: Any, *, indent: int, prefix: int = 0) -> str:
    """``value`` (parsed JSON) as a Python literal laid out like ``ruff format`` would.

    ``indent`` is the column of the line the literal starts on, ``prefix`` how many characters
    precede it on that line. Long strings are split into implicitly concatenated parts.
    """
    flat = _flat(value)
    if indent + prefix + len(flat) + 1 <= LINE_LENGTH:  # +1 for a trailing comma or bracket
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            head = f"{_string(key)}: "
            items.append(f"{pad}{head}{python_literal(item, indent=indent + 4, prefix=len(head))},")
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list):
        items = [f"{pad}{python_literal(item, indent=indent + 4)}," for item in value]
        return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
    if isinstance(value, str):
        width = LINE_LENGTH - indent - 4 - 2
        parts, current = [], ""
        for word in _SPLIT_AT.split(value):
            if current and len(_string(current + word)) > width:
                parts.append(current)
                current = ""
            current += word
            while len(_string(current)) > width:  # a word longer than a line: cut it
                cut = next(
                    n for n in range(len(current), 0, -1) if len(_string(current[:n])) <= width
                )
                parts.append(current[:cut])
                current = current[cut:]
        parts.append(current)
        if len(parts) == 1:
            return flat
        body = "\n".join(f"{pad}{_string(part)}" for part in parts)
        return "(\n" + body + "\n" + " " * indent + ")"
    return flat


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_string(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return str(value)
