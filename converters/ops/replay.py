"""Replay dead letters: convert them again (with the deployed or a corrected mapping) and write
each to v1 once.

A dead letter carries its v2 message whole: the raw value, the key, the headers, and its
position and timestamp (``schemacli.source``, ``schemacli.source-timestamp``). ``replay``:

1. reads the dead-letter topic (read_committed, up to its end offsets at start; at most
   ``limit`` messages, since they are converted on the driver) and rebuilds each dead letter as
   the Kafka source row it came from (:func:`source_row`); several dead letters for one source
   position (an at-least-once run wrote it twice) count once;
2. converts them in a local Spark session through the job's own ``build_output`` (one road for
   a record through the converter) and collects the result: rows for v1, carrying the marker with
   their ORIGINAL source position, and rows that still fail;
3. fences any earlier replay into the same v1 topic (a transactional producer whose
   ``transactional.id`` is derived from the topic), then reads v1 (read_committed) for the
   positions its markers name: a position already in v1 is not written again;
4. writes the rest in ONE transaction: a crash writes nothing, a re-run writes what is missing.
   Records that still fail are reported (by error, with their stage), never dead-lettered again.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Mapping as AnyMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from converters.kafka import topicend, waits
from converters.kafka.settings import client_config, librdkafka_properties
from converters.mapping.model import Mapping
from converters.pipeline.headers import (
    DEAD_LETTER_HEADERS,
    ERROR_HEADER,
    MARKER_HEADER,
    SOURCE_HEADER,
    STAGE_HEADER,
    TIMESTAMP_HEADER,
    parse_marker,
)
from converters.pipeline.records import RegistryPlan, build_output
from converters.state import read_state, write_state
from schemacli.errors import CheckFailed, InputError, NetworkError, UsageError

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession

LIMIT = 100_000  # dead letters converted on the driver: more is a job, not a repair
READ_TIMEOUT = 300.0  # seconds to read a topic to its end offsets
FILE = "replays.json"  # one entry per replay that wrote, in the state directory

Headers = list[tuple[str, bytes]]


@dataclass(frozen=True)
class SourceRow:
    """A dead letter rebuilt as the v2 message it was (the Kafka source's columns)."""

    key: bytes | None
    value: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    headers: Headers

    @property
    def position(self) -> str:
        return f"{self.topic}/{self.partition}/{self.offset}"


@dataclass(frozen=True)
class Failure:
    """A record that still does not convert: its source position, the error and the stage."""

    source: str
    error: str
    stage: str


@dataclass(frozen=True)
class ReplayReport:
    dead_letter_topic: str
    v1_topic: str
    mapping: str  # the mapping the records were converted with
    dry_run: bool
    read: int  # dead letters read
    unique: int  # distinct source positions among them
    converted: int  # converted now (written + already in v1)
    written: int  # written to v1 by this replay (0 on a dry run)
    already_in_v1: int  # converted, but v1 already holds their source position
    v1_scanned: int  # v1 messages read for markers
    still_failing: list[Failure] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # dead letters that are not ours
    would_write: list[str] = field(default_factory=list)  # positions written (or, dry: to write)

    @property
    def by_error(self) -> list[tuple[str, str, int]]:
        """(stage, error's first line, count), most frequent first."""
        counts = Counter(
            (f.stage, (f.error.splitlines() or [""])[0][:160]) for f in self.still_failing
        )
        return [(stage, error, n) for (stage, error), n in counts.most_common()]

    @property
    def ok(self) -> bool:
        return not self.still_failing and not self.unreadable


# ---------------------------------------------------------------------------------------------
# pure: a dead letter -> its source row; the converter's output -> what to write


def source_row(key: bytes | None, value: bytes | None, headers: Headers) -> SourceRow:
    """The v2 message a dead letter was made from. The job appends its four headers after the
    message's own, so the LAST header of each of those names is the job's and is removed (an
    earlier one of the same name was the message's). ValueError when the position or the
    timestamp header is missing or not one the job writes."""
    own = list(headers)
    found: dict[str, bytes] = {}
    for name in DEAD_LETTER_HEADERS:
        for i in range(len(own) - 1, -1, -1):
            if own[i][0] == name:
                found[name] = own.pop(i)[1]
                break
    position = _text(found.get(SOURCE_HEADER))
    parts = position.rsplit("/", 2) if position is not None else []
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not parts[2].isdigit():
        raise ValueError(f"no {SOURCE_HEADER} header of the form <topic>/<partition>/<offset>")
    stamp = _text(found.get(TIMESTAMP_HEADER))
    if stamp is None or not stamp.removeprefix("-").isdigit():
        raise ValueError(f"no {TIMESTAMP_HEADER} header holding epoch milliseconds")
    return SourceRow(key, value, parts[0], int(parts[1]), int(parts[2]), int(stamp), own)


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", "replace")


def unique_rows(rows: Iterable[SourceRow]) -> list[SourceRow]:
    """One row per source position (the first dead letter of each), in the order read."""
    seen: dict[str, SourceRow] = {}
    for row in rows:
        seen.setdefault(row.position, row)
    return list(seen.values())


@dataclass(frozen=True)
class Outcome:
    """The converter's verdict on the replayed rows: sink rows for v1, and what still fails."""

    to_v1: dict[str, dict[str, Any]]  # source position -> sink row (topic, key, value, headers)
    failing: list[Failure]


def outcome(sink_rows: Iterable[AnyMapping[str, Any] | Row], v1_topic: str) -> Outcome:
    """Sort ``build_output``'s rows: those for ``v1_topic`` by the position in their marker,
    the others (dead letters again) as failures with their error and stage."""
    to_v1: dict[str, dict[str, Any]] = {}
    failing = []
    for row in sink_rows:
        headers = [(h["key"], bytes(h["value"])) for h in row["headers"] or ()]
        named = dict(headers)
        if row["topic"] == v1_topic:
            position = parse_marker(named[MARKER_HEADER]).dedupe_key
            to_v1[position] = {
                "key": _bytes(row["key"]),
                "value": _bytes(row["value"]),
                "headers": headers,
            }
        else:
            failing.append(
                Failure(
                    source=_text(named.get(SOURCE_HEADER)) or "?",
                    error=_text(named.get(ERROR_HEADER)) or "(no error)",
                    stage=_text(named.get(STAGE_HEADER)) or "?",
                )
            )
    return Outcome(to_v1, sorted(failing, key=lambda f: _position_order(f.source)))


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def _position_order(position: str) -> tuple[str, int, int]:
    topic, _, rest = position.rpartition("/")
    head, _, part = topic.rpartition("/")
    try:
        return head, int(part), int(rest)
    except ValueError:
        return position, 0, 0


# ---------------------------------------------------------------------------------------------
# Spark: convert the rows through the job's build_output


def convert(
    spark: SparkSession, rows: list[SourceRow], mapping: Mapping, reg: RegistryPlan
) -> Outcome:
    """``rows`` through ``pipeline.records.build_output`` in ``spark``, collected on the driver."""
    from pyspark.sql import functions as F

    schema = (
        "key binary, value binary, topic string, partition int, offset long, timestamp_ms long, "
        "headers array<struct<key:string,value:binary>>"
    )
    data = [
        (
            r.key,
            r.value,
            r.topic,
            r.partition,
            r.offset,
            r.timestamp_ms,
            [(k, v) for k, v in r.headers],
        )
        for r in rows
    ]
    frame = spark.createDataFrame(data, schema)
    raw = frame.select(
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        F.timestamp_millis("timestamp_ms").alias("timestamp"),
        "headers",
    )
    from pyspark.errors import AnalysisException, ParseException

    try:
        sink_rows = build_output(raw, mapping, reg).collect()
    except (AnalysisException, ParseException) as exc:
        # as the job reports it: a `convert: sql` expression Spark refuses
        raise CheckFailed(
            f"Spark refuses the compiled mapping: {exc.getMessage() or exc}",
            hint="Fix the expression; `schemacli migrate validate MAPPING --spark` shows it.",
        ) from exc
    return outcome(sink_rows, mapping.topics()[1])


# ---------------------------------------------------------------------------------------------
# Kafka


def kafka_config(bootstrap: str, properties: AnyMapping[str, str] | None) -> dict[str, Any]:
    """The client settings: bootstrap, the silent logger, and the properties file's entries in
    librdkafka's names (the same file as deploy's: ``converters.kafka.settings``)."""
    return client_config(bootstrap, librdkafka_properties(properties or {}))


def _unreachable(bootstrap: str, exc: Exception) -> NetworkError:
    return NetworkError(
        f"cannot reach Kafka at {bootstrap}: {exc}",
        hint="Check --bootstrap, that the broker is up, and the --kafka-properties file.",
    )


def read_topic(
    conf: dict[str, Any], topic: str, *, limit: int | None = None, what: str = "messages"
) -> Iterator[Any]:
    """Every message of ``topic`` (read_committed) up to its end offsets when called. A partition
    is done at its end offset, or at end of partition (a transaction's commit marker is the last
    offset of a partition and is never delivered). ``limit``: refuse (UsageError) when the topic
    holds more, before reading any."""
    from confluent_kafka import Consumer, KafkaException

    bootstrap = conf["bootstrap.servers"]
    try:
        consumer = Consumer(
            {
                **conf,
                "group.id": f"schemacli-replay-{uuid.uuid4().hex[:8]}",  # never commits
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "enable.partition.eof": True,
                "fetch.max.bytes": 52428800,
            }
        )
    except (KafkaException, ValueError) as exc:
        raise UsageError(
            f"Kafka refuses the client settings: {exc}",
            hint="Check the --kafka-properties file (see docs/migration.md, Kafka client "
            "properties: `librdkafka.<name>` lines are for this client alone).",
        ) from exc
    try:
        spans = topicend.ranges(consumer, topic)
        if spans is None:
            raise InputError(
                f"topic {topic!r} not found on {bootstrap}",
                hint="Check the mapping's topics and --bootstrap.",
            )
        total = sum(high - low for low, high in spans.values())
        if limit is not None and total > limit:
            raise UsageError(
                # offsets, not records: a topic written in transactions has a commit marker
                # per transaction and partition among them; close enough to refuse early
                f"{topic} holds up to {total} {what} (its offsets), more than --limit {limit}",
                hint="They are converted on this machine's driver: raise --limit if it has the "
                "memory, or repair the bulk by redeploying the converter with the fixed mapping.",
            )
        try:
            yield from topicend.read_to_end(consumer, topic, spans, timeout=READ_TIMEOUT)
        except topicend.EndNotReached as late:
            raise NetworkError(
                f"reading {topic} to its end took more than {READ_TIMEOUT:g} s "
                f"(partitions {late.partitions} unfinished)",
                hint="Check the broker; a transaction left open on the topic holds "
                "read_committed readers back until it times out.",
            ) from None
    except KafkaException as exc:
        raise _unreachable(bootstrap, exc) from exc
    finally:
        consumer.close()


def dead_letters(
    conf: dict[str, Any], topic: str, limit: int
) -> tuple[list[SourceRow], list[str], int]:
    """(source rows, one per dead letter; dead letters that are not the converter's, each
    described by its position; how many were read)."""
    rows, unreadable, read = [], [], 0
    for msg in read_topic(conf, topic, limit=limit, what="dead letters"):
        read += 1
        try:
            rows.append(source_row(msg.key(), msg.value(), list(msg.headers() or ())))
        except ValueError as exc:
            unreadable.append(f"{topic}/{msg.partition()}/{msg.offset()}: {exc}")
    return rows, unreadable, read


def positions_in(conf: dict[str, Any], topic: str) -> tuple[set[str], int]:
    """(the source positions the converter's markers name in ``topic``, messages read)."""
    found, read = set(), 0
    for msg in read_topic(conf, topic):
        read += 1
        for name, value in msg.headers() or ():
            if name == MARKER_HEADER and value is not None:
                try:
                    found.add(parse_marker(value).dedupe_key)
                except ValueError:
                    pass  # not written by a converter: no position to dedupe on
    return found, read


def same_target(fixed: Mapping, deployed: Mapping) -> Mapping:
    """``fixed``, the corrected mapping, when it writes where the deployed one does (the v1
    topic the dedupe reads); UsageError at its ``/target/topic`` otherwise."""
    if fixed.target.topic != deployed.target.topic:
        raise UsageError(
            f"the corrected mapping writes topic {fixed.target.topic!r}, the deployed one "
            f"{deployed.target.topic!r}",
            location=fixed.location("/target/topic"),
            hint="Replay writes to the deployment's v1 topic: give the same target.topic.",
        )
    return fixed


def transactional_id(v1_topic: str) -> str:
    """One per v1 topic: a replay that starts fences any earlier one still running."""
    return f"schemacli-replay-{v1_topic}"


def fenced_producer(conf: dict[str, Any], v1_topic: str) -> Any:
    """A transactional producer for ``v1_topic``, initialised: any earlier replay into the same
    topic is fenced, and its open transaction aborted, before we look at v1."""
    from confluent_kafka import KafkaException, Producer

    try:
        producer = Producer(
            {
                **conf,
                "transactional.id": transactional_id(v1_topic),
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 50,
                # Java's default partitioner for keyed records (murmur2), as the converter's
                # Spark sink uses: a replayed key lands in the partition of its other records.
                "partitioner": "murmur2_random",
            }
        )
        waits.sliced(producer.init_transactions, 30)
    except KafkaException as exc:
        raise _unreachable(conf["bootstrap.servers"], exc) from exc
    return producer


def write_once(producer: Any, v1_topic: str, rows: list[dict[str, Any]], bootstrap: str) -> None:
    """Write ``rows`` to v1 in one transaction; on any failure abort it (nothing is written)."""
    from confluent_kafka import KafkaException

    try:
        producer.begin_transaction()
        for row in rows:
            while True:
                try:
                    producer.produce(
                        v1_topic, key=row["key"], value=row["value"], headers=row["headers"]
                    )
                    break
                except BufferError:  # the local queue is full: let it drain
                    producer.poll(0.5)
        waits.sliced(producer.commit_transaction, 120)
    except KafkaException as exc:
        try:
            waits.sliced(producer.abort_transaction, 30)
        except KafkaException:
            pass  # fenced or gone: the broker aborts it when the transaction times out
        raise NetworkError(
            f"the replay's transaction into {v1_topic} failed, nothing was written: {exc}",
            hint="A replay started since fences this one (let it finish); otherwise check "
            "the broker and run the replay again: it writes what is missing.",
        ) from exc


# ---------------------------------------------------------------------------------------------
# the whole


def replay(
    *,
    bootstrap: str,
    dead_letter_topic: str,
    mapping: Mapping,
    mapping_name: str,
    reg: RegistryPlan,
    spark: Callable[[], SparkSession],
    properties: AnyMapping[str, str] | None = None,
    limit: int = LIMIT,
    dry_run: bool = False,
    say: Callable[[str], None] = lambda line: None,
) -> ReplayReport:
    """Replay the dead letters of ``dead_letter_topic`` into ``mapping.target.topic`` converted
    with ``mapping`` (see the module docstring). ``spark``: makes the Spark session, called only
    when there is something to convert. Raises UsageError (more than ``limit`` dead letters),
    InputError (a topic is missing), NetworkError (Kafka unreachable, the transaction failed)."""
    conf = kafka_config(bootstrap, properties)
    _, v1 = mapping.topics()
    rows, unreadable, read = dead_letters(conf, dead_letter_topic, limit)
    unique = unique_rows(rows)
    say(f"read {read} dead letter(s) from {dead_letter_topic}: {len(unique)} source position(s)")
    result = Outcome({}, [])
    if unique:
        say("converting them with a local Spark session")
        result = convert(spark(), unique, mapping, reg)
    producer = None
    if result.to_v1 and not dry_run:
        producer = fenced_producer(conf, v1)
    try:
        present, scanned = positions_in(conf, v1) if result.to_v1 else (set(), 0)
        if result.to_v1:
            say(f"read {scanned} message(s) of {v1}: {len(present)} converted position(s)")
        todo = sorted((p for p in result.to_v1 if p not in present), key=_position_order)
        if producer is not None and todo:
            write_once(producer, v1, [result.to_v1[p] for p in todo], bootstrap)
            say(f"wrote {len(todo)} record(s) to {v1} in one transaction")
    except KeyboardInterrupt:
        # leave at once: a transaction left open is never committed (the broker ends it, and
        # the next replay's producer fences it first), so nothing half-written stays
        producer = None
        raise
    finally:
        if producer is not None:
            waits.flush(producer, 10)
    return ReplayReport(
        dead_letter_topic=dead_letter_topic,
        v1_topic=v1,
        mapping=mapping_name,
        dry_run=dry_run,
        read=read,
        unique=len(unique),
        converted=len(result.to_v1),
        written=0 if dry_run else len(todo),
        already_in_v1=len(result.to_v1) - len(todo),
        v1_scanned=scanned,
        still_failing=result.failing,
        unreadable=unreadable,
        would_write=todo,
    )


def record(state_dir: Path, report: ReplayReport) -> None:
    """Append the replay's time and counts to ``<state-dir>/replays.json`` (not for a dry run)."""
    path = state_dir / FILE
    entries = read_state(path).get("replays")
    entries = entries if isinstance(entries, list) else []
    counts = asdict(report)
    for bulky in ("still_failing", "unreadable", "would_write"):
        counts.pop(bulky)
    entries.append(
        {
            "at": time.time(),
            **counts,
            "still_failing": len(report.still_failing),
            "unreadable": len(report.unreadable),
        }
    )
    write_state(path, {"replays": entries})
