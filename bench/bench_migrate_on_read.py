"""Rows/s of migrate on read (``spark_avro.migrate.decode_migrated``) against a plain read.

What is measured, said out loud: decoding and converting only, not Kafka. N taxi rides are
framed the Confluent way (body written by Spark's ``to_avro``) and staged once as Parquet; every
run reads that Parquet and forces every output column with the ``noop`` sink. The mapping is the
example one (``examples/mappings/taxi-ride-v2-to-v1.yaml``: ``total_amount`` parsed from a
string, one in 50 not a number).

* ``plain_v2``: ``decode_confluent`` of the all-v2 topic into v2 (the read without migration);
* ``migrate_v2``: ``decode_migrated`` of the same topic: decoded into v2, converted to v1;
* ``plain_mixed``: ``decode_confluent`` of a half-v1, half-v2 topic into v2 (v1 rides are
  bad records there: v2 cannot read them);
* ``migrate_mixed``: ``decode_migrated`` of the mixed topic: v1 rides read as written, v2 rides
  converted.

    .venv/bin/python bench/bench_migrate_on_read.py [--rows 1000000] [--repeat 5] [--json out.json]
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

MAPPING = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
V1_ID, V2_ID = 1, 2


def stage(spark, rows: int, directory: Path, v1: str, v2: str) -> tuple[str, str]:
    """Write the all-v2 and the mixed topic as Parquet; return their paths."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    amount = (F.col("id") % 1000) / 8
    base = spark.range(rows).select(
        F.col("id"),
        (F.col("id") % 5 + 1).cast("int").alias("vendorId"),
        (F.col("id") % 4 + 1).cast("int").alias("passenger_count"),
        ((F.col("id") % 100) / 10).cast("float").alias("trip_distance"),
        (F.col("id") % 2 + 1).cast("int").alias("payment_type"),
        amount.cast("float").alias("v1_amount"),
        F.when(F.col("id") % 50 == 7, F.lit("n/a"))
        .otherwise(amount.cast("string"))
        .alias("v2_amount"),
    )
    head = ["vendorId", "passenger_count", "trip_distance", "payment_type"]

    def framed(schema_id: int, schema: str, amount_column: str):
        header = F.lit(bytearray(b"\x00" + schema_id.to_bytes(4, "big")))
        record = F.struct(*head, F.col(amount_column).alias("total_amount"))
        return F.concat(header, to_avro(record, schema))

    def kafka_columns(value):
        return [
            F.lit(None).cast("binary").alias("key"),
            value.alias("value"),
            F.lit("taxi-rides-v2").alias("topic"),
            F.lit(0).alias("partition"),
            F.col("id").alias("offset"),
            F.current_timestamp().alias("timestamp"),
        ]

    only_v2 = str(directory / "v2.parquet")
    mixed = str(directory / "mixed.parquet")
    base.select(*kafka_columns(framed(V2_ID, v2, "v2_amount"))).write.parquet(only_v2)
    value = F.when(F.col("id") % 2 == 0, framed(V1_ID, v1, "v1_amount")).otherwise(
        framed(V2_ID, v2, "v2_amount")
    )
    base.select(*kafka_columns(value)).write.parquet(mixed)
    return only_v2, mixed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from converters.onread import load_migration
    from spark_avro.decode import decode_confluent
    from spark_avro.migrate import decode_migrated
    from tests.stack.spark import make_spark_session

    migration = load_migration(MAPPING)
    v1, v2 = migration.target_schema, migration.source_schema
    spark = make_spark_session("bench-migrate-on-read")
    with tempfile.TemporaryDirectory(prefix="bench-migrate-") as tmp:
        v2_path, mixed_path = stage(spark, args.rows, Path(tmp), v1, v2)
        only_v2, mixed = spark.read.parquet(v2_path), spark.read.parquet(mixed_path)

        def migrated(df, writers):
            return decode_migrated(
                df,
                writer_schemas=writers,
                v1_ids=tuple(i for i in writers if i == V1_ID),
                source_schema=v2,
                target_schema=v1,
                columns=migration.columns,
                error_sql=migration.error_sql,
            )

        both = {V1_ID: v1, V2_ID: v2}
        cases = {
            "plain_v2": decode_confluent(only_v2, writer_schemas={V2_ID: v2}, reader_schema=v2),
            "migrate_v2": migrated(only_v2, {V2_ID: v2}),
            "plain_mixed": decode_confluent(mixed, writer_schemas=both, reader_schema=v2),
            "migrate_mixed": migrated(mixed, both),
        }
        for df in cases.values():  # warm-up: JIT, file cache
            df.write.format("noop").mode("overwrite").save()
        seconds: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):  # round-robin: a busy moment hits every case
            for name, df in cases.items():
                start = time.perf_counter()
                df.write.format("noop").mode("overwrite").save()
                seconds[name].append(time.perf_counter() - start)
        results = {
            name: {
                "seconds": [round(s, 3) for s in runs],
                "rows_per_s_median": round(args.rows / statistics.median(runs)),
            }
            for name, runs in seconds.items()
        }
    for name, against in (("migrate_v2", "plain_v2"), ("migrate_mixed", "plain_mixed")):
        results[name]["share_of_plain_median"] = round(
            results[name]["rows_per_s_median"] / results[against]["rows_per_s_median"], 3
        )
    report = {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}",
        "spark": spark.version,
        "master": spark.sparkContext.master,
        "rows": args.rows,
        "results": results,
    }
    spark.stop()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
