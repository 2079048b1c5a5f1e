"""`schemacli report --html` over stores of growing size: is the cost linear in the versions?

Each subject's v1 is a 20-field record; every later version adds one optional field. Level
BACKWARD (the default). Each subject gets a page with every version's diff, its verdict at the
level and the schema text, so the work is about subjects x versions. Measured: CPU seconds
(user + sys) of the `schemacli report --html` subprocess, with --no-cache (nothing from disk),
and the size of the site written.

    .venv/bin/python bench/bench_report.py                 # 50/100/200 subjects x 10 versions
    .venv/bin/python bench/bench_report.py --sizes 100x5,100x10,100x20

Results are appended to bench/results/report.jsonl.
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

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "report.jsonl"
sys.path.insert(0, str(ROOT))

# the gate bench's stores: v1 a 20-field record, each later version one optional field more
from bench.bench_gate_scale import write_store  # noqa: E402


def run(subjects: int, versions: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        root = Path(tmp)
        store = write_store(root, subjects, versions)
        out = root / "site"
        before = os.times()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "schemacli",
                "report",
                "--html",
                str(out),
                "--store",
                str(store),
                "--no-cache",
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        after = os.times()
        cpu = (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
        size = sum(p.stat().st_size for p in out.iterdir())
    return {
        "subjects": subjects,
        "versions": versions,
        "cpu_s": round(cpu, 2),
        "ms_per_version": round(cpu * 1000 / (subjects * versions), 2),
        "site_mib": round(size / 2**20, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="50x10,100x10,200x10", help="SUBJECTSxVERSIONS, comma-separated"
    )
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    RESULTS.parent.mkdir(exist_ok=True)
    for size in args.sizes.split(","):
        subjects, versions = (int(n) for n in size.split("x"))
        result = run(subjects, versions)
        result.update(
            when=datetime.now(UTC).isoformat(timespec="seconds"),
            commit=commit,
            machine=platform.node(),
            load=round(os.getloadavg()[0], 1),
        )
        print(json.dumps(result), flush=True)
        with RESULTS.open("a") as handle:
            handle.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
