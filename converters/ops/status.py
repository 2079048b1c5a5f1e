"""Status of the converter deployed in a state directory: per partition the v2 end offset, the
job's committed progress (read from its Spark checkpoint) and the lag; the counts and the rate the
job writes to ``progress.json``; whether it runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping as AnyMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converters.kafka import waits
from converters.kafka.settings import client_config
from converters.ops import process
from converters.ops.dependents import Dependents, look
from converters.ops.window import Window, read_window
from converters.state import (
    has_state,
    loads,
    local_checkpoint,
    no_state,
    read_state,
    whole,
    write_state,
)
from schemacli.errors import InputError, Location, NetworkError, UsageError
from schemacli.textfile import UnreadableInput, read_utf8


@dataclass(frozen=True)
class PartitionStatus:
    topic: str
    partition: int
    end_offset: int | None  # the v2 topic's high watermark (None without --bootstrap)
    committed: int | None  # next offset the job will read, from its last committed batch
    lag: int | None


@dataclass(frozen=True)
class Status:
    state_dir: str
    running: bool
    pid: int | None
    checkpoint: str
    last_committed_batch: int | None
    partitions: tuple[PartitionStatus, ...]
    totals: dict[str, int]
    input_rows_per_second: float | None
    processed_rows_per_second: float | None
    updated: float | None
    stale: str | None = None  # submit.pid names a live process that is not the converter
    window: Window | None = None  # planned/running/draining/finished, and when
    dependents: Dependents | None = None  # with --bootstrap and a mapping


def checkpoint_offsets(checkpoint: Path) -> tuple[int | None, dict[str, dict[int, int]]]:
    """(last committed batch id, {topic: {partition: next offset}}) from a Spark checkpoint.

    A batch is committed when ``commits/<id>`` exists; its end offsets are the third line of
    ``offsets/<id>`` (Spark's OffsetSeqLog: version, metadata, one JSON per source). A file that
    does not read so is an InputError naming it and the line."""
    commits = [int(p.name) for p in (checkpoint / "commits").glob("*") if p.name.isdigit()]
    if not commits:
        return None, {}
    batch = max(commits)
    path = checkpoint / "offsets" / str(batch)
    hint = (
        "Spark wrote it, so it was damaged or edited: restore the checkpoint from a backup, or "
        "move the checkpoint aside to start again from --starting-offsets (messages may then "
        "be converted twice)."
    )
    try:
        text = read_utf8(path, hint=hint)
    except UnreadableInput:
        return batch, {}
    for number, line in enumerate(text.splitlines()[2:], start=3):
        line = line.strip()
        if not line.startswith("{"):
            continue
        where = Location(source=str(path), line=number, column=1)
        try:
            data = loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"corrupt checkpoint offsets: {exc.msg}",
                location=Location(source=str(path), line=number, column=exc.colno),
                hint=hint,
            ) from exc
        offsets = _offsets(data)
        if offsets is None:
            raise InputError(
                "corrupt checkpoint offsets: expected {topic: {partition: offset}} with whole "
                "numbers",
                location=where,
                hint=hint,
            )
        return batch, offsets
    return batch, {}


def _offsets(data: Any) -> dict[str, dict[int, int]] | None:
    if not isinstance(data, dict):
        return None
    out: dict[str, dict[int, int]] = {}
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            return None
        out[topic] = {}
        for part, offset in parts.items():
            if not (part.isascii() and part.isdigit()) or not whole(offset):
                return None
            out[topic][int(part)] = offset
    return out


def end_offsets(
    bootstrap: str, topic: str, properties: AnyMapping[str, str] | None = None
) -> dict[int, int]:
    """High watermarks of ``topic`` per partition (confluent-kafka)."""
    try:
        from confluent_kafka import Consumer, KafkaException, TopicPartition
    except ImportError:
        raise UsageError(
            "status with --bootstrap needs confluent-kafka", hint="pip install 'schemacli[kafka]'"
        ) from None
    consumer = Consumer(
        client_config(
            bootstrap,
            properties,
            {"group.id": "schemacli-migrate-status", "enable.auto.commit": False},
        )
    )
    try:
        meta = waits.list_topics(consumer, topic, 10)
        tmeta = meta.topics.get(topic)
        if tmeta is None or tmeta.error is not None:
            raise InputError(
                f"topic {topic!r} not found on {bootstrap}",
                hint="Check the mapping's source.topic and --bootstrap.",
            )
        return {
            p: waits.watermarks(consumer, TopicPartition(topic, p), 10)[1]
            for p in sorted(tmeta.partitions)
        }
    except KafkaException as exc:
        raise NetworkError(
            f"cannot reach Kafka at {bootstrap}: {exc}", hint="Check --bootstrap and the broker."
        ) from exc
    finally:
        consumer.close()


def status(
    state_dir: Path,
    *,
    topic: str | None,
    bootstrap: str | None,
    checkpoint: str | None = None,
    properties: AnyMapping[str, str] | None = None,
) -> Status:
    """Status of the converter deployed in ``state_dir`` (``properties``: librdkafka settings
    for reading the end offsets). A state file that does not read as the converter writes it is
    an InputError naming the file (never a wrong count)."""
    if checkpoint is None and not has_state(state_dir):
        raise no_state(state_dir)  # a typo in --state-dir, not a converter with zero counts
    deploy_path = state_dir / "deploy.json"
    deploy_info = read_state(deploy_path)
    recorded = deploy_info.get("checkpoint")
    if recorded is not None and (not isinstance(recorded, str) or not recorded.strip()):
        raise InputError(
            f"corrupt converter state: checkpoint is {json.dumps(recorded)[:60]}, not a location",
            location=Location(source=str(deploy_path), pointer="/checkpoint"),
            hint="deploy writes the checkpoint's path or URI there: restore the file, or "
            "delete it and pass the checkpoint with `migrate deploy --checkpoint` next time.",
        )
    checkpoint = checkpoint or recorded or str(state_dir / "checkpoint")
    local = local_checkpoint(checkpoint)
    # A checkpoint on a remote filesystem is not read (schemacli reads local files only): status
    # then shows the end offsets and the counts, without the committed offsets and the lag.
    batch, committed = checkpoint_offsets(local) if local is not None else (None, {})
    progress_path = state_dir / "progress.json"
    progress = read_state(progress_path)
    totals = _totals(progress, progress_path)
    # every state file is read (or refused) before Kafka is asked anything
    input_rate = _rate(progress, "input_rows_per_second", progress_path)
    processed_rate = _rate(progress, "processed_rows_per_second", progress_path)
    updated = _rate(progress, "updated", progress_path)
    proc = process.find(state_dir, deploy_info)
    if topic is None and len(committed) == 1:  # no mapping given: the checkpoint knows it
        topic = next(iter(committed))
    ends = end_offsets(bootstrap, topic, properties) if bootstrap and topic else {}
    done = committed.get(topic or "", {}) if topic else next(iter(committed.values()), {})
    parts = []
    for p in sorted(set(ends) | set(done)):
        end, com = ends.get(p), done.get(p)
        lag = None if end is None else end - (com or 0)
        parts.append(PartitionStatus(topic or "?", p, end, com, lag))

    return Status(
        window=read_window(state_dir),
        state_dir=str(state_dir),
        running=proc.running,
        pid=proc.submit,
        checkpoint=str(checkpoint),
        last_committed_batch=batch,
        partitions=tuple(parts),
        totals=totals,
        stale=proc.stale,
        input_rows_per_second=input_rate,
        processed_rows_per_second=processed_rate,
        updated=updated,
    )


_PROGRESS_HINT = (
    "The job writes it atomically, so it was edited by hand: restore it, or delete it to "
    "restart the counts from zero (the checkpoint still keeps the offsets)."
)


def _totals(progress: dict[str, Any], path: Path) -> dict[str, int]:
    totals = progress.get("totals")
    if totals is None:
        return {}
    if not isinstance(totals, dict):
        raise InputError(
            "corrupt converter state: totals is not an object of counts",
            location=Location(source=str(path), pointer="/totals"),
            hint=_PROGRESS_HINT,
        )
    out = {}
    for name, value in totals.items():
        if not whole(value) or value < 0:
            raise InputError(
                f"corrupt converter state: the {name!r} count is {json.dumps(value)[:40]}, not "
                "a whole number >= 0",
                location=Location(source=str(path), pointer=f"/totals/{name}"),
                hint=_PROGRESS_HINT,
            )
        out[name] = value
    return out


def _rate(progress: dict[str, Any], key: str, path: Path) -> float | None:
    value = progress.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(
            f"corrupt converter state: {key} is {json.dumps(value)[:40]}, not a number",
            location=Location(source=str(path), pointer=f"/{key}"),
            hint=_PROGRESS_HINT,
        )
    return float(value)


SNAPSHOT = "dependents.json"  # the previous look at v1's dependents, to tell who is moving


def dependents_of(
    state_dir: Path,
    bootstrap: str,
    v1_topic: str,
    v2_topic: str | None,
    *,
    window_seconds: float,
    properties: AnyMapping[str, str] | None = None,
) -> Dependents:
    """v1's dependents now, compared with the previous look (kept in the state directory)."""

    path = state_dir / SNAPSHOT
    previous = read_state(path).get("groups")
    found, snapshot = look(
        bootstrap,
        v1_topic,
        v2_topic,
        previous=previous if isinstance(previous, dict) else None,
        window_seconds=window_seconds,
        properties=properties,
    )
    write_state(path, {"looked_at": found.looked_at, "groups": snapshot})
    return found
