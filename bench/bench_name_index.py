"""Benchmark: `validate` over a folder of one-type-per-file schemas that use each other.

    .venv/bin/python bench/bench_name_index.py [--sizes 100,300,1000]

Each of N files defines one record ``com.acme.gen.T<i>`` and uses two of 10 shared enums
``com.acme.gen.C<k>``, each in its own file (a star, as real repositories share a few common
types; a chain where every file uses the one before makes every schema contain all earlier
ones, and the canonical forms alone grow with the square of N, in Java too). Layout
"convention": files named ``com.acme.gen.T<i>.avsc`` (found by the naming convention, no index
needed); layout "any": files named ``t-<i>.avsc`` (found only through the index of names,
built once per folder). CPU time (process_time) of ``validate_paths`` over the
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

from schemacli.contracts.lint.validate import validate_paths  # noqa: E402


def write(folder: Path, n: int, layout: str) -> None:
    def put(simple: str, schema: dict, stem: str) -> None:
        name = f"com.acme.gen.{simple}.avsc" if layout == "convention" else f"{stem}.avsc"
        (folder / name).write_text(json.dumps(schema))

    for k in range(10):
        enum = {"type": "enum", "name": f"C{k}", "namespace": "com.acme.gen", "symbols": ["A"]}
        put(f"C{k}", enum, f"c-{k}")
    for i in range(n - 10):
        fields = [{"name": "id", "type": "long"}]
        fields += [{"name": f"c{k}", "type": f"C{k}"} for k in sorted({i % 10, (i * 7 + 3) % 10})]
        record = {"type": "record", "name": f"T{i}", "namespace": "com.acme.gen", "fields": fields}
        put(f"T{i}", record, f"t-{i}")


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
