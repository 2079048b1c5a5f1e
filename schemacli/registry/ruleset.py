"""Registering a schema with its data-quality rule set (domain rules, metadata tags) and reading
them back: several registries accept ``ruleSet`` and ``metadata`` and drop them without a word,
which would leave producers with no rule at all (docs/rules.md).

The migration-rule road (a new major version) is ``majorversion``; this one registers a version
of the same subject with the contract's ``ruleSet`` (domain, migration and encoding rules) and
``metadata`` (tags, properties, sensitive), and compares what comes back by what matters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schemacli.errors import CheckFailed, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.registry.errors import RegistryErrorCode
from schemacli.registry.schemas import RegistrySchemas

_RULE_KEYS = ("name", "kind", "mode", "type", "expr", "onFailure", "onSuccess", "tags", "params")
_LISTS = ("domainRules", "migrationRules", "encodingRules")


@dataclass(frozen=True)
class RuleSetResult:
    subject: str
    id: int
    version: int
    rules: tuple[str, ...]  # "<mode> <kind> <name>" of each domain rule the registry kept

    def describe(self) -> str:
        return (
            f"{self.subject}: registered as version {self.version}, id {self.id}, "
            f"rules: {', '.join(self.rules) or 'none'} (read back: kept)"
        )


def comparable(rule_set: Mapping[str, Any] | None) -> dict[str, list[dict[str, Any]]]:
    """The rules by what matters (a registry may add defaults such as ``disabled: false``,
    empty tags or params, or reorder keys)."""
    out = {}
    for key in _LISTS:
        rules = (rule_set or {}).get(key) or []
        out[key] = [{k: r.get(k) or None for k in _RULE_KEYS} for r in rules if isinstance(r, dict)]
    return out


def register_with_rules(
    client: RegistryClient,
    subject: str,
    schema: str,
    *,
    metadata: Mapping[str, Any] | None,
    rule_set: Mapping[str, Any],
) -> RuleSetResult:
    """Register ``schema`` under ``subject`` with ``rule_set`` and ``metadata``, and read them
    back. RegistryError (exit 3) when the registry dropped either; CheckFailed (exit 1) when
    it refuses the schema as incompatible."""
    where = f"the registry at {client.settings.display_url}"
    try:
        registered = client.register(subject, schema, metadata=metadata, rule_set=rule_set)
    except RegistryError as err:
        if err.error_code == RegistryErrorCode.INCOMPATIBLE_SCHEMA or err.status == 409:
            raise CheckFailed(
                f"{where} refuses {subject!r}'s new version as incompatible. Registry says: "
                f"{err.server_message or err.message}",
                hint="Check it first with `schemacli check`.",
            ) from err
        raise
    version = registered.version
    if version is None:
        found = client.lookup(subject, schema)
        version = found.version if found is not None else None
    if version is None:
        raise RegistryError(
            f"{where} registered {subject!r} as id {registered.id} but cannot say its version",
            hint="Check with `schemacli subjects show`.",
        )
    back = RegistrySchemas(client).version(subject, version)
    if comparable(back.rule_set) != comparable(rule_set):
        raise _dropped(where, subject, "the ruleSet", back.rule_set, version, back.id)
    want_tags = (metadata or {}).get("tags") or {}
    got_tags = (back.metadata or {}).get("tags") or {}
    if want_tags and {k: sorted(v) for k, v in got_tags.items()} != {
        k: sorted(v) for k, v in want_tags.items()
    }:
        raise _dropped(where, subject, "metadata.tags", back.metadata, version, back.id)
    return RuleSetResult(
        subject=subject,
        id=back.id,
        version=version,
        rules=tuple(
            f"{r.get('mode')} {r.get('kind')} {r.get('name')}"
            for r in (back.rule_set or {}).get("domainRules", [])
        ),
    )


def _dropped(
    where: str, subject: str, what: str, got: Any, version: int, schema_id: int
) -> RegistryError:
    shown = json.dumps(got)[:200] if got is not None else "nothing"
    return RegistryError(
        f"{where} did not keep {what} for {subject!r}: it accepted the request, and reading it "
        f"back gives {shown}. The schema itself is stored, as version {version} (id "
        f"{schema_id}), without it.",
        hint="This registry does not implement Confluent data contracts (docs/registry.md"
        "#data-contracts-metadata-rule-sets-and-compatibility-groups); use one that does "
        "(Confluent's, AxonOps), or keep the rules out of the registry.",
    )
