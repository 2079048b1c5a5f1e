"""A gate's result: one row per subject of the store (``SubjectReport``), the whole store's
report (``GateReport``) and their verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field

from schemacli.contracts.evolution.check import INPUT_KINDS, Verdict
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding, Severity


@dataclass(frozen=True)
class SubjectReport:
    """One subject's row in the gate's summary, with all its findings."""

    subject: str
    level: Level
    versions: int
    checked: tuple[int, ...]  # the versions that were checked (new or changed ones with --against)
    findings: tuple[Finding, ...] = ()
    # False: with --against, the subject's files are as they were at the ref, so it was not
    # judged again (--against judges what a change brings)
    judged: bool = True

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
    # the subjects whose folder the gate read holding no contract file at all (the rules'
    # pass over the same tree, ``rules.store.rules_gate``, does not read them again)
    without_contracts: frozenset[str] = frozenset()

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for s in self.subjects for f in s.findings)

    @property
    def not_judged(self) -> int:
        """How many subjects were left as they were at the base, not judged again."""
        return sum(not s.judged for s in self.subjects)

    @property
    def verdict(self) -> Verdict:
        verdicts = {s.verdict for s in self.subjects}
        for verdict in (Verdict.INVALID, Verdict.INCOMPATIBLE):
            if verdict in verdicts:
                return verdict
        return Verdict.COMPATIBLE
