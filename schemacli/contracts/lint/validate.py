"""Validating .avsc files: errors where Apache Avro Java refuses, warnings where others would.

``validate_paths`` loads every file (folders are walked for ``*.avsc``) with the
reference-aware loader. What the registry's parser (Java 1.12) refuses is an *error*. What Java
accepts but the Avro specification or another common reader does not is a *warning* naming the
consumers that would refuse it: each is a lint rule marked ``validate`` (``contracts.lint.rules``;
docs/lint.md), run here through the same walk as ``schemacli lint``, so the two never disagree.
Each claim was checked against Java 1.12.0 (the jar in pyspark), fastavro 1.13 and the ``avro``
package 1.12 (see tests/unit/test_validate_claims.py):

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

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from schemacli.contracts.avro.canonical import Fingerprints, fingerprints
from schemacli.contracts.avro.loader import LoadedSchema, Loader
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.jsontext.nesting import call_deep
from schemacli.contracts.jsontext.source import is_stdin, source_name
from schemacli.contracts.lint.files import error_finding, expand_paths, too_deep
from schemacli.contracts.lint.rule import Styles
from schemacli.contracts.lint.rules import RULES
from schemacli.contracts.lint.walk import check
from schemacli.errors import SchemacliError
from schemacli.frozen import frozen_dataclass

# The rules validate reports: Java accepts the schema, another reader does not.
VALIDATE_RULES = frozenset(rule.kind for rule in RULES if rule.validate)


@frozen_dataclass
class FileResult:
    """One file: its findings and, when it parsed, the loaded schema and its fingerprints."""

    source: str
    findings: tuple[Finding, ...] = ()
    loaded: LoadedSchema | None = None
    fingerprints: Fingerprints | None = None

    @property
    def ok(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)


@frozen_dataclass
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


def warnings_about(loaded: LoadedSchema) -> list[Finding]:
    """The warnings about ``loaded``: the validate rules' findings (a suggested fix may not add
    one, ``fixes.guards``)."""
    return check(loaded, VALIDATE_RULES, Styles())


def _inspect(loader: Loader, path: Path) -> tuple[LoadedSchema, list[Finding], Fingerprints]:
    loaded = loader.load(path)
    return loaded, warnings_about(loaded), fingerprints(loaded.schema)


def validate_file(path: Path, *, loader: Loader | None = None, strict: bool = False) -> FileResult:
    """Validate one file: errors from loading/parsing, warnings from the validate rules."""
    loader = loader or Loader()
    source = source_name(path)
    try:
        loaded, findings, prints = call_deep(_inspect, loader, path)
    except SchemacliError as err:
        return FileResult(source=source, findings=(error_finding(err, source),))
    except RecursionError:
        return FileResult(source=source, findings=(too_deep(source),))
    if strict:
        findings = [replace(f, severity=Severity.ERROR) for f in findings]
    return FileResult(source=source, findings=tuple(findings), loaded=loaded, fingerprints=prints)
