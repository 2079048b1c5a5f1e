"""``check --fix``: apply the suggested fixes of a candidate's findings, re-check, repeat.

The fixes come from ``suggest`` (each proven there against every comparison of the level);
this module applies the first usable fix of each finding (safe ones; unsafe ones only when
asked), checks the new text again and repeats until it is compatible or nothing more applies,
as ruff's ``--fix`` does. Every pass applies at least one fix, and a proven fix removes its
finding and adds none (except the findings an ambiguous field had hidden from Java, which are
new work), so the passes are bounded by the findings met, never by a constant. Fixes proven
alone that cannot go together are tried in halves (``edits.apply_checked``): one that does not
fit is dropped, with the reason, and the others apply. The result the caller gets is the last
whole check of the applied text. Pure: the caller writes the text (atomically) or prints a diff.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.avro.schema import NamedSchema, Names, named_types
from schemacli.contracts.evolution.check import CheckReport, check_candidate
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.findings import Finding, Severity
from schemacli.contracts.fixes.edits import Applicability, Dropped, Fix, apply_checked
from schemacli.errors import SchemacliError

__all__ = ["Fixed", "fix_candidate", "reloaded"]


@dataclass(frozen=True)
class Fixed:
    """The outcome of fixing a candidate: its new text (``text == before`` when nothing
    applied), the fixes applied, in order, the fixes dropped (with why), the check of the final
    text and how many passes it took."""

    before: str
    text: str
    applied: tuple[Fix, ...]
    report: CheckReport
    dropped: tuple[Dropped, ...] = ()
    passes: int = 0

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
    verdicts: VerdictCache | None = None,
) -> Fixed:
    """Apply the first applicable fix of each finding, re-check, and repeat (as ruff does)
    until the candidate is compatible or nothing more applies."""
    before = candidate.document.text
    applied: list[Fix] = []
    dropped: dict[tuple[str, str], Dropped] = {}
    current = candidate
    report = check_candidate(current, history, subject=subject, level=level, verdicts=verdicts)
    seen = {_key(f) for f in report.findings}
    left = len(seen)  # passes left: one per finding met (each pass removes one at least)
    passes = 0
    while left > 0 and not report.compatible:
        left -= 1
        firsts = _firsts(report.findings, unsafe)
        if not firsts:
            break
        text, taken, refused = apply_checked(
            current.document.text, firsts, partial(_refusal, current), unsafe=unsafe
        )
        for one in refused:
            dropped.setdefault((one.fix.title, one.reason), one)
        if not taken:
            break
        passes += 1
        current = reloaded(current, text)
        applied.extend(taken)
        report = check_candidate(current, history, subject=subject, level=level, verdicts=verdicts)
        new = {_key(f) for f in report.findings} - seen
        seen |= new
        left += len(new)  # found once an ambiguous field is gone: more work, never a loop
    done = {fix.title for fix in applied}  # dropped from a pass, applied on a later one
    left_out = tuple(d for d in dropped.values() if d.fix.title not in done)
    return Fixed(before, current.document.text, tuple(applied), report, left_out, passes)


def _firsts(findings: Sequence[Finding], unsafe: bool) -> list[Fix]:
    """The first usable fix of each error finding, each once (one fix may resolve findings of
    several comparisons)."""
    out: list[Fix] = []
    edits: set[tuple[object, ...]] = set()
    for finding in findings:
        if finding.severity is not Severity.ERROR:
            continue
        usable = next(
            (
                fix
                for fix in finding.fixes
                if fix.applies and (fix.applicability is Applicability.SAFE or unsafe)
            ),
            None,
        )
        if usable is not None and usable.edits not in edits:
            edits.add(usable.edits)
            out.append(usable)
    return out


def _refusal(candidate: LoadedSchema, text: str) -> str | None:
    """Why ``text`` cannot replace the candidate's (None: it is a valid schema, with no key
    repeated in an object unless the candidate repeated one: two fixes proven alone may each
    add the same member, such as ``aliases``, to one object)."""
    try:
        again = reloaded(candidate, text)
    except SchemacliError as err:
        return f"the result would not parse: {err.message}"
    except RecursionError:
        return "the result would nest too deeply"
    if again.document.has_duplicates and not candidate.document.has_duplicates:
        return "it adds a member another fix adds too (applied on the next pass)"
    return None


def _key(finding: Finding) -> tuple[object, ...]:
    return (finding.kind, finding.message, finding.location.source, finding.location.pointer)
