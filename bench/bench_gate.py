"""`schemacli gate` over a generated store of 500 subjects, offline, as CI runs it.

Each subject gets 3 versions of a 12-field record (v2 and v3 each add an optional field), so the
gate parses 1,500 files and runs 1,000 BACKWARD checks. Wall time of the whole subprocess
(interpreter start-up included), best and median of several runs, and the child's CPU time
(user + sys), less sensitive than wall time to a busy machine. Target: < 2 s wall.

With ``--shared``, every record also has a field of type ``bench.Position``, which none of
them defines or declares: one more subject (``position-value``) defines it, and the gate finds
it among the subjects' latest versions (docs/store.md, "Types another subject defines").

With ``--readers K``, K consumers each declare a reader of every subject (its v1: the gate
judges each subject's latest version against all K, docs/readers.md). With ``--warm``, every run
after a first untimed one reads the same cache (the warm path CI hits on an unchanged store).

    .venv/bin/python bench/bench_gate.py [--subjects 500] [--runs 5] [--against] [--shared]
        [--readers K] [--warm]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

TARGET_SECONDS = 2.0
TYPES = ["int", "long", "float", "double", "string", "boolean"]


def _fresh(folder: Path) -> str:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return str(folder)


POSITION = {
    "type": "record",
    "name": "Position",
    "namespace": "bench",
    "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}],
}


def generate(store: Path, subjects: int, versions: int = 3, *, shared: bool = False) -> None:
    if shared:
        directory = store / "subjects" / "position-value"
        directory.mkdir(parents=True)
        (directory / "v1.avsc").write_text(json.dumps(POSITION, indent=2))
    for s in range(subjects):
        fields = [{"name": f"f{i}", "type": TYPES[(s + i) % len(TYPES)]} for i in range(12)]
        if shared:
            fields.append({"name": "at", "type": "Position"})
        directory = store / "subjects" / f"topic{s:04d}-value"
        directory.mkdir(parents=True)
        for v in range(1, versions + 1):
            if v > 1:
                fields.append({"name": f"added{v}", "type": ["null", "string"], "default": None})
            schema = {"type": "record", "name": f"Rec{s}", "namespace": "bench", "fields": fields}
            (directory / f"v{v}.avsc").write_text(json.dumps(schema, indent=2))


def declare_readers(store: Path, subjects: int, consumers: int) -> None:
    for c in range(consumers):
        folder = store / "readers" / f"consumer{c}"
        folder.mkdir(parents=True)
        manifest = {"owner": f"team{c}", "groups": [f"group{c}"]}
        (folder / "reader.json").write_text(json.dumps(manifest))
        for s in range(subjects):
            v1 = store / "subjects" / f"topic{s:04d}-value" / "v1.avsc"
            (folder / f"topic{s:04d}-value.avsc").write_text(v1.read_text())


def commit_and_change(repo: Path, store: Path, subjects: int) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=b@example.com", "-c", "user.name=bench", "add", ".")
    git("-c", "user.email=b@example.com", "-c", "user.name=bench", "commit", "-q", "-m", "store")
    for s in range(0, subjects, 20):
        directory = store / "subjects" / f"topic{s:04d}-value"
        schema = json.loads((directory / "v3.avsc").read_text())
        schema["fields"].append({"name": "added4", "type": "long", "default": 0})
        (directory / "v4.avsc").write_text(json.dumps(schema, indent=2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--against",
        action="store_true",
        help="commit the store in a git repo, add a v4 to 5%% of the subjects, and time "
        "`gate --against git:HEAD` (what a pull-request check runs)",
    )
    parser.add_argument(
        "--shared",
        action="store_true",
        help="every record uses bench.Position, defined only by one more subject",
    )
    parser.add_argument("--readers", type=int, default=0, help="consumers declaring readers")
    parser.add_argument("--warm", action="store_true", help="time warm runs (one cache)")
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("schemacli")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "schemacli"]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "schemas"
        generate(store, args.subjects, shared=args.shared)
        if args.readers:
            declare_readers(store, args.subjects, args.readers)
        extra: list[str] = []
        if args.against:
            commit_and_change(Path(tmp), store, args.subjects)
            extra = ["--against", "git:HEAD"]
        times, cpu = [], []
        cache = _fresh(Path(tmp) / "cache")
        for n in range(args.runs + args.warm):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            result = subprocess.run(
                [*command, "gate", "--store", str(store), *extra, "--quiet", "--output", "json"],
                capture_output=True,
                text=True,
                check=False,
                cwd=tmp,
                # every run cold: a cache of its own, emptied (bench_gate_scale.py times warm runs)
                env={
                    **os.environ,
                    "SCHEMACLI_CACHE_DIR": cache if args.warm else _fresh(Path(tmp) / "cache"),
                },
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if not (args.warm and n == 0):  # the warm runs' first run fills the cache
                times.append(time.perf_counter() - start)
                cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if result.returncode != 0:
                print(result.stdout[-2000:], result.stderr[-2000:], file=sys.stderr)
                return 1
            cases = json.loads(result.stdout)["cases"]
            assert len(cases) == args.subjects + args.shared, len(cases)
    best, median = min(times), statistics.median(times)
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {platform.node()}  "
        f"{platform.processor() or platform.machine()}  {os.cpu_count()} cpus  "
        f"Python {platform.python_version()}  load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"schemacli gate{' --against git:HEAD' if args.against else ''}, "
        f"{args.subjects} subjects x 3 versions{' + a shared type' if args.shared else ''}"
        f"{f' + {args.readers} declared reader(s) each' if args.readers else ''}"
        f"{', warm' if args.warm else ', cold'}: "
        f"best {best:.3f} s, "
        f"median {median:.3f} s over {args.runs} runs (target < {TARGET_SECONDS} s: "
        f"{'met' if median < TARGET_SECONDS else 'MISSED'}); CPU time (user+sys) median "
        f"{statistics.median(cpu):.3f} s (less sensitive to machine load than wall time)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
