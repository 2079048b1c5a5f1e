"""Derive a mapping from two schemas: every v1 (target) field matched to a v2 (source) value.

Matching follows Avro's own rules for a reader (v1) reading a writer (v2): by name, then by the
v1 field's aliases, then by a v2 field whose aliases name the v1 field. Where the types differ,
the planner proposes the safe conversion from the catalogue, or writes an explicit ``unresolved``
marker naming why no safe conversion exists: such a mapping is not deployable until a person
decides (``validate`` exits 1 naming each marker).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converters.mapping.conversions import VALUE_SPECS
from converters.mapping.model import FORMAT_VERSION, Conversion, Endpoint, Mapping, Policy, Rule
from converters.mapping.schemaview import AvroField, AvroType, same_type, view
from schemacli.contracts.avro.inline import inlined
from schemacli.contracts.avro.loader import load_schema_file
from schemacli.errors import InputError, Location, UsageError
from schemacli.registry.schemas import RegistrySchemas

if TYPE_CHECKING:
    from schemacli.registry.client import RegistryClient

_STORE_PATH = re.compile(r"(?:^|/)subjects/(?P<subject>[^/]+)/v(?P<version>\d+)\.avsc$")


@dataclass(frozen=True)
class PlanRequest:
    """What ``migrate plan`` is asked: each schema as an .avsc path or ``SUBJECT[:VERSION]``,
    and what the command line says about subjects and topics."""

    source: str
    target: str
    source_subject: str | None = None
    target_subject: str | None = None
    source_topic: str | None = None
    target_topic: str | None = None
    dead_letter_topic: str | None = None
    key_source: str | None = None
    key_target: str | None = None


@dataclass(frozen=True)
class Planned:
    """A planned mapping, and which sides' schemas came from the registry (``inline``,
    ``key_inline``: v2, v1): those are written into the file, which has no path to name."""

    mapping: Mapping
    inline: tuple[bool, bool] = (False, False)
    key_inline: tuple[bool, bool] = (False, False)


@dataclass(frozen=True)
class _Side:
    schema_json: Any
    fields: dict[str, Any]  # Endpoint fields
    inline: bool


def plan_request(request: PlanRequest, out_dir: Path, client: RegistryClient) -> Planned:
    """Plan ``request``: schemas read from files (paths in the mapping relative to ``out_dir``,
    where it is written) or from the registry (self-contained, ``schemacli.registry.schemas``),
    subjects inferred from
    the store's layout (``schemas/subjects/<s>/vN.avsc``), topics and key subjects by
    TopicNameStrategy. Raises UsageError for --key-from without --key-to (or the reverse),
    InputError for a schema that cannot be read, RegistryError from the registry."""
    if (request.key_source is None) != (request.key_target is None):
        raise UsageError(
            "--key-from and --key-to go together",
            hint="Give both to convert keys, or neither to copy keys byte for byte.",
        )
    road = RegistrySchemas(client)
    src = _side(road, request.source, out_dir, request.source_subject)
    tgt = _side(road, request.target, out_dir, request.target_subject)
    mapping = plan(
        src.schema_json,
        tgt.schema_json,
        source=Endpoint(topic=request.source_topic or _topic_of(src), **src.fields),
        target=Endpoint(topic=request.target_topic or _topic_of(tgt), **tgt.fields),
        dead_letter_topic=request.dead_letter_topic,
    )
    if request.key_source is None or request.key_target is None:
        return Planned(mapping, (src.inline, tgt.inline))
    ksrc = _side(road, request.key_source, out_dir)
    ktgt = _side(road, request.key_target, out_dir)
    # TopicNameStrategy: the key's subject is the value's with -key for -value
    for side, value_side in ((ksrc, src), (ktgt, tgt)):
        subject = value_side.fields.get("subject") or ""
        if "subject" not in side.fields and subject.endswith("-value"):
            side.fields["subject"] = subject.removesuffix("-value") + "-key"
    mapping = plan_key(
        mapping,
        ksrc.schema_json,
        ktgt.schema_json,
        source=Endpoint(**ksrc.fields),
        target=Endpoint(**ktgt.fields),
    )
    return Planned(mapping, (src.inline, tgt.inline), (ksrc.inline, ktgt.inline))


def _side(road: RegistrySchemas, spec: str, out_dir: Path, subject: str | None = None) -> _Side:
    """Schema JSON and endpoint fields for ``--from``/``--to``: an .avsc file, or
    SUBJECT[:VERSION] in the registry; ``subject`` (given on the command line) wins."""

    path = Path(spec)
    if path.suffix in (".avsc", ".json") or path.exists():
        loaded = load_schema_file(path)
        fields: dict[str, Any] = {"schema": os.path.relpath(path.resolve(), out_dir.resolve())}
        m = _STORE_PATH.search(path.as_posix())
        if m:  # the store's layout names the subject and version
            fields.update(subject=m["subject"], version=int(m["version"]))
        # types it takes from other files travel inline: the converter reads one schema text
        side = _Side(inlined(loaded), fields, inline=False)
    else:
        name, _, version = spec.partition(":")
        ver: int | str = int(version) if version.isdigit() else (version or "latest")
        found = road.schema(name, ver)
        fields = {"subject": name, "version": found.number}
        side = _Side(found.value, fields, inline=True)
    if subject:
        side.fields["subject"] = subject
    return side


def _topic_of(side: _Side) -> str | None:
    # TopicNameStrategy: <topic>-value
    subject = side.fields.get("subject")
    if isinstance(subject, str) and subject.endswith("-value"):
        return subject.removesuffix("-value")
    return None


def plan(
    source_json: Any,
    target_json: Any,
    *,
    source: Endpoint | None = None,
    target: Endpoint | None = None,
    dead_letter_topic: str | None = None,
) -> Mapping:
    """Propose a mapping from v2 (``source_json``) to v1 (``target_json``). Pure; never raises on
    an impossible field, it marks it ``unresolved`` instead."""
    source = source or Endpoint()
    target = target or Endpoint()
    src, tgt = _view(source_json, "v2", source), _view(target_json, "v1", target)
    for side, t, endpoint in (("v2", src, source), ("v1", tgt, target)):
        if t.kind != "record":
            raise InputError(
                f"{side} schema is a{'n' if t.kind[0] in 'aeiou' else ''} {t.kind}, not a record",
                location=Location(source=endpoint.schema or endpoint.subject, pointer=""),
                hint="A mapping converts records field by field; both schemas must be records.",
            )
    rules: list[Rule] = []
    _record(src, tgt, "", "", rules)
    if dead_letter_topic is None and source.topic:
        dead_letter_topic = f"{source.topic}.dead-letter"
    return Mapping(
        version=FORMAT_VERSION,
        source=Endpoint(source.subject, source.version, source.schema, source.topic, source_json),
        target=Endpoint(target.subject, target.version, target.schema, target.topic, target_json),
        rules=tuple(rules),
        dead_letter_topic=dead_letter_topic,
    )


def plan_key(
    mapping: Mapping,
    source_json: Any,
    target_json: Any,
    *,
    source: Endpoint | None = None,
    target: Endpoint | None = None,
) -> Mapping:
    """``mapping`` with a ``key`` section planned from the v2 key schema (``source_json``) to the
    v1 key schema (``target_json``), by the same rules as the value. Keys have no topic."""
    key = plan(
        source_json,
        target_json,
        source=replace(source or Endpoint(), topic=None),
        target=replace(target or Endpoint(), topic=None),
    )
    return replace(mapping, key=replace(key, dead_letter_topic=None, prefix="/key"))


def match(source: AvroType, field: AvroField) -> tuple[AvroField | None, str | None]:
    """The v2 field feeding v1 ``field``, and a note when it was found through an alias."""
    by_name = {f.name: f for f in source.fields}
    if field.name in by_name:
        return by_name[field.name], None
    for alias in field.aliases:
        if alias in by_name:
            return by_name[alias], f"matched through v1 alias {alias!r}"
    for f in source.fields:
        if field.name in f.aliases:
            return f, f"matched through v2 alias of {f.name!r}"
    return None, None


def _record(
    src: AvroType, tgt: AvroType, src_prefix: str, tgt_prefix: str, rules: list[Rule]
) -> None:
    for tf in tgt.fields:
        path = tgt_prefix + tf.name
        sf, note = match(src, tf)
        if sf is None:
            rules.append(_missing(tf, path))
            continue
        rules.extend(_pair(sf, tf, src_prefix + sf.name, path, note))


def _missing(tf: AvroField, path: str) -> Rule:
    if tf.has_default:
        return Rule(target=path, convert=Conversion.DEFAULT, note="not in v2: v1 default")
    return Rule(
        target=path,
        convert=Conversion.UNRESOLVED,
        reason=f"v2 has no field {tf.name!r} (nor an alias of it) and v1 gives no default",
    )


def _pair(sf: AvroField, tf: AvroField, spath: str, tpath: str, note: str | None) -> list[Rule]:
    s, t = sf.type.non_null(), tf.type.non_null()
    notes = [note] if note else []
    null_to_required = sf.type.nullable and not tf.type.nullable
    if null_to_required:
        notes.append(
            "v2 allows null, v1 does not: a null goes to the dead letter (or on_error: default)"
        )

    def rule(conv: Conversion, extra: str | None = None) -> list[Rule]:
        n = notes + ([extra] if extra else [])
        return [
            Rule(
                target=tpath,
                source=spath,
                convert=conv,
                on_error=Policy.FAIL,
                note="; ".join(n) or None,
            )
        ]

    sk, tk = s.kind, t.kind
    if s.kind == "union" or t.kind == "union":
        if same_type(s, t):
            return rule(Conversion.COPY)
        return [
            Rule(
                target=tpath,
                source=spath,
                convert=Conversion.UNRESOLVED,
                reason=f"union {s.describe()} -> {t.describe()} has no automatic conversion",
            )
        ]
    if sk == "record" and tk == "record":
        if same_type(s, t):
            return rule(Conversion.COPY)
        out = [
            Rule(
                target=tpath, source=spath, convert=Conversion.RECORD, note="; ".join(notes) or None
            )
        ]
        _record(s, t, spath + ".", tpath + ".", out)
        return out
    for spec in VALUE_SPECS:  # the first conversion of the catalogue that proposes itself
        proposed = spec.propose(s, t)
        if proposed is not None:
            return rule(spec.conversion, proposed.note)
    if sk == tk and sk in ("array", "map", "fixed") and not same_type(s, t):
        reason = (
            f"{s.describe()} -> {t.describe()}: element conversion is not automatic; "
            "write `convert: sql` with transform()"
        )
    elif sk == tk and s.logical != t.logical:
        reason = f"logical type {s.logical} -> {t.logical} has no automatic conversion"
    else:
        reason = f"no safe conversion from v2 {s.describe()} to v1 {t.describe()}"
    return [Rule(target=tpath, source=spath, convert=Conversion.UNRESOLVED, reason=reason)]


def _view(schema_json: Any, side: str, endpoint: Endpoint) -> AvroType:
    """``view`` of one side; its InputError names the side and where its schema came from."""
    try:
        return view(schema_json)
    except InputError as err:
        origin = endpoint.schema or endpoint.subject
        raise InputError(
            f"{side} schema: {err.message}",
            location=replace(err.location, source=origin) if err.location else None,
            hint=err.hint,
        ) from err
