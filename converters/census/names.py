"""What each writer schema id is called: the subjects and versions it is registered as, asked of
the registry (``GET /schemas/ids/{id}/versions``, through the one road: each id once, several in
flight) or read from the store's snapshot (``<store>/subjects/<subject>/registry.json``, which
``schemacli pull`` writes and ``schemacli.registry.snapshot`` reads: each stored version's
registry version and id)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from converters.census.model import Registered
from schemacli.contracts.store.tree import SUBJECTS_DIR
from schemacli.registry.client import RegistryClient
from schemacli.registry.schemas import RegistrySchemas
from schemacli.registry.snapshot import SNAPSHOT_FILE, parse_snapshot
from schemacli.textfile import SCHEMA_LIMIT, Root, read_utf8


def from_registry(client: RegistryClient, ids: Iterable[int]) -> dict[int, list[Registered]]:
    """id -> where the registry has it registered; an id it does not know is left out. Raises
    RegistryError / NetworkError for any other failure."""
    road = RegistrySchemas(client)
    wanted = sorted(set(ids))
    found: dict[int, list[Registered]] = {}
    for schema_id, refs in zip(wanted, road.map(road.registrations, wanted), strict=True):
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
    inside_store = Root(store, f"the store {store}")  # a snapshot linked out of it is refused
    for record in sorted(root.glob(f"*/{SNAPSHOT_FILE}")):
        text = read_utf8(record, hint="It is written by `schemacli pull`.", limit=SCHEMA_LIMIT,
                         what="registry snapshot", within=inside_store)  # fmt: skip
        snapshot = parse_snapshot(text, str(record))
        for row in snapshot.rows:
            found.setdefault(row.id, []).append(Registered(snapshot.subject, row.registry_version))
    return found
