"""What 20 data-quality rules cost a Spark read: decode_confluent with vs without a rule set of
20 CEL CONDITIONs compiled to Spark SQL (spark_avro.rules), paired.

Said out loud: decoding and rules only, not Kafka. The taxi rides of bench_reader's
single-version topic (v2, Confluent-framed, staged once as Parquet by ``bench_reader.stage``)
are read with the ``noop`` sink forcing every column. Each repeat runs both cases back to back
(order alternating), and the figure is the median over repeats of the pair's ratio
time(rules) / time(plain): on a machine shared with other jobs a ratio of two neighbouring runs
is steadier than either time. Target: at most 1.25 (25 % over the read without rules).

    .venv/bin/python bench/bench_rules.py [--rows 3000000] [--repeat 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# 20 conditions over the v2 taxi ride, as a producer's contract would hold them: ranges, null
# checks, membership, cross-field comparisons, a regular expression, guards.
CONDITIONS = [
    "message.vendorId >= 1 && message.vendorId <= 5",
    "message.passenger_count >= 1",
    "message.passenger_count <= 9",
    "message.trip_distance >= 0.0",
    "message.trip_distance < 1000.0",
    "message.payment_type in [1, 2, 3, 4, 5, 6]",
    "message.total_amount >= 0.0",
    "message.total_amount < 100000.0",
    "message.tip_amount >= 0.0",
    "message.tip_amount <= message.total_amount + 1.0",
    "message.store_and_fwd_flag == null || message.store_and_fwd_flag in ['Y', 'N']",
    "message.store_and_fwd_flag == null || message.store_and_fwd_flag.size() == 1",
    "message.payment_type == 2 ; message.tip_amount == 0.0 || message.total_amount > 0.0",
    "message.trip_distance > 0.0 || message.total_amount >= 0.0",
    "!(message.vendorId == 0)",
    "message.passenger_count * 100 < 1000",
    "message.vendorId != 3 || message.payment_type != 7",
    "message.store_and_fwd_flag == null || message.store_and_fwd_flag.matches('^[YN]$')",
    "message.total_amount >= message.tip_amount - 1.0",
    "message.vendorId % 7 != 6",
]


def contract_text() -> str:
    rules = [
        {
            "name": f"rule{i:02d}",
            "kind": "CONDITION",
            "mode": "READ",
            "type": "CEL",
            "expr": e,
            "onFailure": "ERROR",
        }  # fmt: skip
        for i, e in enumerate(CONDITIONS)
    ]
    return json.dumps({"ruleSet": {"domainRules": rules}}, indent=2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from bench_reader import V2, V2_ID, stage

    from schemacli.contracts.avro.loader import load_schema_text
    from schemacli.contracts.rules.model import parse_contract
    from spark_avro.decode import decode_confluent
    from spark_avro.rules import compile_rules, rule_table
    from spark_avro.rulestage import decode_with_rules
    from tests.stack.spark import make_spark_session

    contract = parse_contract(contract_text(), "bench.contract.json")
    compiled = compile_rules(contract, load_schema_text(V2, "v2").schema, "READ")
    assert len(compiled) == 20
    spark = make_spark_session("bench-rules")
    with tempfile.TemporaryDirectory(prefix="bench-rules-") as tmp:
        single_path, _, _ = stage(spark, args.rows, Path(tmp))
        single = spark.read.parquet(single_path)

        def plain(frame, carried=()):
            return decode_confluent(
                frame, writer_schemas={V2_ID: V2}, reader_schema=V2, passthrough=carried
            )

        cases = {
            "plain": plain(single),
            "rules": decode_with_rules(single, plain, rule_table(compiled)),
        }
        refused = cases["rules"].where("decode_error_kind = 'rule'").count()
        for df in cases.values():  # warm-up: JIT, file cache
            df.write.format("noop").mode("overwrite").save()
        seconds: dict[str, list[float]] = {name: [] for name in cases}
        ratios = []
        for i in range(args.repeat):
            order = ["plain", "rules"] if i % 2 == 0 else ["rules", "plain"]
            pair = {}
            for name in order:
                start = time.perf_counter()
                cases[name].write.format("noop").mode("overwrite").save()
                pair[name] = time.perf_counter() - start
                seconds[name].append(pair[name])
            ratios.append(pair["rules"] / pair["plain"])
    report = {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _commit(),
        "load_before": os.getloadavg()[0],
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}, "
        f"{len(os.sched_getaffinity(0))} CPUs, Python {platform.python_version()}",
        "spark": spark.version,
        "master": spark.sparkContext.master,
        "rows": args.rows,
        "rules": len(compiled),
        "records_refused_by_a_rule": refused,
        "input": "Parquet-staged Confluent-framed bytes (Kafka not measured)",
        "seconds": {k: [round(s, 3) for s in v] for k, v in seconds.items()},
        "pair_ratios": [round(r, 3) for r in ratios],
        "median_ratio_rules_over_plain": round(statistics.median(ratios), 3),
        "load_after": os.getloadavg()[0],
    }
    spark.stop()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


def _commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()


if __name__ == "__main__":
    main()
