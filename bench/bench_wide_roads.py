"""Issues #31 and #39: the fast road against the passthrough and the SQL road on a wider mapping
than the taxi ride's.

A v2 record with nullable fields (``["null", T]``), logical types (date, timestamp-micros,
decimal), an enum, a nested record and an array, down-converted to v1 with copies, promotions, a
number parse and a literal - the shape of a real-world mapping, which since issue #31 takes the
fast road. Each round runs these roads (``--roads``, in this order), interleaved on the same v2
topic (2 partitions, ``local[2]``), after one warm-up round:

(a)   passthrough - Spark copies key/value to another topic (no conversion);
(b')  sql_road: exactly-once on the SQL road - from_avro, the mapping's SQL, to_avro, the JVM
      writer;
(b'') fast_road: exactly-once on the fast road - the JVM writer converts Avro to Avro in its
      task, reading each record in place (issue #39);
(b*)  fast_road_datum_reader: the same, every record by Avro's datum reader and writer (the fast
      road before issue #39).

Every road must commit exactly the converted and dead-lettered counts the data holds
(read_committed). The formal figure (medians, each road over the passthrough of its round):

    .venv/bin/python bench/bench_wide_roads.py --messages 200000 --rounds 5

Results: printed, and appended as one JSON line to bench/results/wide_roads.jsonl; the rounds'
time windows go to phases.json in the run's folder, for bench/profile/breakdown.py (JFR).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_converter import (  # noqa: E402
    PHASES,
    count_committed,
    machine,
    produce_framed,
    run_exactly_once,
    run_fast,
    run_query,
    source,
)

LOC = {
    "type": "record",
    "name": "Loc",
    "fields": [
        {"name": "lat", "type": "double"},
        {"name": "lon", "type": "double"},
        {"name": "zone", "type": ["null", "string"], "default": None},
    ],
}
V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "qty", "type": ["null", "int"], "default": None},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
        },
        {"name": "total", "type": ["null", "string"], "default": None},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "pickup", "type": LOC},
        {"name": "items", "type": {"type": "array", "items": "long"}},
    ],
}
V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        *V2["fields"][:3],
        {"name": "qty", "type": ["null", "long"], "default": None},
        V2["fields"][4],
        {"name": "total", "type": "double"},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "GONE"]},
        },
        {"name": "note", "type": ["null", "string"], "default": None},
        V2["fields"][8],
        V2["fields"][9],
        {"name": "schema", "type": "string", "default": "v1"},
    ],
}
ROADS = ("passthrough", "sql_road", "fast_road", "fast_road_datum_reader")
LABELS = {
    "passthrough": "(a) passthrough",
    "sql_road": "(b') SQL road",
    "fast_road": "(b'') fast road",
    "fast_road_datum_reader": "(b*) fast road, every record by Avro's datum reader",
}
TOPICS = {  # each road's v1 and dead-letter topics
    "sql_road": ("eo", "eodlq"),
    "fast_road": ("fo", "fodlq"),
    "fast_road_datum_reader": ("fd", "fddlq"),
}
RULES = "".join(
    f"  {f['name']}: {{from: {f['name']}, convert: copy}}\n" for f in V1["fields"][:-1]
).replace("total: {from: total, convert: copy}", "total: {from: total, convert: parse_number}")


def produce(bootstrap: str, topic: str, v2_id: int, n: int) -> None:
    def orders():
        for i in range(n):
            yield {
                "id": str(uuid.UUID(int=i)),
                "day": 19_000 + i % 365,
                "at": 1_700_000_000_000_000 + i,
                "qty": None if i % 10 == 3 else i % 50,
                "price": Decimal(i % 100_000) / 100,
                "total": None if i % 100 == 42 else f"{i % 1000}.25",
                "status": "PAID" if i % 2 else "NEW",
                "note": None if i % 3 else f"note {i}",
                "pickup": {
                    "lat": 40.0 + i % 90 / 100,
                    "lon": -73.9,
                    "zone": None if i % 4 else "JFK",
                },
                "items": [i, i + 1, i + 2][: i % 4],
            }

    produce_framed(bootstrap, topic, V2, v2_id, orders())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2, help="timed runs of each (median reported)")
    ap.add_argument(
        "--roads",
        default=",".join(ROADS),
        help=f"the roads to time, in this order each round (of {', '.join(ROADS)})",
    )
    args = ap.parse_args()
    n, rounds = args.messages, args.rounds
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = machine()
    work = Path(tempfile.mkdtemp(prefix="bench-wide-"))
    from tests.registry_fake import FakeRegistry
    from tests.stack.kafka import start_kafka

    broker = start_kafka(work / "kafka")
    registry = FakeRegistry().start()
    try:
        from confluent_kafka.admin import AdminClient, NewTopic

        from converters.mapping.reader import loads
        from converters.mapping.recordplan import record_plan
        from converters.pipeline.records import build_records, resolve_registry
        from schemacli.registry.client import RegistryClient
        from schemacli.registry.settings import RegistrySettings

        bootstrap = broker.bootstrap
        run = uuid.uuid4().hex[:6]
        names = ["v2"] + [
            f"{k}-{r}"
            for r in range(rounds + 1)
            for k in ("copy", "eo", "eodlq", "fo", "fodlq", "fd", "fddlq")
        ]
        t = {k: f"wide-{k}-{run}" for k in names}
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic(x, 2, 1) for x in t.values()]).values():
            f.result(30)
        text = (
            f"version: 1\nsource: {{subject: {t['v2']}-value, topic: {t['v2']}}}\n"
            f"target: {{subject: {t['eo-0']}-value, topic: {t['eo-0']}}}\n"
            f"dead_letter_topic: {t['eodlq-0']}\nfields:\n{RULES}  schema: {{convert: default}}\n"
        )
        mapping = loads(text).with_schemas(V2, V1)
        road = record_plan(mapping)
        assert road.fast, road.why
        with RegistryClient(RegistrySettings.build(url=registry.url, env={})) as client:
            client.register(f"{t['eo-0']}-value", json.dumps(V1))
            v2_id = client.register(f"{t['v2']}-value", json.dumps(V2)).id
            reg = resolve_registry(mapping, client)
        t0 = time.perf_counter()
        produce(bootstrap, t["v2"], v2_id, n)
        print(f"produced {n} v2 messages in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        from converters.pipeline.stream import apply_sql_defaults
        from tests.stack.spark import make_spark_session

        spark = make_spark_session("bench-wide")
        spark.sparkContext.setLogLevel("ERROR")
        apply_sql_defaults(spark)
        roads = tuple(args.roads.split(","))
        assert set(roads) <= set(ROADS) and "passthrough" in roads, roads
        timings: dict[str, list[float]] = {k: [] for k in roads}
        # every record is converted but those whose `total` is null (produce: i % 100 == 42)
        dead = sum(1 for i in range(n) if i % 100 == 42)
        expected = (n - dead, dead)
        for r in range(rounds + 1):
            label = "warm-up" if r == 0 else f"round {r}"
            for road_name in roads:
                if road_name == "passthrough":
                    secs = run_query(
                        spark,
                        source(spark, bootstrap, t["v2"]).select("key", "value"),
                        bootstrap,
                        work / f"cp-copy-{r}",
                        topic=t[f"copy-{r}"],
                    )
                    out = None
                else:
                    out, dlq = TOPICS[road_name]
                    mapped = replace(
                        mapping,
                        target=replace(mapping.target, topic=t[f"{out}-{r}"]),
                        dead_letter_topic=t[f"{dlq}-{r}"],
                    )
                    src = source(spark, bootstrap, t["v2"])
                    checkpoint = work / f"cp-{out}-{r}"
                    if road_name == "sql_road":
                        records = build_records(src, mapped, reg)
                        secs = run_exactly_once(spark, records, bootstrap, checkpoint, mapped)
                    else:
                        in_place = road_name == "fast_road"
                        secs = run_fast(spark, src, bootstrap, checkpoint, mapped, reg, in_place)
                print(f"{label} {LABELS[road_name]}: {n / secs:,.0f} msg/s", file=sys.stderr)
                timings[road_name] += [secs] if r else []
                if out is not None:
                    written = (
                        count_committed(bootstrap, t[f"{out}-{r}"])[0],
                        count_committed(bootstrap, t[f"{dlq}-{r}"])[0],
                    )
                    assert written == expected, (road_name, written, expected)
        spark.stop()
        (work / "phases.json").write_text(json.dumps(PHASES))
        print(f"phases: {work / 'phases.json'}", file=sys.stderr)
        rates = {k: round(n / statistics.median(v)) for k, v in timings.items()}
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        line = {
            "bench": "wide_roads",
            "commit": commit,
            "date": started,
            "machine": where,
            "load_after": round(os.getloadavg()[0], 1),
            "messages": n,
            "rounds": rounds,
            "msg_per_s": rates,
            "msg_per_s_each": {k: [round(n / x) for x in v] for k, v in timings.items()},
            # per round: each road against the passthrough of the same round
            "vs_passthrough_each": {
                k: [round(a / b, 2) for a, b in zip(timings["passthrough"], v, strict=True)]
                for k, v in timings.items()
                if k != "passthrough"
            },
            "converted_dead": expected,
        }
        for k in rates:
            if k != "passthrough":
                line[f"{k}_vs_passthrough"] = round(rates[k] / rates["passthrough"], 2)
        if "sql_road" in rates and "fast_road" in rates:
            line["fast_vs_sql"] = round(rates["fast_road"] / rates["sql_road"], 2)
        print(json.dumps(line, indent=2))
        with (ROOT / "bench/results/wide_roads.jsonl").open("a") as f:
            f.write(json.dumps(line) + "\n")
    finally:
        registry.stop()
        broker.stop()
        for path in work.iterdir():  # the broker's logs and the checkpoints; phases.json stays
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            elif path.name != "phases.json":
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
