"""Validating .avsc files: errors where Apache Avro Java refuses, warnings where others would.

``validate_paths`` loads every file (folders are walked for ``*.avsc``) with the
reference-aware loader. What the registry's parser (Java 1.12) refuses is an *error*; what Java
accepts but the Avro specification or another common reader does not is a *warning* naming the
consumers that would refuse it. Each claim below was checked against Java 1.12.0 (the jar in
pyspark), fastavro 1.13 and the ``avro`` package 1.12 (see tests/unit/test_validate_claims.py):

==============================  ============================================================
``UNION_DEFAULT_NOT_FIRST``     a union field's default fits a branch other than the first
``ENUM_DEFAULT_NOT_SYMBOL``     an enum field's default is not one of the symbols
``FIXED_DEFAULT_SIZE``          a fixed field's default has the wrong number of bytes
``BYTES_DEFAULT_NOT_LATIN1``    a bytes/fixed default with characters above \\u00ff
``INVALID_DECIMAL``             decimal precision/scale invalid, or the fixed too small
``LOGICAL_TYPE_IGNORED``        a logical type on a base type it does not annotate
``NON_ASCII_NAME``              a name, namespace or symbol outside ``[A-Za-z_][A-Za-z0-9_]*``
``REDEFINED_NAME``              the same named type defined twice (identically)
``JSON_COMMENT``                ``//`` or ``/* */`` comments in the JSON
``DUPLICATE_KEY``               a key twice in one JSON object (the last one wins)
``ENCODING_NOT_UTF8``           a UTF-16 or UTF-32 file (Java detects it; Python readers do not)
``NULL_NAMESPACE_FALLBACK``     a name found only through Java's fallback to the null namespace
==============================  ============================================================

``strict=True`` turns every warning into an error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.canonical import Fingerprints, fingerprints
from schemacli.contracts.avro.defaults import is_valid_default
from schemacli.contracts.avro.facts import (
    LOGICAL_BASES,
    DecimalProblem,
    decimal_problem,
    max_decimal_precision,
    min_fixed_size,
)
from schemacli.contracts.avro.loader import LoadedSchema, Loader, scan_names
from schemacli.contracts.avro.schema import (
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    MapSchema,
    NamedSchema,
    PrimitiveSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.contracts.jsontext.nesting import call_deep
from schemacli.contracts.jsontext.source import Document, is_stdin, source_name
from schemacli.errors import Location, SchemacliError, SchemaParseError


@dataclass(frozen=True)
class FileResult:
    """One file: its findings and, when it parsed, the loaded schema and its fingerprints."""

    source: str
    findings: tuple[Finding, ...] = ()
    loaded: LoadedSchema | None = None
    fingerprints: Fingerprints | None = None

    @property
    def ok(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)


@dataclass(frozen=True)
class ValidationReport:
    """Every file validated, plus problems with the paths themselves (missing, empty folder)."""

    files: tuple[FileResult, ...]
    path_problems: tuple[Finding, ...] = ()
    strict: bool = False

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.path_problems + tuple(f for r in self.files for f in r.findings)

    @property
    def ok(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def error_count(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warning_count(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.WARNING)


def validate_paths(
    paths: Iterable[Path | str],
    *,
    strict: bool = False,
    search_paths: Sequence[Path] = (),
) -> ValidationReport:
    """Validate files and folders (``*.avsc`` recursively). Never raises for bad input."""
    given = [Path(p) for p in paths]
    files, problems = expand_paths(given)
    loader = Loader(search_paths=search_paths, roots=[p for p in given if not is_stdin(p)])
    results = tuple(validate_file(path, loader=loader, strict=strict) for path in files)
    return ValidationReport(files=results, path_problems=tuple(problems), strict=strict)


def expand_paths(paths: Iterable[Path | str]) -> tuple[list[Path], list[Finding]]:
    """The .avsc files named or found under folders (sorted, each once), and path problems.

    Folders are searched recursively, skipping hidden ones (``.git``, ``.venv``, ...).
    """
    files: dict[Path, None] = {}
    problems: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        try:
            is_dir = not is_stdin(path) and path.is_dir()
            exists = is_dir or path.exists() or path.is_symlink()
        except OSError as exc:  # a name longer than the filesystem allows (ENAMETOOLONG), ...
            problems.append(
                Finding(
                    kind=Kind.PATH_NOT_FOUND,
                    message=f"cannot look at this path: {exc.strerror}",
                    location=Location(source=str(path)),
                    hint="check the path; each name in it must be shorter than 256 bytes",
                )
            )
            continue
        if is_stdin(path):
            files.setdefault(path)  # read once, named <stdin>
        elif is_dir:
            found, unreadable = _walk(path)
            for folder in unreadable:
                problems.append(
                    Finding(
                        kind=Kind.UNREADABLE_FILE,
                        message="permission denied while listing the folder",
                        location=Location(source=str(folder)),
                        hint="make the folder readable and listable (chmod +rx)",
                    )
                )
            if not found and not unreadable:
                problems.append(
                    Finding(
                        kind=Kind.NO_SCHEMA_FILES,
                        message="no .avsc files in this folder (searched recursively)",
                        location=Location(source=str(path)),
                        hint="point at the folder holding your schemas, or name files directly",
                    )
                )
            for file in found:
                files.setdefault(file)
        elif exists:
            files.setdefault(path)  # a file named explicitly is read whatever its suffix
        else:
            problems.append(
                Finding(
                    kind=Kind.PATH_NOT_FOUND,
                    message="no such file or folder",
                    location=Location(source=str(path)),
                    hint="check the path; folders are searched for *.avsc recursively",
                )
            )
    return list(files), problems


def _walk(folder: Path) -> tuple[list[Path], list[Path]]:
    found: list[Path] = []
    unreadable: list[Path] = []

    def on_error(err: OSError) -> None:
        unreadable.append(Path(err.filename) if err.filename else folder)

    for root, dirs, names in os.walk(folder, onerror=on_error):
        # hidden folders (.git, .venv, .cache) hold tools' files, not the project's schemas
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".avsc"):
                found.append(Path(root) / name)
    return found, unreadable


def _inspect(loader: Loader, path: Path) -> tuple[LoadedSchema, list[Finding], Fingerprints]:
    loaded = loader.load(path)
    notes = [Finding.of_note(n) for n in loaded.document.notes]
    return loaded, notes + list(lint(loaded)), fingerprints(loaded.schema)


def validate_file(path: Path, *, loader: Loader | None = None, strict: bool = False) -> FileResult:
    """Validate one file: errors from loading/parsing, warnings from ``lint``."""
    loader = loader or Loader()
    source = source_name(path)
    try:
        loaded, findings, prints = call_deep(_inspect, loader, path)
    except SchemacliError as err:
        return FileResult(source=source, findings=(error_finding(err, source),))
    except RecursionError:
        too_deep = SchemaParseError(
            "the schema is nested too deeply to process",
            location=Location(source=source),
            hint="define deep records once by name and refer to them",
        )
        return FileResult(source=source, findings=(error_finding(too_deep, source),))
    if strict:
        findings = [replace(f, severity=Severity.ERROR) for f in findings]
    return FileResult(source=source, findings=tuple(findings), loaded=loaded, fingerprints=prints)


def error_finding(err: SchemacliError, source: str) -> Finding:
    """A loading/parsing error as a finding (kind from the error class)."""
    kind = getattr(err, "kind", None) or (
        Kind.INVALID_SCHEMA if isinstance(err, SchemaParseError) else Kind.INVALID_INPUT
    )
    location = err.location or Location(source=source)
    if location.source is None:
        location = replace(location, source=source)
    return Finding(kind=kind, message=err.message, location=location, hint=err.hint)


# -- warnings --------------------------------------------------------------------------------


def lint(loaded: LoadedSchema) -> Iterator[Finding]:
    """Warnings for what Java accepts but the specification or other readers do not.

    Only the types this file defines are inspected; referenced files get their own turn.
    """
    doc = loaded.document
    own = {id(n) for n in loaded.defines}
    imported = {id(n) for n in loaded.names.types.values()} - own

    def at(pointer: str) -> Location:
        return doc.location(pointer)

    seen: set[int] = set()
    defined_at: dict[str, str] = {}
    stack: list[Schema] = [loaded.schema]
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in imported:
            continue
        seen.add(id(node))
        if isinstance(node, NamedSchema):
            yield from _named_warnings(node, defined_at, at, doc)
        if isinstance(node, RecordSchema):
            for fld in node.fields:
                yield from _field_warnings(fld, at)
            stack.extend(reversed([f.type for f in node.fields]))
        elif isinstance(node, ArraySchema):
            stack.append(node.items)
        elif isinstance(node, MapSchema):
            stack.append(node.values)
        elif isinstance(node, UnionSchema):
            stack.extend(reversed(node.types))
        yield from _logical_warnings(node, at)
    yield from _null_namespace_fallbacks(loaded)


def _null_namespace_fallbacks(loaded: LoadedSchema) -> Iterator[Finding]:
    """A short name used inside a namespace that resolves only as a name in the null namespace.

    Java looks ``Money`` up as ``com.acme.Money``, then as ``Money``; fastavro and the Python
    avro package look only for ``com.acme.Money`` and refuse the schema (checked in
    tests/unit/test_name_index.py).
    """
    _, uses = scan_names(loaded.value)
    for use in uses:
        if len(use.candidates) != 2:
            continue
        full, name = use.candidates
        if full not in loaded.names and name in loaded.names:
            yield _warning(
                Kind.NULL_NAMESPACE_FALLBACK,
                f"{name!r} is not {full!r}: Apache Avro Java finds it only by falling back to "
                f"the type {name!r} in the null namespace; fastavro and the Python avro package "
                f"look for {full!r} and refuse the schema",
                loaded.location(use.pointer),
                f"give {name} a namespace and refer to it by its full name (e.g. put it in "
                f"{full.rsplit('.', 1)[0]} and write {full!r})",
            )


def _warning(kind: Kind, message: str, location: Location, hint: str, **kw: Any) -> Finding:
    return Finding(
        kind=kind, message=message, location=location, hint=hint, severity=Severity.WARNING, **kw
    )


def _non_ascii(name: str) -> bool:
    # The parser has already refused what Java refuses; what is left and not ASCII is a
    # Unicode letter or digit.
    return not name.isascii()


# Where a JSON pointer into the file being linted is: its line:col.
_At = Callable[[str], Location]


def _named_warnings(
    node: NamedSchema, defined_at: dict[str, str], at: _At, doc: Document
) -> Iterator[Finding]:
    full = node.fullname
    if full in defined_at:
        yield _warning(
            Kind.REDEFINED_NAME,
            f"{node.type} {full} is defined a second time (first at {defined_at[full] or '/'}); "
            "Java accepts an identical redefinition, but fastavro and the Python avro package "
            'refuse the schema ("redefined named type")',
            at(node.pointer),
            f'refer to the first definition by name: "type": "{full}"',
        )
    else:
        defined_at[full] = node.pointer
    if _non_ascii(node.simple_name):
        yield _warning(
            Kind.NON_ASCII_NAME,
            f"{node.type} name {node.simple_name!r} is not ASCII; Java and fastavro accept it, "
            "but the Python avro package refuses it (InvalidName) and the Avro specification "
            "allows only [A-Za-z_][A-Za-z0-9_]*",
            at(node.pointer + "/name"),
            "use ASCII letters, digits and _ (e.g. transliterate: Fahrtä -> Fahrtae)",
        )
    if node.namespace and _non_ascii(node.namespace.replace(".", "")):
        pointer = node.pointer + (
            "/namespace" if doc.pointer_exists(node.pointer + "/namespace") else "/name"
        )
        if doc.pointer_exists(pointer):
            yield _warning(
                Kind.NON_ASCII_NAME,
                f"namespace {node.namespace!r} is not ASCII; Java and fastavro accept it, but "
                "the Python avro package refuses it (InvalidName)",
                at(pointer),
                "use ASCII letters, digits, _ and dots in namespaces",
            )
    if isinstance(node, EnumSchema):
        for i, symbol in enumerate(node.symbols):
            if _non_ascii(symbol):
                yield _warning(
                    Kind.NON_ASCII_NAME,
                    f"enum symbol {symbol!r} is not ASCII; Java accepts it, but fastavro and "
                    "the Python avro package refuse the schema",
                    at(f"{node.pointer}/symbols/{i}"),
                    "use ASCII letters, digits and _ in symbols",
                )


def _field_warnings(fld: Field, at: _At) -> Iterator[Finding]:
    if _non_ascii(fld.name):
        yield _warning(
            Kind.NON_ASCII_NAME,
            f"field name {fld.name!r} is not ASCII; Java, fastavro and the Python avro package "
            "accept it, but the Avro specification allows only [A-Za-z_][A-Za-z0-9_]* and "
            "readers that follow it strictly (and generated code) may not",
            at(fld.pointer + "/name"),
            "use ASCII letters, digits and _; keep the old name as an alias if it was in use",
        )
    logical = fld.props.get("logicalType")
    if logical is not None:
        inner = _json({"type": fld.type.type, "logicalType": logical})
        yield _warning(
            Kind.LOGICAL_TYPE_IGNORED,
            f"logicalType {_json(logical)} is set on field {fld.name!r}, not on its type; Java "
            "(and so the registry and Spark) reads a logical type only on a type, so readers "
            f"see a plain {_describe(fld.type)}",
            at(fld.pointer + "/logicalType"),
            f'move it into the type: "type": {inner}',
        )
    if fld.has_default:
        yield from _default_warnings(fld.type, fld.default, fld.pointer + "/default", at)


def _default_warnings(schema: Schema, value: Any, pointer: str, at: _At) -> Iterator[Finding]:
    """Defaults Java's parser accepts but readers disagree about."""
    if isinstance(schema, UnionSchema):
        first = schema.types[0] if schema.types else None
        if first is not None and is_valid_default(first, value):
            yield from _default_warnings(first, value, pointer, at)
            return
        for index, branch in enumerate(schema.types):
            if is_valid_default(branch, value):
                yield _warning(
                    Kind.UNION_DEFAULT_NOT_FIRST,
                    f"the default {_json(value)} fits branch {index} ({_describe(branch)}) of "
                    f"the union, not the first ({_describe(first)}); the Avro specification "
                    "requires the first branch. Java 1.12 and fastavro accept it, but the "
                    "Python avro package fails when it has to use this default "
                    "(InvalidDefaultException)",
                    at(pointer),
                    f"move {_describe(branch)} to the front of the union, or use a default of "
                    f"type {_describe(first)} (e.g. null for an optional field)",
                    new=value,
                )
                yield from _default_warnings(branch, value, pointer, at)
                return
        return
    if isinstance(schema, EnumSchema) and isinstance(value, str):
        if value not in schema.symbols:
            yield _warning(
                Kind.ENUM_DEFAULT_NOT_SYMBOL,
                f"the default {value!r} is not a symbol of enum {schema.fullname} "
                f"{list(schema.symbols)}; Java's parser accepts it, but Java (and so Spark) "
                'fails when it reads data without this field ("enum value is not in the enum '
                'symbol set"), while fastavro and the Python avro package return the unknown '
                "symbol",
                at(pointer),
                f"use one of the symbols: {', '.join(schema.symbols)}",
                new=value,
            )
        return
    if schema.type in ("bytes", "fixed") and isinstance(value, str):
        wide = next((ch for ch in value if ord(ch) > 0xFF), None)
        if wide is not None:
            yield _warning(
                Kind.BYTES_DEFAULT_NOT_LATIN1,
                f"the default contains {wide!r} (U+{ord(wide):04X}); a bytes/fixed default is a "
                "string of code points \\u0000-\\u00ff, one per byte. Readers disagree on "
                "anything above: Java turns it into '?', the Python avro package into its UTF-8 "
                "bytes, fastavro returns the text unchanged",
                at(pointer),
                "write each byte as one character \\u0000-\\u00ff (e.g. \\u00c4 for byte 0xC4)",
                new=value,
            )
            return
    if isinstance(schema, FixedSchema) and isinstance(value, str):
        size = len(value)
        if size != schema.size:
            yield _warning(
                Kind.FIXED_DEFAULT_SIZE,
                f"the default has {size} byte(s) but fixed {schema.fullname} has size "
                f"{schema.size}; readers disagree on what it yields (Java cuts or pads it to "
                f"{schema.size} bytes, fastavro and the Python avro package return all {size})",
                at(pointer),
                f"write exactly {schema.size} characters, each \\u0000-\\u00ff (one byte each)",
                new=value,
            )
        return
    if isinstance(schema, RecordSchema) and isinstance(value, dict):
        for fld in schema.fields:
            if fld.name in value:
                yield from _default_warnings(fld.type, value[fld.name], f"{pointer}/{fld.name}", at)
    elif isinstance(schema, ArraySchema) and isinstance(value, list):
        for i, item in enumerate(value):
            yield from _default_warnings(schema.items, item, f"{pointer}/{i}", at)
    elif isinstance(schema, MapSchema) and isinstance(value, dict):
        for key, item in value.items():
            yield from _default_warnings(schema.values, item, f"{pointer}/{key}", at)


def _logical_warnings(node: Schema, at: _At) -> Iterator[Finding]:
    logical = node.logical_type
    if logical is None or not isinstance(node, PrimitiveSchema | FixedSchema):
        return
    pointer = node.pointer + "/logicalType"
    bases = LOGICAL_BASES.get(logical)
    if bases is None:
        return  # a custom logical type: every reader ignores it, by design
    if (
        node.type not in bases
        or (logical == "uuid" and isinstance(node, FixedSchema) and node.size != 16)
        or (logical == "duration" and isinstance(node, FixedSchema) and node.size != 12)
    ):
        need = " or ".join(
            "fixed(16)"
            if (logical == "uuid" and b == "fixed")
            else "fixed(12)"
            if logical == "duration"
            else b
            for b in bases
        )
        yield _warning(
            Kind.LOGICAL_TYPE_IGNORED,
            f"logicalType {logical!r} does not apply to {_describe(node)} (it needs {need}); "
            "Java and the Python avro package ignore it, so readers see a plain "
            f"{node.type}",
            at(pointer),
            f'use {need} as the type, or remove "logicalType"',
        )
        return
    if logical == "decimal":
        yield from _decimal_warnings(node, at)


def _decimal_warnings(node: Schema, at: _At) -> Iterator[Finding]:
    props = node.props
    base = node.pointer
    precision, scale = props.get("precision"), props.get("scale", 0)
    problem = decimal_problem(props, node.size if isinstance(node, FixedSchema) else None)
    ignored = "Java and the Python avro package ignore the logical type (plain bytes)"
    if problem is DecimalProblem.PRECISION:
        refusers = (
            "fastavro refuses the schema"
            if precision is not None and type(precision) is not int
            else "fastavro accepts it"
        )
        yield _warning(
            Kind.INVALID_DECIMAL,
            f"decimal precision {_json(precision)} is not a positive integer; {ignored}; "
            f"{refusers}",
            at(base + ("/precision" if "precision" in props else "")),
            'give "precision": the total number of digits, a positive integer',
        )
        return
    if problem is DecimalProblem.SCALE:
        yield _warning(
            Kind.INVALID_DECIMAL,
            f"decimal scale {_json(scale)} is not a non-negative integer; {ignored}; fastavro "
            "refuses the schema",
            at(base + "/scale"),
            'give "scale": the digits after the point, 0 <= scale <= precision',
        )
        return
    if problem is DecimalProblem.SCALE_ABOVE_PRECISION:
        yield _warning(
            Kind.INVALID_DECIMAL,
            f"decimal scale {scale} is greater than precision {precision}; {ignored}; fastavro "
            "refuses the schema",
            at(base + "/scale"),
            f"make scale at most {precision}, or raise precision to at least {scale}",
            old=precision,
            new=scale,
        )
        return
    if problem is DecimalProblem.FIXED_TOO_SMALL and isinstance(node, FixedSchema):
        most, precision = max_decimal_precision(node.size), props["precision"]
        yield _warning(
            Kind.INVALID_DECIMAL,
            f"fixed {node.fullname} of {node.size} byte(s) holds at most {most} decimal "
            f"digits, not precision {precision}; {ignored.replace('bytes', 'fixed')}; "
            "fastavro refuses the schema",
            at(base + "/precision"),
            f"raise size to at least {min_fixed_size(precision)} or lower precision to {most}",
        )


def _json(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(schema: Schema | None) -> str:
    if schema is None:
        return "nothing"
    if isinstance(schema, NamedSchema):
        return f"{schema.type} {schema.fullname}"
    if isinstance(schema, ArraySchema):
        return "array"
    if isinstance(schema, MapSchema):
        return "map"
    return schema.type
