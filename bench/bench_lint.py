"""`schemacli lint`: 1,000 files (target < 2 s), and one record of 1k/2k/5k/10k fields (linear?).

    .venv/bin/python bench/bench_lint.py [--files 1000] [--rounds 3]

(a) ``contracts.lint.lint_paths`` over N realistic files (the example taxi schema, the oracle
generator's realistic seeds and generated schemas, each written to its own file, with optional
fields lacking defaults so that findings and fixes are made), default rules, then the same with
``fix=True`` (the fix loop: apply, re-parse, re-lint). In-process, so the CLI's start-up
(bench_startup.py) is not in it; also the whole CLI once (``schemacli lint DIR -o json``) as a
subprocess.

(b) one record of F fields (a third optional without default, a third camelCase among snake_case,
a third plain) for F in 1,000, 2,000, 5,000, 10,000: lint, and lint with fixes. Linear means the
time per field stays flat across F.

Medians of ``--rounds`` runs after one warm-up (wall time, and process CPU time in ``cpu_s``);
printed and appended to bench/results/lint.jsonl.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schemacli.contracts.lint.engine import lint_paths  # noqa: E402
from schemacli.contracts.lint.ruleset import LintConfig  # noqa: E402
from tests.oracle.generator import Generator  # noqa: E402


def corpus(count: int, folder: Path) -> list[Path]:
    rng = random.Random(28)
    generator = Generator(28)
    seeds = [json.loads(p.read_text()) for p in sorted((ROOT / "schemas").rglob("*.avsc"))]
    paths = []
    for i in range(count):
        schema = seeds[i % len(seeds)] if i % 3 == 0 else generator.schema()
        text = json.dumps(schema, indent=2)
        if rng.random() < 0.5:
            text = text.replace(', "default": null', "")  # optional fields without a default
        path = folder / f"s{i:05d}.avsc"
        path.write_text(text)
        paths.append(path)
    return paths


def wide_record(fields: int) -> str:
    out = []
    for i in range(fields):
        if i % 3 == 0:
            out.append({"name": f"opt_{i}", "type": ["null", "long"]})
        elif i % 3 == 1:
            out.append({"name": f"camelName{i}", "type": "string"})
        else:
            out.append({"name": f"plain_{i}", "type": "int", "doc": "a count"})
    schema = {"type": "record", "name": "Wide", "namespace": "bench", "fields": out}
    return json.dumps(schema, indent=2)


CPU: dict[str, float] = {}  # the same medians in process CPU time (less moved by the load)


def timed(fn, rounds: int, name: str = "") -> float:
    fn()  # warm-up
    runs, cpu = [], []
    for _ in range(rounds):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        runs.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    if name:
        CPU[name] = round(statistics.median(cpu), 4)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    config = LintConfig()
    results: dict[str, object] = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load": os.getloadavg()[0],
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = corpus(args.files, folder)
        report = lint_paths(paths, config)
        results["files"] = len(paths)
        results["findings"] = len(report.findings)
        results["lint_files_s"] = timed(
            lambda: lint_paths(paths, config), args.rounds, "lint_files"
        )
        results["fix_files_s"] = timed(
            lambda: lint_paths(paths, config, fix=True), args.rounds, "fix_files"
        )
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "schemacli", "lint", str(folder), "-o", "json"],
            cwd=tmp,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        results["cli_files_s"] = time.perf_counter() - started
        curve = []
        for size in (1000, 2000, 5000, 10000):
            path = folder / f"wide{size}.avsc"
            path.write_text(wide_record(size))
            lint_s = timed(lambda p=path: lint_paths([p], config), args.rounds, f"lint_{size}")
            fix_s = timed(
                lambda p=path: lint_paths([p], config, fix=True), args.rounds, f"fix_{size}"
            )
            curve.append(
                {
                    "fields": size,
                    "lint_s": round(lint_s, 4),
                    "fix_s": round(fix_s, 4),
                    "lint_us_per_field": round(lint_s / size * 1e6, 1),
                    "fix_us_per_field": round(fix_s / size * 1e6, 1),
                }
            )
        results["wide"] = curve
        results["cpu_s"] = CPU
    line = json.dumps(results)
    print(json.dumps(results, indent=2))
    out = ROOT / "bench/results/lint.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a") as handle:
        handle.write(line + "\n")


if __name__ == "__main__":
    main()
