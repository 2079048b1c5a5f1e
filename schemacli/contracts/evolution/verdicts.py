"""Verdicts computed once: an in-memory memo and a persistent, content-addressed cache.

A compatibility verdict is a pure function of the two schemas' content and the direction, and a
merged version never changes (STYLE.md, principle 14). ``VerdictCache`` sits above the engine
(``compat``) and answers the checks ``check`` and ``gate`` make:

* ``check(reader, writer)``: one pair, memoised by content across versions and subjects. Two
  records with the same name whose fields define no named types and have no aliases are
  compared field by field: a field identical in both cannot fail, so only the fields that
  differ are handed to the engine (as one-field records, memoised), and their findings are
  moved back to the field's place; a reader field the writer lacks that has a default is
  decided without the engine, as the engine decides it (it reads the default). A field may
  name a type the schema's references define: it is identical only with identical
  references, and when it differs the records go to the engine whole. This is what makes a
  history's cost follow what changed between versions rather than its width times its
  length; anything else goes to the engine whole.
* ``pairs(level, candidate, history)``: every pair a level compares, remembered on disk when a
  directory is given, keyed by the exact schema contents (referenced files included), the
  directions and :data:`ENGINE_VERSION`.
* ``load`` / ``store``: any other JSON value under a content key (the gate's subject rows).

Findings leave the engine placed only by their JSON pointer into the reader; the caller places
them in the reader's text, so a cached finding is placed exactly as a fresh one. A cache entry
that cannot be read, does not parse, or fails its checksum is ignored with a
:class:`~schemacli.errors.SchemacliWarning`; entries are written to a temporary file and moved
into place with ``os.replace``, so two gates writing at once never leave a torn entry.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from schemacli.contracts.avro.loader import LoadedSchema
from schemacli.contracts.avro.parse import (
    FIELD_TEXT,
    PLAIN,
    REFERRING,
    SELF_COMPATIBLE,
    parse_schema,
    plain_type,
)
from schemacli.contracts.avro.schema import (
    NamedSchema,
    RecordSchema,
    Schema,
    named_types,
)
from schemacli.contracts.evolution import compat
from schemacli.contracts.evolution.compat import CompatResult
from schemacli.contracts.evolution.diskcache import DiskCache, engine_id
from schemacli.contracts.evolution.levels import BACKWARD, Level, comparisons
from schemacli.contracts.findings import Finding, Kind, ReaderRef, Severity
from schemacli.contracts.fixes.edits import Applicability, Fix, TextEdit
from schemacli.errors import Location, SchemacliError

_FIELD_JSON = json.JSONEncoder(ensure_ascii=False)  # built once, used per field
_MEMO_MAX = 1 << 14  # pairs kept in memory; the memo is emptied when it is full
_SCHEMAS_MAX = 1024  # schemas whose fields and digests are kept (a history's worth)
_ONE_FIELDS_MAX = 4096  # parsed one-field records kept (tiny; emptied when full)
_MIN_COST = 0.002  # reading an entry costs ~0.2 ms, writing one ~1 ms
_COMPATIBLE = CompatResult(True)


@dataclass(frozen=True, slots=True)
class RawPair:
    """One comparison a level makes: earlier version ``index``, ``direction``, the engine's
    findings (placed by JSON pointer only, into the reader)."""

    index: int
    direction: str
    result: CompatResult


class VerdictCache:
    """Verdicts by content: memoised in memory, and on disk under ``directory`` if given."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        by_content: bool = True,
        min_cost: float = _MIN_COST,
    ) -> None:
        """``directory``: where to keep verdicts between runs (None: in memory only).
        ``by_content``: recognise a schema by its text (and its referenced files' texts), so
        verdicts are shared across subjects; turn it off for schemas parsed with names handed
        in from elsewhere (a registry's references), which a text alone does not pin down.
        ``min_cost``: CPU seconds a level's checks must have cost to be written to disk (a
        cheaper answer is faster computed again than read)."""
        self.disk = DiskCache(directory) if directory is not None else None
        self.by_content = by_content
        self.min_cost = min_cost
        # (reader, writer) by content key, or by identity: (id, id, schema, schema)
        self._pairs: dict[tuple[object, ...], CompatResult] = {}
        # (reader name, writer name, reader field's text, writer field's text or None)
        self._fields: dict[tuple[str, str, str, str | None], tuple[Finding, ...]] = {}
        # One-field records by text, parsed once: the same text recurs in the checks of many
        # version pairs (see _one_field).
        self._one_fields: dict[str, Schema] = {}
        # Whether a field (by its text, see _Record.of) can be compared alone (_plain).
        self._plains: dict[str, int] = {}
        # Per schema: its fields (by the schema's id, the schema kept alive while its id is a
        # key) and the digest of its content (by content). Both are bounded: a history's
        # versions fit, a whole store need not.
        self._records: dict[int, tuple[Schema, _Record | None]] = {}
        self._digests: dict[str, str] = {}
        # Per referenced schema (by id, kept alive): the named types it defines, or None when
        # it may not read itself (see _external).
        self._named: dict[int, tuple[Schema, tuple[NamedSchema, ...] | None]] = {}
        # Small numbers for field names and (name, JSON) pairs: sets of them compare in C
        # without comparing strings.
        self._ids: dict[Any, int] = {}

    # -- one pair --------------------------------------------------------------------------
    def check(self, reader: LoadedSchema, writer: LoadedSchema) -> CompatResult:
        """The engine's result for ``reader`` reading ``writer`` (findings placed by pointer)."""
        rkey, wkey = self.content_key(reader), self.content_key(writer)
        if rkey is not None and wkey is not None:
            key: tuple[object, ...] = (rkey, wkey)
        else:  # known by identity only: keep both alive while their ids are keys
            key = (id(reader.schema), id(writer.schema), reader.schema, writer.schema)
        result = self._pairs.get(key)
        if result is None:
            result = self._compute(reader, writer)
            if len(self._pairs) >= _MEMO_MAX:
                self._pairs.clear()
            self._pairs[key] = result
        return result

    def _compute(self, reader: LoadedSchema, writer: LoadedSchema) -> CompatResult:
        r, w = self._record(reader), self._record(writer)
        if r is None or w is None or r.simple_name != w.simple_name:
            return compat.check(reader.schema, writer.schema)
        return self._by_fields(r, w, reader, writer)

    def _by_fields(
        self, r: _Record, w: _Record, reader: LoadedSchema, writer: LoadedSchema
    ) -> CompatResult:
        try:
            return self._fields_differing(r, w)
        except (SchemacliError, TypeError, ValueError):  # a field that does not stand alone
            return compat.check(reader.schema, writer.schema)

    def _fields_differing(self, r: _Record, w: _Record) -> CompatResult:
        # The engine compares two same-named records reader field by reader field (writer
        # fields the reader lacks are skipped), each field on its own when no named type can
        # be shared between fields; a field identical in both reads itself.
        differing = r.items - w.items
        missing = r.names - w.names
        if len(differing) == len(missing) and self._all_harmless(r, w, missing):
            return _COMPATIBLE
        found: list[Finding] = []
        changed = [r.item_names[item] for item in differing]
        for name in sorted(changed, key=r.positions.__getitem__):
            found.extend(self._field(r, w, name))
        return CompatResult(not found, tuple(found)) if found else _COMPATIBLE

    def _all_harmless(self, r: _Record, w: _Record, missing: frozenset[int]) -> bool:
        """Whether none of the reader's fields ``missing`` from the writer gives a finding
        (known ones are remembered per reader and writer name, so most calls are a subset
        test)."""
        harmless = r.harmless.get(w.fullname)
        if harmless is None:
            harmless = r.harmless[w.fullname] = set()
        if missing <= harmless:
            return True
        for name_id in missing - harmless:
            if self._field_findings(r, w, r.id_names[name_id], None):
                return False
            harmless.add(name_id)
        return True

    def _field(self, r: _Record, w: _Record, name: str) -> tuple[Finding, ...]:
        found = self._field_findings(r, w, name, w.texts.get(name))
        position = r.positions[name]
        if position == 0:
            return found
        moved = f"/fields/{position}"
        return tuple(
            # the engine's findings always carry a pointer
            _with_pointer(f, moved + (f.location.pointer or "")[len("/fields/0") :])
            for f in found
        )

    def _field_findings(
        self, r: _Record, w: _Record, name: str, writer_text: str | None
    ) -> tuple[Finding, ...]:
        if writer_text is None and name in r.defaulted:
            # A reader field the writer lacks, with a default: the engine reads the default
            # and looks no further (compat._Checker.fields, Java's checkReaderWriterRecordFields).
            return ()
        key = (r.fullname, w.fullname, r.texts[name], writer_text)
        found = self._fields.get(key)
        if found is None:
            reader = _one_field_record(r.fullname, r.raws[name])
            writer = _one_field_record(
                w.fullname, w.raws[name] if writer_text is not None else None
            )
            found = self._fields[key] = compat.check(
                self._one_field(reader), self._one_field(writer)
            ).findings
        return found

    def _one_field(self, text: str) -> Schema:
        """The one-field record ``text`` (see :func:`_one_field_record`), parsed once."""
        schema = self._one_fields.get(text)
        if schema is None:
            if len(self._one_fields) >= _ONE_FIELDS_MAX:
                self._one_fields.clear()
            schema = self._one_fields[text] = parse_schema(text)
        return schema

    def _record(self, loaded: LoadedSchema) -> _Record | None:
        schema = loaded.schema
        entry = self._records.get(id(schema))
        if entry is None or entry[0] is not schema:
            if len(self._records) >= _SCHEMAS_MAX:
                self._records.clear()
            external = self._external(loaded) if loaded.references else frozenset()
            entry = self._records[id(schema)] = (
                schema,
                _Record.of(loaded, self._ids, external, self._plains),
            )
        return entry[1]

    def _external(self, loaded: LoadedSchema) -> frozenset[int]:
        """The ids of the named types ``loaded``'s references define (the nodes its model
        shares with them), when every reference is known to read itself (parsed alone, no
        field aliases: ``parse.SELF_COMPATIBLE``); else none, and a field using one is not
        compared alone. Each reference's types are listed once (many versions share it)."""
        named: list[NamedSchema] = []
        for ref in loaded.references:
            entry = self._named.get(id(ref.schema))
            if entry is None or entry[0] is not ref.schema:
                if len(self._named) >= _SCHEMAS_MAX:
                    self._named.clear()
                found = (
                    tuple(named_types(ref.schema))
                    if ref.schema.__dict__.get(SELF_COMPATIBLE, False)
                    else None
                )
                entry = self._named[id(ref.schema)] = (ref.schema, found)
            if entry[1] is None:
                return frozenset()
            named.extend(entry[1])
        own = getattr(loaded.schema, "fullname", None)
        if any(n.fullname == own for n in named):  # alone, a field would name the record itself
            return frozenset()
        return frozenset(id(n) for n in named)

    def content_key(self, loaded: LoadedSchema) -> str | None:
        """What ``loaded``'s model depends on: its JSON (layout and key order aside) and the
        files it referenced, as a string; None when not ``by_content``."""
        return _content_key(loaded) if self.by_content else None

    def content_digest(self, loaded: LoadedSchema) -> str | None:
        """The SHA-256 of :meth:`content_key` (computed once per schema while it is in use)."""
        key = self.content_key(loaded)
        if key is None:
            return None
        value = self._digests.get(key)
        if value is None:
            if len(self._digests) >= _SCHEMAS_MAX:
                self._digests.clear()
            value = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
            self._digests[key] = value
        return value

    # -- every pair of a level -------------------------------------------------------------
    def pairs(
        self, level: Level, candidate: LoadedSchema, history: Sequence[LoadedSchema]
    ) -> tuple[RawPair, ...]:
        """Every (earlier version, direction) ``level`` compares, newest first, with the
        engine's findings; read from and written to the disk cache when there is one."""
        wanted = comparisons(level, len(history))
        if not wanted:
            return ()
        key = None
        if self.disk is not None:
            parts = [self.content_digest(candidate)]
            parts += [self.content_digest(history[i]) for i, _ in wanted]
            if None not in parts:
                key = digest("pairs", [d for _, d in wanted], parts)
                cached = self.disk.load(key)
                decoded = _decode_pairs(cached, wanted) if cached is not None else None
                if decoded is not None:
                    return decoded
                if cached is not None:
                    self.disk.corrupt(key, "its findings do not match the comparisons")
        # the clock is a system call (~15 us on a VM): read only when the cost decides a write
        started = time.process_time() if key is not None else 0.0
        out = []
        new = self._record(candidate)
        records = [self._record(h) for h in history] if new is not None else [None] * len(history)
        for index, direction in wanted:
            old_schema = history[index]
            old = records[index]
            if old is not None and new is not None and old.simple_name == new.simple_name:
                # Fields compared directly (no memo: cheaper than the memo's key).
                if direction == BACKWARD:
                    r, w, reader, writer = new, old, candidate, old_schema
                else:
                    r, w, reader, writer = old, new, old_schema, candidate
                # The usual pair is decided here, as _fields_differing decides it: no field
                # differs, or the only ones that differ are the reader's fields the writer
                # lacks, each with a default (which _field_findings answers with nothing
                # for any writer: the engine reads the default).
                differing = r.items - w.items
                known = False
                if differing:
                    missing = r.names - w.names
                    known = len(differing) == len(missing) and missing <= r.defaulted_ids
                if differing and not known:
                    result = self._by_fields(r, w, reader, writer)
                else:
                    result = _COMPATIBLE
            elif direction == BACKWARD:
                result = self.check(candidate, old_schema)
            else:
                result = self.check(old_schema, candidate)
            out.append(RawPair(index, direction, result))
        if (
            key is not None
            and self.disk is not None
            and time.process_time() - started >= self.min_cost
        ):
            self.disk.store(
                key, [[p.index, p.direction, _encode_findings(p.result.findings)] for p in out]
            )
        return tuple(out)

    def reader_pair(self, reader: LoadedSchema, writer: LoadedSchema) -> CompatResult:
        """``check(reader, writer)`` for a declared reader (docs/readers.md), also remembered
        on disk when there is a directory (a declared reader is checked on every run)."""
        key = None
        if self.disk is not None:
            rd, wd = self.content_digest(reader), self.content_digest(writer)
            if rd is not None and wd is not None:
                key = digest("reader-pair", rd, wd)
                cached = self.disk.load(key)
                if cached is not None:
                    try:
                        found = tuple(decode_finding(f) for f in cached)
                        return CompatResult(not found, found) if found else _COMPATIBLE
                    except (TypeError, ValueError, KeyError):
                        self.disk.corrupt(key, "is not a list of findings")
        started = time.process_time()
        result = self.check(reader, writer)
        if key is not None and self.disk is not None:
            if time.process_time() - started >= self.min_cost:
                self.disk.store(key, _encode_findings(result.findings))
        return result

    # -- other values by content key -------------------------------------------------------
    def load(self, key: str) -> Any:
        return self.disk.load(key) if self.disk is not None else None

    def store(self, key: str, value: Any) -> None:
        if self.disk is not None:
            self.disk.store(key, value)


def digest(*parts: Any, texts: Sequence[str] = ()) -> str:
    """A content key: the SHA-256 of ``parts`` (JSON-able), the engine's version and then
    ``texts`` as they are (long texts are hashed without being escaped into JSON; ``parts``
    should say how long each is)."""
    head = json.dumps([engine_id(), *parts], ensure_ascii=False, separators=(",", ":"))
    hasher = hashlib.sha256(head.encode("utf-8", "surrogatepass"))
    for text in texts:
        hasher.update(b"\0")
        hasher.update(text.encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


def _content_key(loaded: LoadedSchema) -> str:
    if not loaded.references:
        return loaded.identity
    return digest("schema", loaded.identity, [_content_key(r) for r in loaded.references])


# -- records compared field by field ---------------------------------------------------------


class _Record:
    """A record whose fields hold only primitives, arrays, maps and unions of them, no alias.

    A pair of versions is mostly decided by the two set differences (``items``, ``names``);
    the maps by name are built only for a record whose fields the engine must see."""

    __slots__ = (
        "simple_name",
        "fullname",
        "models",
        "field_names",
        "field_texts",
        "field_raws",
        "item_ids",
        "name_ids",
        "items",
        "names",
        "harmless",
        "__dict__",
    )

    def __init__(
        self,
        schema: RecordSchema,
        field_names: list[str],
        field_texts: list[str],
        field_raws: list[dict[str, Any]],
        item_ids: list[int],
        name_ids: list[int],
    ) -> None:
        self.simple_name: str = schema.simple_name
        self.fullname: str = schema.fullname
        self.models = schema.fields
        self.field_names = field_names  # by position
        self.field_texts = field_texts  # the field's JSON value, as Python writes it (repr)
        self.field_raws = field_raws  # the field's JSON value
        self.item_ids = item_ids  # the number of the (name, text) pair
        self.name_ids = name_ids  # the number of the name
        self.items = frozenset(item_ids)
        self.names = frozenset(name_ids)
        self.harmless: dict[str, set[int]] = {}

    @cached_property
    def texts(self) -> dict[str, str]:
        return dict(zip(self.field_names, self.field_texts, strict=True))

    @cached_property
    def raws(self) -> dict[str, dict[str, Any]]:
        return dict(zip(self.field_names, self.field_raws, strict=True))

    @cached_property
    def positions(self) -> dict[str, int]:
        return {name: position for position, name in enumerate(self.field_names)}

    @cached_property
    def item_names(self) -> dict[int, str]:
        """The number of a (name, text) pair -> the name."""
        return dict(zip(self.item_ids, self.field_names, strict=True))

    @cached_property
    def id_names(self) -> dict[int, str]:
        """The number of a name -> the name."""
        return dict(zip(self.name_ids, self.field_names, strict=True))

    @cached_property
    def defaulted(self) -> frozenset[str]:
        """The fields that have a default (a JSON null one too)."""
        return frozenset(m.name for m in self.models if m.has_default)

    @cached_property
    def defaulted_ids(self) -> frozenset[int]:
        """The numbers of the names of :attr:`defaulted`."""
        return frozenset(
            number
            for number, model in zip(self.name_ids, self.models, strict=True)
            if model.has_default
        )

    @classmethod
    def of(
        cls,
        loaded: LoadedSchema,
        ids: dict[Any, int],
        external: frozenset[int] = frozenset(),
        plains: dict[str, int] | None = None,
    ) -> _Record | None:
        """The record ``loaded`` as fields compared one by one, or None when it is not one
        (``external``: the named types its references define, see VerdictCache._external;
        ``plains``: what :func:`_plain` said of a field, by its text, kept by the caller)."""
        schema = loaded.schema
        if schema.__class__ is not RecordSchema or schema.is_error:
            return None
        value = loaded.value
        fields = value.get("fields") if isinstance(value, dict) else None
        if not isinstance(fields, list) or len(fields) != len(schema.fields):
            return None
        references: str | None = None
        names: list[str] = []
        texts: list[str] = []
        item_ids: list[int] = []
        name_ids: list[int] = []
        for model in schema.fields:
            # A field the parser kept in its memo (parse_schema's ``fields``) carries its text
            # and names no named type: it stands alone. Its numbers are kept in it, with the
            # table they come from (a history's versions share the field object).
            attrs = model.__dict__
            known = attrs.get(_FIELD_IDS)
            if known is not None and known[0] is ids:
                names.append(known[1])
                texts.append(known[2])
                item_ids.append(known[3])
                name_ids.append(known[4])
                continue
            text = attrs.get(FIELD_TEXT)
            if text is None:
                break
            name = model.name
            attrs[_FIELD_IDS] = known = (
                ids,
                name,
                text,
                ids.setdefault((name, text), len(ids)),
                ids.setdefault(name, len(ids)),
            )
            names.append(name)
            texts.append(text)
            item_ids.append(known[3])
            name_ids.append(known[4])
        else:
            return cls(schema, names, texts, fields, item_ids, name_ids)
        names.clear()
        texts.clear()
        for model, raw in zip(schema.fields, fields, strict=True):
            text = model.__dict__.get(FIELD_TEXT)
            if text is None:
                if model.aliases or not isinstance(raw, dict):
                    return None
                # repr, not JSON: equal texts mean equal values; unequal ones (keys in another
                # order) only cost a comparison by the engine.
                text = repr(raw)
                # Without types from references, whether a field stands alone follows from
                # its JSON (a name it uses is a named type whatever defines it): the versions
                # of a history share most fields, each walked once.
                plain = plains.get(text) if plains is not None and not external else None
                if plain is None:
                    plain = _plain(model, external)
                    if plains is not None and not external:
                        if len(plains) >= _ONE_FIELDS_MAX:
                            plains.clear()
                        plains[text] = plain
                if not plain:
                    return None
                if plain is REFERRING:
                    # The field names a type another file defines: its meaning is that file's
                    # content too, so equal texts mean equal fields only with equal
                    # references. Such a field that differs is compared by the engine on the
                    # whole records (a one-field record of it does not parse alone).
                    if references is None:
                        references = "\0".join(_content_key(r) for r in loaded.references)
                    text = f"{text}\0{references}"
            names.append(model.name)
            texts.append(text)
        item_ids = [ids.setdefault(item, len(ids)) for item in zip(names, texts, strict=True)]
        name_ids = [ids.setdefault(name, len(ids)) for name in names]
        return cls(schema, names, texts, fields, item_ids, name_ids)


# A memoised field's numbers in a VerdictCache's table: (the table, name, text, the number of
# (name, text), the number of the name), kept in the field (see _Record.of).
_FIELD_IDS = "_verdict_ids"


def _plain(model: Any, external: frozenset[int] = frozenset()) -> int:
    """Whether the field ``model`` can be compared on its own: 0 (no: it defines a named
    type, which another field may use), :data:`PLAIN`, or :data:`REFERRING` (it uses named
    types of ``external``, the ids of those its schema's references define)."""
    if model.__dict__.get("_ptype") is not None:  # a bare primitive name, not built yet
        return PLAIN
    return plain_type(model.type, external)


def _one_field_record(fullname: str, field: dict[str, Any] | None) -> str:
    fields = f"[{_FIELD_JSON.encode(field)}]" if field is not None else "[]"
    return f'{{"type":"record","name":{json.dumps(fullname)},"fields":{fields}}}'


def _with_pointer(finding: Finding, pointer: str) -> Finding:
    return Finding(
        kind=finding.kind,
        message=finding.message,
        location=Location(pointer=pointer),
        hint=finding.hint,
        severity=finding.severity,
        old=finding.old,
        new=finding.new,
        subject=finding.subject,
    )


# -- findings as JSON --------------------------------------------------------------------------

_FINDING_KEYS = ("kind", "message", "hint", "severity", "old", "new", "subject")
_LOCATION_KEYS = ("source", "pointer", "line", "column")


def encode_finding(finding: Finding) -> dict[str, Any]:
    out = {k: getattr(finding, k) for k in _FINDING_KEYS}
    out["severity"] = finding.severity.value
    out["location"] = [getattr(finding.location, k) for k in _LOCATION_KEYS]
    if finding.fixes:
        out["fixes"] = [_encode_fix(fix) for fix in finding.fixes]
    if finding.reader is not None:
        ref = finding.reader
        out["reader"] = {
            "consumer": ref.consumer,
            "owner": ref.owner,
            "contact": ref.contact,
            "groups": list(ref.groups),
            "location": [getattr(ref.location, k) for k in _LOCATION_KEYS],
        }
    return out


def _encode_fix(fix: Fix) -> list[Any]:
    edits = [[e.start, e.end, e.text, *e.start_pos, *e.end_pos] for e in fix.edits]
    return [fix.title, fix.applicability.value, edits, fix.source]


def _decode_fix(data: Any) -> Fix:
    title, applicability, edits, source = data
    if not isinstance(title, str) or not (source is None or isinstance(source, str)):
        raise ValueError("a fix needs a title")
    return Fix(
        title,
        Applicability(applicability),
        tuple(
            TextEdit(int(a), int(b), str(text), (int(sl), int(sc)), (int(el), int(ec)))
            for a, b, text, sl, sc, el, ec in edits
        ),
        source,
    )


def decode_finding(data: Any) -> Finding:
    """A finding from :func:`encode_finding`; ValueError / TypeError / KeyError if malformed."""
    location = Location(**dict(zip(_LOCATION_KEYS, data["location"], strict=True)))
    values = {k: data[k] for k in _FINDING_KEYS}
    values["severity"] = Severity(values["severity"])
    if not isinstance(values["kind"], str) or not isinstance(values["message"], str):
        raise ValueError("a finding needs a kind and a message")
    values["kind"] = Kind[values["kind"]]  # KeyError: a kind this engine does not know
    fixes = tuple(_decode_fix(f) for f in data.get("fixes", ()))
    ref = data.get("reader")
    reader = None
    if ref is not None:
        reader = ReaderRef(
            consumer=ref["consumer"],
            owner=ref["owner"],
            contact=ref["contact"],
            groups=tuple(ref["groups"]),
            location=Location(**dict(zip(_LOCATION_KEYS, ref["location"], strict=True))),
        )
    return Finding(location=location, fixes=fixes, reader=reader, **values)


def encodable(findings: Sequence[Finding]) -> list[dict[str, Any]] | None:
    """``findings`` as JSON, or None when a value would not come back identical (a tuple)."""
    encoded = _encode_findings(findings)
    decoded = json.loads(json.dumps(encoded, ensure_ascii=False))
    if [decode_finding(f) for f in decoded] != list(findings):
        return None
    return encoded


def _encode_findings(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    return [encode_finding(f) for f in findings]


def _decode_pairs(data: Any, wanted: Sequence[tuple[int, str]]) -> tuple[RawPair, ...] | None:
    try:
        out = []
        for (index, direction), (got_index, got_direction, found) in zip(wanted, data, strict=True):
            if (index, direction) != (got_index, got_direction):
                return None
            findings = tuple(decode_finding(f) for f in found)
            out.append(RawPair(index, direction, CompatResult(not findings, findings)))
        return tuple(out)
    except (TypeError, ValueError, KeyError):
        return None


# -- the disk ----------------------------------------------------------------------------------
