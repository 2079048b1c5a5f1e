"""`gate --registry`: the store's new schemas checked against production history, then
(with ``register``) registered — all of them, or none.

For every subject of the local store, each local version that the registry does not hold yet
(compared by identity: the JSON, ignoring layout) is a candidate. Candidates are checked, in
order, against the registry's history plus the candidates before them, at the level the registry
applies to the subject; the registry itself is asked (verbose) about the first candidate of each
subject, and a disagreement with the local engine is a failure. Nothing is registered unless
every subject passed; if a registration still fails half-way (a concurrent change in the
registry), the versions this run created are deleted again; what could not be deleted is named,
with the commands that delete it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.evolution.check import Verdict, check_candidate
from schemacli.contracts.evolution.levels import Level
from schemacli.contracts.findings import Finding, Kind, Severity
from schemacli.contracts.gate.gate import (
    input_error_row,
    parse_versions,
    readers_by_subject,
    unknown_reader_row,
)
from schemacli.contracts.gate.rows import GateReport, SubjectReport
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.contracts.readers.judge import judge_readers, load_declared
from schemacli.contracts.store.history import read_versions
from schemacli.contracts.store.references import References
from schemacli.contracts.store.tree import Tree, VersionFile
from schemacli.errors import CheckFailed, InputError, Location, RegistryError, SchemacliError
from schemacli.registry.client import RegistryClient
from schemacli.registry.compare import (
    RegistryCheck,
    ask_registry,
    registry_findings,
    schema_text,
)
from schemacli.registry.history import Levels, SubjectLevel
from schemacli.registry.models import CompatibilityAnswer, Reference
from schemacli.registry.publish import (
    Outcome,
    RegisterResult,
    may_have_registered,
    register_schema,
)
from schemacli.registry.schemas import RegistrySchemas
from schemacli.registry.snapshot import Snapshot, read_snapshot


class ConfiguredLevels(Protocol):
    """The configured level of each subject: ``schemacli.config.Settings`` (which the registry
    package does not import) or ``contracts.levels.SubjectLevels``."""

    def level_for(self, subject: str) -> Level: ...


@dataclass(frozen=True)
class Candidate:
    """A local version the registry does not hold yet."""

    subject: str
    version: int  # the local store's number
    loaded: LoadedSchema
    references: tuple[Reference, ...] = ()  # from v<N>.references.json (subject/version form)

    @property
    def text(self) -> str:
        return schema_text(self.loaded)


@dataclass(frozen=True)
class RegistryGate:
    """The gate's report (renderable like the offline gate's) and what would be registered."""

    report: GateReport
    candidates: tuple[Candidate, ...]

    @property
    def passed(self) -> bool:
        return self.report.verdict is Verdict.COMPATIBLE


def gate_against_registry(
    client: RegistryClient,
    head: Tree,
    settings: ConfiguredLevels,
    *,
    each: Callable[[Sequence[str]], Iterable[str]] = lambda names: names,
    readers: Sequence[DeclaredReader] = (),
) -> RegistryGate:
    """Check every subject of the store ``head`` (a store Tree) against the registry; the
    declared ``readers`` (from the store) judge the registry's latest version and each new
    one (docs/readers.md).

    What is asked (docs/registry.md, "gate --registry: what it asks"): per subject its version
    numbers; the versions the store's snapshot (``registry.json``, written by ``pull``) does
    not already vouch for; for a subject with new versions, its level and the registry's
    verdict on the first; each referenced version once. The questions about different subjects
    go out together, at most ``settings.concurrency`` at a time.
    """
    label = f"{head.label} against {client.settings.display_url}"
    try:
        index = head.subjects()
    except InputError as err:
        row = input_error_row("(store)", settings.level_for("(store)"), err)
        return RegistryGate(GateReport(label, None, (row,)), ())
    resolver = References(head, index)
    declared = readers_by_subject(readers)
    names = sorted(index)
    local: dict[str, _Local | SubjectReport] = {}

    def read(subject: str) -> str:  # the store's side, in this thread: parsing is CPU
        local[subject] = _read_local(head, index, subject, settings, resolver)
        return subject

    road = RegistrySchemas(client)
    levels = Levels(client)
    # each subject's questions go out as soon as its store side is read, while the next is
    answers = road.map(
        lambda subject: _ask_registry(road, levels, local[subject], declared.get(subject, ())),
        (read(subject) for subject in names),
    )
    rows, candidates = [], []
    for subject, remote in zip(each(names), answers, strict=True):
        here = local[subject]
        if isinstance(here, SubjectReport):
            rows.append(here)
            continue
        assert remote is not None  # a subject read without problems was asked about
        row, new = _judge_subject(here, remote, declared.get(subject, ()))
        rows.append(row)
        candidates.extend(new)
    rows += [
        unknown_reader_row(subject, settings.level_for(subject), found, sorted(index))
        for subject, found in sorted(declared.items())
        if subject not in index
    ]
    return RegistryGate(GateReport(label, None, tuple(rows)), tuple(candidates))


@dataclass(frozen=True)
class _Local:
    """A subject as the store holds it: its parsed versions, and what the snapshot of its last
    ``pull`` says each is in the registry."""

    subject: str
    files: tuple[VersionFile, ...]
    loaded: tuple[LoadedSchema, ...]
    configured: Level
    snapshot: Snapshot | None

    @property
    def readers_only(self) -> bool:
        # READERS (schemacli's own level): the declared readers alone judge; the registry's
        # level and its own answer are not asked.
        return self.configured is Level.READERS


@dataclass(frozen=True)
class _Remote:
    """What the registry said about one subject."""

    history: dict[int, LoadedSchema]  # its live versions by place (1, 2, ...), those needed
    registered: int  # how many live versions it has
    level: SubjectLevel
    asked_level: bool  # False: the subject has no new version, so the level was not asked
    answer: CompatibilityAnswer | None  # its verdict on the first new version
    note: str | None  # why it gave none, when it could not judge it
    references: tuple[tuple[Reference, ...], Finding | None] | None  # the first new version's


def _read_local(
    head: Tree,
    index: dict[str, dict[int, str]],
    subject: str,
    settings: ConfiguredLevels,
    resolver: References,
) -> _Local | SubjectReport:
    """The subject's store side, or its finished row when the store cannot be read."""
    configured = settings.level_for(subject)
    try:
        files = read_versions(head, index, subject)
    except InputError as err:
        return input_error_row(subject, configured, err, len(index.get(subject, {})))
    loaded, problems = parse_versions(files, resolver)
    if problems:
        return SubjectReport(subject, configured, len(files), (), tuple(problems))
    return _Local(subject, tuple(files), tuple(loaded), configured, read_snapshot(head, subject))


def _ask_registry(
    road: RegistrySchemas,
    levels: Levels,
    here: _Local | SubjectReport,
    readers: Sequence[DeclaredReader],
) -> _Remote | None:
    """Everything the gate asks the registry about one subject (run on a pool thread)."""
    if isinstance(here, SubjectReport):
        return None
    subject, local = here.subject, here.loaded
    numbers = road.version_numbers(subject) or []
    new = len(local) > len(numbers)
    # Needed: the registry's versions at the store's places (compared with the store's; the
    # whole history when there are new versions), and its latest when readers judge it.
    # A version the store holds unchanged since the pull that wrote it (the same registry,
    # version number and fingerprint) is taken from the store: registered versions are
    # immutable, so it is not asked again.
    places = set(range(1, min(len(numbers), len(local)) + 1))
    if readers and numbers:
        places.add(len(numbers))
    history: dict[int, LoadedSchema] = {}
    for position in sorted(places):
        number = numbers[position - 1]
        mine = local[position - 1] if position <= len(local) else None
        if (
            mine is not None
            and here.snapshot is not None
            and here.snapshot.vouches(
                road.client.settings.display_url, position, number, here.files[position - 1].text
            )
        ):
            history[position] = mine
        else:
            history[position] = road.schema(subject, number).loaded
    if not new:
        level = SubjectLevel(here.configured, "config")
        return _Remote(history, len(numbers), level, False, None, None, None)
    level = SubjectLevel(Level.READERS, "config") if here.readers_only else levels.level(subject)
    first = local[len(numbers)]
    sidecars = {f.version: f.references for f in here.files}
    number = first.version or len(numbers) + 1
    refs, problem = _registry_references(sidecars.get(number), first, subject)
    answer, note = None, None
    # The registry can only judge against what it holds, and cannot parse a schema whose
    # references it is not given (the problem says so).
    if problem is None and not here.readers_only:
        answer, note = ask_registry(road.client, subject, schema_text(first), refs)
    return _Remote(history, len(numbers), level, True, answer, note, (refs, problem))


def _judge_subject(
    here: _Local, remote: _Remote, readers: Sequence[DeclaredReader] = ()
) -> tuple[SubjectReport, list[Candidate]]:
    subject, loaded, files = here.subject, here.loaded, here.files
    level = remote.level
    findings: list[Finding] = []
    if remote.asked_level and here.configured != level.level:
        findings.append(
            Finding(
                kind=Kind.LEVEL_DIFFERS,
                severity=Severity.WARNING,
                message=f"the config says {here.configured.value} for {subject}, the registry "
                f"applies {level.level.value} ({level.source}); checked at the registry's level",
                location=loaded[-1].location() if loaded else Location(),
                hint="run `schemacli pull` to take the registry's levels into the config, or "
                f"`schemacli config set {subject} {here.configured.value}` to change the "
                "registry",
                subject=subject,
            )
        )
    registered = remote.registered
    # with new versions every registered place is known (the new ones come after them all)
    history = [remote.history[p] for p in sorted(remote.history) if p <= len(loaded)]
    new: list[Candidate] = []
    checked: list[int] = []
    sidecars = {f.version: f.references for f in files}
    for position, version in enumerate(loaded, start=1):
        number = version.version or position
        if position <= registered:
            # Local v1..vK must be the registry's live versions, in order (as `pull` writes
            # them): a difference is an edited history, which would otherwise be registered
            # as a new version.
            theirs = history[position - 1]
            # the store's own file where the pull's snapshot vouched for it: nothing to compare
            if theirs is not version and version.identity != theirs.identity:
                findings.append(_diverges(subject, number, version, theirs))
            continue
        checked.append(number)
        if not new and remote.references is not None:
            refs, problem = remote.references
        else:
            refs, problem = _registry_references(sidecars.get(number), version, subject)
        if problem is not None:
            findings.append(problem)
        local = check_candidate(version, history, subject=subject, level=level.level)
        findings.extend(local.findings)
        if not new and (remote.answer is not None or remote.note is not None):
            check = RegistryCheck(
                subject, level.level, level.source, local, remote.answer, remote.note
            )
            findings.extend(registry_findings(check))
        new.append(Candidate(subject, number, version, refs))
        history.append(replace(version, version=len(history) + 1))
    if readers:
        latest = [remote.history[registered]] if registered else []
        findings.extend(_judged_by_readers(subject, latest, registered, new, readers))
    row = SubjectReport(subject, level.level, len(files), tuple(checked), tuple(findings))
    return row, new


def _judged_by_readers(
    subject: str,
    latest: Sequence[LoadedSchema],
    registered: int,
    new: Sequence[Candidate],
    readers: Sequence[DeclaredReader],
) -> list[Finding]:
    """The declared readers' verdicts on the registry's latest version (``latest``: what
    producers write now, the subject's ``registered``-th) and on each new version of the
    store."""
    loaded, problems = load_declared(readers)
    found = list(problems)
    writers = [(w, f"{subject} v{registered} (registry)") for w in latest]
    writers += [(c.loaded, f"{subject} v{c.version}") for c in new]
    for writer, label in writers:
        found.extend(judge_readers(writer, loaded, subject=subject, writer_label=label))
    return found


def _diverges(subject: str, number: int, version: LoadedSchema, theirs: LoadedSchema) -> Finding:
    return Finding(
        kind=Kind.REGISTRY_HISTORY_DIVERGES,
        message=f"{subject} v{number} differs from the registry's version at that place "
        f"({theirs.source}): registered versions are immutable",
        location=version.location(),
        hint=f"restore v{number} as the registry has it (`schemacli pull {subject}` shows it) "
        "and put the change in a new version file after the last one",
        subject=subject,
    )


def _registry_references(
    sidecar: str | None, version: LoadedSchema, subject: str
) -> tuple[tuple[Reference, ...], Finding | None]:
    """The sidecar's subject/version references as registry references.

    ``path`` or ``latest`` references have no registry equivalent, nor types found among other
    subjects' latest versions (docs/store.md): an error finding, since the registry could not
    parse the schema without them.
    """
    entries = json.loads(sidecar) if sidecar else []
    refs, unusable = [], []
    for entry in entries:
        if isinstance(entry.get("subject"), str) and type(entry.get("version")) is int:
            refs.append(Reference(entry["name"], entry["subject"], entry["version"]))
        else:
            unusable.append(str(entry.get("name")))
    # The declared references come first in ``version.references``; the rest were found
    # among the store's names.
    found = [dep.source for dep in version.references[len(entries) :]]
    if found and not unusable:
        return tuple(refs), Finding(
            kind=Kind.REFERENCE_NOT_IN_REGISTRY,
            message=f"{subject} v{version.version} takes types from {', '.join(found)} "
            "without declaring them: the registry needs a reference with a subject and a "
            "version number for each",
            location=version.location(),
            hint=f"declare them in v{version.version}.references.json as "
            '[{"name": "<namespace.Name>", "subject": "<subject>", "version": <n>}]',
            subject=subject,
        )
    if not unusable:
        return tuple(refs), None
    return tuple(refs), Finding(
        kind=Kind.REFERENCE_NOT_IN_REGISTRY,
        message=f"references {', '.join(unusable)} are given by path or as 'latest': the "
        "registry needs a subject and a version number for each",
        location=version.location(),
        hint='write {"name": ..., "subject": ..., "version": <n>} in the references file',
        subject=subject,
    )


def register_candidates(
    client: RegistryClient,
    gate: RegistryGate,
    *,
    on_done: Callable[[RegisterResult], None] | None = None,
) -> list[RegisterResult]:
    """Register every candidate in order — only if the whole gate passed.

    Raises CheckFailed when the gate did not pass (nothing registered). If a registration fails
    half-way, the versions created by this run are deleted again (soft, then permanently) —
    including the failing one when it got no answer but the registry stored it anyway — and the
    error says truthfully whether the registry is as it was, and what to delete if not.
    """
    if not gate.passed:
        raise CheckFailed(
            "the gate failed: nothing was registered",
            hint="fix every violation listed above; registration is all or nothing",
        )
    done: list[RegisterResult] = []
    for candidate in gate.candidates:
        try:
            result = register_schema(
                client, candidate.subject, candidate.text, references=candidate.references
            )
        except SchemacliError as err:
            created = [r for r in done if r.outcome is Outcome.REGISTERED]
            unsure: str | None = None
            if isinstance(err, RegistryError) and may_have_registered(err):
                stored, unsure = _stored_anyway(client, candidate)
                if stored is not None:
                    created.append(stored)
            rollback = _roll_back(client, created)
            err.message += f" (while registering {candidate.subject} v{candidate.version}; "
            err.message += rollback.describe(candidate if unsure else None, unsure) + ")"
            if rollback.left or unsure:
                err.hint = rollback.hint(candidate if unsure else None)
            raise
        done.append(result)
        if on_done is not None:
            on_done(result)
    return done


def _stored_anyway(
    client: RegistryClient, candidate: Candidate
) -> tuple[RegisterResult | None, str | None]:
    """After a registration that got no answer: (the version it created, if the registry holds
    the schema now; why it may still hold it although none was found, else None).
    ``register_schema`` looked the schema up before registering, so finding it now means this
    run created it. Not finding it proves little: the registry may still be handling the
    request it received."""
    try:
        found = client.lookup(candidate.subject, candidate.text, references=candidate.references)
    except RegistryError:
        return None, "its registration got no answer and looking it up failed too"
    if found is None:
        return None, (
            "its registration got no answer; it was not there when looked up right after, but "
            "the registry may still store the request it received"
        )
    return RegisterResult(candidate.subject, Outcome.REGISTERED, found.id, found.version), None


@dataclass(frozen=True)
class RollBack:
    """What deleting this run's registrations again achieved."""

    deleted: tuple[RegisterResult, ...]
    left: tuple[RegisterResult, ...]  # still registered (or only soft-deleted)

    def describe(self, unsure: Candidate | None, why: str | None = None) -> str:
        """The clause appended to the error: whether the registry is as it was."""
        gone = ", ".join(_named(r) for r in self.deleted)
        if not self.left and unsure is None:
            if not self.deleted:
                return "nothing had been registered by this run: the registry is as it was"
            return (
                f"the {len(self.deleted)} version(s) registered by this run were deleted "
                f"again ({gone}): the registry is as it was"
            )
        parts = [
            "the registry is NOT as it was" if self.left else "the registry may not be as it was"
        ]
        if self.deleted:
            parts.append(f"deleted again: {gone}")
        if self.left:
            parts.append(
                "not deleted (still registered, or only soft-deleted): "
                + ", ".join(
                    _named(r) + (f" (id {r.id})" if r.version is not None else "")
                    for r in self.left
                )
            )
        if unsure is not None:
            parts.append(f"the registry MAY hold {unsure.subject} v{unsure.version}: {why}")
        return "; ".join(parts)

    def hint(self, unsure: Candidate | None) -> str:
        """The exact commands that finish the clean-up by hand."""
        steps = []
        for r in self.left:
            subject = shlex.quote(r.subject)
            if r.version is not None:
                steps.append(
                    f"schemacli subjects delete {subject} --version {r.version} --permanent --yes"
                )
            else:
                steps.append(
                    f"schemacli subjects show {subject} (find the version with id {r.id}), then "
                    f"schemacli subjects delete {subject} --version N --permanent --yes"
                )
        if unsure is not None:
            subject = shlex.quote(unsure.subject)
            steps.append(
                f"schemacli subjects show {subject} — if its latest version is the local "
                f"v{unsure.version}, delete it with schemacli subjects delete {subject} "
                "--version latest --permanent --yes"
            )
        return "To restore the registry: " + "; ".join(steps) + "."


def _named(result: RegisterResult) -> str:
    version = f"v{result.version}" if result.version is not None else f"id {result.id}"
    return f"{result.subject} {version}"


def _roll_back(client: RegistryClient, created: Sequence[RegisterResult]) -> RollBack:
    deleted: list[RegisterResult] = []
    left: list[RegisterResult] = []
    for result in reversed(created):
        if result.version is None:  # the registry never said which version: cannot delete it
            left.append(result)
            continue
        try:
            client.delete_version(result.subject, result.version)
            client.delete_version(result.subject, result.version, permanent=True)
        except RegistryError:
            left.append(result)
        else:
            deleted.append(result)
    return RollBack(tuple(deleted), tuple(left))


def registry_gate(
    client: RegistryClient,
    settings: ConfiguredLevels,
    head: Tree,
    *,
    register: bool = False,
    each: Callable[[Sequence[str]], Iterable[str]] = lambda names: names,
    on_done: Callable[[RegisterResult], None] | None = None,
    readers: Sequence[DeclaredReader] = (),
    vet: Callable[[GateReport], GateReport] | None = None,
) -> tuple[RegistryGate, list[RegisterResult]]:
    """``schemacli gate --registry URL [--register]``: the gate, then the registration.

    ``client`` is built at the edge from the registry flags, environment and config file;
    ``settings`` (``schemacli.config.Settings``) gives the configured levels. ``vet`` may add
    findings to the report (the linter on the checked versions) before the verdict is read.
    Registers only when ``register`` and every subject passed; returns what was registered.
    """
    gate = gate_against_registry(client, head, settings, each=each, readers=readers)
    if vet is not None:  # more findings about the new versions (the linter), before registering
        gate = replace(gate, report=vet(gate.report))
    done: list[RegisterResult] = []
    if register and gate.passed:
        done = register_candidates(client, gate, on_done=on_done)
    return gate, done
