"""Registering a new major version in the same subject: Confluent's data-contract road.

The new schema goes in with ``metadata.properties[<group property>] = N`` and a ``ruleSet`` of
migration rules (``schemacli migrate rules`` writes both); the subject's ``compatibilityGroup``
names the property, so versions of different major versions are not checked against each other.
Several registries accept these keys and drop them without a word, which would leave consumers
with a break and no rule: every key sent is read back, and a registry that did not keep it is a
RegistryError (exit 3) naming the registry and what it dropped.
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


@dataclass(frozen=True)
class MajorVersionResult:
    subject: str
    id: int
    version: int
    major_version: int
    property_name: str
    rules: tuple[str, ...]  # "<mode> <name>" of each migration rule the registry kept
    compatibility_group: str | None

    def describe(self) -> str:
        group = (
            f"; compatibilityGroup {self.compatibility_group}" if self.compatibility_group else ""
        )
        return (
            f"{self.subject}: registered as version {self.version}, id {self.id}, "
            f"{self.property_name}={self.major_version}, rules: {', '.join(self.rules) or 'none'}"
            f"{group} (read back: kept)"
        )


def register_major_version(
    client: RegistryClient,
    subject: str,
    schema: str,
    *,
    metadata: Mapping[str, Any],
    rule_set: Mapping[str, Any] | None,
    property_name: str,
    major_version: int,
    compatibility_group: bool,
    level: str = "BACKWARD",
) -> MajorVersionResult:
    """Set the subject's ``compatibilityGroup`` (when asked), register ``schema`` with
    ``metadata`` and ``rule_set``, and read each back. Raises RegistryError when the registry
    dropped any of them, CheckFailed (exit 1) when it refuses the schema as incompatible."""
    where = f"the registry at {client.settings.display_url}"
    if compatibility_group:
        client.set_compatibility_group(subject, level, property_name)
        kept = client.get_config_document(subject).get("compatibilityGroup")
        if kept != property_name:
            raise _dropped(where, subject, "the subject's compatibilityGroup", kept)
    try:
        registered = client.register(subject, schema, metadata=metadata, rule_set=rule_set)
    except RegistryError as err:
        if err.error_code == RegistryErrorCode.INCOMPATIBLE_SCHEMA or err.status == 409:
            group = (
                f" (its compatibilityGroup should be {property_name!r}: was it kept?)"
                if compatibility_group
                else ""
            )
            raise CheckFailed(
                f"{where} refuses the new major version for {subject!r} as incompatible"
                f"{group}. Registry says: {err.server_message or err.message}",
                hint="Pass --compatibility-group so versions of different major versions are "
                "not compared, or register under a new subject.",
            ) from err
        raise
    found = client.lookup(subject, schema)
    version = (
        registered.version
        if registered.version is not None
        else (found.version if found is not None else None)
    )
    if version is None:
        raise RegistryError(
            f"{where} registered {subject!r} as id {registered.id} but cannot say its version",
            hint="Check with `schemacli subjects show`.",
        )
    back = RegistrySchemas(client).version(subject, version)
    props = (back.metadata or {}).get("properties") or {}
    stored = f" The schema itself is stored, as version {back.version} (id {back.id}), without it."
    if props.get(property_name) != str(major_version):
        raise _dropped(
            where, subject, f"metadata.properties.{property_name}", back.metadata, stored
        )
    if rule_set is not None and _rules(back.rule_set) != _rules(rule_set):
        raise _dropped(where, subject, "the ruleSet's migrationRules", back.rule_set, stored)
    return MajorVersionResult(
        subject=subject,
        id=back.id,
        version=version,
        major_version=major_version,
        property_name=property_name,
        rules=tuple(
            f"{r.get('mode')} {r.get('name')}"
            for r in (back.rule_set or {}).get("migrationRules", [])
        ),
        compatibility_group=property_name if compatibility_group else None,
    )


_RULE_KEYS = ("name", "kind", "type", "mode", "expr", "onFailure")


def _rules(rule_set: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The migration rules by what matters (a registry may add defaults or reorder keys)."""
    rules = (rule_set or {}).get("migrationRules") or []
    return [{k: r.get(k) for k in _RULE_KEYS} for r in rules if isinstance(r, dict)]


def _dropped(where: str, subject: str, what: str, got: Any, stored: str = "") -> RegistryError:
    shown = json.dumps(got)[:200] if got is not None else "nothing"
    return RegistryError(
        f"{where} did not keep {what} for {subject!r}: it accepted the request, and reading it "
        f"back gives {shown}.{stored}",
        hint="This registry does not implement Confluent data contracts (see docs/registry.md"
        "#data-contracts-metadata-rule-sets-and-compatibility-groups); use one that does, or "
        "migrate with the converter (`schemacli migrate deploy`).",
    )
