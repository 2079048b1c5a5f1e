"""The local gate: every subject of a store checked at its level, every problem a finding.

``gate`` walks the store (``store.Tree``), checks each new version with ``check.check_candidate``
and adds what only a history can show: a version changed or deleted since a base ref, a
duplicate version, a configured subject the store does not hold. A subject that cannot be read
is a row with an input-error finding, never a stop.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from schemacli.contracts.check import (
    INPUT_KINDS,
    INVALID_SCHEMA,
    STORE_LAYOUT,
    Verdict,
    check_candidate,
)
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.levels import Level, SubjectLevels
from schemacli.contracts.loader import LoadedSchema
from schemacli.contracts.store import (
    References,
    StoreLayoutError,
    Tree,
    VersionFile,
    read_versions,
)
from schemacli.errors import InputError, Location, SchemacliError

# Finding kinds only the gate reports (next to the input kinds and the engine's).
HISTORY_REWRITTEN = "HISTORY_REWRITTEN"  # an existing version changed since the base ref
VERSION_DELETED = "VERSION_DELETED"  # an existing version is gone since the base ref
SUBJECT_DELETED = "SUBJECT_DELETED"  # a whole subject is gone (a warning: may be intended)
UNKNOWN_SUBJECT = "UNKNOWN_SUBJECT"  # the config names a subject the store does not hold
DUPLICATE_VERSION = "DUPLICATE_VERSION"  # identical to an earlier version: not a new version


@dataclass(frozen=True)
class SubjectReport:
    """One subject's row in the gate's summary, with all its findings."""

    subject: str
    level: Level
    versions: int
    checked: tuple[int, ...]  # the versions that were checked (new or changed ones with --against)
    findings: tuple[Finding, ...] = ()

    @property
    def verdict(self) -> Verdict:
        if any(f.kind in INPUT_KINDS for f in self.findings):
            return Verdict.INVALID
        if any(f.severity is Severity.ERROR for f in self.findings):
            return Verdict.INCOMPATIBLE
        return Verdict.COMPATIBLE


@dataclass(frozen=True)
class GateReport:
    """The gate over a whole store: one row per subject."""

    store: str
    against: str | None
    subjects: tuple[SubjectReport, ...] = field(default_factory=tuple)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for s in self.subjects for f in s.findings)

    @property
    def verdict(self) -> Verdict:
        verdicts = {s.verdict for s in self.subjects}
        for verdict in (Verdict.INVALID, Verdict.INCOMPATIBLE):
            if verdict in verdicts:
                return verdict
        return Verdict.COMPATIBLE


def gate(head: Tree, levels: SubjectLevels, *, base: Tree | None = None) -> GateReport:
    """Check every subject of ``head`` at its level; with ``base``, only what changed since it.

    Without ``base``: every version against the versions before it. With ``base`` (the store at
    a git ref): versions that are new since ``base`` against the history at ``base``; an existing
    version that changed or disappeared is a violation (history is immutable). Every problem is
    a finding; nothing stops at the first.
    """
    store = head.source("").rstrip("/") or "."
    against = base.label if base is not None else None
    try:
        head_index = head.subjects()
    except InputError as err:
        return GateReport(store, against, (_store_error_row(levels, err),))
    base_index: dict[str, dict[int, str]] = {}
    if base is not None:
        try:
            base_index = base.subjects()
        except InputError as err:
            return GateReport(store, against, (_store_error_row(levels, err),))
    rows = []
    for subject in sorted(set(head_index) | set(base_index)):
        level = levels.level_for(subject)
        try:
            rows.append(_gate_subject(subject, level, head, head_index, base, base_index))
        except InputError as err:
            rows.append(input_error_row(subject, level, err, len(head_index.get(subject, {}))))
    known = set(head_index) | set(base_index)
    rows += [
        _unknown_subject_row(subject, level, levels.source, sorted(known))
        for subject, level in sorted(levels.subjects.items())
        if subject not in known
    ]
    return GateReport(store, against, tuple(rows))


def _unknown_subject_row(
    subject: str, level: Level, config: str | None, known: list[str]
) -> SubjectReport:
    """A warning row: the config sets a level for a subject the store does not hold (a typo
    there would quietly leave the real subject at the default level)."""
    close = difflib.get_close_matches(subject, known, n=1)
    finding = Finding(
        kind=UNKNOWN_SUBJECT,
        severity=Severity.WARNING,
        message=f"the config sets level {level} for subject {subject!r}, which the store does "
        "not hold" + (f" (did you mean {close[0]!r}?)" if close else ""),
        location=Location(source=config),
        hint="fix the subject's name in the config, or remove its table",
        subject=subject,
    )
    return SubjectReport(subject, level, 0, (), (finding,))


def input_error_row(
    subject: str, level: Level, err: SchemacliError, versions: int = 0
) -> SubjectReport:
    """A gate row for a subject (or the whole store) that could not be read."""
    finding = Finding(
        kind=STORE_LAYOUT if isinstance(err, StoreLayoutError) else INVALID_SCHEMA,
        message=err.message,
        location=err.location or Location(),
        hint=err.hint,
        subject=None if subject == "(store)" else subject,
    )
    return SubjectReport(subject, level, versions, (), (finding,))


def _store_error_row(levels: SubjectLevels, err: SchemacliError) -> SubjectReport:
    """The one row of a store that could not be listed."""
    return input_error_row("(store)", levels.level_for("(store)"), err)


def parse_versions(
    files: Sequence[VersionFile], resolver: References, memo: dict | None = None
) -> tuple[list[LoadedSchema], list[Finding]]:
    """Parse every version; the ones that fail become INVALID_SCHEMA findings."""
    loaded, problems = [], []
    for f in files:
        try:
            loaded.append(resolver.load(f, memo))
        except SchemacliError as err:
            problems.append(
                Finding(
                    kind=INVALID_SCHEMA,
                    message=err.message,
                    location=err.location or Location(source=f.source),
                    hint=err.hint,
                    subject=f.subject,
                )
            )
    return loaded, problems


def _gate_subject(
    subject: str,
    level: Level,
    head: Tree,
    head_index: dict[str, dict[int, str]],
    base: Tree | None,
    base_index: dict[str, dict[int, str]],
) -> SubjectReport:
    head_files = read_versions(head, head_index, subject)
    base_files = read_versions(base, base_index, subject) if base is not None else []
    findings: list[Finding] = []

    memo: dict = {}
    base_loaded, base_problems = (
        parse_versions(base_files, References(base, base_index), memo)
        if base is not None
        else ([], [])
    )
    head_loaded, problems = parse_versions(head_files, References(head, head_index), memo)
    findings.extend(problems)
    findings.extend(base_problems)
    if findings:  # a history that does not parse cannot be checked
        return SubjectReport(subject, level, len(head_files), (), tuple(findings))

    if base is not None and base_files and not head_files:
        findings.append(
            Finding(
                kind=SUBJECT_DELETED,
                severity=Severity.WARNING,
                message=f"subject {subject!r} ({len(base_files)} versions at {base.label}) is "
                "gone from the store",
                location=Location(source=base_files[-1].source),
                hint="if the subject is still registered, keep its history in the store",
                subject=subject,
            )
        )
        return SubjectReport(subject, level, 0, (), tuple(findings))

    # The history each candidate is checked against: the base's versions where they exist.
    effective = list(base_loaded) + head_loaded[len(base_loaded) :]
    for old in base_loaded:
        n = old.version or 0
        if n > len(head_loaded):
            findings.append(
                Finding(
                    kind=VERSION_DELETED,
                    message=f"{subject} v{n} exists at {base.label if base else 'the base'} "
                    "but not any more: history is immutable",
                    location=Location(source=old.source),
                    hint=f"restore v{n}; to change the contract, add a new version instead",
                    subject=subject,
                )
            )
        elif head_loaded[n - 1].identity != old.identity:
            findings.append(
                Finding(
                    kind=HISTORY_REWRITTEN,
                    message=f"{subject} v{n} was changed since "
                    f"{base.label if base else 'the base'}: registered versions are immutable",
                    location=_first_difference(head_loaded[n - 1], old),
                    hint=f"restore v{n} as it was (git checkout {base.label[4:] if base else 'REF'}"
                    f" -- {head_loaded[n - 1].source}) and put the change in "
                    f"v{len(head_loaded) + 1}.avsc",
                    subject=subject,
                )
            )

    first_new = len(base_loaded) + 1 if base is not None else 2
    checked = []
    for candidate in head_loaded[first_new - 1 :]:
        n = candidate.version or 0
        checked.append(n)
        before = effective[: n - 1]
        report = check_candidate(candidate, before, subject=subject, level=level)
        if report.identical_to is not None:
            findings.append(
                Finding(
                    kind=DUPLICATE_VERSION,
                    message=f"{subject} v{n} is identical to v{report.identical_to}: the registry "
                    f"would not register it as a new version (it returns v{report.identical_to})",
                    location=candidate.location(),
                    hint=f"delete v{n}.avsc, or make the change it was meant to make",
                    subject=subject,
                )
            )
        findings.extend(report.findings)
    return SubjectReport(subject, level, len(head_files), tuple(checked), tuple(findings))


def _first_difference(new: LoadedSchema, old: LoadedSchema) -> Location:
    """The first line where ``new``'s text differs from ``old``'s (for a CI annotation)."""
    new_lines, old_lines = new.document.text.splitlines(), old.document.text.splitlines()
    for number, (a, b) in enumerate(zip(new_lines, old_lines, strict=False), start=1):
        if a != b:
            column = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            return Location(new.source, line=number, column=(column or min(len(a), len(b))) + 1)
    line = min(len(new_lines), len(old_lines)) + 1 if new_lines else 1
    return Location(new.source, line=min(line, max(len(new_lines), 1)), column=1)
