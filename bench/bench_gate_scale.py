"""`schemacli gate` at scale: long histories at FULL_TRANSITIVE, cold, warm, and one version on.

Each subject's v1 is a 20-field record; every later version adds one optional field (so 100
versions grow to 119 fields), and each subject has its own record name and namespace (nothing
is shared between subjects by text). The store's level is FULL_TRANSITIVE: every version is
checked both ways against every version before it, S x V x (V - 1) pair checks.

Measured (CPU seconds, user + sys, of the `schemacli gate` subprocess):

* cold: ``--no-cache`` (nothing from disk; only this run's in-memory memo);
* first run with the cache (writes it), then a re-run with nothing changed (warm);
* after adding one version to one subject (warm, but that subject is checked again).

    .venv/bin/python bench/bench_gate_scale.py                       # 100 x 100, then curves
    .venv/bin/python bench/bench_gate_scale.py --subjects 100 --versions 100 --no-curves

Targets (issue #20): at 100 x 100, < 20 s cold, < 1 s warm re-run, < 2 s after adding one
version; cost roughly linear in subjects x versions (curves over 10/20/40/100 versions and
100/1,000 subjects). Results are appended to bench/results/gate_scale.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

TYPES = ["int", "long", "string", "double", "boolean"]
BASE_FIELDS = 20
RESULTS = Path(__file__).resolve().parent / "results" / "gate_scale.jsonl"
TARGETS = {"cold": 20.0, "warm": 1.0, "one_more": 2.0}


def record(subject: int, version: int) -> dict:
    fields = [{"name": f"f{i}", "type": TYPES[(subject + i) % len(TYPES)]} for i in range(20)]
    fields += [
        {"name": f"added{v}", "type": ["null", "string"], "default": None}
        for v in range(2, version + 1)
    ]
    return {
        "type": "record",
        "name": f"Rec{subject}",
        "namespace": f"bench.topic{subject}",
        "fields": fields,
    }


def write_store(root: Path, subjects: int, versions: int) -> Path:
    """``root/schemas``: ``subjects`` subjects of ``versions`` versions each (``record``)."""
    store = root / "schemas"
    for s in range(subjects):
        folder = store / "subjects" / f"topic{s:04d}-value"
        folder.mkdir(parents=True)
        for v in range(1, versions + 1):
            (folder / f"v{v}.avsc").write_text(json.dumps(record(s, v), indent=2))
    return store


def generate(root: Path, subjects: int, versions: int) -> Path:
    store = write_store(root, subjects, versions)
    (root / "schemacli.toml").write_text('store = "schemas"\ndefault-level = "FULL_TRANSITIVE"\n')
    return store


def gate(root: Path, *extra: str, cache: Path | None) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, peak RSS in MB) of one `schemacli gate` subprocess, from
    its own resource usage (os.wait4)."""
    env = dict(os.environ)
    env.pop("SCHEMACLI_CONFIG", None)
    if cache is not None:
        env["SCHEMACLI_CACHE_DIR"] = str(cache)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "schemacli", "gate", "-q", "-o", "json", *extra],
            stdout=out,
            stderr=err,
            cwd=root,
            env=env,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if child.returncode != 0:
            err.seek(0)
            raise SystemExit(f"gate failed ({child.returncode}):\n{err.read()[-3000:].decode()}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss // 1024


def scenario(subjects: int, versions: int, *, full: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = generate(root, subjects, versions)
        out: dict = {
            "subjects": subjects,
            "versions": versions,
            "pairs": subjects * versions * (versions - 1),
        }
        out["cold"] = gate(root, "--no-cache", cache=None)
        if full:
            cache = root / "cache"
            out["first_with_cache"] = gate(root, cache=cache)
            out["warm"] = gate(root, cache=cache)
            folder = store / "subjects" / "topic0000-value"
            (folder / f"v{versions + 1}.avsc").write_text(
                json.dumps(record(0, versions + 1), indent=2)
            )
            out["one_more"] = gate(root, cache=cache)
        return out


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in lscpu.splitlines()
                if line.startswith("Model name")
            ),
            platform.processor(),
        )
    except OSError:
        model = platform.processor()
    return f"{model}, {os.cpu_count()} cpus, Python {platform.python_version()}"


def report(row: dict) -> None:
    parts = [
        f"{row['subjects']:>5} subjects x {row['versions']:>3} versions "
        f"({row['pairs']:>9,} pair checks):"
    ]
    for name in ("cold", "first_with_cache", "warm", "one_more"):
        if name in row:
            cpu, wall, rss = row[name]
            target = TARGETS.get(name)
            verdict = (
                ""
                if target is None or row["subjects"] * row["versions"] != 10_000
                else (" met" if cpu < target else " MISSED")
            )
            parts.append(f"{name} {cpu:.2f} s CPU ({wall:.2f} s wall, {rss} MB){verdict}")
    print("  ".join(parts), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=100)
    parser.add_argument("--versions", type=int, default=100)
    parser.add_argument("--no-curves", action="store_true")
    parser.add_argument(
        "--curve-subjects",
        type=int,
        default=100,
        help="subjects for the versions curve (fewer on a busy machine)",
    )
    parser.add_argument(
        "--curve-versions", type=int, default=5, help="versions for the subjects curve"
    )
    args = parser.parse_args()
    stamp = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    print(f"{stamp}  {machine()}  load average {os.getloadavg()[0]:.1f}")
    rows = [scenario(args.subjects, args.versions, full=True)]
    report(rows[-1])
    if not args.no_curves:
        for versions in (10, 20, 40, 100):
            if (args.curve_subjects, versions) == (args.subjects, args.versions):
                continue
            rows.append(scenario(args.curve_subjects, versions, full=False))
            report(rows[-1])
        for subjects in (100, 1000):
            rows.append(scenario(subjects, args.curve_versions, full=False))
            report(rows[-1])
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({"date": stamp, "machine": machine(), **row}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
