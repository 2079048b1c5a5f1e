"""The mapping: which v2 value becomes each v1 field, and what happens when it cannot.

The on-disk format is versioned YAML (``version: 1``), documented in docs/migration.md::

    version: 1
    source: {subject: taxi-rides-v2-value, schema: v2.avsc, topic: taxi-rides-v2}
    target: {subject: taxi-rides-value, version: 1, schema: v1.avsc, topic: taxi-rides}
    dead_letter_topic: taxi-rides-v2.dead-letter
    fields:
      total_amount: {from: total_amount, convert: parse_number, on_error: fail}
    key:                       # optional: convert the Kafka key too (else copied byte for byte)
      source: {subject: taxi-rides-v2-key, schema: v2-key.avsc}
      target: {subject: taxi-rides-key, version: 1, schema: v1-key.avsc}
      fields:
        vendorId: {from: vendor_id, convert: narrow}

The ``key`` section is a mapping of its own (same endpoints without ``topic``, same rules), kept
in ``Mapping.key`` with its pointers under ``/key``.

Loading keeps every key's line:col, so every error names ``file:line:col`` and the key path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from schemacli.errors import InputError, Location
from schemacli.textfile import read_utf8

FORMAT_VERSION = 1


class Policy(StrEnum):
    """What a field does when its conversion fails for a record."""

    FAIL = "fail"  # the whole record goes to the dead-letter topic, with the reason in a header
    DEFAULT = "default"  # the field takes its default (the rule's ``default``, else v1's default)


class Conversion(StrEnum):
    """The catalogue of conversions. Each becomes a Spark SQL expression (``converters.sql``)."""

    COPY = "copy"  # same type (or an Avro promotion: int->long/float/double, float->double ...)
    PARSE_NUMBER = "parse_number"  # string -> int/long/float/double; fails on non-numbers
    NARROW = "narrow"  # long -> int (fails on overflow), double -> float (fails on overflow)
    TO_STRING = "to_string"  # enum/boolean/number -> string
    TO_ENUM = "to_enum"  # string/enum -> enum; fails when the value is not a v1 symbol
    BYTES_TO_STRING = "bytes_to_string"  # UTF-8 decode; fails on invalid UTF-8
    STRING_TO_BYTES = "string_to_bytes"  # UTF-8 encode
    RECORD = "record"  # a nested record built field by field (its fields are ``path.sub`` rules)
    DEFAULT = "default"  # v2 has no such field: the default value
    SQL = "sql"  # a hand-written Spark SQL expression (``expr``, optional ``error_when``)
    UNRESOLVED = "unresolved"  # no safe conversion: the mapping is not deployable until resolved


_MISSING = object()


@dataclass(frozen=True)
class Endpoint:
    """One side of the migration: where its schema comes from and which topic carries it."""

    subject: str | None = None
    version: int | str | None = None  # registry version or "latest"
    schema: str | None = None  # path of an .avsc file, relative to the mapping file
    topic: str | None = None
    schema_json: Any = field(default=None, compare=False)  # loaded schema (file or inline)


@dataclass(frozen=True)
class Rule:
    """How one v1 (target) field is produced. ``target`` and ``source`` are dotted paths."""

    target: str
    convert: Conversion
    source: str | None = None
    on_error: Policy = Policy.FAIL
    default: Any = _MISSING  # explicit default for policy=default / convert=default
    expr: str | None = None  # convert=sql only
    error_when: str | None = None  # convert=sql only: SQL condition meaning "conversion failed"
    reason: str | None = None  # convert=unresolved: why no safe conversion exists
    note: str | None = None  # planner's remark (lossy, alias used, ...)

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING


@dataclass(frozen=True)
class Mapping:
    version: int
    source: Endpoint
    target: Endpoint
    rules: tuple[Rule, ...]
    dead_letter_topic: str | None = None
    origin: str | None = field(default=None, compare=False)  # the file it came from
    positions: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    key: Mapping | None = None  # the key's own mapping; None: the key is copied byte for byte
    prefix: str = ""  # where this mapping sits in the file ("/key" for the key's mapping)

    def rule(self, target: str) -> Rule | None:
        return next((r for r in self.rules if r.target == target), None)

    @property
    def unresolved(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.convert is Conversion.UNRESOLVED)

    def location(self, pointer: str) -> Location:
        """Location of a key path (``/fields/total_amount/convert``) in the mapping file."""
        pointer = self.prefix + pointer
        probe = pointer
        while probe and probe not in self.positions:
            probe = probe.rsplit("/", 1)[0]
        line, col = self.positions.get(probe, (None, None))
        return Location(source=self.origin, pointer=pointer, line=line, column=col)

    def with_schemas(self, source_json: Any, target_json: Any) -> Mapping:
        return replace(
            self,
            source=replace(self.source, schema_json=source_json),
            target=replace(self.target, schema_json=target_json),
        )


# ---------------------------------------------------------------------------------------------
# YAML -> Mapping


def load(path: str | Path, *, load_schemas: bool = True) -> Mapping:
    """Read a mapping file. Raises InputError naming file:line:col and the key path.

    With ``load_schemas`` the ``schema`` files (relative to the mapping) are read too; a mapping
    may instead carry them inline as ``schema_json`` (what ``deploy`` ships to the cluster).
    """
    p = Path(path)
    try:
        hint = "A mapping is UTF-8 YAML, as `schemacli migrate plan --out` writes it."
        text = read_utf8(p, hint=hint)
    except OSError as exc:
        raise InputError(
            f"cannot read mapping file: {exc.strerror or exc}",
            location=Location(source=str(p)),
            hint="Pass the path of a mapping written by `schemacli migrate plan --out`.",
        ) from exc
    mapping = loads(text, source=str(p))
    if load_schemas:
        mapping = _load_schema_files(mapping, p.parent)
    return mapping


def loads(text: str, *, source: str = "<mapping>") -> Mapping:
    """Parse mapping YAML text (or JSON, which is YAML). Raises InputError with line:col."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            location=Location(
                source=source,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ),
            hint="Fix the YAML syntax; `schemacli migrate plan --out` writes a valid skeleton.",
        ) from exc
    positions: dict[str, tuple[int, int]] = {}
    value = _to_python(node, "", positions, source) if node is not None else None
    return _build(value, positions, source)


def _to_python(node: Any, pointer: str, positions: dict, source: str) -> Any:
    import yaml

    positions[pointer] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            child = f"{pointer}/{key}"
            if key in out:
                raise InputError(
                    f"duplicate key {key!r}",
                    location=Location(
                        source=source,
                        pointer=child,
                        line=key_node.start_mark.line + 1,
                        column=key_node.start_mark.column + 1,
                    ),
                    hint="Each key may appear once; merge the two entries.",
                )
            out[key] = _to_python(value_node, child, positions, source)
            positions[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _to_python(n, f"{pointer}/{i}", positions, source) for i, n in enumerate(node.value)
        ]
    return _scalar(node)


def _scalar(node: Any) -> Any:
    import yaml

    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


class _Ctx:
    def __init__(self, positions: dict, source: str) -> None:
        self.positions = positions
        self.source = source

    def error(self, pointer: str, message: str, hint: str) -> InputError:
        probe = pointer
        while probe and probe not in self.positions:
            probe = probe.rsplit("/", 1)[0]
        line, col = self.positions.get(probe, (None, None))
        return InputError(
            message,
            location=Location(source=self.source, pointer=pointer, line=line, column=col),
            hint=hint,
        )

    def keys(self, obj: dict, pointer: str, allowed: tuple[str, ...]) -> None:
        for key in obj:
            if key not in allowed:
                raise self.error(
                    f"{pointer}/{key}",
                    f"unknown key {key!r}",
                    f"Allowed keys here: {', '.join(allowed)}.",
                )

    def string(self, obj: dict, key: str, pointer: str, required: bool = False) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(pointer, f"missing key {key!r}", f"Add `{key}:` here.")
            return None
        if not isinstance(value, str) or not value:
            raise self.error(
                f"{pointer}/{key}",
                f"{key!r} must be a non-empty string, got {value!r}",
                f"Write `{key}: <text>`.",
            )
        return value


def _build(value: Any, positions: dict, source: str) -> Mapping:
    ctx = _Ctx(positions, source)
    if not isinstance(value, dict):
        raise ctx.error(
            "",
            "a mapping file must be a YAML mapping with `version: 1`",
            "Start from `schemacli migrate plan --out mapping.yaml`.",
        )
    ctx.keys(value, "", ("version", "source", "target", "dead_letter_topic", "fields", "key"))
    version = value.get("version")
    if version != FORMAT_VERSION:
        raise ctx.error(
            "/version",
            f"unsupported mapping format version {version!r}",
            f"This schemacli reads `version: {FORMAT_VERSION}`.",
        )
    source_ep = _endpoint(ctx, value.get("source"), "/source")
    target_ep = _endpoint(ctx, value.get("target"), "/target")
    dlq = ctx.string(value, "dead_letter_topic", "")
    fields = value.get("fields")
    rules = _rules(ctx, fields, "/fields")
    key = _key(ctx, value["key"], version) if "key" in value else None
    return Mapping(
        version=version,
        source=source_ep,
        target=target_ep,
        rules=rules,
        dead_letter_topic=dlq,
        origin=source,
        positions=positions,
        key=key,
    )


def _rules(ctx: _Ctx, fields: Any, pointer: str) -> tuple[Rule, ...]:
    if not isinstance(fields, dict) or not fields:
        raise ctx.error(
            pointer,
            f"`{pointer[1:]}` must map each v1 field path to its rule",
            "Write `fields:` followed by `<v1 field>: {from: <v2 field>, convert: copy}`.",
        )
    return tuple(_rule(ctx, target, spec, f"{pointer}/{target}") for target, spec in fields.items())


def _key(ctx: _Ctx, obj: Any, version: int) -> Mapping:
    """The optional ``key:`` section: the Kafka key's own v2 -> v1 mapping."""
    if not isinstance(obj, dict):
        raise ctx.error(
            "/key",
            "`key` must describe how the Kafka key is converted",
            "Write `key: {source: {subject: ..., schema: ...}, target: {...}, fields: {...}}`, "
            "or leave `key` out to copy keys byte for byte.",
        )
    ctx.keys(obj, "/key", ("source", "target", "fields"))
    sides = []
    for side in ("source", "target"):
        pointer = f"/key/{side}"
        spec = obj.get(side)
        if isinstance(spec, dict) and "topic" in spec:
            raise ctx.error(
                f"{pointer}/topic",
                f"the key travels in the value's topic; `topic` belongs to the top-level `{side}`",
                "Remove `topic:` here.",
            )
        sides.append(_endpoint(ctx, spec, pointer))
    return Mapping(
        version=version,
        source=sides[0],
        target=sides[1],
        rules=_rules(ctx, obj.get("fields"), "/key/fields"),
        origin=ctx.source,
        positions=ctx.positions,
        prefix="/key",
    )


def _endpoint(ctx: _Ctx, obj: Any, pointer: str) -> Endpoint:
    side = "v2 (what the converter reads)" if pointer.endswith("/source") else "v1 (what it writes)"
    if not isinstance(obj, dict):
        raise ctx.error(
            pointer,
            f"`{pointer[1:].replace('/', '.')}` must describe the {side} side",
            "Give at least `schema:` (an .avsc path) or `subject:`, and `topic:`.",
        )
    ctx.keys(obj, pointer, ("subject", "version", "schema", "schema_json", "topic"))
    version = obj.get("version")
    if version is not None and not (
        (isinstance(version, int) and not isinstance(version, bool) and version > 0)
        or version == "latest"
    ):
        raise ctx.error(
            f"{pointer}/version",
            f"version must be a positive integer or 'latest', got {version!r}",
            "Write e.g. `version: 1`.",
        )
    ep = Endpoint(
        subject=ctx.string(obj, "subject", pointer),
        version=version,
        schema=ctx.string(obj, "schema", pointer),
        topic=ctx.string(obj, "topic", pointer),
        schema_json=obj.get("schema_json"),
    )
    if ep.schema is None and ep.subject is None and ep.schema_json is None:
        raise ctx.error(
            pointer,
            f"the {side} side names no schema",
            "Add `schema: <file.avsc>` or `subject: <registry subject>`.",
        )
    return ep


_RULE_KEYS = ("from", "convert", "on_error", "default", "expr", "error_when", "unresolved", "note")


def _rule(ctx: _Ctx, target: str, spec: Any, pointer: str) -> Rule:
    if not isinstance(spec, dict):
        raise ctx.error(
            pointer,
            f"rule for {target!r} must be a mapping",
            "Write e.g. `{from: total_amount, convert: parse_number, on_error: fail}`.",
        )
    ctx.keys(spec, pointer, _RULE_KEYS)
    if "unresolved" in spec:
        reason = spec["unresolved"]
        return Rule(
            target=target,
            convert=Conversion.UNRESOLVED,
            source=spec.get("from"),
            reason=str(reason) if reason is not None else "no safe conversion",
            note=spec.get("note"),
        )
    raw = spec.get("convert", "copy" if "from" in spec else None)
    if "expr" in spec and "convert" not in spec:
        raw = "sql"
    try:
        conv = Conversion(raw)
    except ValueError:
        raise ctx.error(
            f"{pointer}/convert",
            f"unknown conversion {raw!r} for {target!r}",
            "One of: " + ", ".join(c.value for c in Conversion),
        ) from None
    try:
        policy = Policy(spec.get("on_error", "fail"))
    except ValueError:
        raise ctx.error(
            f"{pointer}/on_error",
            f"unknown on_error policy {spec.get('on_error')!r}",
            "Use `fail` (record -> dead letter) or `default` (use the default).",
        ) from None
    source = ctx.string(spec, "from", pointer)
    expr = ctx.string(spec, "expr", pointer)
    if conv is Conversion.SQL and expr is None:
        raise ctx.error(
            pointer,
            f"convert: sql for {target!r} needs `expr`",
            "Give the Spark SQL expression over the v2 fields, e.g. `expr: upper(name)`.",
        )
    if conv not in (Conversion.SQL, Conversion.DEFAULT, Conversion.RECORD) and source is None:
        raise ctx.error(
            pointer,
            f"convert: {conv.value} for {target!r} needs `from` (the v2 field)",
            "Add `from: <v2 field path>`, or use `convert: default`.",
        )
    return Rule(
        target=target,
        convert=conv,
        source=source,
        on_error=policy,
        default=spec["default"] if "default" in spec else _MISSING,
        expr=expr,
        error_when=ctx.string(spec, "error_when", pointer),
        note=spec.get("note"),
    )


def _load_schema_files(mapping: Mapping, base: Path) -> Mapping:
    if mapping.key is not None:
        mapping = replace(mapping, key=_load_schema_files(mapping.key, base))
    loaded = []
    for side, ep in (("source", mapping.source), ("target", mapping.target)):
        js = ep.schema_json
        if js is None and ep.schema is not None:
            path = (base / ep.schema) if not Path(ep.schema).is_absolute() else Path(ep.schema)
            try:
                js = json.loads(read_utf8(path, hint="Save the schema as UTF-8."))
            except OSError as exc:
                raise InputError(
                    f"cannot read the {mapping.prefix[1:]}{' ' if mapping.prefix else ''}{side} "
                    f"schema {str(path)!r}: {exc.strerror or exc}",
                    location=mapping.location(f"/{side}/schema"),
                    hint="Paths are relative to the mapping file.",
                ) from exc
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{mapping.prefix[1:]}{' ' if mapping.prefix else ''}{side} schema is not "
                    f"JSON: {exc.msg}",
                    location=Location(source=str(path), line=exc.lineno, column=exc.colno),
                    hint="Check it with `schemacli validate`.",
                ) from exc
        loaded.append(js)
    return mapping.with_schemas(*loaded)


# ---------------------------------------------------------------------------------------------
# Mapping -> YAML


def to_dict(
    mapping: Mapping,
    *,
    inline_schemas: bool = False,
    inline: tuple[bool, bool] = (False, False),
    key_inline: tuple[bool, bool] = (False, False),
) -> dict[str, Any]:
    """The mapping as plain data in the file format (``inline_schemas`` embeds ``schema_json``
    for every side; ``inline``/``key_inline`` per side of the value/key, for schemas that came
    from the registry)."""

    def endpoint(ep: Endpoint, embed: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("subject", "version", "schema", "topic"):
            if getattr(ep, key) is not None:
                out[key] = getattr(ep, key)
        if (inline_schemas or embed) and ep.schema_json is not None:
            out["schema_json"] = ep.schema_json
        return out

    out: dict[str, Any] = {
        "version": mapping.version,
        "source": endpoint(mapping.source, inline[0]),
        "target": endpoint(mapping.target, inline[1]),
    }
    if mapping.dead_letter_topic:
        out["dead_letter_topic"] = mapping.dead_letter_topic
    out["fields"] = _fields_dict(mapping.rules)
    if mapping.key is not None:
        out["key"] = {
            "source": endpoint(mapping.key.source, key_inline[0]),
            "target": endpoint(mapping.key.target, key_inline[1]),
            "fields": _fields_dict(mapping.key.rules),
        }
    return out


def _fields_dict(rules: tuple[Rule, ...]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for r in rules:
        spec: dict[str, Any] = {}
        if r.source is not None:
            spec["from"] = r.source
        if r.convert is Conversion.UNRESOLVED:
            spec["unresolved"] = r.reason
        else:
            spec["convert"] = r.convert.value
            if r.expr is not None:
                spec["expr"] = r.expr
            if r.error_when is not None:
                spec["error_when"] = r.error_when
            if (
                r.convert not in (Conversion.COPY, Conversion.DEFAULT, Conversion.RECORD)
                or r.on_error is Policy.DEFAULT
            ):
                spec["on_error"] = r.on_error.value
            if r.has_default:
                spec["default"] = r.default
        if r.note:
            spec["note"] = r.note
        fields[r.target] = spec
    return fields


def dumps(
    mapping: Mapping,
    *,
    header: str | None = None,
    inline: tuple[bool, bool] = (False, False),
    key_inline: tuple[bool, bool] = (False, False),
) -> str:
    """YAML text of ``mapping``: one line per field rule, in v1 field order (the key's last)."""
    import yaml

    data = to_dict(mapping, inline=inline, key_inline=key_inline)
    fields = data.pop("fields")
    key = data.pop("key", None)
    head = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=100)
    lines = []
    if header:
        lines += [f"# {line}".rstrip() for line in header.splitlines()]
    lines.append(head.rstrip())
    lines.append("fields:")
    lines += _rule_lines(fields, "  ")
    if key is not None:
        key_fields = key.pop("fields")
        sides = yaml.safe_dump(key, sort_keys=False, default_flow_style=False, width=100)
        lines.append("key:")
        lines += ["  " + line for line in sides.rstrip().splitlines()]
        lines.append("  fields:")
        lines += _rule_lines(key_fields, "    ")
    return "\n".join(lines) + "\n"


def _rule_lines(fields: dict[str, Any], indent: str) -> list[str]:
    import yaml

    lines = []
    for target, spec in fields.items():
        flow = yaml.safe_dump(spec, default_flow_style=True, sort_keys=False, width=10_000).strip()
        key = yaml.safe_dump(target, default_flow_style=True).strip().removesuffix("\n...").strip()
        lines.append(f"{indent}{key}: {flow}")
    return lines
