"""Wall time of `schemacli --help` in a subprocess: the CLI must start fast. Target: < 300 ms.

.venv/bin/python bench/bench_help.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

TARGET_MS = 300.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("schemacli")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "schemacli"]
    subprocess.run([*command, "--help"], capture_output=True, check=True)  # warm the disk cache
    times, cpu = [], []
    for _ in range(args.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([*command, "--help"], capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    best, median = min(times), statistics.median(times)
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {platform.node()}  "
        f"{platform.processor() or platform.machine()}  {os.cpu_count()} cpus  "
        f"Python {platform.python_version()}  load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"schemacli --help: best {best:.0f} ms, median {median:.0f} ms over {args.runs} runs "
        f"(target < {TARGET_MS:.0f} ms: {'met' if median < TARGET_MS else 'MISSED'}); "
        f"CPU time median {statistics.median(cpu):.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
