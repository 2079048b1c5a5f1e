"""``gate --fix``: every version the gate checks, fixed as ``check --fix`` fixes one file.

The versions and their histories are the gate's (``gate.version_checks``: without a base every
version from the second on, with one the versions new since it); each is fixed by the one fix
road, ``fixing.fix_candidate``, against its history, oldest first, so a later version is fixed
against the earlier ones as they will be written. A subject whose versions do not parse, or a
store that cannot be listed, is left alone: the gate run after the fixes reports it. Pure: the
caller writes the texts (atomically, all or none) or prints their diffs.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.levels import SubjectLevels
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.fixes.fixing import Fixed, fix_candidate, reloaded
from schemacli.contracts.gate.gate import parse_versions, version_checks
from schemacli.contracts.store.contractfiles import Contracts, read_contracts
from schemacli.contracts.store.history import read_versions
from schemacli.contracts.store.references import ParseMemo, References
from schemacli.contracts.store.tree import StoreLayoutErrors, Tree
from schemacli.errors import SchemacliError

__all__ = ["FixedVersion", "fix_store"]


@dataclass(frozen=True)
class FixedVersion:
    """One version the fixes changed: its subject, number, the file as messages name it, the
    encoding it was read in, and the outcome (``fixed.text`` is what to write)."""

    subject: str
    version: int
    source: str
    encoding: str
    fixed: Fixed


def fix_store(
    head: Tree,
    levels: SubjectLevels,
    *,
    base: Tree | None = None,
    verdicts: VerdictCache | None = None,
    unsafe: bool = False,
) -> tuple[FixedVersion, ...]:
    """The versions of ``head`` the fixes change, by subject then version (see the module's
    docstring); safe fixes only unless ``unsafe``. Raises nothing for a store the gate reports
    as invalid: such a subject is skipped."""
    try:
        head_index = head.subjects()
    except StoreLayoutErrors as err:  # the badly named files are the gate's to report
        head_index = err.index
    except SchemacliError:
        return ()
    base_index: dict[str, dict[int, str]] = {}
    if base is not None:
        try:
            base_index = base.subjects()
        except StoreLayoutErrors as err:
            base_index = err.index
        except SchemacliError:
            return ()
    head_refs = References(head, head_index)
    base_refs = References(base, base_index) if base is not None else None
    verdicts = verdicts if verdicts is not None else VerdictCache()
    changed: list[FixedVersion] = []
    for subject in sorted(head_index):
        try:
            versions = _versions(subject, head_refs, base_refs)
        except SchemacliError:
            continue  # a history that cannot be read cannot be fixed: the gate says why
        if versions is None:
            continue
        head_loaded, base_loaded, contracts = versions
        level = levels.level_for(subject)
        now: dict[int, LoadedSchema] = {}  # the versions fixed so far, as they will be written
        for candidate, before, _ in version_checks(head_loaded, base_loaded, contracts):
            history = [now.get(v.version or 0, v) for v in before]
            fixed = fix_candidate(
                candidate, history, subject=subject, level=level, unsafe=unsafe, verdicts=verdicts
            )
            if not fixed.changed:
                continue
            n = candidate.version or 0
            now[n] = reloaded(candidate, fixed.text)
            changed.append(
                FixedVersion(subject, n, candidate.source, candidate.document.encoding, fixed)
            )
    return tuple(changed)


def _versions(
    subject: str, head: References, base: References | None
) -> tuple[list[LoadedSchema], list[LoadedSchema] | None, Contracts | None] | None:
    """The subject's parsed versions in ``head`` and ``base`` (None without a base) and its
    contracts; None when a version does not parse."""
    in_head = head.index.get(subject, {})
    # versions the base has and the working tree lacks are deleted ones (the gate reports
    # them), not a gap in the numbering
    deleted = sorted(set(base.index.get(subject, {})) - set(in_head)) if base is not None else []
    head_files = read_versions(head.tree, head.index, subject, deleted=deleted)
    base_files = read_versions(base.tree, base.index, subject) if base is not None else []
    memo: ParseMemo = {}
    head_loaded, problems = parse_versions(head_files, head, memo)
    base_loaded, base_problems = (
        parse_versions(base_files, base, memo) if base is not None else ([], [])
    )
    if problems or base_problems:
        return None
    contracts = read_contracts(head.tree, head.index, subject)
    return head_loaded, base_loaded if base is not None else None, contracts
