"""`check --fix` (issue #28): suggesting, proving and applying fixes, on the real-world corpus and
on a 10,000-field record.

* corpus: the real-world pairs the fix differential test uses (the store's taxi-rides subject,
  the breaking migration schema, the kind fixtures, Java's quirks, the union of records), each at
  BACKWARD, FORWARD and FULL: ``fixing.fix_candidate`` in process (suggest every finding's
  fixes, prove each against every comparison of the level, apply, re-check), best and median of
  several rounds over the whole corpus;
* wide: one record of N fields (1,000 / 5,000 / 10,000) whose candidate adds K fields without a
  default, removes an enum symbol and changes one type (K+2 findings), at FULL: the same call,
  so the growth with N shows (the field road proves the field fixes on the fields they touch;
  the enum's, on the whole schema, a bounded number of times); bench_fix_scale.py has the
  curve over the number of findings;
* cli: ``schemacli check --fix`` on the 10,000-field candidate in a store, whole subprocess.

Times are CPU-bound and in-process (time.perf_counter), best and median of ``--runs``.

    .venv/bin/python bench/bench_check_fix.py [--runs 5] [--fields 1000,5000,10000] [--added 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schemacli.contracts.avro.loader import load_schema_text  # noqa: E402
from schemacli.contracts.evolution import compat  # noqa: E402
from schemacli.contracts.evolution.levels import Level  # noqa: E402
from schemacli.contracts.fixes.fixing import fix_candidate  # noqa: E402

TYPES = ["int", "long", "float", "double", "string", "boolean"]


def corpus() -> list[tuple[str, list[str], str]]:
    from tests.oracle.test_fix_differential import _real_world

    return list(_real_world())


def wide(fields: int, added: int) -> tuple[str, str]:
    old = {
        "type": "record",
        "name": "Wide",
        "namespace": "bench",
        "fields": [{"name": f"f{i}", "type": TYPES[i % len(TYPES)]} for i in range(fields)]
        + [{"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}}],
    }
    new = json.loads(json.dumps(old))
    new["fields"][1]["type"] = "string"  # long -> string: a TYPE_MISMATCH both ways
    new["fields"][-1]["type"]["symbols"] = ["A"]  # MISSING_ENUM_SYMBOLS (BACKWARD)
    new["fields"] += [{"name": f"added{i}", "type": "string"} for i in range(added)]
    return json.dumps(old, indent=2) + "\n", json.dumps(new, indent=2) + "\n"


def fix_once(history: list[str], candidate: str, level: Level) -> int:
    loaded = [load_schema_text(t, f"v{i}.avsc", version=i) for i, t in enumerate(history, 1)]
    cand = load_schema_text(candidate, "candidate.avsc")
    return len(fix_candidate(cand, loaded, subject="s", level=level).applied)


CPU: list[float] = []  # the CPU seconds of the last timed() call's runs


def timed(fn, runs: int) -> tuple[float, float, object]:
    """Best and median wall time of ``runs`` calls, and the last result; their CPU times in
    CPU (a busy shared machine stretches wall time, CPU time much less)."""
    times, result = [], None
    CPU.clear()
    for _ in range(runs):
        compat.clear_caches()
        started, cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - started)
        CPU.append(time.process_time() - cpu)
    return min(times), statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fields", default="1000,5000,10000")
    parser.add_argument("--added", type=int, default=10)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")

    pairs = corpus()
    levels = (Level.BACKWARD, Level.FORWARD, Level.FULL)

    def whole_corpus() -> int:
        return sum(fix_once(h, c, lv) for _, h, c in pairs for lv in levels)

    best, median, applied = timed(whole_corpus, args.runs)
    checks = len(pairs) * len(levels)
    print(
        f"corpus: {len(pairs)} pairs x 3 levels = {checks} fixes runs, {applied} fixes applied: "
        f"best {best * 1000:.1f} ms, median {median * 1000:.1f} ms "
        f"({median / checks * 1000:.2f} ms per run); CPU median "
        f"{statistics.median(CPU) * 1000:.1f} ms"
    )
    for n in (int(x) for x in args.fields.split(",")):
        old, new = wide(n, args.added)
        best, median, applied = timed(
            lambda old=old, new=new: fix_once([old], new, Level.FULL), args.runs
        )
        cpu = statistics.median(CPU)
        check_best, check_median, _ = timed(
            lambda old=old, new=new: compat.check(
                load_schema_text(new, "n").schema, load_schema_text(old, "o").schema
            ),
            args.runs,
        )
        print(
            f"wide {n:>6} fields, {args.added + 2} findings at FULL, {applied} fixes applied: "
            f"best {best * 1000:.0f} ms, median {median * 1000:.0f} ms, CPU median "
            f"{cpu * 1000:.0f} ms (one parse+check of the pair: {check_median * 1000:.1f} ms)"
        )
    old, new = wide(10_000, args.added)
    folder = Path(tempfile.mkdtemp(prefix="bench-fix-"))
    try:
        subject = folder / "schemas" / "subjects" / "wide-value"
        subject.mkdir(parents=True)
        (subject / "v1.avsc").write_text(old)
        times = []
        for _ in range(args.runs):
            (folder / "wide.avsc").write_text(new)
            started = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "schemacli",
                    "check",
                    "wide.avsc",
                    "-s",
                    "wide-value",
                    "--level",
                    "FULL",
                    "--fix",
                    "--no-cache",
                ],
                cwd=folder,
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            times.append(time.perf_counter() - started)
        print(
            f"cli: schemacli check --fix, 10,000 fields at FULL (exit {done.returncode}): "
            f"best {min(times) * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms"
        )
        print("   ", done.stderr.strip().splitlines()[0] if done.stderr.strip() else "")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
