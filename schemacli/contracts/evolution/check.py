"""Checking one candidate schema against a subject's history, Confluent-style.

The history may come from the store, a git ref or a registry: ``check_candidate`` takes it as an
argument. Which versions and directions a level checks is ``levels``' table; the verdict of each
reader/writer pair is the engine's (``compat``); this module places each finding in its reader's
text and decides the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.compat import _DIRECTION_WORDS
from schemacli.contracts.evolution.levels import BACKWARD, Level, compared_versions
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.contracts.fixes.edits import Fix
from schemacli.contracts.fixes.suggest import FixContext, fixes_for
from schemacli.errors import ExitCode

# Finding kinds that are input errors (exit 2), next to the engine's Avro incompatibility kinds.
INPUT_KINDS = frozenset({Kind.INVALID_SCHEMA, Kind.STORE_LAYOUT})


class Verdict(StrEnum):
    COMPATIBLE = "compatible"
    INCOMPATIBLE = "incompatible"
    INVALID = "invalid"  # input errors: nothing could be decided

    @property
    def exit_code(self) -> ExitCode:
        return {
            Verdict.COMPATIBLE: ExitCode.OK,
            Verdict.INCOMPATIBLE: ExitCode.CHECK_FAILED,
            Verdict.INVALID: ExitCode.INPUT_ERROR,
        }[self]


@dataclass(frozen=True)
class CheckReport:
    """The result of checking one schema against a subject's history."""

    subject: str
    level: Level
    candidate: str  # the candidate's source
    history: tuple[int, ...]  # the versions the subject had
    checked_against: tuple[int, ...]  # the versions the level compared with
    findings: tuple[Finding, ...]
    identical_to: int | None = None  # re-submission of an existing version: not a new version
    readers: tuple[str, ...] = ()  # the consumers whose declared readers judged the candidate

    @property
    def compatible(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)

    @property
    def verdict(self) -> Verdict:
        if any(f.kind in INPUT_KINDS for f in self.findings):
            return Verdict.INVALID
        return Verdict.COMPATIBLE if self.compatible else Verdict.INCOMPATIBLE


def check_candidate(
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    *,
    subject: str,
    level: Level,
    verdicts: VerdictCache | None = None,
    fixes: bool = True,
) -> CheckReport:
    """Check ``candidate`` against ``history`` (oldest first) at ``level``, Confluent-style.

    ``history`` may come from the store, a git ref or a registry: this function does not care.
    A schema identical to an existing version is not a new version: compatible, no check. The
    first version always passes. Every incompatibility with every compared version is a finding,
    placed (file, line:col) in the reader's text, as Java's location is the reader's: the
    candidate for BACKWARD, the old version for FORWARD. ``verdicts`` remembers verdicts
    across calls (and runs, with a directory); without it, nothing is kept. With ``fixes``,
    each incompatibility carries the edits of the candidate that resolve it at ``level``
    (``suggest``), computed only for the findings there are.
    """
    numbers = tuple(h.version or i for i, h in enumerate(history, start=1))
    # Warnings about the JSON itself (comments, duplicate keys): reported, never failing.
    notes = tuple(Finding.of_note(n, subject=subject or None) for n in candidate.document.notes)
    for number, old in zip(numbers, history, strict=True):
        if old.identity == candidate.identity:
            return CheckReport(subject, level, candidate.source, numbers, (), notes, number)
    checked = tuple(numbers[i] for i in compared_versions(level, len(history)))
    labels = _Labels(subject, numbers, history)
    if verdicts is None:
        verdicts = VerdictCache(by_content=False)
    findings = _incompatibilities(
        candidate, history, labels, subject=subject, level=level, verdicts=verdicts, fixes=fixes
    )
    return CheckReport(subject, level, candidate.source, numbers, checked, notes + findings)


class _Labels:
    """How findings name each earlier version (``subject vN``, else its source), made only
    for the versions that have findings."""

    def __init__(self, subject: str, numbers: Sequence[int], history: Sequence[LoadedSchema]):
        self.subject, self.numbers, self.history = subject, numbers, history

    def __getitem__(self, index: int) -> str:
        if self.subject:
            return f"{self.subject} v{self.numbers[index]}"
        return self.history[index].source


def _incompatibilities(
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    labels: _Labels,
    *,
    subject: str,
    level: Level,
    verdicts: VerdictCache,
    fixes: bool,
) -> tuple[Finding, ...]:
    pairs = [pair for pair in verdicts.pairs(level, candidate, history) if pair.result.findings]
    context = FixContext(candidate, history, level) if fixes and pairs else None
    # All of one direction's findings together (BACKWARD first), each placed in its reader's
    # file, its message saying which version and direction (as compat.check_pairs words it).
    pairs.sort(key=lambda pair: level.directions.index(pair.direction))
    found: list[Finding] = []
    for pair in pairs:
        reader = candidate if pair.direction == BACKWARD else history[pair.index]
        words = _DIRECTION_WORDS[pair.direction].format(label=labels[pair.index])
        found.extend(
            replace(
                finding,
                message=f"{finding.message} ({words}.)",
                location=reader.location(finding.location.pointer),
                subject=subject or None,
                fixes=(
                    _in(candidate, reader, fixes_for(context, finding, pair.index, pair.direction))
                    if context is not None
                    else finding.fixes
                ),
            )
            for finding in pair.result.findings
        )
    return tuple(found)


def _in(candidate: LoadedSchema, reader: LoadedSchema, fixes: tuple[Fix, ...]) -> tuple[Fix, ...]:
    """``fixes`` (edits of the candidate) naming the candidate's file when the finding is placed
    in another one (the earlier version, for FORWARD)."""
    if reader is candidate:
        return fixes
    source = candidate.source  # (a Fix made as dataclasses.replace would, at a fifth of its cost)
    return tuple(
        Fix(fix.title, fix.applicability, fix.edits, source) if fix.edits else fix for fix in fixes
    )
