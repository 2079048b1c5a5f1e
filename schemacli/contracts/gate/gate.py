"""The local gate: every subject of a store checked at its level, every problem a finding.

``gate`` walks the store (``store.Tree``), checks each new version with ``check.check_candidate``
and adds what only a history can show: a version changed or deleted since a base ref, a
duplicate version, a configured subject the store does not hold. A subject that cannot be read
is a row with an input-error finding, never a stop. ``gate.lint`` adds lint findings.
"""

from __future__ import annotations

import bisect
import difflib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.check import INPUT_KINDS, Verdict, check_candidate
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.evolution.verdicts import VerdictCache, decode_finding, digest, encodable
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.contracts.jsontext.source import load_json
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.contracts.readers.judge import (
    ReaderText,
    judge_readers,
    load_declared,
    read_declared,
)
from schemacli.contracts.rules.model import CONTRACT_SUFFIX
from schemacli.contracts.store.contractfiles import Contracts, read_contracts
from schemacli.contracts.store.history import read_versions
from schemacli.contracts.store.references import ParseMemo, References
from schemacli.contracts.store.tree import (
    StoreLayoutError,
    StoreLayoutErrors,
    Tree,
    VersionFile,
    sidecar_path,
)
from schemacli.errors import InputError, Location, SchemacliError


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


def gate(
    head: Tree,
    levels: SubjectLevels,
    *,
    base: Tree | None = None,
    verdicts: VerdictCache | None = None,
    readers: Sequence[DeclaredReader] = (),
) -> GateReport:
    """Check every subject of ``head`` at its level; with ``base``, only what changed since it.

    Without ``base``: every version against the versions before it. With ``base`` (the store at
    a git ref): versions that are new since ``base`` against the history at ``base``; an existing
    version that changed or disappeared is a violation (history is immutable). Every problem is
    a finding; nothing stops at the first (every badly named file is listed, and the rest of
    the store is still checked). ``verdicts`` remembers verdicts across subjects and, with a
    directory, across runs (default: in memory, for this run). ``readers`` (the store's
    declared readers, ``readers.load_readers``) judge each subject's latest version and every
    version new since ``base``, whatever the level (docs/readers.md).
    """
    store = head.source("").rstrip("/") or "."
    against = base.label if base is not None else None
    verdicts = verdicts if verdicts is not None else VerdictCache()
    layout: dict[str, list[Finding]] = {}
    try:
        head_index = _listed(head.subjects(), layout)
    except StoreLayoutErrors as err:
        head_index = _listed(err, layout)
    except InputError as err:
        return GateReport(store, against, (_store_error_row(levels, err),))
    base_index: dict[str, dict[int, str]] = {}
    if base is not None:
        try:
            base_index = base.subjects()
        except StoreLayoutErrors as err:  # the ref's own naming problems were reported then
            base_index = err.index
        except InputError as err:
            return GateReport(store, against, (_store_error_row(levels, err),))
    # One resolver per tree: a type another subject defines is loaded once for the whole gate.
    head_refs = References(head, head_index)
    base_refs = References(base, base_index) if base is not None else None
    rows = []
    if "" in layout:
        rows.append(_with_findings(_store_error_row(levels, None), layout.pop("")))
    declared = readers_by_subject(readers)
    for subject in sorted(set(head_index) | set(base_index) | set(layout)):
        level = levels.level_for(subject)
        try:
            row = _gate_subject(
                subject, level, head_refs, base_refs, verdicts, declared.get(subject, ())
            )
        except InputError as err:
            row = input_error_row(subject, level, err, len(head_index.get(subject, {})))
        rows.append(_with_findings(row, layout.get(subject, [])))
    known = set(head_index) | set(base_index) | set(layout)
    rows += [
        unknown_reader_row(subject, levels.level_for(subject), found, sorted(known))
        for subject, found in sorted(declared.items())
        if subject not in known
    ]
    rows += [
        _unknown_subject_row(subject, level, levels.source, sorted(known))
        for subject, level in sorted(levels.subjects.items())
        if subject not in known
    ]
    return GateReport(store, against, tuple(rows))


def readers_by_subject(
    readers: Sequence[DeclaredReader],
) -> dict[str, tuple[DeclaredReader, ...]]:
    """The declared readers grouped by subject, each group in the order given."""
    out: dict[str, list[DeclaredReader]] = {}
    for reader in readers:
        out.setdefault(reader.subject, []).append(reader)
    return {subject: tuple(found) for subject, found in out.items()}


def unknown_reader_row(
    subject: str, level: Level, readers: Sequence[DeclaredReader], known: list[str]
) -> SubjectReport:
    """A warning row: consumers declare readers of a subject the store does not hold (a typo
    in the file name would quietly judge nothing)."""
    close = difflib.get_close_matches(subject, known, n=1)
    findings = tuple(
        Finding(
            kind=Kind.READER_OF_UNKNOWN_SUBJECT,
            severity=Severity.WARNING,
            message=f"consumer {r.consumer} declares a reader of subject {subject!r}, which "
            "the store does not hold" + (f" (did you mean {close[0]!r}?)" if close else ""),
            location=Location(source=str(r.schema_path)),
            hint="name the reader file <subject>.avsc after a subject of the store, or add "
            "the subject's versions",
            subject=subject,
        )
        for r in readers
    )
    return SubjectReport(subject, level, 0, (), findings)


def _listed(
    listing: dict[str, dict[int, str]] | StoreLayoutErrors, layout: dict[str, list[Finding]]
) -> dict[str, dict[int, str]]:
    """The store's index; each badly named file becomes a STORE_LAYOUT finding in ``layout``
    under its subject ("" for the store itself)."""
    if not isinstance(listing, StoreLayoutErrors):
        return listing
    for problem in listing.problems:
        subject = problem.subject or ""
        layout.setdefault(subject, []).append(_input_finding(subject or "(store)", problem))
    return listing.index


def _with_findings(row: SubjectReport, first: Sequence[Finding]) -> SubjectReport:
    if not first:
        return row
    return replace(row, findings=(*first, *row.findings))


def _unknown_subject_row(
    subject: str, level: Level, config: str | None, known: list[str]
) -> SubjectReport:
    """A warning row: the config sets a level for a subject the store does not hold (a typo
    there would quietly leave the real subject at the default level)."""
    close = difflib.get_close_matches(subject, known, n=1)
    finding = Finding(
        kind=Kind.UNKNOWN_SUBJECT,
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
    return SubjectReport(subject, level, versions, (), (_input_finding(subject, err),))


def _input_finding(subject: str, err: SchemacliError) -> Finding:
    return Finding(
        kind=Kind.STORE_LAYOUT if isinstance(err, StoreLayoutError) else Kind.INVALID_SCHEMA,
        message=err.message,
        location=err.location or Location(),
        hint=err.hint,
        subject=None if subject == "(store)" else subject,
    )


def _store_error_row(levels: SubjectLevels, err: SchemacliError | None) -> SubjectReport:
    """The row of the store itself: an error that stopped its listing (or none, for a row
    that will hold the store's layout findings)."""
    level = levels.level_for("(store)")
    if err is None:
        return SubjectReport("(store)", level, 0, ())
    return input_error_row("(store)", level, err)


def parse_versions(
    files: Sequence[VersionFile], resolver: References, memo: ParseMemo | None = None
) -> tuple[list[LoadedSchema], list[Finding]]:
    """Parse every version; the ones that fail become INVALID_SCHEMA findings."""
    loaded, problems = [], []
    for f in files:
        try:
            loaded.append(resolver.load(f, memo))
        except SchemacliError as err:
            problems.append(
                Finding(
                    kind=Kind.INVALID_SCHEMA,
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
    head_refs: References,
    base_refs: References | None,
    verdicts: VerdictCache,
    readers: Sequence[DeclaredReader] = (),
) -> SubjectReport:
    head, head_index = head_refs.tree, head_refs.index
    base, base_index = (base_refs.tree, base_refs.index) if base_refs is not None else (None, {})
    in_head = head_index.get(subject, {})
    # With a base, a version it had that the working tree lacks is a deleted version (reported
    # below), whether it was the latest or one in the middle (which leaves a gap).
    deleted = sorted(set(base_index.get(subject, {})) - set(in_head)) if in_head else []
    head_files = read_versions(head, head_index, subject, deleted=deleted)
    base_files = read_versions(base, base_index, subject) if base is not None else []
    texts = read_declared(readers)
    contracts = read_contracts(head, head_index, subject)
    # a row whose contract files decide what is compared is not cached (its key covers the
    # schemas and the declared readers only)
    key = (
        _row_key(subject, level, head_files, base, base_files, texts, head_refs, base_refs)
        if verdicts.disk and contracts is None
        else None
    )
    if key is not None:
        cached = verdicts.load(key)
        row = _decode_row(subject, level, cached) if cached is not None else None
        if row is not None:
            return row
        if cached is not None and verdicts.disk is not None:  # a key means a disk
            verdicts.disk.corrupt(key, "is not a gate row")
    started = time.process_time()
    from_store = _from_store(head_refs, base_refs)
    row = _check_subject(
        subject, level, head_files, head_refs, base_files, base_refs, verdicts, texts, contracts
    )
    # A row that cost less to compute than a cache file costs to write (creating a file is
    # ~1 ms on some filesystems) is recomputed next time instead: a cold gate over 500 short
    # subjects then writes nothing and stays as fast as without a cache. A row whose versions
    # looked for types in other subjects (the store's names) depends on those subjects'
    # files, which its key does not cover: it is not written either.
    if (
        key is not None
        and time.process_time() - started >= verdicts.min_cost
        and _from_store(head_refs, base_refs) == from_store
    ):
        encoded = encodable(row.findings)
        if encoded is not None:
            verdicts.store(
                key, {"versions": row.versions, "checked": list(row.checked), "findings": encoded}
            )
    return row


def _from_store(head: References, base: References | None) -> int:
    """How many files so far looked for a type in the store's names (see References)."""
    return head.resolved_from_store + (base.resolved_from_store if base is not None else 0)


def _row_key(
    subject: str,
    level: Level,
    head_files: Sequence[VersionFile],
    base: Tree | None,
    base_files: Sequence[VersionFile],
    readers: Sequence[ReaderText] = (),
    head_refs: References | None = None,
    base_refs: References | None = None,
) -> str | None:
    """The content key of a subject's row: every text it reads (the versions, their declared
    references' files and the files those lead to), where each is shown, the level, the
    declared readers (who they are and their schemas' texts); None when a declared reference
    cannot be followed without parsing (the check reports it) or without ``head_refs``."""
    referenced: list[tuple[str, str, str]] = []
    for side, refs, side_files in (
        ("head", head_refs, head_files),
        ("base", base_refs, base_files),
    ):
        if not any(f.references is not None for f in side_files):
            continue
        found = _referenced_texts(refs, side_files) if refs is not None else None
        if found is None:
            return None
        referenced += [(side, path, text) for path, text in found]
    files = [("head", f) for f in head_files] + [("base", f) for f in base_files]
    who = [
        [
            r.declared.consumer,
            r.declared.owner,
            r.declared.contact,
            list(r.declared.groups),
            str(r.declared.schema_path),
            None if r.text is None else len(r.text),
        ]
        for r in readers
    ]
    return digest(
        "gate-row",
        subject,
        level.value,
        base.label if base is not None else None,
        [[side, f.version, f.source, len(f.text), _length(f.references)] for side, f in files],
        [[side, path, len(text)] for side, path, text in referenced],
        who,
        texts=[f.text for _, f in files]
        + [f.references for _, f in files if f.references is not None]
        + [text for _, _, text in referenced]
        + [r.text for r in readers if r.text is not None],
    )


def _length(text: str | None) -> int | None:
    return None if text is None else len(text)


_REFERENCED_MAX = 256  # files a row's key follows references to; past it, no key (no cache)


def _referenced_texts(
    refs: References, files: Sequence[VersionFile]
) -> list[tuple[str, str]] | None:
    """Every file the declared references of ``files`` lead to, and the references files
    beside those, transitively, as (path, text) in path order: what the versions mean besides
    their own texts. None when one cannot be followed without parsing (a references file
    that is not a list of entries, a target that is missing or unreadable): the check parses
    and reports it, uncached. A file that then looks for a type in the store's names keeps
    its row out of the cache (see ``_gate_subject``)."""
    out: dict[str, str] = {}
    pending = [
        (sidecar_path(refs.index[f.subject][f.version]), f.references)
        for f in files
        if f.references is not None
    ]
    while pending:
        sidecar, text = pending.pop()
        try:  # the one JSON reader: deep nesting and long numbers refused, never raised
            entries = load_json(text, source=sidecar).value
        except SchemacliError:
            return None
        if not isinstance(entries, list):
            return None
        for entry in entries:
            if not isinstance(entry, dict):
                return None
            try:
                target = refs.target(sidecar, entry, Location(), "")
                if target in out:
                    continue
                texts = refs.tree.read([target, sidecar_path(target)], optional=True)
            except SchemacliError:
                return None
            found, beside = texts[target], texts[sidecar_path(target)]
            if found is None or len(out) >= _REFERENCED_MAX:
                return None
            out[target] = found
            if beside is not None:
                out[sidecar_path(target)] = beside
                pending.append((sidecar_path(target), beside))
    return sorted(out.items())


def _decode_row(subject: str, level: Level, data: Any) -> SubjectReport | None:
    try:
        findings = tuple(decode_finding(f) for f in data["findings"])
        checked = tuple(int(n) for n in data["checked"])
        return SubjectReport(subject, level, int(data["versions"]), checked, findings)
    except (TypeError, ValueError, KeyError):
        return None


def _check_subject(
    subject: str,
    level: Level,
    head_files: Sequence[VersionFile],
    head: References,
    base_files: Sequence[VersionFile],
    base: References | None,
    verdicts: VerdictCache,
    readers: Sequence[ReaderText] = (),
    contracts: Contracts | None = None,
) -> SubjectReport:
    findings: list[Finding] = []
    memo: ParseMemo = {}
    base_loaded, base_problems = (
        parse_versions(base_files, base, memo) if base is not None else ([], [])
    )
    head_loaded, problems = parse_versions(head_files, head, memo)
    findings.extend(problems)
    findings.extend(base_problems)
    if findings:  # a history that does not parse cannot be checked
        return SubjectReport(subject, level, len(head_files), (), tuple(findings))

    label = base.tree.label if base is not None else "the base"
    if base is not None and base_files and not head_files:
        findings.append(
            Finding(
                kind=Kind.SUBJECT_DELETED,
                severity=Severity.WARNING,
                message=f"subject {subject!r} ({len(base_files)} versions at {label}) is "
                "gone from the store",
                location=Location(source=base_files[-1].source),
                hint="if the subject is still registered, keep its history in the store",
                subject=subject,
            )
        )
        return SubjectReport(subject, level, 0, (), tuple(findings))

    by_number = {loaded.version or 0: loaded for loaded in head_loaded}
    last = max(by_number, default=0)
    for old in base_loaded:
        n = old.version or 0
        new = by_number.get(n)
        if new is None:
            findings.append(
                Finding(
                    kind=Kind.VERSION_DELETED,
                    message=f"{subject} v{n} exists at {label} but not any more: history is "
                    "immutable",
                    location=Location(source=old.source),
                    hint=f"restore v{n}; to change the contract, add a new version instead",
                    subject=subject,
                )
            )
        elif new.identity != old.identity:
            findings.append(
                Finding(
                    kind=Kind.HISTORY_REWRITTEN,
                    message=f"{subject} v{n} was changed since {label}: registered versions "
                    "are immutable",
                    location=_first_difference(new, old),
                    hint=f"restore v{n} as it was (git checkout {label[4:] if base else 'REF'}"
                    f" -- {new.source}) and put the change in v{last + 1}.avsc",
                    subject=subject,
                )
            )

    checked = []
    for candidate, before, others in version_checks(
        head_loaded, base_loaded if base is not None else None, contracts
    ):
        n = candidate.version or 0
        checked.append(n)
        if others and not before and contracts is not None and n not in contracts.downgrade:
            # a new group (a new major version) needs a rule that turns it back into the last
            findings.append(
                Finding(
                    kind=Kind.MISSING_MIGRATION_RULE,
                    message=f"{subject} v{n} starts {contracts.group}={contracts.group_of(n)} "
                    f"but has no DOWNGRADE migration rule: consumers of "
                    f"v{others[-1].version} would meet it unconverted",
                    location=candidate.location(),
                    hint=f"Write its rules with `schemacli migrate rules MAPPING` into "
                    f"v{n}{CONTRACT_SUFFIX}, or keep v{n} in the group of the versions "
                    "before it.",
                    subject=subject,
                )
            )
        report = check_candidate(candidate, before, subject=subject, level=level, verdicts=verdicts)
        if report.identical_to is not None:
            findings.append(
                Finding(
                    kind=Kind.DUPLICATE_VERSION,
                    message=f"{subject} v{n} is identical to v{report.identical_to}: the registry "
                    f"would not register it as a new version (it returns v{report.identical_to})",
                    location=candidate.location(),
                    hint=f"delete v{n}.avsc, or make the change it was meant to make",
                    subject=subject,
                )
            )
        findings.extend(report.findings)
    if readers and head_loaded:
        # The declared readers judge what producers write now (the latest version) and every
        # version new since the base, whatever the level.
        loaded_readers, reader_problems = load_declared(readers)
        findings.extend(reader_problems)
        latest = max(n for n in by_number)
        judged = sorted({*checked, latest}) if base is not None else [latest]
        for n in judged:
            findings.extend(
                judge_readers(
                    by_number[n],
                    loaded_readers,
                    subject=subject,
                    writer_label=f"{subject} v{n}",
                    verdicts=verdicts,
                )
            )
    return SubjectReport(subject, level, len(head_files), tuple(checked), tuple(findings))


VersionCheck = tuple[LoadedSchema, list[LoadedSchema], list[LoadedSchema]]


def version_checks(
    head: Sequence[LoadedSchema],
    base: Sequence[LoadedSchema] | None,
    contracts: Contracts | None = None,
) -> list[VersionCheck]:
    """The versions of one subject the gate checks, oldest first, each as (candidate, the
    versions it is checked against, the earlier versions of other compatibility groups).

    Without ``base``: every version from the second on, against the versions before it. With
    ``base`` (the subject's versions at a git ref): the versions new since it, against the
    history at the ref where it has a version. With a ``compatibilityGroup`` (``contracts``),
    only versions of the candidate's group are compared (Confluent's rule); the others are
    handed back apart (a new group needs a migration rule).
    """
    by_number = {loaded.version or 0: loaded for loaded in head}
    # The history each candidate is checked against: the base's versions where they exist.
    effective = {**by_number, **{old.version or 0: old for old in base or ()}}
    first_new = len(base) + 1 if base is not None else 2
    order = sorted(effective)  # the numbers themselves, not 1..n: a file's name sets no cost
    checks: list[VersionCheck] = []
    for candidate in head:
        n = candidate.version or 0
        if n < first_new:
            continue
        before = [effective[m] for m in order[: bisect.bisect_left(order, n)]]
        others: list[LoadedSchema] = []
        if contracts is not None and contracts.group is not None:
            group = contracts.group_of(n)
            others = [v for v in before if contracts.group_of(v.version or 0) != group]
            before = [v for v in before if contracts.group_of(v.version or 0) == group]
        checks.append((candidate, before, others))
    return checks


def _first_difference(new: LoadedSchema, old: LoadedSchema) -> Location:
    """The first line where ``new``'s text differs from ``old``'s (for a CI annotation)."""
    new_lines, old_lines = new.document.text.splitlines(), old.document.text.splitlines()
    for number, (a, b) in enumerate(zip(new_lines, old_lines, strict=False), start=1):
        if a != b:
            column = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            return Location(new.source, line=number, column=(column or min(len(a), len(b))) + 1)
    line = min(len(new_lines), len(old_lines)) + 1 if new_lines else 1
    return Location(new.source, line=min(line, max(len(new_lines), 1)), column=1)
