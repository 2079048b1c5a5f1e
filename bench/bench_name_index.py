"""Benchmark: `validate` over a folder of one-type-per-file schemas that use each other.

    .venv/bin/python bench/bench_name_index.py [--sizes 100,300,1000]

Each of N files defines one record ``com.acme.gen.T<i>`` and uses the two records before it by
name. Layout "convention": files named ``com.acme.gen.T<i>.avsc`` (found by the naming
convention, no index needed); layout "any": files named ``t-<i>.avsc`` (found only through the
index of names, built once per folder). CPU time (process_time) of ``validate_paths`` over the
folder, best of 3. Appends JSON lines to bench/results/name_index.jsonl. Not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schemacli.contracts.validate import validate_paths  # noqa: E402


def write(folder: Path, n: int, layout: str) -> None:
    for i in range(n):
        fields = [{"name": "id", "type": "long"}]
        fields += [
            {"name": f"t{j}", "type": ["null", f"T{j}"], "default": None}
            for j in (i - 1, i - 2)
            if j >= 0
        ]
        schema = {"type": "record", "name": f"T{i}", "namespace": "com.acme.gen", "fields": fields}
        name = f"com.acme.gen.T{i}.avsc" if layout == "convention" else f"t-{i}.avsc"
        (folder / name).write_text(json.dumps(schema))


def measure(n: int, layout: str) -> float:
    best = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write(folder, n, layout)
        for _ in range(3):
            start = time.process_time()
            report = validate_paths([folder])
            best = min(best, time.process_time() - start)
            assert report.ok, report.findings[:1]
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,300,1000")
    args = parser.parse_args()
    out = ROOT / "bench" / "results" / "name_index.jsonl"
    out.parent.mkdir(exist_ok=True)
    print("| files | layout | CPU s | ms per file |\n|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        for layout in ("convention", "any"):
            cpu = measure(n, layout)
            print(f"| {n} | {layout} | {cpu:.3f} | {1000 * cpu / n:.2f} |")
            with out.open("a") as f:
                f.write(
                    json.dumps(
                        {
                            "bench": "name_index",
                            "files": n,
                            "layout": layout,
                            "cpu_s": round(cpu, 4),
                            "at": datetime.now(UTC).isoformat(timespec="seconds"),
                        }
                    )
                    + "\n"
                )


if __name__ == "__main__":
    main()
