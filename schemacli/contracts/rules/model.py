"""A data contract's rule set and metadata, as Confluent's REST API carries them, read from a
contract file with positions.

The file is the ``v<N>.contract.json`` of the store (``{"metadata": {...}, "ruleSet": {...}}``,
as ``pull`` writes it, docs/store.md#data-contracts) or a register body
(``{"schema": "...", "metadata": ..., "ruleSet": ...}``, as ``migrate rules`` writes it). The
shapes (Confluent's ``Rule``, ``RuleSet``, ``Metadata``):

* ``ruleSet``: ``domainRules``, ``migrationRules``, ``encodingRules`` (lists of rules),
  ``enableAt`` (where rules run; "ALL"/"CLIENT" run in clients);
* a rule: ``name``, ``doc``, ``kind`` (CONDITION | TRANSFORM), ``mode`` (WRITE | READ |
  WRITEREAD | UPGRADE | DOWNGRADE | UPDOWN), ``type`` (CEL | CEL_FIELD | JSONATA | ENCRYPT |
  ...), ``tags``, ``params`` (string to string), ``expr``, ``onSuccess``, ``onFailure``
  (ERROR | NONE | DLQ | another action's name; ``"A,B"`` for WRITEREAD/UPDOWN: A on write or
  upgrade, B on read or downgrade), ``disabled``;
* ``metadata``: ``tags`` (a field path, wildcards allowed, to tag names), ``properties``
  (string to string), ``sensitive`` (property names).

A shape the registry would refuse (a rule that is not an object, an unknown kind or mode, a
``params`` value that is not a string) is an InputError naming the file, line:col and the
allowed values. What the registry accepts but is likely wrong (a rule without a name, an
expression always true) is left to ``lint`` and ``judge``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemacli.contracts.jsontext.document import Document
from schemacli.contracts.jsontext.pointer import join_pointer
from schemacli.contracts.jsontext.source import parse_text
from schemacli.errors import InputError, Location
from schemacli.textfile import read_utf8

# A version's contract file sits beside its schema in the store: v<N>.avsc, v<N>.contract.json
# (its metadata and rule set; docs/store.md#data-contracts).
CONTRACT_SUFFIX = ".contract.json"

CONTRACT_LIMIT = 4 * 1024 * 1024  # a rule set is a few KB; JSONata of a wide schema ~100 KB

KINDS = ("CONDITION", "TRANSFORM")
MODES = ("WRITE", "READ", "WRITEREAD", "UPGRADE", "DOWNGRADE", "UPDOWN")
ACTIONS = ("ERROR", "NONE", "DLQ")  # the built-in actions; a client may register others
CEL_TYPES = ("CEL", "CEL_FIELD")
RULE_LISTS = ("domainRules", "migrationRules", "encodingRules")
DLQ_TOPIC = "dlq.topic"  # the DLQ action's parameter: the topic it writes to

_HINT = (
    'A contract file is {"metadata": {...}, "ruleSet": {"domainRules": [...]}} as '
    "`schemacli pull` writes it (docs/rules.md)."
)


@dataclass(frozen=True)
class Rule:
    """One rule, as the registry carries it, and where it sits (``pointer`` into the file)."""

    name: str | None
    kind: str
    mode: str
    type: str
    pointer: str
    doc: str | None = None
    tags: tuple[str, ...] = ()
    params: Mapping[str, str] = field(default_factory=dict)
    expr: str | None = None
    on_success: str | None = None
    on_failure: str | None = None
    disabled: bool = False

    @property
    def is_condition(self) -> bool:
        return self.kind == KINDS[0]

    @property
    def label(self) -> str:
        """How messages name the rule: its name, else its place in the file."""
        return self.name if self.name else f"the rule at {self.pointer}"

    def runs_on(self, mode: str) -> bool:
        """Whether the rule runs when a client is in ``mode`` (WRITE on serialize, READ on
        deserialize, UPGRADE/DOWNGRADE in a migration), as the serde's loop decides."""
        if self.mode == "WRITEREAD":
            return mode in ("WRITE", "READ")
        if self.mode == "UPDOWN":
            return mode in ("UPGRADE", "DOWNGRADE")
        return self.mode == mode

    def action(self, mode: str, failed: bool) -> str:
        """The action a client runs after the rule in ``mode``: onFailure when it failed,
        onSuccess otherwise, the ``"A,B"`` pair split for WRITEREAD/UPDOWN; the default is
        ERROR on failure and NONE on success."""
        name = self.on_failure if failed else self.on_success
        if name and "," in name and self.mode in ("WRITEREAD", "UPDOWN"):
            first, second = name.split(",", 1)
            name = first if mode in ("WRITE", "UPGRADE") else second
        name = (name or "").strip()
        return name or ("ERROR" if failed else "NONE")

    @property
    def guard_and_body(self) -> tuple[str | None, str, int]:
        """(guard, body, offset of body in expr): ``expr`` split at its first ``;`` as the
        executors split it; a blank guard is no guard."""
        text = self.expr or ""
        cut = text.find(";")
        if cut < 0:
            return None, text, 0
        guard = text[:cut]
        return (guard if guard.strip() else None), text[cut + 1 :], cut + 1


@dataclass(frozen=True)
class RuleSet:
    domain_rules: tuple[Rule, ...] = ()
    migration_rules: tuple[Rule, ...] = ()
    encoding_rules: tuple[Rule, ...] = ()
    enable_at: str | None = None

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self.domain_rules + self.migration_rules + self.encoding_rules


@dataclass(frozen=True)
class Metadata:
    tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    properties: Mapping[str, str] = field(default_factory=dict)
    sensitive: tuple[str, ...] = ()


@dataclass(frozen=True)
class RulesPolicy:
    """What the project requires of rule sets (``[tool.schemacli.rules]``): every field
    carrying one of ``require_tags`` must be selected by an enabled CEL_FIELD rule."""

    require_tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contract:
    """A contract file read: its rule set, metadata, the schema it carries (a register body's
    ``schema``, else None) and the document, for positions."""

    source: str
    document: Document
    rule_set: RuleSet
    metadata: Metadata
    schema: str | None = None

    def location(self, pointer: str) -> Location:
        return self.document.location(pointer)

    def expr_location(self, rule: Rule, offset: int) -> Location:
        """line:col in the file of character ``offset`` of ``rule.expr`` (escapes in the
        JSON string counted as the file has them)."""
        pointer = join_pointer(rule.pointer, "expr")
        if not self.document.pointer_exists(pointer):
            return self.location(rule.pointer)
        start = self.document.offset(pointer)  # the opening quote
        raw = _raw_offset(self.document.text, start + 1, offset)
        line, col = self.document.line_col(raw)
        return Location(source=self.source, pointer=pointer, line=line, column=col)


def _raw_offset(text: str, start: int, decoded: int) -> int:
    """The offset in ``text`` of the ``decoded``-th character of the JSON string whose
    contents begin at ``start``."""
    i, n = start, 0
    while n < decoded and i < len(text) and text[i] != '"':
        if text[i] == "\\":
            i += 6 if text[i + 1 : i + 2] == "u" else 2
        else:
            i += 1
        n += 1
    return i


def _fail(doc: Document, pointer: str, message: str, hint: str = _HINT) -> InputError:
    return InputError(message, location=doc.location(pointer), hint=hint)


def _string(doc: Document, value: Any, pointer: str, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(doc, pointer, f"{what} must be a string, not {_json_kind(value)}")
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else "a string"


def _rule(doc: Document, value: Any, pointer: str) -> Rule:
    if not isinstance(value, dict):
        raise _fail(doc, pointer, f"a rule must be an object, not {_json_kind(value)}")
    kind = _string(doc, value.get("kind"), join_pointer(pointer, "kind"), "kind")
    mode = _string(doc, value.get("mode"), join_pointer(pointer, "mode"), "mode")
    rtype = _string(doc, value.get("type"), join_pointer(pointer, "type"), "type")
    if kind is None or kind not in KINDS:
        raise _fail(
            doc,
            join_pointer(pointer, "kind") if kind is not None else pointer,
            f"unknown rule kind {kind!r}" if kind is not None else "a rule without a kind",
            f"A rule's kind is one of {', '.join(KINDS)}.",
        )
    if mode is None or mode not in MODES:
        raise _fail(
            doc,
            join_pointer(pointer, "mode") if mode is not None else pointer,
            f"unknown rule mode {mode!r}" if mode is not None else "a rule without a mode",
            f"A rule's mode is one of {', '.join(MODES)}.",
        )
    if not rtype:
        raise _fail(
            doc,
            pointer,
            "a rule without a type",
            "A rule's type names its executor: CEL, CEL_FIELD, JSONATA, ENCRYPT, ...",
        )
    tags = value.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _fail(doc, join_pointer(pointer, "tags"), "tags must be a list of strings")
    params = value.get("params") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise _fail(
            doc,
            join_pointer(pointer, "params"),
            "params must be an object of strings",
            'For example {"dlq.topic": "orders-dlq"}.',
        )
    disabled = value.get("disabled", False)
    if not isinstance(disabled, bool):
        raise _fail(doc, join_pointer(pointer, "disabled"), "disabled must be true or false")
    return Rule(
        name=_string(doc, value.get("name"), join_pointer(pointer, "name"), "name"),
        kind=kind,
        mode=mode,
        type=rtype.upper(),
        pointer=pointer,
        doc=_string(doc, value.get("doc"), join_pointer(pointer, "doc"), "doc"),
        tags=tuple(tags),
        params=dict(params),
        expr=_string(doc, value.get("expr"), join_pointer(pointer, "expr"), "expr"),
        on_success=_string(
            doc, value.get("onSuccess"), join_pointer(pointer, "onSuccess"), "onSuccess"
        ),
        on_failure=_string(
            doc, value.get("onFailure"), join_pointer(pointer, "onFailure"), "onFailure"
        ),
        disabled=disabled,
    )


def _rule_set(doc: Document, value: Any) -> RuleSet:
    if value is None:
        return RuleSet()
    if not isinstance(value, dict):
        raise _fail(doc, "/ruleSet", f"ruleSet must be an object, not {_json_kind(value)}")
    lists: dict[str, tuple[Rule, ...]] = {}
    for key in RULE_LISTS:
        rules = value.get(key)
        pointer = f"/ruleSet/{key}"
        if rules is None:
            lists[key] = ()
            continue
        if not isinstance(rules, list):
            raise _fail(doc, pointer, f"ruleSet.{key} must be a list of rules")
        lists[key] = tuple(_rule(doc, r, f"{pointer}/{i}") for i, r in enumerate(rules))
    return RuleSet(
        domain_rules=lists["domainRules"],
        migration_rules=lists["migrationRules"],
        encoding_rules=lists["encodingRules"],
        enable_at=_string(doc, value.get("enableAt"), "/ruleSet/enableAt", "enableAt"),
    )


def _metadata(doc: Document, value: Any) -> Metadata:
    if value is None:
        return Metadata()
    if not isinstance(value, dict):
        raise _fail(doc, "/metadata", f"metadata must be an object, not {_json_kind(value)}")
    tags = value.get("tags") or {}
    if not isinstance(tags, dict) or not all(
        isinstance(v, list) and all(isinstance(t, str) for t in v) for v in tags.values()
    ):
        raise _fail(
            doc,
            "/metadata/tags",
            "metadata.tags must map field paths to lists of tag names",
            'For example {"tags": {"Order.email": ["PII"], "**.ssn": ["PII"]}}.',
        )
    props = value.get("properties") or {}
    if not isinstance(props, dict):
        raise _fail(doc, "/metadata/properties", "metadata.properties must be an object")
    sensitive = value.get("sensitive") or []
    if not isinstance(sensitive, list) or not all(isinstance(s, str) for s in sensitive):
        raise _fail(doc, "/metadata/sensitive", "metadata.sensitive must be a list of names")
    return Metadata(
        tags={str(k): tuple(v) for k, v in tags.items()},
        properties={str(k): str(v) for k, v in props.items()},
        sensitive=tuple(sensitive),
    )


def parse_contract(text: str, source: str) -> Contract:
    """A contract file's text -> Contract; InputError (file:line:col, the allowed values) for
    a shape the registry would refuse."""
    doc = parse_text(text, source)
    value = doc.value
    if not isinstance(value, dict):
        raise _fail(doc, "", f"a contract file is a JSON object, not {_json_kind(value)}")
    schema = value.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise _fail(doc, "/schema", "schema must be the schema's text (a string)")
    return Contract(
        source=source,
        document=doc,
        rule_set=_rule_set(doc, value.get("ruleSet")),
        metadata=_metadata(doc, value.get("metadata")),
        schema=schema,
    )


def read_contract(path: Path, source: str | None = None) -> Contract:
    """Read (bounded: ``CONTRACT_LIMIT``) and parse the contract file at ``path``."""
    text = read_utf8(
        path,
        hint="A contract file is the JSON `schemacli pull` writes beside v<N>.avsc.",
        limit=CONTRACT_LIMIT,
        what="contract file",
    )
    return parse_contract(text.removeprefix("\ufeff"), source or str(path))
