"""Converter throughput: messages/s on local[2] for N taxi-ride messages (default 1M).

Three ways to get a v2 topic into a v1 topic, on the same broker, the same messages:

(a) passthrough - Spark Structured Streaming Kafka -> Kafka copying bytes, no decoding: the
    upper bound for any Spark converter on this machine;
(a') passthrough + header - (a) plus the header every converted message gets
    (``schemacli.converted-from``: origin, position, timestamp): not a target, it shows what the
    header alone costs, since Spark's Kafka sink handles headers slowly;
(b) the converter, at-least-once - the job's own pipeline (``pipeline.records.build_output``):
    header split, from_avro with the writer schema, the mapping's Spark SQL, to_avro, framing,
    headers, into Spark's Kafka sink (``--delivery at-least-once``);
(b') the converter, exactly-once (the default) - the same rows (``build_records``) through the
    job's ``foreachBatch`` into its JVM writer (``converters.pipeline.txsink.write_batch``: a Kafka
    transaction per v2 partition, offsets and counts committed with the records);
(b'') the converter, exactly-once on the fast road (what the job takes for this mapping) - the
    Kafka source's rows straight into the JVM writer, which decodes, converts (the mapping's
    record plan, ``converters.mapping.recordplan``) and encodes Avro to Avro in its task
    (``converters.pipeline.fastroad``); (b') is the SQL road (``--road sql``);
(c) plain Python - confluent-kafka consumer, fastavro decode / convert / encode, producer;
(k) Kafka Streams - the down-converter a team would hand-write without schemacli
    (bench/kstreams/: Avro's GenericDatumReader, the taxi mapping by hand, GenericDatumWriter,
    ``processing.guarantee=exactly_once_v2``, the converter's headers, loop guard and dead
    letters), 2 stream threads against local[2], built from Maven Central jars on first use
    (bench/kstreams/pom.xml -> .cache/jars/kstreams, javac -> .cache/kstreams-classes). One JVM
    runs every round over stdin, so it is as warm as Spark's; each round is a new application.id
    timed from KafkaStreams.start until every message is read and its offsets are committed.

Both Spark runs are ``trigger(availableNow)`` queries in one local[2] session, with the job's
client settings (``pipeline.stream.SOURCE_DEFAULTS`` / ``SINK_DEFAULTS``); each run's clock starts
when the query starts and stops when every message is written. A converter runs for days, so
what counts is the warm rate: JVM start is not timed, and each Spark pipeline runs once untimed
first (the first query in a JVM is 2-3x slower while the JIT compiles Spark's and Kafka's code).
Each of (a), (b), (b'), (k), (c) is then timed ``--rounds`` times (default 3), the Spark runs and
(k) interleaved round by round, and the median is reported. 1% of the v2 messages have a
non-numeric total_amount (dead-lettered by (b); (b'), (k) and (c) do the same). The converted and
dead-lettered counts of (b'), (k) are read back with a read_committed consumer and must equal
(b)'s; (k) dead letters carry the converter's error text (checked on one).

    .venv/bin/python bench/bench_converter.py [--messages N] [--rounds 3] [--bootstrap HOST:PORT]

Without --bootstrap a broker is started from tests/stack (Maven jars); the registry is the
in-process fake from tests/ unless --registry is given (it is read once, at job start).
Results: printed, and appended as one JSON line to bench/results/converter.jsonl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402

V2 = json.loads((ROOT / "schemas/migration/taxi-ride-v2-breaking.avsc").read_text())
V1 = json.loads((ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text())


def machine() -> str:
    model = cpu_model()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1
    return f"{platform.node()} {os.cpu_count()} cpu {model}, load {load:.1f} at start"


def produce(bootstrap: str, topic: str, v2_id: int, n: int) -> None:
    def rides():
        for i in range(n):
            yield {
                "vendorId": i % 7,
                "passenger_count": i % 5,
                "trip_distance": (i % 100) / 4,
                "payment_type": i % 3,
                "total_amount": "n/a" if i % 100 == 42 else f"{i % 1000}.25",
            }

    produce_framed(
        bootstrap,
        topic,
        V2,
        v2_id,
        rides(),
        {"compression.type": "none", "queue.buffering.max.messages": 1_000_000},
    )


def produce_framed(
    bootstrap: str,
    topic: str,
    schema: dict,
    schema_id: int,
    records,
    settings: dict | None = None,
) -> None:
    """Write ``records`` Confluent-framed with ``schema_id`` (keys: the record's number mod
    1000), waiting when the producer's queue is full; every record delivered."""
    import fastavro
    from confluent_kafka import Producer

    parsed = fastavro.parse_schema(schema)
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            **(settings or {}),
        }
    )
    head = b"\x00" + schema_id.to_bytes(4, "big")
    for i, record in enumerate(records):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        while True:
            try:
                p.produce(topic, key=str(i % 1000).encode(), value=head + buf.getvalue())
                break
            except BufferError:
                p.poll(0.1)
        if i % 10000 == 0:
            p.poll(0)
    assert p.flush(120) == 0


def count(bootstrap: str, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-count"})
    try:
        meta = c.list_topics(topic, timeout=10).topics[topic]
        return sum(
            c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in meta.partitions
        )
    finally:
        c.close()


PHASES: list[tuple[str, float, float]] = []  # (run, wall start, wall end): to cut a JFR profile


def phase(name: str, t0: float) -> None:
    PHASES.append((name, time.time() - (time.perf_counter() - t0), time.time()))


def run_query(spark, df, bootstrap: str, checkpoint: Path, topic: str | None = None) -> float:
    writer = (
        df.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    if topic:
        writer = writer.option("topic", topic)
    from converters.pipeline.stream import SINK_DEFAULTS

    for k, v in SINK_DEFAULTS.items():  # the job's producer settings, for both Spark runs
        writer = writer.option(k, v)
    t0 = time.perf_counter()
    q = writer.start()
    q.awaitTermination()
    phase(checkpoint.name, t0)
    return time.perf_counter() - t0


def run_exactly_once(spark, df, bootstrap: str, checkpoint: Path, mapping) -> float:
    """(b'): the job's exactly-once road, timed like run_query."""
    from converters.pipeline.progress import ProgressFile
    from converters.pipeline.stream import transactional_batches
    from converters.pipeline.txsink import SinkConfig, progress_group

    sink = SinkConfig(
        bootstrap, mapping.source.topic, progress_group(mapping.source.topic, mapping.target.topic)
    )
    progress = ProgressFile(checkpoint.with_suffix(".progress.json"), counted_by="transactions")
    writer = (
        df.writeStream.foreachBatch(transactional_batches(sink, progress))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    t0 = time.perf_counter()
    q = writer.start()
    q.awaitTermination()
    phase(checkpoint.name, t0)
    return time.perf_counter() - t0


def run_fast(
    spark, df, bootstrap: str, checkpoint: Path, mapping, reg, in_place: bool = True
) -> float:
    """(b''): the job's exactly-once fast road, timed like run_query (``in_place`` False: every
    record by Avro's datum reader, the fast road before records were read in place)."""
    from converters.mapping.recordplan import record_plan
    from converters.pipeline.fastroad import fast_batches, plan_json
    from converters.pipeline.progress import ProgressFile
    from converters.pipeline.txsink import SinkConfig, progress_group

    sink = SinkConfig(
        bootstrap, mapping.source.topic, progress_group(mapping.source.topic, mapping.target.topic)
    )
    progress = ProgressFile(checkpoint.with_suffix(".progress.json"), counted_by="transactions")
    plan = plan_json(mapping, reg, record_plan(mapping), in_place=in_place)
    writer = (
        df.writeStream.foreachBatch(fast_batches(sink, progress, plan))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    t0 = time.perf_counter()
    q = writer.start()
    q.awaitTermination()
    phase(checkpoint.name, t0)
    return time.perf_counter() - t0


def source(spark, bootstrap: str, topic: str):
    from converters.pipeline.stream import SOURCE_DEFAULTS

    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
    )
    for k, v in SOURCE_DEFAULTS.items():  # the job's consumer settings, for both Spark runs
        reader = reader.option(k, v)
    return reader.load()


def with_converter_headers(df, reg):
    """(a'): the source rows, bytes untouched, with the header of a converted message."""
    from pyspark.sql import functions as F

    from converters.pipeline.headers import MARKER_HEADER
    from converters.pipeline.records import _header, _with_headers

    (version,) = reg.writer_versions.values()
    source = F.concat_ws(
        "/", F.col("topic"), F.col("partition").cast("string"), F.col("offset").cast("string")
    )
    ts = F.unix_millis(F.col("timestamp")).cast("string")
    headers = _with_headers(
        F.col("headers"), _header(MARKER_HEADER, F.concat_ws(" ", F.lit(version), source, ts))
    )
    return df.select("key", "value", headers.alias("headers"))


KSTREAMS = ROOT / "bench/kstreams"


def kstreams_classpath() -> list[Path]:
    """The anchor's jars (resolved from Maven Central once) and its classes (compiled once per
    source digest)."""
    import hashlib
    import subprocess

    from tests.stack.common import CACHE, JARS, maven_copy

    jars = maven_copy("kstreams", KSTREAMS / "pom.xml", JARS / "kstreams")
    sources = sorted((KSTREAMS / "src").rglob("*.java"))
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in sources)).hexdigest()[:16]
    classes = CACHE / "kstreams-classes" / digest
    if not (classes / ".built").is_file():
        classes.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "javac",
                "--release",
                "17",
                "-encoding",
                "UTF-8",
                "-cp",
                ":".join(map(str, jars)),
                "-d",
                str(classes),
                *map(str, sources),
            ],
            check=True,
        )
        (classes / ".built").write_text(digest)
    return [classes, *jars]


class KStreamsAnchor:
    """(k): the Kafka Streams converter's JVM, run once and driven round by round over stdin."""

    def __init__(self, bootstrap: str, src: str, reg, mapping, work: Path, threads: int = 2):
        import subprocess

        from tests.stack.common import java

        def prop(v: str) -> str:
            return v.replace("\\", "\\\\").replace("\n", "\\n")

        lines = [
            f"threads={threads}",
            f"target.id={reg.target_id}",
            f"target.schema={prop(json.dumps(json.loads(reg.target_schema)))}",
            f"reader.schema={prop(json.dumps(mapping.source.schema_json))}",
        ]
        for sid, text in reg.writer_schemas.items():
            lines.append(f"writer.{sid}.schema={prop(json.dumps(json.loads(text)))}")
            lines.append(f"writer.{sid}.version={prop(reg.writer_versions[sid])}")
        settings = work / "kstreams.properties"
        settings.write_text("\n".join(lines) + "\n")
        cp = ":".join(map(str, kstreams_classpath()))
        self.steady: list[float] = []
        self.proc = subprocess.Popen(
            [
                java(),
                "-cp",
                cp,
                "dev.schemacli.bench.KStreamsConverter",
                bootstrap,
                src,
                str(settings),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, app_id: str, out: str, dlq: str, n: int) -> tuple[float, int, int]:
        """(seconds, converted, dead-lettered)."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"run {app_id} {out} {dlq} {n}\n")
        self.proc.stdin.flush()
        t0 = time.perf_counter()
        answer: list[str] = []
        while line := self.proc.stdout.readline():  # JVM logging (-XX flags) may come first
            answer = line.split()
            if answer and answer[0] in ("done", "error"):
                break
        phase(app_id, t0)
        if not answer or answer[0] != "done":
            raise RuntimeError(f"kafka streams converter: {' '.join(answer) or 'exited'}")
        self.steady.append(float(answer[6]))  # from the first record: no start, no group join
        return float(answer[1]), int(answer[2]), int(answer[3])

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except Exception:
            self.proc.kill()


def count_committed(bootstrap: str, topic: str) -> tuple[int, list]:
    """The records of a transactional topic a read_committed consumer sees (commit markers take
    offsets, so end offsets over-count), and the headers of the first one."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-count-{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        parts = list(c.list_topics(topic, timeout=10).topics[topic].partitions)
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        seen, first = 0, None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            for m in c.consume(10000, timeout=0.5):
                if m.error() is None:
                    seen += 1
                    first = first or (m.headers() or [])
            pos = {
                tp.partition: tp.offset
                for tp in c.position([TopicPartition(topic, p) for p in parts])
            }
            if all(pos[p] >= ends[p] for p in parts):
                return seen, first or []
        raise TimeoutError(f"{topic}: read {seen} records, not at the end offsets {ends}")
    finally:
        c.close()


def python_converter(
    bootstrap: str, src: str, dst: str, dlq: str, v1_id: int, writers: dict, versions: dict, n: int
) -> float:
    """(c): the obvious Python converter, written reasonably (batched consume, no per-message
    flush), doing the job's work: the loop guard, the same headers (converted-from; error, stage,
    source and source timestamp on a dead letter) and dead letters with the raw bytes."""
    import fastavro
    from confluent_kafka import Consumer, Producer

    from converters.pipeline.headers import (
        ERROR_HEADER,
        MARKER_HEADER,
        SOURCE_HEADER,
        STAGE_HEADER,
        TIMESTAMP_HEADER,
        marker_value,
    )

    reader, target = fastavro.parse_schema(V2), fastavro.parse_schema(V1)
    parsed = {i: fastavro.parse_schema(json.loads(s)) for i, s in writers.items()}
    head = b"\x00" + v1_id.to_bytes(4, "big")
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-py-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    p = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 50, "queue.buffering.max.messages": 1_000_000}
    )
    c.subscribe([src])
    done = 0
    t0 = time.perf_counter()
    while done < n:
        for msg in c.consume(10000, timeout=1.0):
            if msg.error():
                continue
            done += 1
            headers = msg.headers() or []
            if any(k == MARKER_HEADER for k, _ in headers):
                continue  # already converted: the loop guard
            v = msg.value()
            stamp = msg.timestamp()[1]
            try:
                schema_id = int.from_bytes(v[1:5], "big")
                rec = fastavro.schemaless_reader(io.BytesIO(v[5:]), parsed[schema_id], reader)
                rec["total_amount"] = float(rec["total_amount"])
                out = io.BytesIO()
                fastavro.schemaless_writer(out, target, rec)
                topic, value = dst, head + out.getvalue()
                mark = marker_value(
                    versions[schema_id], msg.topic(), msg.partition(), msg.offset(), stamp
                )
                headers = [*headers, (MARKER_HEADER, mark)]
            except (ValueError, KeyError) as err:
                topic, value = dlq, v
                headers = [
                    *headers,
                    (ERROR_HEADER, str(err).encode()),
                    (STAGE_HEADER, b"convert"),
                    (SOURCE_HEADER, f"{msg.topic()}/{msg.partition()}/{msg.offset()}".encode()),
                    (TIMESTAMP_HEADER, str(stamp).encode()),
                ]
            while True:
                try:
                    p.produce(topic, key=msg.key(), value=value, headers=headers)
                    break
                except BufferError:
                    p.poll(0.1)
            p.poll(0)
    p.flush(120)
    c.close()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--bootstrap")
    ap.add_argument("--registry")
    ap.add_argument("--rounds", type=int, default=3, help="timed runs of each (median reported)")
    ap.add_argument("--skip-python", action="store_true")
    args = ap.parse_args()
    n = args.messages
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = machine()
    work = Path(tempfile.mkdtemp(prefix="bench-converter-"))
    broker = registry = None
    if not args.bootstrap:
        from tests.stack.kafka import start_kafka

        broker = start_kafka(work / "kafka")
    bootstrap = args.bootstrap or broker.bootstrap
    if not args.registry:
        from tests.registry_fake import FakeRegistry

        registry = FakeRegistry().start()
    url = args.registry or registry.url
    try:
        from confluent_kafka.admin import AdminClient, NewTopic

        from converters.mapping.reader import load
        from converters.pipeline.records import build_output, build_records, resolve_registry
        from schemacli.registry.client import RegistryClient
        from schemacli.registry.settings import RegistrySettings

        run = uuid.uuid4().hex[:6]
        rounds = args.rounds
        names = ["v2", "copy", "py", "pydlq"]
        for r in range(rounds + 1):  # round 0 is the untimed warm-up
            names += [f"v1-{r}", f"dlq-{r}", f"copy-{r}", f"hdr-{r}", f"eo-{r}", f"eodlq-{r}"]
            names += [f"ks-{r}", f"ksdlq-{r}", f"fo-{r}", f"fodlq-{r}"]
        t = {k: f"bench-{k}-{run}" for k in names}
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic(x, 2, 1) for x in t.values()]).values():
            f.result(30)
        with RegistryClient(RegistrySettings.build(url=url, env={})) as client:
            client.register(f"{t['v1-0']}-value", json.dumps(V1))
            v2_id = client.register(f"{t['v2']}-value", json.dumps(V2)).id
            from dataclasses import replace

            example = load(ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml")
            mapping = replace(
                example,
                source=replace(example.source, subject=f"{t['v2']}-value", topic=t["v2"]),
                target=replace(example.target, subject=f"{t['v1-0']}-value", topic=t["v1-0"]),
                dead_letter_topic=t["dlq-0"],
            )
            reg = resolve_registry(mapping, client)
        t0 = time.perf_counter()
        produce(bootstrap, t["v2"], v2_id, n)
        print(f"produced {n} v2 messages in {time.perf_counter() - t0:.1f}s", file=sys.stderr)

        anchor = KStreamsAnchor(bootstrap, t["v2"], reg, mapping, work)
        from tests.stack.spark import make_spark_session

        spark = make_spark_session("bench-converter")
        spark.sparkContext.setLogLevel("ERROR")
        from converters.pipeline.stream import apply_sql_defaults

        apply_sql_defaults(spark)  # as the job does (no effect on the taxi mapping's stages)
        timings: dict[str, list[float]] = {
            "passthrough": [],
            "passthrough_headers": [],
            "converter": [],
            "converter_exactly_once": [],
            "kafka_streams": [],
            "converter_fast_road": [],
        }
        converted = dead = 0
        for r in range(rounds + 1):
            secs = run_query(
                spark,
                source(spark, bootstrap, t["v2"]).select("key", "value", "headers"),
                bootstrap,
                work / f"cp-copy-{r}",
                topic=t[f"copy-{r}"],
            )
            label = "warm-up" if r == 0 else f"round {r}"
            print(f"{label} (a) passthrough: {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr)
            if r:
                timings["passthrough"].append(secs)
            secs = run_query(
                spark,
                with_converter_headers(source(spark, bootstrap, t["v2"]), reg),
                bootstrap,
                work / f"cp-hdr-{r}",
                topic=t[f"hdr-{r}"],
            )
            print(f"{label} (a') + headers:  {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr)
            if r:
                timings["passthrough_headers"].append(secs)
            target = replace(mapping.target, topic=t[f"v1-{r}"])
            mapped = replace(mapping, target=target, dead_letter_topic=t[f"dlq-{r}"])
            secs = run_query(
                spark,
                build_output(source(spark, bootstrap, t["v2"]), mapped, reg),
                bootstrap,
                work / f"cp-conv-{r}",
            )
            print(f"{label} (b) converter:   {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr)
            if r:
                timings["converter"].append(secs)
            converted, dead = count(bootstrap, t[f"v1-{r}"]), count(bootstrap, t[f"dlq-{r}"])
            assert converted + dead == n, (converted, dead)
            target = replace(mapping.target, topic=t[f"eo-{r}"])
            mapped = replace(mapping, target=target, dead_letter_topic=t[f"eodlq-{r}"])
            secs = run_exactly_once(
                spark,
                build_records(source(spark, bootstrap, t["v2"]), mapped, reg),
                bootstrap,
                work / f"cp-eo-{r}",
                mapped,
            )
            print(
                f"{label} (b') exactly-once: {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr
            )
            if r:
                timings["converter_exactly_once"].append(secs)
            eo = count_committed(bootstrap, t[f"eo-{r}"])[0]
            eo_dead, eo_dead_headers = count_committed(bootstrap, t[f"eodlq-{r}"])
            assert (eo, eo_dead) == (converted, dead), ((eo, eo_dead), (converted, dead))
            target = replace(mapping.target, topic=t[f"fo-{r}"])
            mapped = replace(mapping, target=target, dead_letter_topic=t[f"fodlq-{r}"])
            secs = run_fast(
                spark,
                source(spark, bootstrap, t["v2"]),
                bootstrap,
                work / f"cp-fo-{r}",
                mapped,
                reg,
            )
            print(f"{label} (b'') fast road: {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr)
            if r:
                timings["converter_fast_road"].append(secs)
            fo = count_committed(bootstrap, t[f"fo-{r}"])[0]
            fo_dead, fo_dead_headers = count_committed(bootstrap, t[f"fodlq-{r}"])
            assert (fo, fo_dead) == (converted, dead), ((fo, fo_dead), (converted, dead))
            assert [k for k, _ in fo_dead_headers] == [k for k, _ in eo_dead_headers]
            assert (
                dict(fo_dead_headers)["schemacli.error"] == dict(eo_dead_headers)["schemacli.error"]
            )
            secs, ks_conv, ks_dead = anchor.run(
                f"bench-ks-{run}-{r}", t[f"ks-{r}"], t[f"ksdlq-{r}"], n
            )
            print(
                f"{label} (k) kafka streams: {n / secs:,.0f} msg/s ({secs:.1f}s)", file=sys.stderr
            )
            if r:
                timings["kafka_streams"].append(secs)
            ks = count_committed(bootstrap, t[f"ks-{r}"])[0]
            ks_dead2, ks_dead_headers = count_committed(bootstrap, t[f"ksdlq-{r}"])
            assert (ks_conv, ks_dead) == (ks, ks_dead2) == (converted, dead), (
                (ks_conv, ks_dead, ks, ks_dead2),
                (converted, dead),
            )
            # the same dead-letter headers, the same reason (positions differ by run)
            names_of = lambda hs: [k for k, _ in hs]  # noqa: E731
            assert names_of(ks_dead_headers) == names_of(eo_dead_headers), (
                ks_dead_headers,
                eo_dead_headers,
            )
            assert (
                dict(ks_dead_headers)["schemacli.error"] == dict(eo_dead_headers)["schemacli.error"]
            ), (ks_dead_headers, eo_dead_headers)
        spark.stop()
        anchor.stop()
        if not args.skip_python:
            timings["python"] = []
            for r in range(1, rounds + 1):
                secs = python_converter(
                    bootstrap,
                    t["v2"],
                    t["py"],
                    t["pydlq"],
                    reg.target_id,
                    reg.writer_schemas,
                    reg.writer_versions,
                    n,
                )
                timings["python"].append(secs)
                print(
                    f"round {r} (c) python:      {n / secs:,.0f} msg/s ({secs:.1f}s)",
                    file=sys.stderr,
                )
        results = {k: statistics.median(v) for k, v in timings.items()}
        rates = {k: round(n / v) for k, v in results.items()}
        import subprocess

        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        changed = subprocess.run(  # uncommitted code (earlier results do not count)
            ["git", "diff", "--quiet", "HEAD", "--", ".", ":(exclude)bench/results"], cwd=ROOT
        ).returncode
        commit += "-dirty" if changed else ""
        line = {
            "bench": "converter",
            "commit": commit,
            "date": started,
            "machine": where,
            "messages": n,
            "rounds": rounds,
            "msg_per_s": rates,
            "msg_per_s_each": {k: [round(n / x) for x in v] for k, v in timings.items()},
            # (k) timed from its first record (leaves out KafkaStreams' start and group join)
            "kafka_streams_from_first_record": round(n / statistics.median(anchor.steady[1:]))
            if len(anchor.steady) > 1
            else None,
            "converted": converted,
            "dead_lettered": dead,
            "converter_vs_passthrough": round(rates["converter"] / rates["passthrough"], 2),
            "exactly_once_vs_at_least_once": round(
                rates["converter_exactly_once"] / rates["converter"], 2
            ),
            "exactly_once_vs_passthrough": round(
                rates["converter_exactly_once"] / rates["passthrough"], 2
            ),
            "converter_vs_passthrough_headers": round(
                rates["converter"] / rates["passthrough_headers"], 2
            ),
            "fast_road_vs_passthrough": round(
                rates["converter_fast_road"] / rates["passthrough"], 2
            ),
            "fast_road_vs_kafka_streams": round(
                rates["converter_fast_road"] / rates["kafka_streams"], 2
            ),
            "exactly_once_vs_kafka_streams": round(
                rates["converter_exactly_once"] / rates["kafka_streams"], 2
            ),
            "kafka_streams_vs_passthrough": round(rates["kafka_streams"] / rates["passthrough"], 2),
            "converter_vs_python": round(rates["converter"] / rates["python"], 2)
            if "python" in rates
            else None,
        }
        (work / "phases.json").write_text(json.dumps(PHASES))
        print(f"phases: {work / 'phases.json'}", file=sys.stderr)
        print(json.dumps(line, indent=2))
        out = ROOT / "bench/results/converter.jsonl"
        out.parent.mkdir(exist_ok=True)
        with out.open("a") as f:
            f.write(json.dumps(line) + "\n")
    finally:
        if registry is not None:
            registry.stop()
        if broker is not None:
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
