"""A subject's data contracts in the store (docs/store.md#data-contracts): the
``contract.json`` of the subject (its compatibility group) and the ``v<N>.contract.json`` of its
versions (metadata properties and migration rules), as ``schemacli pull`` writes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemacli.contracts.jsontext.source import parse_text
from schemacli.contracts.rules.model import CONTRACT_SUFFIX
from schemacli.contracts.store.tree import SUBJECTS_DIR, Tree
from schemacli.errors import InputError, Location

SUBJECT_CONTRACT = "contract.json"  # subjects/<s>/contract.json: {"compatibilityGroup": NAME}
_MIGRATING_DOWN = ("DOWNGRADE", "UPDOWN")


@dataclass(frozen=True)
class Contracts:
    """A subject's data contracts in the store (docs/store.md#data-contracts): the subject's
    ``compatibilityGroup`` and, per version, its metadata properties and whether a migration
    rule turns it back into the version before it."""

    group: str | None
    properties: dict[int, dict[str, str]]
    downgrade: frozenset[int]

    def group_of(self, version: int) -> str | None:
        """The version's value of the group property (None: it has none)."""
        return self.properties.get(version, {}).get(self.group) if self.group else None


def read_contracts(
    tree: Tree, subjects: dict[str, dict[int, str]], subject: str
) -> Contracts | None:
    """The subject's contract files, or None when it has none. InputError (file:line:col) for
    one that is not the JSON `pull` writes."""
    folder = f"{SUBJECTS_DIR}/{subject}"
    versions = subjects.get(subject, {})
    paths = {n: p.removesuffix(".avsc") + CONTRACT_SUFFIX for n, p in versions.items()}
    texts = tree.read([f"{folder}/{SUBJECT_CONTRACT}", *paths.values()], optional=True)
    if not any(t is not None for t in texts.values()):
        return None
    subject_file = f"{folder}/{SUBJECT_CONTRACT}"
    top = _contract_json(tree, subject_file, texts[subject_file])
    group = top.get("compatibilityGroup")
    if group is not None and not isinstance(group, str):
        raise InputError(
            "compatibilityGroup must be a metadata property name (a string)",
            location=Location(source=tree.source(subject_file), pointer="/compatibilityGroup"),
            hint='For example {"compatibilityGroup": "major_version"}.',
        )
    properties: dict[int, dict[str, str]] = {}
    downgrade = set()
    for n, path in paths.items():
        doc = _contract_json(tree, path, texts[path])
        props = doc.get("metadata", {}).get("properties", {})
        rules = doc.get("ruleSet", {}).get("migrationRules", [])
        props = {} if props is None else props
        rules = [] if rules is None else rules
        if not isinstance(props, dict) or not isinstance(rules, list):
            raise InputError(
                "metadata.properties must be an object and ruleSet.migrationRules a list",
                location=Location(source=tree.source(path)),
                hint='Write it as `schemacli pull` does: {"metadata": {"properties": '
                '{...}}, "ruleSet": {"migrationRules": [...]}}.',
            )
        properties[n] = {str(k): str(v) for k, v in props.items()}
        if any(isinstance(r, dict) and r.get("mode") in _MIGRATING_DOWN for r in rules):
            downgrade.add(n)
    return Contracts(group, properties, frozenset(downgrade))


def _contract_json(tree: Tree, path: str, text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:  # the one JSON parser: Java's limits on nesting and numbers, positions kept
        doc = parse_text(text.removeprefix("\ufeff"), tree.source(path), what="contract file").value
    except InputError as exc:
        raise InputError(
            f"not JSON: {exc.message}",
            location=exc.location,
            hint="A contract file is the JSON `schemacli pull` writes.",
        ) from None
    if not isinstance(doc, dict) or not all(
        isinstance(doc.get(k, {}), dict) for k in ("metadata", "ruleSet")
    ):
        raise InputError(
            "a contract file is a JSON object (metadata and ruleSet objects in it)",
            location=Location(source=tree.source(path)),
            hint="A contract file is the JSON `schemacli pull` writes.",
        )
    return doc
