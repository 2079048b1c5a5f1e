"""What each writer schema id is called: the subjects and versions it is registered as, asked of
the registry (``GET /schemas/ids/{id}/versions``) or read from the store's snapshot
(``<store>/subjects/<subject>/registry.json``, which ``schemacli pull`` writes: each stored
version's registry version and id)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from converters.census.model import Registered
from schemacli.errors import InputError, Location, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.textfile import SCHEMA_LIMIT, read_utf8

SNAPSHOT_FILE = "registry.json"  # as schemacli.registry.snapshot writes it
SUBJECTS_DIR = "subjects"


def from_registry(client: RegistryClient, ids: Iterable[int]) -> dict[int, list[Registered]]:
    """id -> where the registry has it registered; an id it does not know is left out. Raises
    RegistryError / NetworkError for any other failure."""
    found: dict[int, list[Registered]] = {}
    for schema_id in sorted(set(ids)):
        try:
            refs = client.get_schema_versions(schema_id)
        except RegistryError as err:
            if err.status == 404:  # 40403: schema not found
                continue
            raise
        if refs:
            found[schema_id] = [Registered(r.subject, r.version) for r in refs]
    return found


def from_store(store: Path) -> dict[int, list[Registered]]:
    """id -> (subject, registry version) from every ``registry.json`` of the store; ``{}`` when
    the store has none. Raises InputError naming a file that is not a snapshot."""
    found: dict[int, list[Registered]] = {}
    root = store / SUBJECTS_DIR
    if not root.is_dir():
        return found
    for record in sorted(root.glob(f"*/{SNAPSHOT_FILE}")):
        text = read_utf8(record, hint="It is written by `schemacli pull`.", limit=SCHEMA_LIMIT,
                         what="registry snapshot")  # fmt: skip
        try:
            data = json.loads(text)
            subject = data["subject"]
            rows = [(int(r["id"]), int(r["registry_version"])) for r in data["versions"]]
            if not isinstance(subject, str):
                raise TypeError("subject")
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(
                f"{record} is not a registry snapshot ({type(exc).__name__}: {exc})",
                location=Location(source=str(record)),
                hint="Run `schemacli pull` again to rewrite it, or remove it.",
            ) from exc
        for schema_id, version in rows:
            found.setdefault(schema_id, []).append(Registered(subject, version))
    return found
