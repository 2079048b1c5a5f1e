"""Where the JVM's CPU goes in bench_rules.py's cases: one JFR recording (settings=profile) a case.

    .venv/bin/python bench/profile_rules.py --rows 1000000 --runs 5 --out DIR \\
        [--cases plain,rules,skeleton,passonly]
    .venv/bin/python bench/profile_rules.py --summarise DIR/rules.jfr   # again, offline

Said out loud: the same staged Parquet of v2 taxi rides and the same stages as bench_rules.py
(decoding and rules only, not Kafka; ``noop`` sink), in one local[2] Spark JVM (the tasks run in
the driver's JVM). Each case is read once to warm up (JIT, file cache; the first case
``--warmup`` times, the JVM being cold), then read ``--runs`` times inside a JFR recording of
its own, started and dumped from the JVM itself (jdk.jfr), so that one case's samples are not
mixed with another's. Each recording's execution samples of the task threads (the JIT's and the
GC's threads are not sampled: their CPU shows only in the CPU seconds printed beside) are
summarised, the first read of each recording left out (starting JFR's profile slows it): the
top frames; the samples by the generated code they run under (the innermost ``GeneratedClass``
frame: a whole stage's ``processNext``, or a projection Spark generates outside whole stages,
``SpecificUnsafeProjection``), with the top frames under each; the share of samples in the
interpreter; and inclusive shares of the parts of the read (:data:`PARTS`). The generated
code's sizes (``codegenToSeq``) and the count of whole stages are printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# part of the read: substrings of a frame's "class.method"; a sample counts for a part when any
# frame of its stack holds one (inclusive: parts overlap, the total is not 100 %)
PARTS = {
    "decode (Avro datum reader, from_avro)": ("org.apache.avro.", "org.apache.spark.sql.avro."),
    "Parquet scan": ("org.apache.parquet.", "VectorizedParquet", "datasources.parquet."),
    "generated whole-stage code": ("GeneratedIteratorForCodegenStage",),
    "generated projection (SpecificUnsafeProjection)": ("SpecificUnsafeProjection",),
    "interpreted projection / expressions": (
        "InterpretedUnsafeProjection",
        "InterpretedMutableProjection",
        "InterpretedSafeProjection",
        ".eval(",
    ),
    "higher-order functions / lambdas": (
        "HigherOrderFunction",
        "ArrayExists",
        "LambdaFunction",
        "NamedLambdaVariable",
    ),
    "UnsafeRow writing / copying": ("UnsafeRowWriter", "UnsafeWriter", "UnsafeRow.copy"),
    "regular expressions": ("java.util.regex.",),
    "noop sink / task write loop": ("noop.", "WriteToDataSourceV2", "DataWritingSparkTask"),
}


def _frame_name(frame: dict) -> str:  # type: ignore[type-arg]
    method = frame["method"]
    return f"{method['type']['name'].replace('/', '.')}.{method['name']}("


def summarise(recording: Path, skip: float = 0.0, top: int = 12) -> dict:  # type: ignore[type-arg]
    """The execution samples of ``recording`` from ``skip`` seconds after its first one (the
    first read of a recording runs slower: starting JFR's profile costs it): counts by top
    frame, by the generated code they run under, by part (inclusive), and the shares run in
    the bytecode interpreter."""
    text = subprocess.run(
        ["jfr", "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample",
         str(recording)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    events = json.loads(text)["recording"]["events"]

    def at(event: dict) -> float:  # type: ignore[type-arg]
        stamp = event["values"]["startTime"].rstrip("Z")
        whole, _, fraction = stamp.partition(".")
        return datetime.fromisoformat(whole).timestamp() + float("0." + (fraction or "0"))

    since = min((at(e) for e in events), default=0.0) + skip
    events = [e for e in events if at(e) >= since]
    tops: Counter[str] = Counter()
    owner: Counter[str] = Counter()
    under: dict[str, Counter[str]] = {}
    parts: Counter[str] = Counter()
    interpreted = 0
    generated_interpreted = 0
    samples = 0
    for event in events:
        frames = (event["values"].get("stackTrace") or {}).get("frames") or []
        if not frames:
            continue
        thread = (event["values"].get("sampledThread") or {}).get("javaName") or ""
        if not thread.startswith("Executor task launch worker"):
            continue
        samples += 1
        names = [_frame_name(f) for f in frames]
        tops[names[0]] += 1
        generated = next((n for n in names if "GeneratedClass$" in n), "(none)")
        code = generated.split("GeneratedClass$")[-1].split(".")[0]
        owner[code] += 1
        under.setdefault(code, Counter())[names[0]] += 1
        if frames[0].get("type") == "Interpreted":
            interpreted += 1
        if any("GeneratedClass" in n and f.get("type") == "Interpreted"
               for n, f in zip(names, frames, strict=True)):  # fmt: skip
            generated_interpreted += 1
        joined = " ".join(names)
        for part, keys in PARTS.items():
            if any(k in joined for k in keys):
                parts[part] += 1
    share = 100.0 / samples if samples else 0.0
    return {
        "samples": samples,
        "top_frames": [(n, round(c * share, 1)) for n, c in tops.most_common(top)],
        "by_generated_code": {
            code: {
                "percent": round(c * share, 1),
                "top_frames": [(n, round(k * share, 1)) for n, k in under[code].most_common(8)],
            }
            for code, c in owner.most_common()
        },
        "parts_inclusive_percent": {p: round(parts[p] * share, 1) for p in PARTS},
        "top_frame_interpreted_percent": round(interpreted * share, 1),
        "generated_code_interpreted_percent": round(generated_interpreted * share, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--runs", type=int, default=5, help="reads a recording (the first left out)"
    )
    parser.add_argument("--warmup", type=int, default=4, help="reads before the first case")
    parser.add_argument("--cases", default="plain,rules,skeleton,passonly")
    parser.add_argument("--out", type=Path, required=True, help="recordings and summary.json")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    from bench_reader import V2, V2_ID, stage
    from bench_rules import _cpu_seconds, _largest_methods, contract_text, variant

    from schemacli.contracts.avro.loader import load_schema_text
    from schemacli.contracts.rules.model import parse_contract
    from spark_avro.decode import decode_confluent
    from spark_avro.rules import compile_rules, rule_table
    from spark_avro.rulestage import VALUE_COLUMN, decode_with_rules
    from tests.stack.spark import make_spark_session

    contract = parse_contract(contract_text(), "bench.contract.json")
    table = rule_table(compile_rules(contract, load_schema_text(V2, "v2").schema, "READ"))
    spark = make_spark_session("profile-rules")
    jvm = spark._jvm
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    report: dict[str, dict] = {}  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory(prefix="profile-rules-") as tmp:
        single_path, _, _ = stage(spark, args.rows, Path(tmp))
        single = spark.read.parquet(single_path)

        def plain(frame, carried=()):  # type: ignore[no-untyped-def]
            return decode_confluent(
                frame, writer_schemas={V2_ID: V2}, reader_schema=V2, passthrough=carried
            )

        carried = single.withColumn(VALUE_COLUMN, single["value"])
        for name in args.cases.split(","):
            if name == "plain":
                frame = plain(single)
            elif name == "rules":
                frame = decode_with_rules(single, plain, table)
            else:
                stage_of, _ = variant(name, len(table))
                frame = stage_of(plain(carried, (VALUE_COLUMN,)), table)
            plan = frame._jdf.queryExecution().executedPlan().toString()
            for _ in range(args.warmup if not report else 1):  # JIT, file cache
                frame.write.format("noop").mode("overwrite").save()
            config = jvm.jdk.jfr.Configuration.getConfiguration("profile")
            recording = jvm.jdk.jfr.Recording(config)
            recording.start()
            cpu, wall = [], []
            for _ in range(args.runs):
                before, start = _cpu_seconds(pid), time.perf_counter()
                frame.write.format("noop").mode("overwrite").save()
                wall.append(round(time.perf_counter() - start, 3))
                cpu.append(round(_cpu_seconds(pid) - before, 3))
            recording.stop()
            path = args.out / f"{name}.jfr"
            recording.dump(jvm.java.io.File(str(path)).toPath())
            recording.close()
            report[name] = {
                "wall_s": wall,
                "cpu_s": cpu,
                "largest_method_per_stage": _largest_methods(frame),
                "whole_stages": plan.count("*("),
                "plan": plan,
                "load": os.getloadavg()[0],
            }
            methods = report[name]["largest_method_per_stage"]
            print(f"{name}: wall {wall} cpu {cpu} methods {methods}", flush=True)
    spark.stop()
    for name in report:
        report[name]["profile"] = summarise(args.out / f"{name}.jfr", report[name]["wall_s"][0])
    (args.out / "summary.json").write_text(json.dumps(report, indent=2) + "\n")
    for name, item in report.items():
        prof = item["profile"]
        print(f"\n== {name}: {prof['samples']} samples, cpu {item['cpu_s']}, "
              f"methods {item['largest_method_per_stage']}, whole stages {item['whole_stages']}, "
              f"top frame interpreted {prof['top_frame_interpreted_percent']} %, generated "
              f"code interpreted {prof['generated_code_interpreted_percent']} %")  # fmt: skip
        for part, pct in prof["parts_inclusive_percent"].items():
            print(f"   {pct:5.1f} %  {part}")
        print("  top frames:")
        for n, pct in prof["top_frames"]:
            print(f"   {pct:5.1f} %  {n}")
        print("  by the generated code they run under (top frames under each):")
        for code, item in prof["by_generated_code"].items():
            print(f"   {item['percent']:5.1f} %  {code}")
            for n, pct in item["top_frames"]:
                print(f"            {pct:5.1f} %  {n}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--summarise"]:  # again, from recordings already made
        for path in map(Path, sys.argv[2:]):
            wall = json.loads((path.parent / "summary.json").read_text())[path.stem]["wall_s"]
            print(path, json.dumps(summarise(path, wall[0]), indent=1))
    else:
        main()
