"""A census from start to document: read the topic (``scan``), name its ids (``names``: the
registry when a client is given, else the store), and build the document (``model``)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from converters.census import names
from converters.census.model import Mode, document
from converters.census.scan import scan
from schemacli.contracts.store.tree import SUBJECTS_DIR
from schemacli.registry.client import RegistryClient

_AGO = re.compile(r"([0-9]{1,9})([smhdw])")  # ASCII digits: \\d takes "٧" too
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_when(text: str, *, now: float) -> int | None:
    """``--since`` / ``--until``: an ISO-8601 date or date-time (no zone: UTC), or an age before
    ``now`` (``90s``, ``30m``, ``12h``, ``7d``, ``2w``), as ms since the epoch; None when the
    text is neither."""
    text = text.strip()
    ago = _AGO.fullmatch(text)
    if ago:
        return int((now - int(ago.group(1)) * _UNIT[ago.group(2)]) * 1000)
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00") if len(text) < 40 else "")
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    try:
        return int(when.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        return None


def take_census(
    bootstrap: str,
    topic: str,
    *,
    mode: Mode,
    client: RegistryClient | None,
    store: Path | None,
    properties: Mapping[str, str] | None = None,
    jobs: int | None = None,
    timeout: float = 600.0,
    connect_timeout: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "auto",
    java_properties: Mapping[str, str] | None = None,
    master: str | None = None,
) -> dict[str, Any]:
    """The census document of ``topic`` (docs/census.md), read by ``engine`` (auto, jvm,
    python, spark on ``master``: ``scan.engine_of``; the document's ``engine`` says which road
    read it). Ids are named by ``client`` when given, else by the snapshot in ``store``. Raises
    InputError (no such topic, a bad snapshot, the JVM or Spark road asked for and missing),
    NetworkError (Kafka, the registry or the Spark master does not answer, the JVM or the Spark
    job failed), RegistryError."""
    read = scan(
        bootstrap,
        topic,
        mode=mode,
        properties=properties,
        jobs=jobs,
        timeout=timeout,
        connect_timeout=connect_timeout,
        progress=progress,
        engine=engine,
        java_properties=java_properties,
        master=master,
    )
    ids = {
        kind
        for tally in read.partitions
        for side in (tally.keys, tally.values)
        for kind in side
        if isinstance(kind, int)
    }
    resolved_by: dict[str, str | None]
    if client is not None:
        known = names.from_registry(client, ids)
        resolved_by = {"source": "registry", "where": client.settings.display_url}
    else:
        known = names.from_store(store) if store is not None else {}
        has_store = store is not None and (store / SUBJECTS_DIR).is_dir()
        resolved_by = (
            {"source": "store", "where": str(store)}
            if has_store
            else {"source": None, "where": None}
        )
    doc = document(
        topic=topic,
        bootstrap=bootstrap,
        scanned_at_ms=read.scanned_at_ms,
        duration_s=read.duration_s,
        mode=mode,
        retention=read.retention,
        partitions=read.partitions,
        names=known,
        resolved_by=resolved_by,
    )
    doc["engine"] = read.engine
    return doc
