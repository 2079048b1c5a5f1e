"""Rows/s decoded by the Spark reader vs plain from_avro after a manual header strip.

What is measured, said out loud: decoding only, not Kafka. N taxi-ride records are framed the
Confluent way (magic byte 0, 4-byte id, body written by Spark's ``to_avro``) and staged once as
Parquet; every run reads that Parquet and forces every output column with the ``noop`` sink.

* ``baseline``: a single-version topic (all v2), ``from_avro(substring(value, 6), v2)``: what
  plain Spark does if you strip the header by hand and ignore the schema id;
* ``reader_single``: ``decode_confluent`` on the same single-version topic;
* ``reader_mixed``: ``decode_confluent`` on a topic where half the records are v1 and half v2,
  each decoded with its own writer schema into v2 (the case plain from_avro cannot read at all);
* ``baseline_union`` / ``reader_union``: a ``Trip`` whose ``payment`` is a union of two records
  and whose ``pickup`` is a ``Place`` defined in another subject (a schema reference, inlined
  into one schema text as the reader does, ``schemacli.contracts.avro.inline``): plain from_avro vs
  ``decode_confluent`` with stable union names.

Overhead = 1 - rows/s(reader) / rows/s(its baseline). Target: <= 15%.

    .venv/bin/python bench/bench_reader.py [--rows 1000000] [--repeat 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TAXI = ROOT / "schemas" / "subjects" / "taxi-rides-value"
V1 = (TAXI / "v1.avsc").read_text()
V2 = (TAXI / "v2.avsc").read_text()
V1_ID, V2_ID = 1, 2
TRIP_ID = 3
PLACE = {
    "type": "record",
    "name": "Place",
    "namespace": "com.acme.geo",
    "fields": [{"name": "zone", "type": "int"}, {"name": "borough", "type": "string"}],
}
TRIP = {
    "type": "record",
    "name": "Trip",
    "namespace": "com.acme.rides",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "pickup", "type": "com.acme.geo.Place"},
        {
            "name": "payment",
            "type": [
                {"type": "record", "name": "Card", "fields": [{"name": "last4", "type": "int"}]},
                {"type": "record", "name": "Cash", "fields": [{"name": "amount", "type": "float"}]},
            ],
        },
    ],
}


def trip_schema() -> str:
    """The Trip schema with the referenced Place inlined, as the reader resolves it."""
    from schemacli.contracts.avro.inline import self_contained

    return json.dumps(self_contained(TRIP, [PLACE]))


def stage(spark, rows: int, directory: Path) -> tuple[str, str]:
    """Write the single-version and the mixed topic as Parquet; return their paths."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    base = spark.range(rows).select(
        F.col("id"),
        (F.col("id") % 5 + 1).cast("int").alias("vendorId"),
        (F.col("id") % 4 + 1).cast("int").alias("passenger_count"),
        ((F.col("id") % 100) / 10).cast("float").alias("trip_distance"),
        (F.col("id") % 2 + 1).cast("int").alias("payment_type"),
        ((F.col("id") % 1000) / 7).cast("float").alias("total_amount"),
        ((F.col("id") % 10) / 4).cast("float").alias("tip_amount"),
        F.when(F.col("id") % 3 == 0, F.lit("N")).alias("store_and_fwd_flag"),
    )
    v1_fields = ["vendorId", "passenger_count", "trip_distance", "payment_type", "total_amount"]
    v2_fields = [*v1_fields, "tip_amount", "store_and_fwd_flag"]

    def framed(schema_id: int, schema: str, fields: list[str]):
        header = F.lit(bytearray(b"\x00" + schema_id.to_bytes(4, "big")))
        return F.concat(header, to_avro(F.struct(*fields), schema))

    def kafka_columns(value):
        return [
            F.lit(None).cast("binary").alias("key"),
            value.alias("value"),
            F.lit("taxi-rides").alias("topic"),
            F.lit(0).alias("partition"),
            F.col("id").alias("offset"),
            F.current_timestamp().alias("timestamp"),
        ]

    single = str(directory / "single.parquet")
    mixed = str(directory / "mixed.parquet")
    base.select(*kafka_columns(framed(V2_ID, V2, v2_fields))).write.parquet(single)
    mixed_value = F.when(F.col("id") % 2 == 0, framed(V1_ID, V1, v1_fields)).otherwise(
        framed(V2_ID, V2, v2_fields)
    )
    base.select(*kafka_columns(mixed_value)).write.parquet(mixed)
    trips = str(directory / "trips.parquet")
    # to_avro writes a union of records from Spark's positional struct (member0, member1)
    payment = F.struct(
        F.when(F.col("id") % 2 == 0, F.struct((F.col("id") % 10000).cast("int").alias("last4")))
        .alias("member0"),
        F.when(F.col("id") % 2 == 1, F.struct(((F.col("id") % 500) / 4).cast("float")
                                              .alias("amount"))).alias("member1"),
    )  # fmt: skip
    pickup = F.struct(
        (F.col("id") % 265).cast("int").alias("zone"), F.lit("Manhattan").alias("borough")
    )
    trip = F.struct(F.col("id"), pickup.alias("pickup"), payment.alias("payment"))
    header = F.lit(bytearray(b"\x00" + TRIP_ID.to_bytes(4, "big")))
    value = F.concat(header, to_avro(trip, trip_schema()))
    base.select(*kafka_columns(value)).write.parquet(trips)
    return single, mixed, trips


def timed(df, repeat: int) -> list[float]:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    from spark_avro.decode import decode_confluent
    from tests.stack.spark import make_spark_session

    spark = make_spark_session("bench-reader")
    with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
        single_path, mixed_path, trips_path = stage(spark, args.rows, Path(tmp))
        single = spark.read.parquet(single_path)
        mixed = spark.read.parquet(mixed_path)
        trips = spark.read.parquet(trips_path)
        trip = trip_schema()
        stable = {"enableStableIdentifiersForUnionType": "true"}
        cases = {
            "baseline": single.select(
                from_avro(F.expr("substring(value, 6)"), V2).alias("r"),
                "key", "topic", "partition", "offset", "timestamp",
            ).select("r.*", "key", "topic", "partition", "offset", "timestamp"),
            "reader_single": decode_confluent(single, writer_schemas={V2_ID: V2}, reader_schema=V2),
            "reader_mixed": decode_confluent(
                mixed, writer_schemas={V1_ID: V1, V2_ID: V2}, reader_schema=V2
            ),
            "baseline_union": trips.select(
                from_avro(F.expr("substring(value, 6)"), trip, stable).alias("r"),
                "key", "topic", "partition", "offset", "timestamp",
            ).select("r.*", "key", "topic", "partition", "offset", "timestamp"),
            "reader_union": decode_confluent(
                trips, writer_schemas={TRIP_ID: trip}, reader_schema=trip
            ),
        }  # fmt: skip
        for df in cases.values():  # warm-up: JIT, file cache
            df.write.format("noop").mode("overwrite").save()
        # Round-robin over the cases so a busy moment on a shared machine hits all of them.
        seconds: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, df in cases.items():
                seconds[name].extend(timed(df, 1))
        results = {
            name: {
                "seconds": [round(s, 3) for s in runs],
                "median_s": round(statistics.median(runs), 3),
                "rows_per_s": round(args.rows / min(runs)),
                "rows_per_s_median": round(args.rows / statistics.median(runs)),
            }
            for name, runs in seconds.items()
        }
    for name, against in (
        ("reader_single", "baseline"),
        ("reader_mixed", "baseline"),
        ("reader_union", "baseline_union"),
    ):
        base, base_median = (results[against][k] for k in ("rows_per_s", "rows_per_s_median"))
        results[name]["overhead_vs_baseline"] = round(1 - results[name]["rows_per_s"] / base, 3)
        results[name]["overhead_vs_baseline_median"] = round(
            1 - results[name]["rows_per_s_median"] / base_median, 3
        )
    report = {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"{_cpus()} CPUs, Python {platform.python_version()}",
        "spark": spark.version,
        "master": spark.sparkContext.master,
        "rows": args.rows,
        "input": "Parquet-staged Confluent-framed bytes (Kafka not measured)",
        "rate": "rows / best (and median) wall time over the repeats, noop sink",
        "results": results,
    }
    spark.stop()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    main()
