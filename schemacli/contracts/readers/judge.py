"""Judging a writer version against the readers its consumers declared (docs/readers.md).

Avro's own question, asked of the real readers: can ``reader`` read data written with
``writer``? Each declared reader of a subject (``readers.load_readers``) is the reader, the
writer version the writer; the engine (``compat``, through ``VerdictCache.reader_pair``, memoised
and cached on disk by content) answers. Every incompatibility becomes a finding placed at
line:col in the writer (the file a producer's change touches, where CI annotates), naming the
consumer, its owner, its groups, and where in the reader's schema it sits (``Finding.reader``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from schemacli.contracts.avro.loader import LoadedSchema, load_schema_text
from schemacli.contracts.evolution.check import CheckReport
from schemacli.contracts.evolution.verdicts import VerdictCache
from schemacli.contracts.findings import Finding, Kind, ReaderRef, Severity
from schemacli.contracts.jsontext.pointer import escape_token, unescape_token
from schemacli.contracts.jsontext.source import read_text
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.errors import Location, SchemacliError


@dataclass(frozen=True)
class LoadedReader:
    """A declared reader and its schema, parsed."""

    declared: DeclaredReader
    schema: LoadedSchema


@dataclass(frozen=True)
class ReaderText:
    """A declared reader and its schema's text (read, not parsed yet), or why it could not be
    read: what a cache key needs without parsing anything."""

    declared: DeclaredReader
    text: str | None
    problem: Finding | None = None


def read_declared(readers: Sequence[DeclaredReader]) -> tuple[ReaderText, ...]:
    """Each reader's schema text (the bounded reader); an unreadable one carries its problem."""
    out = []
    for reader in readers:
        try:
            text = read_text(reader.schema_path, shown_path(reader), within=reader.root)
            out.append(ReaderText(reader, text))
        except SchemacliError as err:
            out.append(ReaderText(reader, None, _problem(reader, err)))
    return tuple(out)


def load_declared(
    readers: Sequence[DeclaredReader] | Sequence[ReaderText],
) -> tuple[tuple[LoadedReader, ...], tuple[Finding, ...]]:
    """Parse each reader's schema (one self-contained file); one that cannot be read or
    parsed is an INVALID_SCHEMA finding (its file, line:col) instead, so the rest are still
    judged."""
    texts = [r if isinstance(r, ReaderText) else read_declared([r])[0] for r in readers]
    loaded, problems = [], []
    for item in texts:
        reader = item.declared
        if item.problem is not None or item.text is None:
            problems.append(item.problem or _problem(reader, None))
            continue
        try:
            schema = load_schema_text(item.text, shown_path(reader))
        except SchemacliError as err:
            problems.append(_problem(reader, err))
            continue
        loaded.append(LoadedReader(reader, schema))
    return tuple(loaded), tuple(problems)


def shown_path(reader: DeclaredReader) -> str:
    """How messages name a reader's schema file: relative to the working directory when it is
    below it, else as it is."""
    path = reader.schema_path
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _problem(reader: DeclaredReader, err: SchemacliError | None) -> Finding:
    return Finding(
        kind=Kind.INVALID_SCHEMA,
        message=f"the reader schema consumer {reader.consumer} declared for {reader.subject}: "
        + (err.message if err is not None else "cannot be read"),
        location=(err.location if err is not None else None) or Location(source=shown_path(reader)),
        hint=err.hint if err is not None else None,
        subject=reader.subject,
    )


def judge_readers(
    writer: LoadedSchema,
    readers: Sequence[LoadedReader],
    *,
    subject: str,
    writer_label: str,
    verdicts: VerdictCache | None = None,
) -> tuple[Finding, ...]:
    """Every incompatibility between ``writer`` (named ``writer_label``, e.g. ``orders-value
    v3``) and each declared reader of ``subject``, readers in the order given.

    Each finding keeps the engine's kind (TYPE_MISMATCH, ...), sits at line:col in the writer,
    and carries the consumer and the reader's line:col in ``Finding.reader``; its message names
    both places and the consumer's owner.
    """
    verdicts = verdicts if verdicts is not None else VerdictCache()
    found: list[Finding] = []
    for reader in readers:
        result = verdicts.reader_pair(reader.schema, writer)
        for finding in result.findings:
            found.append(_placed(finding, reader, writer, subject, writer_label))
    return tuple(found)


def with_readers(
    report: CheckReport,
    candidate: LoadedSchema,
    readers: Sequence[DeclaredReader],
    *,
    verdicts: VerdictCache | None = None,
) -> CheckReport:
    """``report`` (a candidate checked at its subject's level, against the store or a
    registry) with the declared readers' verdicts added: every reader of the subject judges the
    candidate as the writer. A reader schema that does not parse is an INVALID_SCHEMA finding."""
    if not readers:
        return report
    loaded, problems = load_declared(readers)
    judged = judge_readers(
        candidate,
        loaded,
        subject=report.subject,
        writer_label=f"{report.candidate} (the new {report.subject} version)",
        verdicts=verdicts,
    )
    return replace(
        report,
        findings=report.findings + problems + judged,
        readers=tuple(r.consumer for r in readers),
    )


def _placed(
    finding: Finding,
    reader: LoadedReader,
    writer: LoadedSchema,
    subject: str,
    writer_label: str,
) -> Finding:
    pointer = finding.location.pointer or ""
    in_reader = reader.schema.location(pointer)
    in_writer = writer.location(writer_pointer(reader.schema.value, writer.value, pointer))
    declared = reader.declared
    owner = f"owner {declared.owner}; " if declared.owner else ""
    groups = ", ".join(declared.groups)
    message = (
        f"{finding.message} Consumer {declared.consumer} ({owner}group(s) {groups}) declared "
        f"a reader that cannot read {writer_label}: reader {_at(in_reader)}, writer "
        f"{_at(in_writer)}."
    )
    hint = finding.hint or ""
    contact = f" Tell {declared.contact} before releasing it." if declared.contact else ""
    hint = (
        f"{hint} Or agree a new reader with {declared.consumer} first (update "
        f"{declared.schema_path.name} in its declaration).{contact}"
    ).strip()
    return replace(
        finding,
        message=message,
        hint=hint,
        location=in_writer,
        subject=subject or None,
        reader=ReaderRef(
            consumer=declared.consumer,
            owner=declared.owner,
            contact=declared.contact,
            groups=declared.groups,
            location=in_reader,
        ),
    )


def _at(location: Location) -> str:
    return f"{location.source}:{location.line}:{location.column}"


def writer_pointer(reader: Any, writer: Any, pointer: str) -> str:
    """The place in the writer's JSON that matches ``pointer`` into the reader's: fields are
    matched by name (or the reader field's aliases), everything else by the same key or index.
    Where the writer has no counterpart (a field only the reader has), the nearest enclosing
    place that exists in both."""
    tokens = pointer.split("/")[1:] if pointer else []
    out: list[str] = []
    r, w = reader, writer
    i = 0
    while i < len(tokens):
        token = unescape_token(tokens[i])
        if isinstance(r, dict) and isinstance(w, dict):
            if token == "fields" and i + 1 < len(tokens):
                index = _field_counterpart(r, w, tokens[i + 1])
                if index is None:  # a field the writer lacks: its fields, then
                    if isinstance(w.get("fields"), list):
                        out.append("fields")
                    break
                out += ["fields", str(index)]
                r, w = r["fields"][int(tokens[i + 1])], w["fields"][index]
                i += 2
                continue
            if token not in w or token not in r:
                break
            out.append(escape_token(token))
            r, w = r[token], w[token]
        elif isinstance(r, list) and isinstance(w, list) and token.isdigit():
            index = int(token)
            if index >= len(r) or index >= len(w):
                break
            out.append(token)
            r, w = r[index], w[index]
        else:
            break
        i += 1
    return "".join("/" + t for t in out)


def _field_counterpart(reader: dict[str, Any], writer: dict[str, Any], token: str) -> int | None:
    """The index in the writer's fields of the reader's field ``token``, by name or alias."""
    rfields, wfields = reader.get("fields"), writer.get("fields")
    if not isinstance(rfields, list) or not isinstance(wfields, list) or not token.isdigit():
        return None
    index = int(token)
    if index >= len(rfields) or not isinstance(rfields[index], dict):
        return None
    field = rfields[index]
    names = [field.get("name"), *(field.get("aliases") or [])]
    for j, other in enumerate(wfields):
        if isinstance(other, dict) and other.get("name") in names:
            return j
    return None


@dataclass(frozen=True)
class ReaderVerdict:
    """One declared reader judged against its subject's latest writer version (``against``,
    e.g. ``orders-value v3``; None when the subject has no version to read)."""

    declared: DeclaredReader
    against: str | None
    findings: tuple[Finding, ...] = ()

    @property
    def compatible(self) -> bool:
        return not any(f.severity is Severity.ERROR for f in self.findings)


def judge_latest(
    readers: Sequence[DeclaredReader],
    latest: Callable[[str], tuple[LoadedSchema, str] | None],
    *,
    verdicts: VerdictCache | None = None,
) -> tuple[ReaderVerdict, ...]:
    """Each declared reader against ``latest(subject)`` (the subject's latest version and its
    label, from the store or a registry; None: none yet), asked once per subject."""
    verdicts = verdicts if verdicts is not None else VerdictCache()
    writers: dict[str, tuple[LoadedSchema, str] | None] = {}
    out = []
    for reader in readers:
        loaded, problems = load_declared([reader])
        if reader.subject not in writers:
            writers[reader.subject] = latest(reader.subject)
        writer = writers[reader.subject]
        if problems or writer is None:
            out.append(ReaderVerdict(reader, writer[1] if writer else None, problems))
            continue
        found = judge_readers(
            writer[0], loaded, subject=reader.subject, writer_label=writer[1], verdicts=verdicts
        )
        out.append(ReaderVerdict(reader, writer[1], found))
    return tuple(out)
