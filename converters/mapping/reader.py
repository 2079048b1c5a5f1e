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

import math
from functools import cache
from pathlib import Path
from typing import Any

from converters.mapping.model import (
    FORMAT_VERSION,
    MAX_VERSION,
    NO_DEFAULT,
    Conversion,
    Endpoint,
    Mapping,
    Policy,
    Rule,
)
from converters.mapping.schemas import load_schema_files
from schemacli.contracts.jsontext.nesting import deep
from schemacli.contracts.jsontext.numberlength import MAX_NUMBER_LENGTH, NUMBER_TOO_LONG_HINT
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.positions import Positions
from schemacli.errors import InputError, Location
from schemacli.textfile import DOCUMENT_LIMIT, UnreadableInput, read_utf8
from schemacli.topics import TOPIC_HINT, topic_problem


def load(path: str | Path, *, load_schemas: bool = True) -> Mapping:
    """Read a mapping file. Raises InputError naming file:line:col and the key path.

    With ``load_schemas`` the ``schema`` files (relative to the mapping) are read too; a mapping
    may instead carry them inline as ``schema_json`` (what ``deploy`` ships to the cluster).
    """
    p = Path(path)
    hint = "A mapping is UTF-8 YAML, as `schemacli migrate plan --out` writes it."
    try:  # the bounded reader: a size cap; a FIFO, device or directory named as such
        text = read_utf8(p, hint=hint, limit=DOCUMENT_LIMIT, what="mapping file")
    except UnreadableInput as err:
        if err.reason not in ("missing", "other"):
            err.hint = "Pass the path of a mapping written by `schemacli migrate plan --out`."
        raise
    mapping = loads(text, source=str(p))
    if load_schemas:
        mapping = load_schema_files(mapping, p.parent)
    return mapping


MAX_NODES = 200_000  # YAML nodes after expanding aliases: a mapping has a few thousand at most
MAX_NESTING = 1000  # as deep as Jackson reads JSON (schemacli.contracts.jsontext.nesting.MAX_DEPTH)
_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp")}
_YAML_HINT = "Fix the YAML; `schemacli migrate plan --out` writes a valid skeleton."


def loads(text: str, *, source: str = "<mapping>") -> Mapping:
    """Parse mapping YAML text (or JSON, which is YAML). Raises InputError with line:col.

    Only plain YAML is read: mappings with string keys, sequences, strings, numbers, booleans,
    null (a date stays the text it was written as); no other tags, at most :data:`MAX_NESTING`
    levels and :data:`MAX_NODES` nodes once aliases are expanded."""
    import yaml

    try:
        with deep():
            node = yaml.compose(text, Loader=_loader())
    except _TooDeep as exc:
        raise InputError(
            f"the YAML is nested more than {MAX_NESTING} levels deep",
            location=Location(source=source, line=exc.line, column=exc.column),
            hint="A mapping is a few levels deep; define deep schemas in an .avsc file.",
        ) from None
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
    ctx = _Ctx(Positions(), source)
    if node is None:
        return _build(None, ctx)
    with deep():
        value = _Reader(ctx).read(node, "")
    return _build(value, ctx)


class _TooDeep(Exception):
    def __init__(self, line: int, column: int) -> None:
        super().__init__(line, column)
        self.line, self.column = line, column


@cache
def _loader() -> type:
    import yaml  # imported when a mapping is read: `schemacli --help` starts fast

    class Loader(yaml.SafeLoader):
        """SafeLoader's composer with a depth limit (PyYAML composes recursively)."""

        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            try:
                if self._depth > MAX_NESTING:
                    # types-PyYAML leaves Parser.peek_event unannotated
                    mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                    raise _TooDeep(mark.line + 1, mark.column + 1)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return Loader


class _Reader:
    """YAML nodes -> Python values, noting each key path's line:col and scalar text."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.nodes = 0
        self.open: set[int] = set()  # nodes being read: an alias to one is a cycle

    def where(self, node: Any, pointer: str) -> Location:
        mark = node.start_mark
        return Location(self.ctx.source, pointer, mark.line + 1, mark.column + 1)

    def read(self, node: Any, pointer: str) -> Any:
        import yaml

        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise InputError(
                f"the YAML expands to more than {MAX_NODES} nodes (aliases of aliases?)",
                location=self.where(node, pointer),
                hint="Write the mapping without nested anchors and aliases (`&a`, `*a`).",
            )
        if id(node) in self.open:
            raise InputError(
                "an alias refers to a node that contains it (a cycle)",
                location=self.where(node, pointer),
                hint="Remove the recursive alias.",
            )
        mark = node.start_mark
        self.ctx.positions.setdefault(pointer, (mark.line + 1, mark.column + 1))
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, pointer)
        expected = _TAG + ("map" if isinstance(node, yaml.MappingNode) else "seq")
        if node.tag != expected:
            raise self.bad_tag(node, pointer)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.read(n, join_pointer(pointer, i)) for i, n in enumerate(node.value)]
            return self.mapping(node, pointer)
        finally:
            self.open.discard(id(node))

    def mapping(self, node: Any, pointer: str) -> dict[str, Any]:
        import yaml

        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(
                    "a key must be a plain name, not a list or a mapping",
                    location=self.where(key_node, pointer),
                    hint="Write `name: value`; YAML's complex keys (`? [a, b]`) are not used.",
                )
            key = key_node.value
            child = join_pointer(pointer, key, escape=False)  # printed as written: /fields/a/b
            if key in out:
                raise InputError(
                    f"duplicate key {key!r}",
                    location=self.where(key_node, child),
                    hint="Each key may appear once; merge the two entries.",
                )
            mark = key_node.start_mark
            self.ctx.positions[child] = (mark.line + 1, mark.column + 1)
            out[key] = self.read(value_node, child)
            self.ctx.positions[child] = (mark.line + 1, mark.column + 1)
        return out

    def scalar(self, node: Any, pointer: str) -> Any:
        if node.tag not in _SCALAR_TAGS:
            raise self.bad_tag(node, pointer)
        self.ctx.texts[pointer] = node.value
        if node.tag == _TAG + "timestamp":  # a date is data here, kept as written
            return node.value
        digits = sum(c.isdigit() for c in node.value) if node.tag != _TAG + "str" else 0
        if digits > MAX_NUMBER_LENGTH:  # Python's int() stops at 4,300 digits with a ValueError
            raise InputError(
                f"a number of {digits} digits; Apache Avro Java (Jackson) reads at most "
                f"{MAX_NUMBER_LENGTH}",
                location=self.where(node, pointer),
                hint=NUMBER_TOO_LONG_HINT,
            )
        value = _scalar(node)
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                f"{node.value} is not a JSON number (JSON has no NaN or Infinity)",
                location=self.where(node, pointer),
                hint="Use a finite number, or a string; Avro defaults are JSON.",
            )
        return value

    def bad_tag(self, node: Any, pointer: str) -> InputError:
        return InputError(
            f"unsupported YAML tag {node.tag.replace(_TAG, '!!')!r}",
            location=self.where(node, pointer),
            hint="A mapping is plain YAML: strings, numbers, booleans, null, lists and "
            "mappings, without tags.",
        )


def _scalar(node: Any) -> Any:
    import yaml

    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


class _Ctx:
    def __init__(self, positions: Positions, source: str) -> None:
        self.positions = positions
        self.source = source
        self.texts: dict[str, str] = {}  # pointer -> the YAML text of a scalar

    def error(self, pointer: str, message: str, hint: str) -> InputError:
        return InputError(
            message, location=self.positions.location(self.source, pointer), hint=hint
        )

    def keys(self, obj: dict[str, Any], pointer: str, allowed: tuple[str, ...]) -> None:
        for key in obj:
            if key not in allowed:
                raise self.error(
                    f"{pointer}/{key}",
                    f"unknown key {key!r}",
                    f"Allowed keys here: {', '.join(allowed)}.",
                )

    def string(
        self, obj: dict[str, Any], key: str, pointer: str, required: bool = False
    ) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(pointer, f"missing key {key!r}", f"Add `{key}:` here.")
            return None
        if not isinstance(value, str) or not value:
            raise self.error(
                f"{pointer}/{key}",
                f"{key!r} must be a non-empty string, got {self.show(f'{pointer}/{key}', value)}",
                f"Write `{key}: <text>`.",
            )
        return value

    def topic(self, obj: dict[str, Any], pointer: str, key: str = "topic") -> str | None:
        name = self.string(obj, key, pointer)
        problem = topic_problem(name) if name is not None else None
        if problem is not None:
            raise self.error(
                f"{pointer}/{key}", f"invalid topic name: {name!r} {problem}", TOPIC_HINT
            )
        return name

    def show(self, pointer: str, value: Any) -> str:
        """``value`` as the YAML text it was written as (a date stays 2024-01-01)."""
        text = self.texts.get(pointer)
        return repr(value) if text is None or isinstance(value, str) else text


def _build(value: Any, ctx: _Ctx) -> Mapping:
    positions, source = ctx.positions, ctx.source
    if not isinstance(value, dict):
        raise ctx.error(
            "",
            "a mapping file must be a YAML mapping with `version: 1`",
            "Start from `schemacli migrate plan --out mapping.yaml`.",
        )
    ctx.keys(value, "", ("version", "source", "target", "dead_letter_topic", "fields", "key"))
    version = value.get("version")
    if version is None:
        raise ctx.error(
            "/version" if "version" in value else "",
            "the mapping format version is missing",
            f"Add `version: {FORMAT_VERSION}` as the first line.",
        )
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise ctx.error(
            "/version",
            f"unsupported mapping format version {ctx.show('/version', version)}",
            f"This schemacli reads `version: {FORMAT_VERSION}`.",
        )
    source_ep = _endpoint(ctx, value.get("source"), "/source")
    target_ep = _endpoint(ctx, value.get("target"), "/target")
    dlq = ctx.topic(value, "", "dead_letter_topic")
    _no_loops(ctx, source_ep, target_ep, dlq)
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


def _no_loops(ctx: _Ctx, source: Endpoint, target: Endpoint, dlq: str | None) -> None:
    """The converter reads ``source.topic`` and writes the other two: none may be the same."""
    if source.topic is not None and source.topic == target.topic:
        raise ctx.error(
            "/target/topic",
            f"the v1 topic is the v2 topic {source.topic!r}: the converter would read what it "
            "writes",
            "Write v1 to its own topic (the one v1 consumers read).",
        )
    for other, what in ((source.topic, "v2 topic"), (target.topic, "v1 topic")):
        if dlq is not None and dlq == other:
            raise ctx.error(
                "/dead_letter_topic",
                f"the dead-letter topic is the {what} {dlq!r}"
                + (
                    ": a record that fails would be read again, and fail again, forever"
                    if what == "v2 topic"
                    else ": v1 consumers would read raw v2 bytes"
                ),
                f"Use a topic of its own, e.g. `dead_letter_topic: {source.topic or 'v2'}"
                ".dead-letter`.",
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
        (isinstance(version, int) and not isinstance(version, bool) and 0 < version <= MAX_VERSION)
        or version == "latest"
    ):
        raise ctx.error(
            f"{pointer}/version",
            f"version must be a positive integer (at most {MAX_VERSION}) or 'latest', "
            f"got {ctx.show(f'{pointer}/version', version)}",
            "Write e.g. `version: 1`, a version registered under the subject.",
        )
    topic = ctx.topic(obj, pointer)
    ep = Endpoint(
        subject=ctx.string(obj, "subject", pointer),
        version=version,
        schema=ctx.string(obj, "schema", pointer),
        topic=topic,
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
        if not isinstance(raw, str):
            raise ValueError(raw)
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
    for key in ("expr", "error_when"):
        if key in spec and conv is not Conversion.SQL:
            raise ctx.error(
                f"{pointer}/{key}",
                f"`{key}` only applies to convert: sql, and {target!r} is convert: {conv.value}",
                f"Remove `{key}`, or write `convert: sql` to use the expression.",
            )
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
        default=spec["default"] if "default" in spec else NO_DEFAULT,
        expr=expr,
        error_when=ctx.string(spec, "error_when", pointer),
        note=spec.get("note"),
    )
