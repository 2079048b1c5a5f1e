"""``check --fix``: apply the suggested fixes of a candidate's findings, re-check, repeat.

The fixes come from ``suggest`` (each verified there against every comparison of the level);
this module applies the first usable fix of each finding (safe ones; unsafe ones only when
asked), checks the new text again and repeats until it is compatible or nothing more applies,
as ruff's ``--fix`` does. Pure: the caller writes the text (atomically) or prints a diff.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.avro.schema import NamedSchema, Names, named_types
from schemacli.contracts.evolution.check import CheckReport, check_candidate
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.fixes.edits import Applicability, Fix, apply_fixes
from schemacli.errors import SchemacliError

__all__ = ["Fixed", "fix_candidate", "reloaded"]


@dataclass(frozen=True)
class Fixed:
    """The outcome of fixing a candidate: its new text (``text == before`` when nothing
    applied), the fixes applied, in order, and the check of the final text."""

    before: str
    text: str
    applied: tuple[Fix, ...]
    report: CheckReport

    @property
    def changed(self) -> bool:
        return self.text != self.before


def reloaded(candidate: LoadedSchema, text: str) -> LoadedSchema:
    """``candidate`` with its text replaced by ``text`` (same source, same references).
    Raises InputError / SchemaParseError if the text is not a valid schema."""
    names = None
    if candidate.references:
        known: dict[str, NamedSchema] = {}
        for ref in candidate.references:
            for named in named_types(ref.schema):
                known.setdefault(named.fullname, named)
        names = Names(known)
    loaded = load_schema_text(text, candidate.source, version=candidate.version, names=names)
    return dataclasses.replace(candidate, document=loaded.document, schema=loaded.schema)


def fix_candidate(
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    *,
    subject: str,
    level: Level,
    unsafe: bool = False,
    passes: int = 10,
    verdicts: VerdictCache | None = None,
) -> Fixed:
    """Apply the first applicable fix of each finding, re-check, and repeat (as ruff does)
    until the candidate is compatible, nothing more applies, or ``passes`` runs out."""
    before = candidate.document.text
    applied: list[Fix] = []
    current = candidate
    report = check_candidate(current, history, subject=subject, level=level, verdicts=verdicts)
    for _ in range(passes):
        firsts: list[Fix] = []
        for finding in report.findings:
            usable = [
                fix
                for fix in finding.fixes
                if fix.applies and (fix.applicability is Applicability.SAFE or unsafe)
            ]
            # one fix may resolve findings of several comparisons: offered once
            if usable and all(usable[0].edits != other.edits for other in firsts):
                firsts.append(usable[0])
        if not firsts:
            break
        # All at once when they go together, else the first alone (each was verified alone).
        for batch in (firsts, firsts[:1]):
            text, taken, _ = apply_fixes(current.document.text, batch, unsafe=unsafe)
            try:
                next_candidate = reloaded(current, text) if taken else None
            except SchemacliError:
                continue
            break
        else:  # pragma: no cover - the first fix alone was parsed when verified
            break
        if next_candidate is None or text == current.document.text:
            break
        current = next_candidate
        applied.extend(taken)
        report = check_candidate(current, history, subject=subject, level=level, verdicts=verdicts)
        if report.compatible:
            break
    return Fixed(before, current.document.text, tuple(applied), report)
