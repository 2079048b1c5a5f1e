"""What a filter over the rules' result costs: ``split_bad_records`` over ``decode_with_rules``
(20 CEL CONDITIONs, bench_rules' table) beside the unfiltered reads, on bench_reader's taxi
rides staged as Parquet.

Said out loud: one process, one Spark session, each query once per repeat; wall and the JVM's
CPU seconds. bench_rules.py times the ``noop`` write, which holds no filter; a user who routes
bad records (``split_bad_records``, a ``where`` on ``decode_error_kind``) adds one, and a filter
Spark pushed below the rules decoded each record once for every time the condition named a
decoded column (``from_avro`` 391 times in the plan, 20-150x the read). The plan's
``from_avro`` count is printed with each case (1 means each record is decoded once).

    .venv/bin/python bench/bench_rules_filtered.py [--rows 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_rules  # noqa: E402
from bench_reader import V2, V2_ID, stage  # noqa: E402

from schemacli.contracts.avro.loader import load_schema_text  # noqa: E402
from schemacli.contracts.rules.model import parse_contract  # noqa: E402
from spark_avro.decode import decode_confluent, split_bad_records  # noqa: E402
from spark_avro.rules import compile_rules, rule_table  # noqa: E402
from spark_avro.rulestage import decode_with_rules  # noqa: E402
from tests.stack.spark import make_spark_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    contract = parse_contract(bench_rules.contract_text(), "bench.contract.json")
    schema = load_schema_text(V2, "v2").schema
    table = rule_table(compile_rules(contract, schema, "READ"))
    spark = make_spark_session("bench-rules-filtered")
    spark.conf.set("spark.sql.debug.maxToStringFields", "100000")
    jvm = int(spark._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        path, _, _ = stage(spark, args.rows, Path(tmp))
        raw = spark.read.parquet(path)

        def plain(frame, carried=()):
            return decode_confluent(
                frame, writer_schemas={V2_ID: V2}, reader_schema=V2, passthrough=carried
            )

        ruled = decode_with_rules(raw, plain, table)
        cases = {
            "plain noop": (plain(raw), lambda df: df.write.format("noop").mode("overwrite").save()),
            "rules noop": (ruled, lambda df: df.write.format("noop").mode("overwrite").save()),
            "rules split good count": (split_bad_records(ruled)[0], lambda df: df.count()),
            "rules kind=rule count": (
                ruled.where("decode_error_kind = 'rule'"),
                lambda df: df.count(),
            ),
            "plain split good count": (split_bad_records(plain(raw))[0], lambda df: df.count()),
        }
        for repeat in range(args.repeat):
            for name, (frame, run) in cases.items():
                plan = frame._jdf.queryExecution().optimizedPlan().toString()  # type: ignore[attr-defined]
                cpu = bench_rules._cpu_seconds(jvm)
                start = time.perf_counter()
                run(frame)
                wall = time.perf_counter() - start
                cpu = bench_rules._cpu_seconds(jvm) - cpu
                print(
                    f"repeat {repeat} rows {args.rows} {name:24s} wall {wall:6.2f} s "
                    f"cpu {cpu:6.2f} s from_avro {plan.count('from_avro(')}",
                    flush=True,
                )
    spark.stop()


if __name__ == "__main__":
    main()
