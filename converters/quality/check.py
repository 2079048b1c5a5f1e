"""``topics check``: a topic's values decoded and run through a subject's domain rules, counted
per writer version and per rule (docs/quality.md).

The road: the writers are every version of the subject (registry), the rule set that of one
version (the latest by default) or of a contract file; the ranges come from the census's
``scan.layout`` (the same ``--sample`` / ``--since`` / ``--until``); the read is the JVM's
(``jvmscan``: Kafka's consumer, Avro's GenericRecord, Google's CEL-Java, as Confluent's Java
serializer runs the rules) or Python's (librdkafka, fastavro, schemacli's evaluator as
confluent-kafka-python runs the rules: ``schemacli.contracts.rules.execute``). Both give the same
tallies, turned here into one document (:func:`document`).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from converters.census import scan as census_scan
from converters.census import sparkscan as census_spark
from converters.census.model import Mode, PartitionTally
from converters.kafka import waits
from converters.quality import jvmscan, sparkcheck
from schemacli.contracts.avro.parse import parse_schema
from schemacli.contracts.rules.execute import RuleRunner
from schemacli.contracts.rules.model import parse_contract
from schemacli.errors import InputError, NetworkError
from schemacli.registry.client import RegistryClient
from schemacli.registry.schemas import RegistrySchema, RegistrySchemas, RegistryVersion

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CHECK_FORMAT = 1
RULE_MODES = ("WRITE", "READ")


@dataclass(frozen=True)
class RuleSource:
    """The rule set checked, and where it came from (``subject`` v``version``, or a file)."""

    rule_set: dict[str, Any]
    metadata: dict[str, Any]
    where: dict[str, Any]


def rules_of(version: RegistryVersion) -> RuleSource:
    """A registered version's rule set and metadata; InputError when it has no domain rules."""
    rule_set = version.rule_set or {}
    if not rule_set.get("domainRules"):
        raise InputError(
            f"{version.subject} version {version.version} has no domain rules to check",
            hint="Register the rule set with the schema (`schemacli register --rules`), or give "
            "one with --contract FILE.",
        )
    where = {"subject": version.subject, "version": version.version, "file": None}
    return RuleSource(dict(rule_set), dict(version.metadata or {}), where)


def writers_of(client: RegistryClient, subject: str) -> dict[int, RegistrySchema]:
    """Every Avro version of ``subject`` by schema id: the writers a record of the topic may
    name, each self-contained (its references' named types defined inline, so both roads decode
    with one schema text), through the one road for registry schemas."""
    road = RegistrySchemas(client)
    numbers = road.version_numbers(subject)
    if not numbers:
        raise InputError(
            f"subject {subject!r} has no versions in the registry: nothing to decode with",
            hint="Give the topic's value subject with --subject (default: TOPIC-value).",
        )
    out: dict[int, RegistrySchema] = {}
    for got in road.versions(subject, numbers):
        if got.schema_type == "AVRO" and got.id not in out:
            out[got.id] = road.resolve(got)
    return out


def engine_of(engine: str) -> str:
    """``auto`` -> ``jvm`` when it can run here, else ``python``; JvmUnavailable for ``jvm``
    without its parts; ``spark`` and ``python`` as they are."""
    if engine == "spark":
        return "spark"
    if engine == "jvm":
        jvmscan.runtime()
        return "jvm"
    if engine == "auto":
        return "jvm" if jvmscan.available() else "python"
    return "python"


def take_check(
    bootstrap: str,
    topic: str,
    *,
    subject: str,
    client: RegistryClient,
    rules: RuleSource | None = None,
    version: int | None = None,
    mode: Mode,
    rule_mode: str = "WRITE",
    properties: Mapping[str, str] | None = None,
    java_properties: Mapping[str, str] | None = None,
    jobs: int | None = None,
    timeout: float = 600.0,
    connect_timeout: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "auto",
    examples: int = 3,
    spark: SparkSession | None = None,
    spark_master: str | None = None,
) -> dict[str, Any]:
    """The check document of ``topic`` (docs/quality.md). Raises InputError (no such topic or
    subject version, no rules, the JVM asked for and missing, a rule Spark cannot run),
    NetworkError, RegistryError. ``spark``: the session of the Spark road (else one is made on
    ``spark_master``, default ``local[jobs]``, else every core, as the census's)."""
    from confluent_kafka import KafkaException

    writers = writers_of(client, subject)
    if rules is None:
        chosen = RegistrySchemas(client).version(
            subject, version if version is not None else "latest"
        )
        rules = rules_of(chosen)
    road = engine_of(engine)
    compiled = None
    if road == "spark":  # refuse what Spark cannot run before Spark starts
        contract = sparkcheck.contract_of(rules.rule_set, rules.metadata, _where_text(rules.where))
        compiled = sparkcheck.compile_for(contract, writers, rule_mode)
    started = time.time()
    with census_scan.opened(bootstrap, properties) as consumer:
        tallies = census_scan.layout(consumer, topic, mode, bootstrap, connect_timeout)
        total = sum(t.end - t.start for t in tallies)
        workers = max(1, census_scan.readers_for(jobs, tallies))
        deadline = started + timeout
        step = census_scan.counting(total, progress)
        if road == "jvm":
            plan = jvmscan.plan_document(
                topic,
                tallies,
                writers={i: v.text for i, v in writers.items()},
                rule_set=rules.rule_set,
                metadata=rules.metadata,
                mode=rule_mode,
                threads=workers,
                deadline=deadline,
                examples=examples,
            )
            answer = jvmscan.read_partitions(bootstrap, plan, properties=java_properties, step=step)
        elif compiled is not None:
            session = spark or sparkcheck.session(census_spark.master_of(spark_master, jobs))
            answer = sparkcheck.read_with_spark(
                session,
                bootstrap,
                topic,
                tallies,
                compiled,
                n_rules=len(rules.rule_set.get("domainRules") or []),
                examples=examples,
                kafka_options=java_properties,
            )
            step(total)
        else:
            try:
                answer = read_in_python(
                    consumer, topic, tallies, writers, rules, rule_mode, deadline, step, examples
                )
            except KafkaException as exc:
                raise census_scan.unreachable(bootstrap, exc) from exc
    return document(
        topic=topic,
        bootstrap=bootstrap,
        subject=subject,
        rules=rules,
        writers=writers,
        tallies=tallies,
        answer=answer,
        mode=mode,
        rule_mode=rule_mode,
        engine=road,
        started=started,
        duration_s=time.time() - started,
    )


# ---- the Python road ----


class _WriterRun:
    """One writer's decoder and rule runner (schemacli's evaluator), made on first use."""

    def __init__(self, version: RegistrySchema, rules: RuleSource, rule_mode: str) -> None:
        import fastavro

        value = json.loads(version.text)
        self.parsed = fastavro.parse_schema(value)
        self.reader = fastavro.schemaless_reader
        contract = parse_contract(
            json.dumps({"ruleSet": rules.rule_set, "metadata": rules.metadata}),
            _where_text(rules.where),
        )
        self.rules = contract.rule_set.domain_rules
        self.runner = RuleRunner(contract.rule_set, parse_schema(value), contract.metadata)
        self.mode = rule_mode


def read_in_python(
    consumer: Any,
    topic: str,
    tallies: list[PartitionTally],
    writers: Mapping[int, RegistrySchema],
    rules: RuleSource,
    rule_mode: str,
    deadline: float,
    step: Callable[[int], None],
    examples: int,
) -> dict[str, Any]:
    """The Python road: each partition's range read in this process, each value decoded with
    fastavro and run through schemacli's rule runner; the tallies in the JVM's answer's shape."""
    from confluent_kafka import KafkaError, TopicPartition

    n_rules = len(rules.rule_set.get("domainRules") or [])
    runs: dict[int, _WriterRun] = {}
    out: dict[str, Any] = {"partitions": {}, "null": 0, "unframed": 0, "unknown": {}, "writers": {}}
    for t in tallies:
        scanned = 0
        complete = t.end <= t.start
        if not complete:
            consumer.assign([TopicPartition(topic, t.partition, t.start)])
            while not complete and time.time() <= deadline:
                batch = waits.consume(consumer, 10_000, min(1.0, max(deadline - time.time(), 0.01)))
                n = 0
                for m in batch:
                    err = m.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            complete = True
                            continue
                        raise NetworkError(f"reading {topic}[{t.partition}]: {err}")
                    if m.offset() >= t.end:
                        complete = True
                        break
                    n += 1
                    _one(
                        m.value(),
                        t.partition,
                        m.offset(),
                        out,
                        writers,
                        runs,
                        rules,
                        rule_mode,
                        n_rules,
                        examples,
                    )
                    if m.offset() + 1 >= t.end:
                        complete = True
                        break
                scanned += n
                step(n)
        out["partitions"][t.partition] = (scanned, complete)
    return out


def _one(
    value: bytes | None,
    partition: int,
    offset: int,
    out: dict[str, Any],
    writers: Mapping[int, RegistrySchema],
    runs: dict[int, _WriterRun],
    rules: RuleSource,
    rule_mode: str,
    n_rules: int,
    examples: int,
) -> None:
    if value is None:
        out["null"] += 1
        return
    if len(value) < 5 or value[0] != 0:
        out["unframed"] += 1
        return
    wid = int.from_bytes(value[1:5], "big")
    if wid not in writers:
        out["unknown"][wid] = out["unknown"].get(wid, 0) + 1
        return
    run = runs.get(wid)
    if run is None:
        run = runs[wid] = _WriterRun(writers[wid], rules, rule_mode)
    w = out["writers"].get(wid)
    if w is None:
        w = out["writers"][wid] = {
            "records": 0,
            "undecodable": 0,
            "undecodable_at": None,
            "decode_error": None,
            "rules": [
                {"pass": 0, "fail": 0, "error": 0, "skipped": 0, "failed_at": [],
                 "errored_at": [], "first_error": None}
                for _ in range(n_rules)
            ],
        }  # fmt: skip
    w["records"] += 1
    try:
        record = run.reader(io.BytesIO(value[5:]), run.parsed, None)
    except Exception as exc:  # fastavro raises many kinds on bad bytes: each is undecodable
        if w["undecodable"] == 0:
            w["undecodable_at"] = (partition, offset)
            w["decode_error"] = f"{type(exc).__name__}: {exc}"[:400]
        w["undecodable"] += 1
        return
    result = run.runner.run(record, rule_mode)
    seen = {id(o.rule): o for o in result.outcomes}
    for i, rule in enumerate(run.rules):
        tally = w["rules"][i]
        o = seen.get(id(rule))
        if o is None:
            tally["skipped"] += 1
        elif o.status == "pass":
            tally["pass"] += 1
        elif o.status == "fail":
            tally["fail"] += 1
            if len(tally["failed_at"]) < examples:
                tally["failed_at"].append((partition, offset))
        else:
            tally["error"] += 1
            if len(tally["errored_at"]) < examples:
                tally["errored_at"].append((partition, offset))
            if tally["first_error"] is None:
                tally["first_error"] = (o.message or o.status)[:400]


# ---- the document ----


def _where_text(where: Mapping[str, Any]) -> str:
    if where.get("file"):
        return str(where["file"])
    return f"{where['subject']}:{where['version']}"


def _iso(ms: int) -> str:
    return (
        dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    )


def _at(pairs: list[tuple[int, int]]) -> list[dict[str, int]]:
    return [{"partition": p, "offset": o} for p, o in sorted(pairs)]


def document(
    *,
    topic: str,
    bootstrap: str,
    subject: str,
    rules: RuleSource,
    writers: Mapping[int, RegistrySchema],
    tallies: list[PartitionTally],
    answer: Mapping[str, Any],
    mode: Mode,
    rule_mode: str,
    engine: str,
    started: float,
    duration_s: float,
) -> dict[str, Any]:
    """The check document (docs/quality.md#the-check-document--o-json-format-1)."""
    declared = rules.rule_set.get("domainRules") or []
    rule_rows = [
        {
            "name": r.get("name"),
            "kind": r.get("kind"),
            "type": r.get("type"),
            "mode": r.get("mode"),
            "tags": list(r.get("tags") or []),
            "on_failure": r.get("onFailure"),
            "expr": r.get("expr"),
        }
        for r in declared
    ]
    partitions = []
    complete = True
    for t in tallies:
        scanned, done = answer["partitions"].get(t.partition, (0, t.end <= t.start))
        complete = complete and done
        partitions.append(
            {"partition": t.partition, "low": t.low, "high": t.high, "start": t.start,
             "end": t.end, "scanned": scanned, "complete": done}
        )  # fmt: skip
    versions = []
    summary = [{"name": r["name"], "pass": 0, "fail": 0, "error": 0} for r in rule_rows]
    undecodable = 0
    for wid in sorted(answer["writers"], key=lambda i: (writers[i].number or 0, i)):
        w = answer["writers"][wid]
        undecodable += w["undecodable"]
        rows = []
        for i, r in enumerate(w["rules"]):
            for k in ("pass", "fail", "error"):
                summary[i][k] += r[k]
            rows.append(
                {
                    "name": rule_rows[i]["name"],
                    "pass": r["pass"],
                    "fail": r["fail"],
                    "error": r["error"],
                    "skipped": r["skipped"],
                    "failed_at": _at(r["failed_at"]),
                    "errored_at": _at(r["errored_at"]),
                    "first_error": r["first_error"],
                }
            )
        at = w["undecodable_at"]
        versions.append(
            {
                "id": wid,
                "subject": subject,
                "version": writers[wid].number,
                "records": w["records"],
                "undecodable": w["undecodable"],
                "undecodable_at": None if at is None else {"partition": at[0], "offset": at[1]},
                "decode_error": w["decode_error"],
                "rules": rows,
            }
        )
    other = [{"id": i, "count": n} for i, n in sorted(answer["unknown"].items())]
    checked = sum(v["records"] - v["undecodable"] for v in versions)
    failing = undecodable > 0 or any(s["fail"] or s["error"] for s in summary)
    scanned_at_ms = int(started * 1000)
    return {
        "check_format": CHECK_FORMAT,
        "topic": topic,
        "bootstrap": bootstrap,
        "subject": subject,
        "rules_from": dict(rules.where),
        "rule_mode": rule_mode,
        "scanned_at": _iso(scanned_at_ms),
        "scanned_at_ms": scanned_at_ms,
        "duration_s": round(duration_s, 3),
        "engine": engine,
        "mode": {
            "whole": mode.whole,
            "sample": mode.sample,
            "since_ms": mode.since_ms,
            "until_ms": mode.until_ms,
        },  # fmt: skip
        "complete": complete,
        "rules": rule_rows,
        "partitions": partitions,
        "totals": {
            "messages": sum(p["scanned"] for p in partitions),
            "checked": checked,
            "null": answer["null"],
            "unframed": answer["unframed"],
            "other_ids": sum(o["count"] for o in other),
            "undecodable": undecodable,
        },
        "other_ids": other,
        "versions": versions,
        "summary": summary,
        "verdict": "fail" if failing else "pass",
    }
