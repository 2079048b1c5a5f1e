"""What each writer schema id is called: the subjects and versions it is registered as, asked of
the registry (``GET /schemas/ids/{id}/versions``) or read from the store's snapshot
(``<store>/subjects/<subject>/registry.json``, which ``schemacli pull`` writes: each stored
version's registry version and id)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from converters.census.model import Registered
from schemacli.contracts.jsontext.source import read_json_file
from schemacli.errors import InputError, Location, RegistryError
from schemacli.registry.client import RegistryClient
from schemacli.textfile import SCHEMA_LIMIT, Root

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
        data = read_json_file(record, hint="It is written by `schemacli pull`.",
                              limit=SCHEMA_LIMIT, what="registry snapshot",
                              within=Root(store, f"the store {store}")).value  # fmt: skip
        try:
            subject = data["subject"]
            rows = [(r["id"], r["registry_version"]) for r in data["versions"]]
            whole = all(type(n) is int for row in rows for n in row)
        except (KeyError, TypeError, AttributeError):
            subject, rows, whole = None, [], False
        if not isinstance(subject, str) or not whole:
            # the file's content is never quoted: a store comes from another party
            raise InputError(
                f"{record} is not a registry snapshot: it needs a subject, and versions each "
                "with a whole-number id and registry_version",
                location=Location(source=str(record)),
                hint="Run `schemacli pull` again to rewrite it, or remove it.",
            )
        for schema_id, version in rows:
            found.setdefault(schema_id, []).append(Registered(subject, version))
    return found
