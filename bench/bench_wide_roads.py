"""Issue #31: the fast road against the SQL road on a wider mapping than the taxi ride's.

A v2 record with nullable fields (``["null", T]``), logical types (date, timestamp-micros,
decimal), an enum, a nested record and an array, down-converted to v1 with copies, promotions, a
number parse and a literal - the shape of a real-world mapping, which since issue #31 takes the
fast road. Each round runs, interleaved on the same v2 topic (2 partitions, ``local[2]``):

(a)   passthrough - Spark copies key/value to another topic (no conversion);
(b')  exactly-once on the SQL road - from_avro, the mapping's SQL, to_avro, the JVM writer;
(b'') exactly-once on the fast road - the JVM writer converts Avro to Avro in its task.

and checks that (b'') wrote exactly (b')'s converted and dead-lettered counts (read_committed).

    .venv/bin/python bench/bench_wide_roads.py [--messages N] [--rounds 2]

Results: printed, and appended as one JSON line to bench/results/wide_roads.jsonl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
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
            f"{k}-{r}" for r in range(rounds + 1) for k in ("copy", "eo", "eodlq", "fo", "fodlq")
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
        timings: dict[str, list[float]] = {"passthrough": [], "sql_road": [], "fast_road": []}
        counts = None
        for r in range(rounds + 1):
            label = "warm-up" if r == 0 else f"round {r}"
            src = source(spark, bootstrap, t["v2"])
            secs = run_query(
                spark,
                src.select("key", "value"),
                bootstrap,
                work / f"cp-copy-{r}",
                topic=t[f"copy-{r}"],
            )
            print(f"{label} (a) passthrough: {n / secs:,.0f} msg/s", file=sys.stderr)
            timings["passthrough"] += [secs] if r else []
            mapped = replace(
                mapping,
                target=replace(mapping.target, topic=t[f"eo-{r}"]),
                dead_letter_topic=t[f"eodlq-{r}"],
            )
            secs = run_exactly_once(
                spark,
                build_records(source(spark, bootstrap, t["v2"]), mapped, reg),
                bootstrap,
                work / f"cp-eo-{r}",
                mapped,
            )
            print(f"{label} (b') SQL road: {n / secs:,.0f} msg/s", file=sys.stderr)
            timings["sql_road"] += [secs] if r else []
            eo = (
                count_committed(bootstrap, t[f"eo-{r}"])[0],
                count_committed(bootstrap, t[f"eodlq-{r}"])[0],
            )
            mapped = replace(
                mapping,
                target=replace(mapping.target, topic=t[f"fo-{r}"]),
                dead_letter_topic=t[f"fodlq-{r}"],
            )
            secs = run_fast(
                spark,
                source(spark, bootstrap, t["v2"]),
                bootstrap,
                work / f"cp-fo-{r}",
                mapped,
                reg,
            )
            print(f"{label} (b'') fast road: {n / secs:,.0f} msg/s", file=sys.stderr)
            timings["fast_road"] += [secs] if r else []
            fo = (
                count_committed(bootstrap, t[f"fo-{r}"])[0],
                count_committed(bootstrap, t[f"fodlq-{r}"])[0],
            )
            assert fo == eo and sum(eo) == n, (fo, eo)
            counts = eo
        spark.stop()
        rates = {k: round(n / statistics.median(v)) for k, v in timings.items()}
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
        line = {
            "bench": "wide_roads",
            "commit": commit,
            "date": started,
            "machine": where,
            "messages": n,
            "rounds": rounds,
            "msg_per_s": rates,
            "msg_per_s_each": {k: [round(n / x) for x in v] for k, v in timings.items()},
            "converted_dead": counts,
            "fast_vs_sql": round(rates["fast_road"] / rates["sql_road"], 2),
            "fast_vs_passthrough": round(rates["fast_road"] / rates["passthrough"], 2),
            "sql_vs_passthrough": round(rates["sql_road"] / rates["passthrough"], 2),
        }
        print(json.dumps(line, indent=2))
        with (ROOT / "bench/results/wide_roads.jsonl").open("a") as f:
            f.write(json.dumps(line) + "\n")
    finally:
        registry.stop()
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
