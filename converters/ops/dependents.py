"""Who still depends on v1: its consumer groups, its direct producers, and who moved to v2.

Through Kafka's admin API (confluent-kafka ``AdminClient``) and a bounded read of the v1 topic:

* **v1 consumer groups**: groups with committed offsets on the v1 topic or members assigned to
  it; for each, its state, members (client id and host, as Kafka reports them), lag per
  partition (records still to read with ``read_committed``: the converter writes v1 in
  transactions, whose commit markers take offsets no consumer reads), and whether it is still
  moving (its committed offsets advanced since the previous look; unknown on a first look);
* **direct v1 producers**: messages appended to the v1 topic in the last ``window_seconds`` that
  do not carry the converter's marker header (``schemacli.converted-from``): a producer that has
  not moved to v2. Counted per partition with a sample of their keys and header names, reading at
  most ``scan_limit`` messages per partition (said when the limit cut the count);
* **v2 consumer groups**: groups with committed offsets on the v2 topic: who has moved. schemacli's
  own tools (``schemacli-*``) and the converter (Spark's ``spark-kafka-source-*``) are left out.

A look is a snapshot; the next look compares with it (``Snapshot``), so ``status`` can tell a
group that reads from one that merely has old offsets.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Mapping as AnyMapping
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from converters.kafka import topicend, waits
from converters.kafka.settings import client_config
from converters.pipeline.headers import MARKER_HEADER
from schemacli.contracts.readers.declared import DeclaredReader
from schemacli.errors import InputError, NetworkError, UsageError

if TYPE_CHECKING:
    from confluent_kafka import Consumer

WINDOW_SECONDS = 900
SCAN_LIMIT = 10_000
TIMEOUT = 15.0
MARKER_SLACK = 1_000  # gaps up to this many offsets are read to tell commit markers from lag
OURS = ("schemacli-", "spark-kafka-source-")  # our tools and the converter itself


@dataclass(frozen=True)
class Member:
    client_id: str
    host: str


@dataclass(frozen=True)
class GroupPartition:
    partition: int
    committed: int | None  # the group's committed offset (None: never committed there)
    end: int | None  # the topic's end offset
    lag: int | None


@dataclass(frozen=True)
class Group:
    group_id: str
    state: str
    members: tuple[Member, ...]
    partitions: tuple[GroupPartition, ...]
    moving: bool | None  # offsets advanced since the previous look (None: no previous look)

    @property
    def lag(self) -> int:
        return sum(p.lag or 0 for p in self.partitions)

    @property
    def active(self) -> bool:
        """Still depends on its topic: members, unread messages, or recent progress."""
        return bool(self.members) or self.lag > 0 or bool(self.moving)

    def reasons(self) -> list[str]:
        why = []
        if self.members:
            who = ", ".join(f"{m.client_id}@{m.host}" for m in self.members[:3])
            why.append(f"{len(self.members)} member(s) ({who})")
        if self.lag > 0:
            why.append(f"lag {self.lag}")
        if self.moving:
            why.append("its offsets advanced since the last look")
        return why


@dataclass(frozen=True)
class DirectWrites:
    partition: int
    messages: int  # appended in the window without the converter's marker
    scanned: int
    limited: bool  # the scan stopped at the limit: there may be more
    key_sample: tuple[str, ...] = ()
    header_names: tuple[str, ...] = ()


@dataclass
class _Scan:
    """What the scan of one v1 partition saw: records without the converter's marker, records
    read, the first unmarked keys and the unmarked records' header names."""

    unmarked: int = 0
    scanned: int = 0
    keys: list[str] = field(default_factory=list)
    headers: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Dependents:
    v1_topic: str
    v2_topic: str | None
    looked_at: float
    window_seconds: float
    v1_groups: tuple[Group, ...]
    v2_groups: tuple[Group, ...]
    direct_writes: tuple[DirectWrites, ...]
    first_look: bool = field(default=False)
    # v1 group -> the consumer whose declared reader of the v1 subject lists it (None:
    # undeclared); empty until labelled (docs/readers.md)
    declared: dict[str, str | None] = field(default_factory=dict)
    v1_subject: str | None = None

    def reader_of(self, group_id: str) -> str:
        """How status names a v1 group's declared reader: ``declared reader billing (owner
        team-billing)``, or ``undeclared``."""
        consumer = self.declared.get(group_id)
        return f"declared reader {consumer}" if consumer else "undeclared"

    def blockers(self) -> list[str]:
        """Why v1 cannot be retired yet, one line each (empty: nobody depends on it)."""
        reasons = [
            f"consumer group {g.group_id!r} still reads {self.v1_topic}: " + "; ".join(g.reasons())
            for g in self.v1_groups
            if g.active
        ]
        direct = sum(d.messages for d in self.direct_writes)
        if direct:
            parts = ", ".join(
                f"{d.partition}: {d.messages}" for d in self.direct_writes if d.messages
            )
            reasons.append(
                f"{direct} message(s) written to {self.v1_topic} in the last "
                f"{self.window_seconds:g} s without the converter's marker (partition: count "
                f"{parts}): a producer still writes v1"
            )
        return reasons


def with_declared_readers(
    deps: Dependents, subject: str | None, readers: Sequence[DeclaredReader]
) -> Dependents:
    """``deps`` with each v1 consumer group labelled by the declared reader of ``subject`` (the
    v1 subject) whose manifest lists the group, or as undeclared."""
    by_group: dict[str, str] = {}
    for reader in readers:
        if reader.subject != subject:
            continue
        label = f"{reader.consumer} (owner {reader.owner})" if reader.owner else reader.consumer
        for group in reader.groups:
            by_group.setdefault(group, label)
    declared = {g.group_id: by_group.get(g.group_id) for g in deps.v1_groups}
    return replace(deps, declared=declared, v1_subject=subject)


Snapshot = dict[str, dict[str, int]]  # group -> "topic/partition" -> committed offset


def _admin(bootstrap: str, properties: AnyMapping[str, str] | None) -> Any:
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError:
        raise UsageError(
            "finding v1's dependents needs confluent-kafka", hint="pip install 'schemacli[kafka]'"
        ) from None
    return AdminClient(client_config(bootstrap, properties))


def _network(bootstrap: str, exc: Exception) -> NetworkError:
    return NetworkError(
        f"cannot ask Kafka at {bootstrap} about consumer groups: {exc}",
        hint="Check --bootstrap and that the broker is up (and the properties file, if any).",
    )


def _partitions(admin: Any, topic: str, bootstrap: str) -> list[int]:
    meta = waits.list_topics(admin, topic, TIMEOUT)
    found = meta.topics.get(topic)
    if found is None or found.error is not None:
        raise InputError(
            f"topic {topic!r} not found on {bootstrap}",
            hint="Check the mapping's topics and --bootstrap.",
        )
    return sorted(found.partitions)


def _offsets(admin: Any, topic: str, partitions: list[int], spec: Any) -> dict[int, int]:
    from confluent_kafka import TopicPartition

    asked = {TopicPartition(topic, p): spec for p in partitions}
    futures = admin.list_offsets(asked, request_timeout=TIMEOUT)
    return {tp.partition: future.result().offset for tp, future in futures.items()}


def _committed(admin: Any, group_id: str) -> dict[tuple[str, int], int]:
    from confluent_kafka import ConsumerGroupTopicPartitions

    request = [ConsumerGroupTopicPartitions(group_id)]
    (future,) = admin.list_consumer_group_offsets(request, request_timeout=TIMEOUT).values()
    return {
        (tp.topic, tp.partition): tp.offset
        for tp in future.result().topic_partitions or ()
        if tp.offset >= 0
    }


def _groups_on(
    topic: str,
    ends: dict[int, int],
    committed: dict[str, dict[tuple[str, int], int]],
    described: dict[str, Any],
    previous: Snapshot | None,
    unread: dict[tuple[str, int, int], int] | None = None,
) -> tuple[Group, ...]:
    groups = []
    for group_id, offsets in sorted(committed.items()):
        desc = described.get(group_id)
        assigned = [
            m
            for m in (desc.members if desc is not None else ())
            if any(tp.topic == topic for tp in (m.assignment.topic_partitions or ()))
        ]
        mine = {p: o for (t, p), o in offsets.items() if t == topic}
        if not mine and not assigned:
            continue
        parts = tuple(
            GroupPartition(
                p,
                mine.get(p),
                ends.get(p),
                None
                if p not in mine
                else (unread or {}).get((topic, p, mine[p]), ends[p] - mine[p]),
            )
            for p in sorted(ends)
        )
        before = (previous or {}).get(group_id)
        moving = (
            None
            if before is None
            else any(o > before.get(f"{topic}/{p}", o) for p, o in mine.items())
        )
        state = desc.state.name if desc is not None else "UNKNOWN"
        members = tuple(Member(str(m.client_id), str(m.host)) for m in assigned)
        groups.append(Group(group_id, state, members, parts, moving))
    return tuple(groups)


def _unread(
    bootstrap: str,
    positions: set[tuple[str, int, int]],
    ends: dict[str, dict[int, int]],
    properties: AnyMapping[str, str] | None,
) -> dict[tuple[str, int, int], int]:
    """How many records a ``read_committed`` consumer at each (topic, partition, committed
    offset) has still to read. The end offset alone over-counts on a topic written in
    transactions (the converter's v1 topic): each transaction leaves a commit marker, an offset
    no consumer ever reads, so a group that read everything still shows a lag of one or two. Only
    small gaps are read (:data:`MARKER_SLACK`); a larger one is real lag, markers or not."""
    from confluent_kafka import KafkaError, TopicPartition

    todo = {(t, p, o) for t, p, o in positions if 0 < ends.get(t, {}).get(p, 0) - o <= MARKER_SLACK}
    if not todo:
        return {}
    consumer = _committed_reader(bootstrap, properties)
    found: dict[tuple[str, int, int], int] = {}
    try:
        for t, p, o in sorted(todo):  # one position at a time: a few, each a short read
            consumer.assign([TopicPartition(t, p, o)])
            count, deadline = 0, time.monotonic() + 10
            while time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None:
                    continue
                error = msg.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        found[(t, p, o)] = count
                        break
                    continue
                count += 1
    finally:
        consumer.close()
    return found


def _committed_reader(bootstrap: str, properties: AnyMapping[str, str] | None) -> Consumer:
    """A consumer of committed records that never commits (a throwaway group) and reports the
    end of a partition: the end of a partition written in transactions is a commit marker, an
    offset no record has, so a read is done at its end offset or at end of partition."""
    from confluent_kafka import Consumer

    return Consumer(
        client_config(
            bootstrap,
            properties,
            {
                "group.id": f"schemacli-dependents-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
            },
        )
    )


def _direct_writes(
    bootstrap: str,
    topic: str,
    starts: dict[int, int],
    ends: dict[int, int],
    scan_limit: int,
    properties: AnyMapping[str, str] | None,
) -> tuple[DirectWrites, ...]:
    todo = {p: s for p, s in starts.items() if 0 <= s < ends.get(p, 0)}
    if not todo:
        return tuple(DirectWrites(p, 0, 0, False) for p in sorted(ends))
    consumer = _committed_reader(bootstrap, properties)
    stats = {p: _Scan() for p in todo}
    stop = {p: min(ends[p], s + scan_limit) for p, s in todo.items()}
    spans = {p: (s, stop[p]) for p, s in todo.items()}
    try:
        # a look, not a proof: what a minute's read shows is what is said
        with contextlib.suppress(topicend.EndNotReached):
            for msg in topicend.read_to_end(
                consumer, topic, spans, timeout=60, batch=500, errors="skip"
            ):
                st = stats[msg.partition()]
                st.scanned += 1
                names = [name for name, _ in (msg.headers() or ())]
                if MARKER_HEADER not in names:
                    st.unmarked += 1
                    key = msg.key()
                    if len(st.keys) < 3 and key is not None:
                        st.keys.append(repr(key[:40]))
                    st.headers.update(n for n in names if not n.startswith("schemacli."))
    finally:
        consumer.close()
    return tuple(
        DirectWrites(
            p,
            stats[p].unmarked if p in stats else 0,
            stats[p].scanned if p in stats else 0,
            p in stop and stop[p] < ends[p],
            tuple(stats[p].keys) if p in stats else (),
            tuple(sorted(stats[p].headers))[:5] if p in stats else (),
        )
        for p in sorted(ends)
    )


def look(
    bootstrap: str,
    v1_topic: str,
    v2_topic: str | None,
    *,
    previous: Snapshot | None = None,
    window_seconds: float = WINDOW_SECONDS,
    scan_limit: int = SCAN_LIMIT,
    properties: AnyMapping[str, str] | None = None,
) -> tuple[Dependents, Snapshot]:
    """One look at v1's dependents (compared with ``previous``), and the snapshot to compare the
    next look with. Raises NetworkError when Kafka does not answer, InputError for a missing
    topic."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import OffsetSpec

    admin = _admin(bootstrap, properties)
    now = time.time()
    try:
        v1_parts = _partitions(admin, v1_topic, bootstrap)
        v1_ends = _offsets(admin, v1_topic, v1_parts, OffsetSpec.latest())
        starts = _offsets(
            admin, v1_topic, v1_parts, OffsetSpec.for_timestamp(int((now - window_seconds) * 1000))
        )
        v2_ends: dict[int, int] = {}
        if v2_topic:
            v2_ends = _offsets(
                admin, v2_topic, _partitions(admin, v2_topic, bootstrap), OffsetSpec.latest()
            )
        listing = admin.list_consumer_groups(request_timeout=TIMEOUT).result()
        ids = [g.group_id for g in listing.valid if not g.group_id.startswith(OURS)]
        committed = {g: _committed(admin, g) for g in ids}
        described = (
            {g: f.result() for g, f in admin.describe_consumer_groups(ids).items()} if ids else {}
        )
    except KafkaException as exc:
        raise _network(bootstrap, exc) from exc
    snapshot = {
        g: {f"{t}/{p}": o for (t, p), o in offsets.items()} for g, offsets in committed.items()
    }
    topics = {v1_topic: v1_ends, **({v2_topic: v2_ends} if v2_topic else {})}
    positions = {
        (t, p, o) for offsets in committed.values() for (t, p), o in offsets.items() if t in topics
    }
    try:
        unread = _unread(bootstrap, positions, topics, properties)
    except KafkaException as exc:
        raise _network(bootstrap, exc) from exc
    found = Dependents(
        v1_topic=v1_topic,
        v2_topic=v2_topic,
        looked_at=now,
        window_seconds=window_seconds,
        v1_groups=_groups_on(v1_topic, v1_ends, committed, described, previous, unread),
        v2_groups=_groups_on(v2_topic, v2_ends, committed, described, previous, unread)
        if v2_topic
        else (),
        direct_writes=_direct_writes(bootstrap, v1_topic, starts, v1_ends, scan_limit, properties),
        first_look=previous is None,
    )
    return found, snapshot
