"""A registry loaded for scale: N subjects x V versions, some using shared types by reference.

Subject ``scale-NNNN-value``'s version k is a record of 12 fields plus k-1 added ones with
defaults (each version BACKWARD compatible with the one before); every tenth subject's records
hold a ``bench.common.Money`` by Confluent reference (``scale-common-money``, which references
the enum ``bench.common.Currency`` in ``scale-common-currency``: two levels). Used by
bench/bench_registry.py (1,000 subjects) and tests/integration/test_registry_requests.py (a few
dozen, counts asserted).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from schemacli.registry.client import RegistryClient
from schemacli.registry.models import Reference

CURRENCY = "scale-common-currency"
MONEY = "scale-common-money"
COMMON = (CURRENCY, MONEY)
NEW_VERSIONS = 50


def subject(i: int) -> str:
    return f"scale-{i:04d}-value"


def currency_schema() -> dict:
    return {"type": "enum", "name": "Currency", "namespace": "bench.common",
            "symbols": ["EUR", "USD", "GBP"]}  # fmt: skip


def money_schema() -> dict:
    return {"type": "record", "name": "Money", "namespace": "bench.common", "fields": [
        {"name": "amount", "type": "long"}, {"name": "currency", "type": "bench.common.Currency"},
    ]}  # fmt: skip


def version_schema(i: int, version: int) -> dict:
    """Subject i's version (1-based): 12 base fields, then one more with a default per version;
    every tenth subject's records hold a ``bench.common.Money`` (by reference)."""
    kinds = ("string", "long", "int", "double", "boolean", "float")
    fields: list[dict] = [{"name": "id", "type": "long"}]
    fields += [{"name": f"f{k}", "type": kinds[(i + k) % len(kinds)]} for k in range(11)]
    if i % 10 == 0:
        fields.append({"name": "price", "type": "bench.common.Money"})
    fields += [{"name": f"added{n}", "type": ["null", "string"], "default": None}
               for n in range(1, version)]  # fmt: skip
    return {"type": "record", "name": "Event", "namespace": f"bench.s{i}", "fields": fields}


def references(i: int) -> list[Reference]:
    return [Reference("bench.common.Money", MONEY, 1)] if i % 10 == 0 else []


def load(client: RegistryClient, size: int, versions: int, *, workers: int = 16) -> None:
    """Register the shared subjects, then ``size`` subjects x ``versions`` (subjects in
    parallel, each one's versions in order)."""
    client.register(CURRENCY, json.dumps(currency_schema()))
    client.register(
        MONEY,
        json.dumps(money_schema()),
        references=[Reference("bench.common.Currency", CURRENCY, 1)],
    )

    def one(i: int) -> None:
        for version in range(1, versions + 1):
            client.register(
                subject(i), json.dumps(version_schema(i, version)), references=references(i)
            )

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(size)))


def write_readers(store: Path, names: Sequence[str]) -> None:
    """One consumer reading every subject with its version 1 (self-contained)."""
    folder = store / "readers" / "scale-reader"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reader.json").write_text(json.dumps({"groups": ["scale-readers"]}))
    for name in names:
        i = int(name.split("-")[1])
        reader = version_schema(i, 1)
        if i % 10 == 0:
            price = {"type": "record", "name": "Money", "namespace": "bench.common", "fields": [
                {"name": "amount", "type": "long"},
                {"name": "currency", "type": currency_schema()},
            ]}  # fmt: skip
            reader["fields"][-1] = {"name": "price", "type": price}  # version 1 ends with it
        (folder / f"{name}.avsc").write_text(json.dumps(reader))


def add_new_versions(store: Path, size: int, versions: int) -> list[str]:
    """min(NEW_VERSIONS, size) subjects get a version versions+1 in the store."""
    touched = []
    for i in range(min(NEW_VERSIONS, size)):
        folder = store / "subjects" / subject(i)
        (folder / f"v{versions + 1}.avsc").write_text(json.dumps(version_schema(i, versions + 1)))
        sidecar = folder / "v1.references.json"
        if sidecar.exists():
            shutil.copy(sidecar, folder / f"v{versions + 1}.references.json")
        touched.append(subject(i))
    return touched


def drop_new_versions(client: RegistryClient, names: Sequence[str], versions: int) -> None:
    for name in names:
        for permanent in (False, True):
            try:
                client.delete_version(name, versions + 1, permanent=permanent)
            except Exception:  # not registered (a failed run): nothing to undo
                break
