"""Rule sets in the store: each version's ``v<N>.contract.json`` read with positions, and the
gate's pass over them (docs/store.md#data-contracts, docs/rules.md).

``rules_gate`` adds to a gate report, row by row, the findings of ``judge.judge_versions`` for
the subjects that have contract files: the versions the gate checked (every version, without
``--against``). A row whose versions do not parse is left as it is (its findings say why).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.check import INPUT_KINDS, CheckReport
from schemacli.contracts.findings import Finding
from schemacli.contracts.gate.gate import input_error_row
from schemacli.contracts.gate.rows import GateReport
from schemacli.contracts.rules.judge import Version, judge_contract, judge_versions
from schemacli.contracts.rules.model import (
    CONTRACT_SUFFIX,
    Contract,
    RulesPolicy,
    parse_contract,
    read_contract,
)
from schemacli.contracts.store.history import load_history
from schemacli.contracts.store.tree import Tree
from schemacli.errors import InputError


def contract_paths(versions: dict[int, str]) -> dict[int, str]:
    """version -> the path of its contract file (``subjects/s/v2.contract.json``)."""
    return {n: p.removesuffix(".avsc") + CONTRACT_SUFFIX for n, p in versions.items()}


def read_store_contracts(tree: Tree, versions: dict[int, str]) -> dict[int, Contract]:
    """The contract files of a subject's versions that have one; InputError (file:line:col)
    for one that is not a contract."""
    paths = contract_paths(versions)
    texts = tree.read(list(paths.values()), optional=True)
    return {
        n: parse_contract(texts[p] or "", tree.source(p))
        for n, p in sorted(paths.items())
        if texts[p] is not None
    }


def subject_rule_findings(
    tree: Tree,
    subject: str,
    versions: dict[int, str],
    policy: RulesPolicy,
    judged: set[int] | None,
) -> list[Finding]:
    """The rule findings of one subject of ``tree`` (none when it has no contract file)."""
    contracts = read_store_contracts(tree, versions)
    if not any(c.rule_set.domain_rules for c in contracts.values()):
        return []
    history = load_history(tree, subject)
    found = [
        Version(loaded.version or n, loaded, contracts.get(loaded.version or n))
        for n, loaded in enumerate(history, start=1)
    ]
    return judge_versions(found, subject=subject, policy=policy, judged=judged)


def rules_gate(report: GateReport, tree: Tree, policy: RulesPolicy) -> GateReport:
    """``report`` with each subject's rule findings added to its row: an error fails the row
    as an incompatibility does (exit 1); a contract file that is not one is an input error
    of the row (exit 2). ``tree`` is the tree ``report`` gated: a subject the gate read
    holding no contract file (``report.without_contracts``) is not read again, and a
    report of such subjects only does not list the store again."""
    index: dict[str, dict[int, str]] | None = None
    rows = []
    bare = report.without_contracts  # read by the gate: no contract file, no rule finding
    for row in report.subjects:
        if row.subject in bare or any(f.kind in INPUT_KINDS for f in row.findings):
            rows.append(row)
            continue
        if index is None:
            try:
                index = tree.subjects()
            except InputError:
                return report  # the gate reported the layout already
        versions = index.get(row.subject)
        if not versions:
            rows.append(row)
            continue
        judged = None if report.against is None else set(row.checked)
        try:
            found = subject_rule_findings(tree, row.subject, versions, policy, judged)
        except InputError as err:
            bad = input_error_row(row.subject, row.level, err, row.versions)
            rows.append(replace(row, findings=row.findings + bad.findings))
            continue
        rows.append(replace(row, findings=row.findings + tuple(found)) if found else row)
    return replace(report, subjects=tuple(rows))


def candidate_rule_findings(
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    tree: Tree | None,
    subject: str,
    policy: RulesPolicy,
) -> list[Finding]:
    """The rule findings of ``check``'s candidate: its own contract file beside it
    (``x.avsc`` -> ``x.contract.json``), else the rules the registry would carry over (the
    subject's latest contract in the store), judged against the candidate; rules the latest
    version had too are judged for the fields the candidate drops or retypes."""
    own: Contract | None = None
    if candidate.path is not None:
        beside = candidate.path.with_name(
            candidate.path.name.removesuffix(".avsc") + CONTRACT_SUFFIX
        )
        if beside.is_file():
            own = read_contract(beside)
    previous: tuple[Contract, LoadedSchema] | None = None
    if tree is not None and history:
        versions = tree.subjects().get(subject, {})
        contracts = read_store_contracts(tree, versions)
        numbered = [h for h in history if h.version is not None]
        for loaded in reversed(numbered):
            found = max((n for n in contracts if n <= (loaded.version or 0)), default=None)
            if found is not None:
                previous = (contracts[found], numbered[-1])
            break
    contract = own if own is not None else (previous[0] if previous is not None else None)
    if contract is None:
        return []
    return judge_contract(contract, candidate, subject=subject, policy=policy, previous=previous)


def rules_check(
    report: CheckReport,
    candidate: LoadedSchema,
    history: Sequence[LoadedSchema],
    tree: Tree | None,
    policy: RulesPolicy,
) -> CheckReport:
    """``report`` with the candidate's rule findings added (an error fails the check)."""
    found = candidate_rule_findings(candidate, history, tree, report.subject, policy)
    return replace(report, findings=report.findings + tuple(found)) if found else report
