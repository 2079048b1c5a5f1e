"""Benchmark: compatibility checks (parse + check) per second, ours vs the avro package vs Java.

    .venv/bin/python bench/bench_compat.py [--pairs 2000] [--repeat 3] [--large-runs 30]

Three engines, each parsing both schemas from JSON text and checking reader against writer:
  * schemacli: ``schemacli.contracts.compat.check(reader_text, writer_text)``;
  * avro (PyPI): ``avro.schema.parse`` + ``avro.compatibility.ReaderWriterCompatibilityChecker``;
  * Java: Apache Avro 1.12 ``Schema.Parser`` + ``SchemaCompatibility`` in one warm JVM (the
    oracle harness, timed inside the JVM after a warm-up, so JVM start-up is excluded).
Workloads: the differential-test corpus (seeded generator, both directions; pairs any engine
cannot parse are left out for all engines) and one large pair: a 5-level record of 2,045 fields
read by an evolved copy (2,386 fields). Prints a Markdown snippet with the machine details.
Wall-clock times are medians; CPU time (process_time, the best of the runs) is given too, since
the machine may be shared: compare engines by CPU time. "Cold" empties schemacli's caches (parsed
texts and results, ``compat.clear_caches``) before every check. Not a test: nothing here asserts a
speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from schemacli.contracts.avro.parse import parse_schema  # noqa: E402
from schemacli.contracts.evolution.compat import check, clear_caches  # noqa: E402
from schemacli.errors import SchemaParseError  # noqa: E402
from schemacli.gcpolicy import collect_rarely  # noqa: E402
from tests.oracle.generator import pairs  # noqa: E402
from tests.oracle.oracle import Oracle  # noqa: E402


def large_record(levels: int = 5, branch: int = 4, primitives: int = 5, evolved: bool = False):
    """A record nested ``levels`` deep, ``branch`` sub-records and ``primitives`` fields each."""
    counter = [0]
    kinds = ["int", "long", "string", "double", "boolean"]

    def make(level: int) -> dict[str, Any]:
        counter[0] += 1
        number = counter[0]
        fields: list[dict[str, Any]] = [
            {"name": f"f{i}", "type": kinds[i % len(kinds)]} for i in range(primitives)
        ]
        if evolved:  # a promotion and a new optional field at every level
            fields[0]["type"] = "long"
            fields.append({"name": "added", "type": ["null", "string"], "default": None})
        if level < levels:
            fields += [{"name": f"child{b}", "type": make(level + 1)} for b in range(branch)]
        return {"type": "record", "name": f"R{number}", "namespace": "bench", "fields": fields}

    return make(1)


def count_fields(schema: dict[str, Any]) -> int:
    return sum(
        1 + (count_fields(f["type"]) if isinstance(f["type"], dict) else 0)
        for f in schema["fields"]
    )


def timed(fn, runs: int) -> tuple[float, float]:
    """(median wall seconds, minimum CPU seconds) of ``runs`` calls."""
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), min(cpus)


def avro_checker():
    import avro.schema
    from avro.compatibility import ReaderWriterCompatibilityChecker

    def run(reader_text: str, writer_text: str) -> None:
        reader = avro.schema.parse(reader_text)
        writer = avro.schema.parse(writer_text)
        ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)

    return run


def corpus(count: int, seed: int, java: Oracle) -> list[tuple[str, str]]:
    """Generated pairs in both directions that all three engines can parse and check.

    Pairs the avro package cannot check (it refuses ``error`` records, some logical types, ...)
    are left out for every engine.
    """
    avro_run = avro_checker()
    texts: list[tuple[str, str]] = []
    for a, b in pairs(seed, count):
        texts.append((json.dumps(a), json.dumps(b)))
        texts.append((json.dumps(b), json.dumps(a)))
    answers = java.ask_many(
        [{"op": "compat", "reader": {"text": r}, "writer": {"text": w}} for r, w in texts]
    )
    usable = []
    for (r, w), answer in zip(texts, answers, strict=True):
        if "parse_error" in answer or "error" in answer:
            continue
        try:
            parse_schema(r), parse_schema(w)
            avro_run(r, w)
        except (SchemaParseError, Exception):  # noqa: B014 - the avro package raises many types
            continue
        usable.append((r, w))
    return usable


def java_seconds(java: Oracle, work: list[tuple[str, str]], repeat: int) -> float:
    request = {
        "op": "bench_corpus",
        "repeat": repeat,
        "pairs": [[{"text": r}, {"text": w}] for r, w in work],
    }
    for _ in range(3):  # warm-up: let the JIT compile the parser and the checker
        java.ask(dict(request, repeat=max(1, repeat)))
    return java.ask(request)["ns"] / 1e9


def machine() -> dict[str, str]:
    cpu = cpu_model("unknown")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "load": load,
    }


def main() -> None:
    collect_rarely()  # as the CLI's entry point does (schemacli.gcpolicy)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000, help="generated pairs (x2 directions)")
    parser.add_argument("--seed", type=int, default=20251122)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the corpus")
    parser.add_argument("--large-runs", type=int, default=30)
    args = parser.parse_args()

    avro_run = avro_checker()
    with Oracle() as java:
        work = corpus(args.pairs, args.seed, java)
        n = len(work) * args.repeat

        def ours_corpus() -> None:
            # Cold: every check parses both texts (the parse cache is emptied before each).
            for _ in range(args.repeat):
                for r, w in work:
                    clear_caches()
                    check(r, w)

        def ours_cached() -> None:
            # As used: one pass, the text cache starting empty (each text occurs in two pairs).
            clear_caches()
            for r, w in work:
                check(r, w)

        def avro_corpus() -> None:
            for _ in range(args.repeat):
                for r, w in work:
                    avro_run(r, w)

        ours_corpus()  # warm caches the same way for everyone
        ours_wall, ours_cpu = timed(ours_corpus, 3)
        cached_wall, cached_cpu = timed(ours_cached, 3)
        avro_wall, avro_cpu = timed(avro_corpus, 3)
        java_wall = java_seconds(java, work, args.repeat)

        big_w = json.dumps(large_record())
        big_r = json.dumps(large_record(evolved=True))
        assert check(big_r, big_w).compatible

        def large_cold() -> None:
            clear_caches()
            check(big_r, big_w)

        large_ours = timed(large_cold, args.large_runs)
        large_avro = timed(lambda: avro_run(big_r, big_w), max(3, args.large_runs // 5))
        for _ in range(3):  # warm-up
            java.ask(
                {"op": "bench", "reader": {"text": big_r}, "writer": {"text": big_w}, "n": 100}
            )
        large_java = (
            java.ask(
                {"op": "bench", "reader": {"text": big_r}, "writer": {"text": big_w}, "n": 200}
            )["ns"]
            / 1e9
            / 200
        )

    m = machine()
    per_s = lambda seconds: n / seconds  # noqa: E731
    print(f"### Compatibility engine ({m['date']})\n")
    print(
        f"Machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, "
        f"load average during the run: {m['load']}.\n"
    )
    print(
        f"Corpus: {len(work)} generated reader/writer pairs (both directions, seed "
        f"{args.seed}) x {args.repeat} passes = {n} checks, each parsing both schemas from "
        "JSON text and checking.\n"
    )
    print("| engine | pairs/s (wall, median) | pairs/s (CPU time) | vs avro package (CPU) |")
    print("|---|---:|---:|---:|")
    once = len(work)
    print(
        f"| schemacli (cold: no parse cache) | {per_s(ours_wall):,.0f} | "
        f"{per_s(ours_cpu):,.0f} | {avro_cpu / ours_cpu:.1f}x |"
    )
    print(
        f"| schemacli (text parse cache, one pass) | {once / cached_wall:,.0f} | "
        f"{once / cached_cpu:,.0f} | {(avro_cpu / n) / (cached_cpu / once):.1f}x |"
    )
    print(
        f"| avro {_avro_version()} (PyPI) | {per_s(avro_wall):,.0f} | {per_s(avro_cpu):,.0f} "
        "| 1.0x |"
    )
    print(
        f"| Java avro 1.12.0 (warm JVM, timed in the JVM) | {per_s(java_wall):,.0f} | - | "
        f"{avro_wall / java_wall:.1f}x (wall) |"
    )
    print()
    fields_w = count_fields(json.loads(big_w))
    fields_r = count_fields(json.loads(big_r))
    print(
        f"Large pair: writer {fields_w} fields, reader {fields_r} fields, 5 levels "
        "(parse both + check):\n"
    )
    print("| engine | ms per check (wall, median) | ms (CPU, best) |")
    print("|---|---:|---:|")
    print(f"| schemacli (cold) | {large_ours[0] * 1000:.1f} | {large_ours[1] * 1000:.1f} |")
    print(
        f"| avro {_avro_version()} (PyPI) | {large_avro[0] * 1000:.1f} | "
        f"{large_avro[1] * 1000:.1f} |"
    )
    print(f"| Java avro 1.12.0 (warm JVM) | {large_java * 1000:.1f} | - |")


def _avro_version() -> str:
    from importlib.metadata import version

    return version("avro")


if __name__ == "__main__":
    main()
