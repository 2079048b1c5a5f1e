"""What 20 data-quality rules cost a Spark read: decode_confluent with vs without a rule set of
20 CEL CONDITIONs compiled to Spark SQL (spark_avro.rules), paired.

Said out loud: decoding and rules only, not Kafka. The taxi rides of bench_reader's
single-version topic (v2, Confluent-framed, staged once as Parquet by ``bench_reader.stage``)
are read with the ``noop`` sink forcing every column. Each repeat runs both cases back to back
(order alternating), and the figure is the median over repeats of the pair's ratio
time(rules) / time(plain): on a machine shared with other jobs a ratio of two neighbouring runs
is steadier than either time. Target: at most 1.25 (25 % over the read without rules). Each
read's CPU seconds (the JVM's, every thread) are paired the same way: less swayed than the wall
time by the other jobs sharing the machine.

    .venv/bin/python bench/bench_rules.py [--rows 3000000] [--repeat 7] [--json out.json]
                                          [--variants inline,inline-split] [--per-rule]

``--per-rule`` runs the stage over each rule alone (``alone:N``, N its place in the table) and
over every rule but one (``without:N``), the stage's shape over trivial conditions
(``skeleton``) and the conditions alone in the decode's stage (``passonly``): which rules, or
which part of the stage, cost.

``--variants`` adds experiments on the rule stage's shape (written here, not in
spark_avro/rulestage.py, so that the stage stays as it is until one of them is shown better),
run in the same repeats, each paired with the plain read it follows: see :data:`VARIANTS`. The
largest generated method of each case's whole stages is printed too (HotSpot compiles none over
8,000 bytes of bytecode).
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


def _refusal(staged, rules, at):  # type: ignore[no-untyped-def]
    """apply_rules' last projection: the refusing rule's reason, kind, raw value and DLQ topic
    from ``at`` (2 * its place + its code, or NULL), as rulestage writes it."""
    from pyspark.sql import functions as F

    from spark_avro.decode import ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN
    from spark_avro.rulestage import DLQ_COLUMN, RULE_KIND, VALUE_COLUMN

    staged = staged.select("*", at.alias("_rule_at"))
    place = F.col("_rule_at")
    refused = place.isNotNull()
    reasons = [reason for row in rules for reason in (row[1], row[2])]
    topics = [row[3] for row in rules]
    reason = F.when(refused, F.element_at(F.expr(f"array({', '.join(reasons)})"), place))
    topic = F.element_at(
        F.expr(f"array({', '.join(topics)})"), F.floor((place + 1) / 2).cast("int")
    )
    kept = (ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, "_rule_at", VALUE_COLUMN)
    return staged.select(
        *[c for c in staged.columns if c not in kept],
        F.coalesce(F.col(ERROR_COLUMN), reason).alias(ERROR_COLUMN),
        F.when(refused, F.lit(RULE_KIND)).otherwise(F.col(KIND_COLUMN)).alias(KIND_COLUMN),
        F.when(refused, F.col(VALUE_COLUMN)).otherwise(F.col(RAW_COLUMN)).alias(RAW_COLUMN),
        F.when(refused, topic).alias(DLQ_COLUMN),
    )


def _good() -> str:
    from spark_avro.decode import ERROR_COLUMN, TOMBSTONE_COLUMN

    return f"{ERROR_COLUMN} IS NULL AND NOT {TOMBSTONE_COLUMN}"


def _first(rules, places) -> str:  # type: ignore[no-untyped-def]
    """CASE over the rules at ``places``: 2 * place + code of the first that refuses. Each code
    is written twice, so Spark's subexpression elimination computes it once (and gives it a
    method of its own when its Java is longer than spark.sql.codegen.methodSplitThreshold)."""
    whens = " ".join(f"WHEN ({rules[i][0]}) > 0 THEN {2 * i} + ({rules[i][0]})" for i in places)
    return f"CASE {whens} END"


def variant_inline(decoded, rules):  # type: ignore[no-untyped-def]
    """No plan boundary, no projection of codes: every code inside one CASE, in the decode's
    whole stage (subexpression elimination gives each code one evaluation)."""
    from pyspark.sql import functions as F

    at = F.expr(f"CASE WHEN {_good()} THEN {_first(rules, range(len(rules)))} END")
    return _refusal(decoded, rules, at)


def _least_at(rules) -> str:  # type: ignore[no-untyped-def]
    """2 * place + code of the first rule that refuses, each code written once: ``least`` of
    each rule's ``element_at(array(NULL, 2i+1, 2i+2), code + 1)`` (NULL for a pass; ``least``
    skips NULLs)."""
    parts = [
        f"element_at(array(CAST(NULL AS INT), {2 * i + 1}, {2 * i + 2}), coalesce({row[0]}, 0) + 1)"
        for i, row in enumerate(rules)
    ]
    return parts[0] if len(parts) == 1 else f"least({', '.join(parts)})"


def variant_whole(decoded, rules):  # type: ignore[no-untyped-def]
    """No plan boundary: the first refusal as one ``least()`` in the decode's whole stage."""
    from pyspark.sql import functions as F

    return _refusal(decoded, rules, F.when(F.expr(_good()), F.expr(_least_at(rules))))


def variant_whole_fast(decoded, rules):  # type: ignore[no-untyped-def]
    """As ``whole``, the codes asked only when the AND of every rule's pass is not true."""
    from pyspark.sql import functions as F

    passes = " AND ".join(f"coalesce(({row[0]}) = 0, false)" for row in rules)
    at = f"CASE WHEN {_good()} AND NOT ({passes}) THEN {_least_at(rules)} END"
    return _refusal(decoded, rules, F.expr(at))


def variant_chain(decoded, rules, size=5):  # type: ignore[no-untyped-def]
    """No plan boundary: the rules in groups of ``size``, one projection a group, each group's
    first refusal (``least``) asked only of a judged record no earlier group refused. Each
    projection reads the one before it's ``_rule_at`` twice, so CollapseProject keeps them
    apart. Measured: whole-stage code generation still writes them into one method (11,400 to
    11,800 bytes for groups of 4, 5 and 10): a projection's ``doConsume`` gets a method of its
    own only when the projection reads every column of its child at least twice (Spark's
    ``ProjectExec.usedInputs``), and a projection passing the decoded columns through reads
    them once."""
    from pyspark.sql import functions as F

    from spark_avro.decode import ERROR_COLUMN, TOMBSTONE_COLUMN

    good = F.expr(f"CASE WHEN {TOMBSTONE_COLUMN} THEN false ELSE {ERROR_COLUMN} IS NULL END")
    frame = decoded.select("*", good.alias("_rule_good"))
    at = None
    for number, start in enumerate(range(0, len(rules), size)):
        group = F.expr(_least_at(rules[start : start + size]))
        shifted = group + 2 * start
        name = f"_rule_at{number}"
        if at is None:
            step = F.when(F.col("_rule_good"), shifted)
        else:
            step = F.when(F.col(at).isNull() & F.col("_rule_good"), shifted).otherwise(F.col(at))
        frame = frame.select("*", step.alias(name))
        at = name
    assert at is not None
    return _refusal(frame, rules, F.col(at))


def variant_twice(decoded, rules):  # type: ignore[no-untyped-def]
    """No plan boundary: the first refusal as ``least`` over each rule's place written twice in
    a ``greatest`` (children always evaluated), so that subexpression elimination computes it
    once, in a method of its own when its Java is long; gated by "judged" with an addition
    (``+ NULL`` for a record not judged), which keeps every rule out of a conditional branch."""
    from pyspark.sql import functions as F

    parts = [
        f"element_at(array(CAST(NULL AS INT), {2 * i + 1}, {2 * i + 2}), coalesce({row[0]}, 0) + 1)"
        for i, row in enumerate(rules)
    ]
    twice = [f"greatest({p}, {p})" for p in parts]
    at = f"least({', '.join(twice)}) + CASE WHEN {_good()} THEN 0 END"
    return _refusal(decoded, rules, F.expr(at))


def variant_skeleton(decoded, rules):  # type: ignore[no-untyped-def]
    """The committed stage over as many rules as the table holds, each a trivial condition
    (``vendorId`` against a constant no record holds): what the stage's shape costs (the
    boundary, the code columns, the first refusal, the bad-record assembly) without the
    conditions' own work."""
    from spark_avro.rulestage import apply_rules

    trivial = [
        (f"(CASE WHEN `vendorId` = {-1000 - i} THEN 1 ELSE 0 END)", *row[1:])
        for i, row in enumerate(rules)
    ]
    return apply_rules(decoded, trivial)


def variant_passonly(decoded, rules):  # type: ignore[no-untyped-def]
    """Diagnostic, not a verdict: only the AND of every rule's pass, one boolean column in the
    decode's own stage (no boundary, no codes, no reasons): what the 20 conditions cost at the
    least."""
    from pyspark.sql import functions as F

    from spark_avro.rulestage import VALUE_COLUMN

    passes = " AND ".join(f"coalesce(({row[0]}) = 0, false)" for row in rules)
    return decoded.select("*", F.expr(passes).alias("_rule_pass")).drop(VALUE_COLUMN)


def variant_onestep(decoded, rules, gated=True):  # type: ignore[no-untyped-def]
    """The rules and the bad-record assembly in ONE projection after the decode's stage (no
    code columns, no second stage): ``_rule_at`` (the first refusal) written without a lambda
    so that subexpression elimination computes it once for its four readers; with ``gated``,
    the codes are asked only when a rule refuses (an OR of each acting rule's "refuses", which
    Spark folds to the condition itself). The projection is kept out of the decode's whole
    stage by an ``exists()`` in the branch only a refused record takes (decode_error_kind), so
    that Spark generates it as a projection of its own (split into small methods)."""
    from pyspark.sql import functions as F

    from spark_avro.decode import ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, TOMBSTONE_COLUMN
    from spark_avro.rulestage import DLQ_COLUMN, RULE_KIND, VALUE_COLUMN

    acting = [(i, row) for i, row in enumerate(rules) if row[4]]
    first = " ".join(f"WHEN ({row[0]}) > 0 THEN {2 * i} + ({row[0]})" for i, row in acting)
    judged = f"{ERROR_COLUMN} IS NULL AND NOT {TOMBSTONE_COLUMN}"
    if gated:
        refuses = " OR ".join(f"coalesce(({row[0]}) > 0, FALSE)" for _, row in acting)
        at = F.expr(f"CASE WHEN {judged} AND ({refuses}) THEN CASE {first} END END")
    else:
        at = F.expr(f"CASE WHEN {judged} THEN CASE {first} END END")
    reasons = [reason for row in rules for reason in (row[1], row[2])]
    topics = [row[3] for row in rules]
    refused = at.isNotNull()
    reason = F.when(refused, F.element_at(F.expr(f"array({', '.join(reasons)})"), at))
    topic = F.element_at(F.expr(f"array({', '.join(topics)})"), F.floor((at + 1) / 2).cast("int"))
    boundary = F.expr(f"exists(array({TOMBSTONE_COLUMN}), t -> FALSE)")
    kind = F.when(refused, F.when(boundary, F.lit(None)).otherwise(F.lit(RULE_KIND)))
    kept = (ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, VALUE_COLUMN)
    return decoded.select(
        *[c for c in decoded.columns if c not in kept],
        F.coalesce(F.col(ERROR_COLUMN), reason).alias(ERROR_COLUMN),
        kind.otherwise(F.col(KIND_COLUMN)).alias(KIND_COLUMN),
        F.when(refused, F.col(VALUE_COLUMN)).otherwise(F.col(RAW_COLUMN)).alias(RAW_COLUMN),
        F.when(refused, topic).alias(DLQ_COLUMN),
    )


def variant_nocarry(decoded, rules):  # type: ignore[no-untyped-def]
    """Diagnostic, not a verdict: main's stage with the carried raw value nulled (a refused
    record gets no raw_value): what carrying every record's Avro bytes through the boundary's
    projection and the second stage costs (bench/README.md, the JFR profile)."""
    from pyspark.sql import functions as F

    from spark_avro.rulestage import VALUE_COLUMN, apply_rules

    return apply_rules(decoded.withColumn(VALUE_COLUMN, F.lit(None).cast("binary")), rules)


def variant_codecolumns(decoded, rules):  # type: ignore[no-untyped-def]
    """The stage as it was before the one projection (at 2d8d779, still the road of a table with
    TRANSFORMs): each rule's code in a column of the boundary's projection, the first refusal
    in the next stage, then the bad-record assembly."""
    from pyspark.sql import functions as F

    from spark_avro.decode import ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN
    from spark_avro.rulestage import (
        AT_COLUMN,
        DLQ_COLUMN,
        GOOD_COLUMN,
        RULE_KIND,
        VALUE_COLUMN,
        code_column,
        refusal,
        rule_codes,
    )

    staged = rule_codes(decoded, rules)
    staged = staged.drop(*(code_column(p) for p in range(len(rules))), GOOD_COLUMN)
    reason, topic = refusal(rules)
    refused = F.col(AT_COLUMN).isNotNull()
    kept = (ERROR_COLUMN, KIND_COLUMN, RAW_COLUMN, AT_COLUMN, VALUE_COLUMN)
    return staged.select(
        *[c for c in staged.columns if c not in kept],
        F.coalesce(F.col(ERROR_COLUMN), reason).alias(ERROR_COLUMN),
        F.when(refused, F.lit(RULE_KIND)).otherwise(F.col(KIND_COLUMN)).alias(KIND_COLUMN),
        F.when(refused, F.col(VALUE_COLUMN)).otherwise(F.col(RAW_COLUMN)).alias(RAW_COLUMN),
        topic.alias(DLQ_COLUMN),
    )


def _subset(places):  # type: ignore[no-untyped-def]
    """The committed stage over the rules at ``places`` of the table only."""

    def stage(decoded, rules):  # type: ignore[no-untyped-def]
        from spark_avro.rulestage import apply_rules

        return apply_rules(decoded, [rules[p] for p in places])

    return stage


def variant(name: str, count: int):  # type: ignore[no-untyped-def]
    """(the stage, SQL settings) of ``name``: one of VARIANTS, or ``alone:N`` (the committed
    stage with the table's rule N only) or ``without:N`` (every rule but N)."""
    if name.startswith(("alone:", "without:")):
        kind, _, place = name.partition(":")
        n = int(place)
        places = [n] if kind == "alone" else [p for p in range(count) if p != n]
        return _subset(places), {}
    return VARIANTS[name]


def per_rule(count: int) -> list[str]:
    """``--per-rule``: the stage's shape alone, the conditions alone, each rule alone and
    every rule but one."""
    return [
        "skeleton",
        "passonly",
        *(f"alone:{n}" for n in range(count)),
        *(f"without:{n}" for n in range(count)),
    ]


# the variants that do not give the committed stage's verdicts (no refusal count compared)
PARTIAL = ("skeleton", "passonly", "nocarry")

# name: (the stage, SQL settings while it runs)
VARIANTS = {
    "codecolumns": (variant_codecolumns, {}),
    "onestep": (variant_onestep, {}),
    "onestep-ungated": (lambda d, r: variant_onestep(d, r, gated=False), {}),
    "skeleton": (variant_skeleton, {}),
    "passonly": (variant_passonly, {}),
    "nocarry": (variant_nocarry, {}),
    "twice": (variant_twice, {}),
    "chain": (variant_chain, {}),
    "chain4": (lambda d, r: variant_chain(d, r, 4), {}),
    "chain10": (lambda d, r: variant_chain(d, r, 10), {}),
    "whole": (variant_whole, {}),
    "whole-fast": (variant_whole_fast, {}),
    "inline": (variant_inline, {}),
    "inline-split": (variant_inline, {"spark.sql.codegen.methodSplitThreshold": "128"}),
}


def _largest_methods(df) -> list[int]:  # type: ignore[no-untyped-def]
    stages = df._jdf.queryExecution().debug().codegenToSeq()
    return [int(stages.apply(i)._3().maxMethodCodeSize()) for i in range(stages.size())]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--variants",
        default="",
        help=f"also run: {', '.join(VARIANTS)}, alone:N, without:N (N: a place in the table)",
    )
    parser.add_argument(
        "--per-rule",
        action="store_true",
        help="also run skeleton, passonly, each rule alone and every rule but one",
    )
    args = parser.parse_args(argv)

    from bench_reader import V2, V2_ID, stage

    from schemacli.contracts.avro.loader import load_schema_text
    from schemacli.contracts.rules.model import parse_contract
    from spark_avro.decode import decode_confluent
    from spark_avro.rules import compile_rules, rule_table
    from spark_avro.rulestage import VALUE_COLUMN, decode_with_rules
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

        table = rule_table(compiled)
        cases = {
            "plain": plain(single),
            "rules": decode_with_rules(single, plain, table),
        }
        settings: dict[str, dict[str, str]] = {"plain": {}, "rules": {}}
        variants = [v for v in args.variants.split(",") if v]
        if args.per_rule:
            variants += [v for v in per_rule(len(table)) if v not in variants]
        carried = single.withColumn(VALUE_COLUMN, single["value"])
        for name in variants:
            stage_of, conf = variant(name, len(table))
            cases[name] = stage_of(plain(carried, (VALUE_COLUMN,)), table)
            settings[name] = conf

        jvm = int(spark._jvm.java.lang.ProcessHandle.current().pid())
        cpu: dict[str, list[float]] = {name: [] for name in cases}

        def run(name: str) -> float:
            """The wall seconds of one read; its CPU seconds (the JVM's, every thread: the
            tasks, the JIT, the GC) appended to ``cpu``: less swayed by the others' load."""
            for key, value in settings[name].items():
                spark.conf.set(key, value)
            try:
                before = _cpu_seconds(jvm)
                start = time.perf_counter()
                cases[name].write.format("noop").mode("overwrite").save()
                took = time.perf_counter() - start
                cpu[name].append(_cpu_seconds(jvm) - before)
                return took
            finally:
                for key in settings[name]:
                    spark.conf.unset(key)

        refused = {}
        methods = {}
        for name in cases:
            for key, value in settings[name].items():
                spark.conf.set(key, value)
            # a subset of the rules, the skeleton or a diagnostic refuses other records
            whole = name in ("plain", "rules") or name in VARIANTS and name not in PARTIAL
            refused[name] = cases[name].where("decode_error_kind = 'rule'").count() if whole else -1
            methods[name] = _largest_methods(cases[name])
            for key in settings[name]:
                spark.conf.unset(key)
            print(f"{name}: largest method per stage {methods[name]}, refused {refused[name]}",
                  flush=True)  # fmt: skip
        assert len({refused[n] for n in cases if n != "plain" and refused[n] >= 0}) == 1, refused
        for name in cases:  # warm-up: JIT, file cache
            run(name)
        cpu = {name: [] for name in cases}
        seconds: dict[str, list[float]] = {name: [] for name in cases}
        ratios, cpu_ratios = [], []
        variant_ratios: dict[str, list[float]] = {name: [] for name in variants}
        variant_cpu: dict[str, list[float]] = {name: [] for name in variants}
        for i in range(args.repeat):
            order = ["plain", "rules"] if i % 2 == 0 else ["rules", "plain"]
            pair = {}
            for name in order:
                pair[name] = run(name)
                seconds[name].append(pair[name])
            ratios.append(pair["rules"] / pair["plain"])
            pair_cpu = {name: cpu[name][-1] for name in order}
            cpu_ratios.append(pair_cpu["rules"] / pair_cpu["plain"])
            for name in variants:  # each paired with a plain read of its own, order alternating
                both = [name, "plain"] if i % 2 == 0 else ["plain", name]
                took = {n: run(n) for n in both}
                seconds[name].append(took[name])
                variant_ratios[name].append(took[name] / took["plain"])
                variant_cpu[name].append(cpu[name][-1] / cpu["plain"][-1])
                print(f"repeat {i}: {name} {took[name]:.2f} s, plain {took['plain']:.2f} s; "
                      f"cpu {cpu[name][-1]:.2f} s, plain {cpu['plain'][-1]:.2f} s",
                      flush=True)  # fmt: skip
            print(f"repeat {i}: rules {pair['rules']:.2f} s, plain {pair['plain']:.2f} s; "
                  f"cpu {pair_cpu['rules']:.2f} s, plain {pair_cpu['plain']:.2f} s",
                  flush=True)  # fmt: skip
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
        "table": [f"{c.rule.name}: {c.rule.expr}" for c in compiled],
        "records_refused_by_a_rule": refused["rules"],
        "largest_method_per_stage": methods,
        "input": "Parquet-staged Confluent-framed bytes (Kafka not measured)",
        "seconds": {k: [round(s, 3) for s in v] for k, v in seconds.items()},
        "pair_ratios": [round(r, 3) for r in ratios],
        "median_ratio_rules_over_plain": round(statistics.median(ratios), 3),
        "cpu_seconds": {k: [round(s, 3) for s in v] for k, v in cpu.items()},
        "cpu_pair_ratios": [round(r, 3) for r in cpu_ratios],
        "median_cpu_ratio_rules_over_plain": round(statistics.median(cpu_ratios), 3),
        "median_cpu_ratio_variant_over_plain": {
            k: round(statistics.median(v), 3) for k, v in variant_cpu.items()
        },
        "variant_pair_ratios": {k: [round(r, 3) for r in v] for k, v in variant_ratios.items()},
        "median_ratio_variant_over_plain": {
            k: round(statistics.median(v), 3) for k, v in variant_ratios.items()
        },
        "load_after": os.getloadavg()[0],
    }
    spark.stop()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


def _cpu_seconds(pid: int) -> float:
    """The CPU seconds (user + system, every thread) process ``pid`` has used (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()


if __name__ == "__main__":
    main()
