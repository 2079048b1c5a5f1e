"""`check`, `diff` and `gate` on wide records and wide unions: cost vs size and findings.

Cases (each run in its own subprocess, through the CLI entry point in-process there,
``schemacli.app.main``, output to /dev/null; CPU seconds of the command and the process's
peak RSS from ``resource.getrusage``):

* two N-field records, N = 500 / 2,000 / 10,000: (a) 10 fields change int -> long,
  (b) every field does (N findings); ``check --level FORWARD`` of v2 against a store holding v1,
  and ``diff v1 v2``;
* a union of K records (K = 1,000 / 5,000) and the same union with one branch removed:
  ``check --level BACKWARD``, ``diff`` and ``gate`` over a two-version store.

    .venv/bin/python bench/bench_scale_pairs.py [--timeout 60] [--only all10000]

Results are printed and appended to bench/results/scale_pairs.jsonl. Set PYTHONPATH to run
another tree's code (e.g. the base commit, for before/after numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

CHILD = r"""
import resource, sys, time
from schemacli.app import main
sys.argv = ["schemacli"] + sys.argv[1:]
start = time.process_time()
try:
    main()
except SystemExit:
    pass
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{cpu:.3f} {peak:.1f}", file=sys.stderr)
"""


def _record(n: int, changed: set[int], new: bool) -> dict:
    fields = [
        {"name": f"f{i}", "type": "long" if new and i in changed else "int"} for i in range(n)
    ]
    return {"type": "record", "name": "Wide", "namespace": "bench", "fields": fields}


def _union(k: int, drop: int | None) -> list:
    return [
        {
            "type": "record",
            "name": f"Event{i}",
            "namespace": "bench",
            "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string"}],
        }
        for i in range(k)
        if i != drop
    ]


def cases(root: Path) -> list[tuple[str, list[str]]]:
    out = []
    for n in (500, 2000, 10000):
        for label, changed in (("ten", set(range(0, n, n // 10))), ("all", set(range(n)))):
            name = f"{label}{n}"
            store = root / name / "schemas"
            (store / "subjects" / "wide-value").mkdir(parents=True)
            v1 = json.dumps(_record(n, changed, False), indent=2)
            v2 = json.dumps(_record(n, changed, True), indent=2)
            (store / "subjects" / "wide-value" / "v1.avsc").write_text(v1)
            (root / name / "v1.avsc").write_text(v1)
            (root / name / "v2.avsc").write_text(v2)
            out.append(
                (
                    f"check {name}",
                    [
                        "check",
                        str(root / name / "v2.avsc"),
                        "--subject",
                        "wide-value",
                        "--level",
                        "FORWARD",
                        "--store",
                        str(store),
                    ],
                )
            )
            out.append(
                (
                    f"diff {name}",
                    ["diff", str(root / name / "v1.avsc"), str(root / name / "v2.avsc")],
                )
            )
    for k in (1000, 5000):
        name = f"union{k}"
        store = root / name / "schemas"
        (store / "subjects" / "events-value").mkdir(parents=True)
        v1, v2 = json.dumps(_union(k, None), indent=2), json.dumps(_union(k, k // 3), indent=2)
        (store / "subjects" / "events-value" / "v1.avsc").write_text(v1)
        (root / name / "v1.avsc").write_text(v1)
        (root / name / "v2.avsc").write_text(v2)
        out.append(
            (
                f"check {name}",
                [
                    "check",
                    str(root / name / "v2.avsc"),
                    "--subject",
                    "events-value",
                    "--level",
                    "BACKWARD",
                    "--store",
                    str(store),
                ],
            )
        )
        out.append(
            (f"diff {name}", ["diff", str(root / name / "v1.avsc"), str(root / name / "v2.avsc")])
        )
        gate_store = root / name / "gate"
        (gate_store / "subjects" / "events-value").mkdir(parents=True)
        (gate_store / "subjects" / "events-value" / "v1.avsc").write_text(v1)
        (gate_store / "subjects" / "events-value" / "v2.avsc").write_text(v2)
        out.append((f"gate {name}", ["gate", "-q", "--store", str(gate_store)]))
    return out


def run(args: list[str], timeout: float, cwd: Path) -> tuple[float | None, float | None]:
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, None
    cpu, peak = done.stderr.strip().splitlines()[-1].split()
    return float(cpu), float(peak)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="wall seconds per case")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    parser.add_argument("--label", default="", help="a tag stored with the results (e.g. before)")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, command in cases(root):
            if args.only and args.only not in name:
                continue
            cpu, peak = run(command, args.timeout, root)
            shown = (
                f"{cpu:8.2f} s {peak:7.0f} MB"
                if cpu is not None
                else (f"   > {args.timeout:.0f} s (timed out)")
            )
            print(f"{name:18s} {shown}", flush=True)
            results.append(
                {"case": name, "cpu_s": cpu, "peak_rss_mb": peak, "timeout_s": args.timeout}
            )
    out = Path(__file__).with_name("results") / "scale_pairs.jsonl"
    out.parent.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    with out.open("a") as f:
        for r in results:
            f.write(
                json.dumps(
                    {
                        "date": stamp,
                        "label": args.label,
                        "pythonpath": os.environ.get("PYTHONPATH", ""),
                        "machine": platform.processor() or platform.machine(),
                        **r,
                    }
                )
                + "\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
