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
from collections.abc import Collection, Sequence
from dataclasses import replace

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.check import check_candidate
from schemacli.contracts.evolution.levels import Level, SubjectLevels
from schemacli.contracts.evolution.verdicts import VerdictCache, encodable
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.contracts.gate.pool import in_workers, pooled
from schemacli.contracts.gate.rowcache import (
    KeyTable,
    consulting,
    decode_row,
    encode_consulted,
    keep_key_table,
    row_key,
    use_key_table,
)
from schemacli.contracts.gate.rows import GateReport, SubjectReport
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.contracts.readers.judge import (
    ReaderText,
    judge_readers,
    load_declared,
    read_declared,
)
from schemacli.contracts.rules.model import CONTRACT_SUFFIX
from schemacli.contracts.store.contractfiles import Contracts, read_contracts
from schemacli.contracts.store.history import read_versions, version_paths
from schemacli.contracts.store.references import ParseMemo, References
from schemacli.contracts.store.tree import (
    SUBJECTS_DIR,
    FileTree,
    StoreLayoutError,
    StoreLayoutErrors,
    Tree,
    VersionFile,
)
from schemacli.errors import InputError, Location, SchemacliError


def gate(
    head: Tree,
    levels: SubjectLevels,
    *,
    base: Tree | None = None,
    verdicts: VerdictCache | None = None,
    readers: Sequence[DeclaredReader] = (),
    changed: Collection[str] | None = None,
    jobs: int = 1,
) -> GateReport:
    """Check every subject of ``head`` at its level; with ``base``, only what changed since it.

    Without ``base``: every version against the versions before it. With ``base`` (the store at
    a git ref): versions that are new since ``base`` against the history at ``base``; an existing
    version that changed or disappeared is a violation (history is immutable). Every problem is
    a finding; nothing stops at the first (every badly named file is listed, and the rest of
    the store is still checked). ``verdicts`` remembers verdicts across subjects and, with a
    directory, across runs (default: in memory, for this run). ``readers`` (the store's
    declared readers, ``readers.load_readers``) judge each subject's latest version and every
    version new since ``base``, whatever the level (docs/readers.md). ``changed`` (with
    ``base``): the store's files that differ between ``base`` and ``head`` (relative paths);
    a subject none of whose files is among them, nor a declared reader's, is not judged again
    (a row with ``judged`` False): what it means was judged when it was the base. ``jobs``:
    processes that may check subjects at once (``pool``; the report is the same).
    """
    store = head.source("").rstrip("/") or "."
    against = base.label if base is not None else None
    verdicts = verdicts if verdicts is not None else VerdictCache()
    table = use_key_table(head, verdicts, against)
    try:
        return _gate(head, levels, store, against, base, verdicts, readers, table, changed, jobs)
    finally:
        if table is not None:
            keep_key_table(head, verdicts, table, against)


def _gate(
    head: Tree,
    levels: SubjectLevels,
    store: str,
    against: str | None,
    base: Tree | None,
    verdicts: VerdictCache,
    readers: Sequence[DeclaredReader],
    table: KeyTable | None = None,
    changed: Collection[str] | None = None,
    jobs: int = 1,
) -> GateReport:
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
    if table is not None:
        table.refs = [refs for refs in (head_refs, base_refs) if refs is not None]
        for refs in table.refs:
            refs.store_names.use_scans(table.known["names"])
        table.store_as_before = (
            base is None and isinstance(head, FileTree) and head.unchanged_store()
        )
        if base is None and isinstance(head, FileTree) and not table.store_as_before:
            table.touched = _touched_names(head, head_refs, table)
    rows = []
    if "" in layout:
        rows.append(_with_findings(_store_error_row(levels, None), layout.pop("")))
    declared = readers_by_subject(readers)
    moved = _changed_subjects(changed, declared) if base is not None else None
    subjects = sorted(set(head_index) | set(base_index) | set(layout))
    unmoved = {
        subject
        for subject in subjects
        if moved is not None
        and subject not in moved
        and subject in head_index
        and subject in base_index
    }

    def checked(subject: str) -> tuple[SubjectReport, bool]:
        """The subject's row, and whether its folder holds no contract file."""
        level = levels.level_for(subject)
        alone: set[str] = set()
        try:
            row = _gate_subject(
                subject,
                level,
                head_refs,
                base_refs,
                verdicts,
                declared.get(subject, ()),
                table,
                alone,
            )
        except InputError as err:
            row = input_error_row(subject, level, err, len(head_index.get(subject, {})))
        return row, bool(alone)

    todo = [subject for subject in subjects if subject not in unmoved]
    # Apart in worker processes only where nothing is shared between runs or with a git
    # process (pool.py); the rows are the same either way.
    versions = sum(len(head_index.get(subject, ())) for subject in todo)
    if base is None and verdicts.disk is None and table is None and pooled(jobs, versions):
        found = dict(zip(todo, in_workers(checked, todo, jobs), strict=True))
    else:
        found = {subject: checked(subject) for subject in todo}
    bare = {subject for subject, (_, alone) in found.items() if alone}
    for subject in subjects:
        if subject in unmoved:
            level = levels.level_for(subject)
            row = SubjectReport(subject, level, len(head_index[subject]), (), judged=False)
        else:
            row = found[subject][0]
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
    return GateReport(store, against, tuple(rows), frozenset(bare))


def _touched_names(head: FileTree, refs: References, table: KeyTable) -> set[str] | None:
    """The full names a store name lookup may now answer otherwise than the run that wrote
    ``table``: those the latest version of each subject whose folder changed since defined
    then (the table's names of its content key) or defines now. None where any of it is not
    known (a folder the table lacks, a latest version not scanned then, one unreadable now):
    every name is looked up again."""
    changed = head.changed_folders()
    if changed is None:
        return None
    scans = table.known["names"]
    touched: set[str] = set()
    for folder in changed:
        before = head.table_latest(folder)
        if before is None:
            return None
        path, key = before
        if path:
            scan = scans.get(key)
            if not isinstance(scan, list):
                return None
            touched.update(entry[0] for entry in scan if isinstance(entry, list) and entry)
        versions = refs.index.get(folder.removeprefix(f"{SUBJECTS_DIR}/"))
        if versions:
            now = refs.store_names.defines(versions[max(versions)])
            if now is None:
                return None
            touched.update(now)
    return touched


def _changed_subjects(
    changed: Collection[str] | None, declared: dict[str, tuple[DeclaredReader, ...]]
) -> set[str] | None:
    """The subjects ``changed`` (paths) touches: a file in a subject's folder; any file
    outside subjects/ (a declared reader, its manifest) touches every subject with declared
    readers. None when ``changed`` is None (every subject is judged)."""
    if changed is None:
        return None
    out: set[str] = set()
    others = False
    for path in changed:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] == SUBJECTS_DIR:
            out.add(parts[1])
        elif parts[0] != SUBJECTS_DIR:
            others = True
        else:
            out.add("")  # a file directly in subjects/: a layout problem, already a row
    if others:
        out |= set(declared)
    return out


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
    table: KeyTable | None = None,
    bare: set[str] | None = None,
) -> SubjectReport:
    """``subject``'s row; ``bare`` gets the subject when its folder holds no contract file."""
    head, head_index = head_refs.tree, head_refs.index
    base, base_index = (base_refs.tree, base_refs.index) if base_refs is not None else (None, {})
    in_head = head_index.get(subject, {})
    # With a base, a version it had that the working tree lacks is a deleted version (reported
    # below), whether it was the latest or one in the middle (which leaves a gap).
    deleted = sorted(set(base_index.get(subject, {})) - set(in_head)) if in_head else []
    head_paths = version_paths(head, head_index, subject, deleted=deleted)
    base_paths = version_paths(base, base_index, subject) if base is not None else []
    texts = read_declared(readers)
    contracts = read_contracts(head, head_index, subject)
    if contracts is None and bare is not None:
        bare.add(subject)
    # a row whose contract files decide what is compared is not cached (its key covers the
    # schemas, what they consulted and the declared readers only)
    key = None
    if verdicts.disk and contracts is None:
        # Without a base or declared readers, a row's key is a function of its own folder's
        # files and the context: a folder listed as the last gate listed it keeps its key.
        context = [level.value, head.source("")]
        quick = table is not None and base_refs is None and not texts
        if quick and isinstance(head, FileTree) and head.unchanged(f"{SUBJECTS_DIR}/{subject}"):
            key = table.known_key(subject, context) if table is not None else None
        if key is None:
            key = row_key(subject, level, head_refs, head_paths, base_refs, base_paths, texts)
        if quick and key is not None and table is not None:
            table.keys[subject] = [context, key]
    if key is not None:
        kept = table.row(key) if table is not None else None
        if kept is not None and table is not None:
            row = decode_row(
                subject,
                level,
                kept,
                head_refs,
                base_refs,
                names_as_before=table.store_as_before,
                touched=table.touched,
            )
            if row is not None and table is not None:
                table.rows[key] = kept
                return row
        cached = verdicts.load(key)
        row = decode_row(subject, level, cached, head_refs, base_refs)
        if row is not None:
            if table is not None:
                table.rows[key] = cached
            return row
        if cached is not None and not isinstance(cached, dict) and verdicts.disk is not None:
            verdicts.disk.corrupt(key, "is not a gate row")
    head_files = read_versions(head, head_index, subject, deleted=deleted)
    base_files = read_versions(base, base_index, subject) if base is not None else []
    # the clock is a system call: read only when the cost decides whether the row is written
    started = time.process_time() if key is not None else 0.0
    with head_refs.consulting() as head_seen, consulting(base_refs) as base_seen:
        row = _check_subject(
            subject,
            level,
            head_files,
            head_refs,
            base_files,
            base_refs,
            verdicts,
            texts,
            contracts,
        )
    # A row that cost less to compute than a cache file costs to write (creating a file is
    # ~1 ms on some filesystems) is recomputed next time instead: a cold gate over 500 short
    # subjects then writes nothing and stays as fast as without a cache.
    # The table (one file) keeps every row of this run.
    cost = time.process_time() - started if key is not None else 0.0
    if key is not None and (table is not None or cost >= verdicts.min_cost):
        encoded = encodable(row.findings)
        consulted = encode_consulted(head_refs, head_seen, base_refs, base_seen)
        if encoded is not None and consulted is not None:
            entry = {
                "versions": row.versions,
                "checked": list(row.checked),
                "findings": encoded,
                "consulted": consulted,
            }
            if table is not None:
                table.rows[key] = entry
            if cost >= verdicts.min_cost:
                verdicts.store(key, entry)
    return row


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
