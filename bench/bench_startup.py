"""How fast the CLI starts: ``schemacli --help`` and ``schemacli validate ONE.avsc``, each paired
in the same round with ``python -c pass`` (the floor: the interpreter and the venv's site), the
runs of a round in a random order. Targets (issue #39): --help < 100 ms, validate < 150 ms
median wall time.

    .venv/bin/python bench/bench_startup.py [--rounds 30] [--tree DIR ...] [--imports]
        [--instructions]

Every command runs as ``python -m schemacli`` in a new process, with ``PYTHONPATH`` set to the
tree measured (default: this checkout), so two trees (``--tree A --tree B``, e.g. an export of
the commit before: ``git archive REF schemacli converters spark_avro | tar -x -C DIR``) run
from the same venv and are paired round by round. Bytecode is written by the warm-up runs and
read by the measured ones (``PYTHONDONTWRITEBYTECODE`` is unset for them), as for an installed
package. ``--help`` alone is the top-level help's road (``schemacli.toplevel``, no click or
typer); every command is the app's. ``--imports`` prints, for validate, the modules it imports
beyond --help (so click and typer among them) and what each costs (``-X importtime``, median
of the runs). ``--instructions`` counts the instructions of one run of each (valgrind's
callgrind): a figure the machine's load does not move, and its ratio to the floor's.

Prints the machine, the load average before and after, the commit, and per command: the median
wall and CPU time, the median of the paired differences over the floor, and (two trees) the
paired ratio of the second tree to the first.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGETS_MS = {"--help": 100.0, "validate": 150.0}
ONE = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}\n'


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """One process: (wall ms, CPU ms of the child). ``cwd`` is outside every tree: ``python -m``
    puts the current folder first on the path, which would shadow PYTHONPATH's tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def environment(tree: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def commit(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    return done.stdout.strip() or "(not a checkout)"


def instructions(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """The instructions one run executes, counted by callgrind (user space, the whole process)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise SystemExit(f"callgrind counted nothing for {argv}: {done.stderr[-400:]}")
    return int(match.group(1))


def imports(tree: Path, schema: Path, cwd: Path, runs: int = 5) -> None:
    """validate's imports beyond --help's, with their cumulative import time (median, µs)."""

    def timed(*args: str) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "schemacli", *args],
                env=environment(tree),
                cwd=cwd,
                capture_output=True,
                text=True,
            )
            for line in done.stderr.splitlines():
                match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
                if match:
                    found.setdefault(match.group(4), []).append(int(match.group(2)))
        return found

    help_ = timed("--help")
    validate = timed("validate", str(schema))
    extra = {m: statistics.median(v) for m, v in validate.items() if m not in help_}
    print(f"\nvalidate imports {len(extra)} modules beyond --help's (cumulative µs, median):")
    for name, us in sorted(extra.items(), key=lambda kv: -kv[1])[:25]:
        print(f"  {us:8.0f}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warm-ups", type=int, default=3)
    parser.add_argument("--tree", type=Path, action="append", help="a source tree (repeatable)")
    parser.add_argument("--imports", action="store_true", help="list validate's imports")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions (valgrind callgrind)"
    )
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree] if args.tree else [ROOT]
    with tempfile.TemporaryDirectory() as tmp:
        schema = Path(tmp) / "one.avsc"
        schema.write_text(ONE)
        cases: dict[str, list[str]] = {"--help": ["--help"], "validate": ["validate", str(schema)]}
        floor = [sys.executable, "-c", "pass"]
        runs: list[tuple[str, Path | None, list[str]]] = [("floor", None, floor)]
        for tree in trees:
            for name, words in cases.items():
                runs.append((name, tree, [sys.executable, "-m", "schemacli", *words]))
        for _ in range(args.warm_ups):  # bytecode written, the disk cache warm
            for _, tree, argv in runs:
                run(argv, environment(tree), Path(tmp))
        load_before = os.getloadavg()
        wall: dict[tuple[str, Path | None], list[float]] = {}
        cpu: dict[tuple[str, Path | None], list[float]] = {}
        for _ in range(args.rounds):
            order = list(runs)
            random.shuffle(order)
            for name, tree, argv in order:
                w, c = run(argv, environment(tree), Path(tmp))
                wall.setdefault((name, tree), []).append(w)
                cpu.setdefault((name, tree), []).append(c)
        load_after = os.getloadavg()
        if args.imports:
            imports(trees[-1], schema, Path(tmp))
        counted = {}
        if args.instructions:
            counted = {(n, t): instructions(a, environment(t), Path(tmp)) for n, t, a in runs}

    print(
        f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC  {cpu_model()}  {os.cpu_count()} CPUs  "
        f"Python {sys.version.split()[0]}  load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after; {args.rounds} rounds, runs of a round in random order"
    )
    floor_wall, floor_cpu = wall[("floor", None)], cpu[("floor", None)]
    print(
        f"floor `python -c pass`: wall median {statistics.median(floor_wall):.0f} ms "
        f"({min(floor_wall):.0f}-{max(floor_wall):.0f}), CPU median "
        f"{statistics.median(floor_cpu):.0f} ms"
    )
    for tree in trees:
        print(f"\ntree {tree} at {commit(tree)}:")
        for name in cases:
            w, c = wall[(name, tree)], cpu[(name, tree)]
            over = [a - b for a, b in zip(w, floor_wall, strict=True)]
            target = TARGETS_MS[name]
            verdict = "met" if statistics.median(w) < target else "not met"
            print(
                f"  {name:9s} wall median {statistics.median(w):5.0f} ms "
                f"({min(w):.0f}-{max(w):.0f}), over the floor {statistics.median(over):5.0f} ms; "
                f"CPU median {statistics.median(c):4.0f} ms; target < {target:.0f} ms: {verdict}"
            )
    if counted:
        base = counted[("floor", None)]
        print(f"\ninstructions (callgrind, one run each): floor {base / 1e6:.0f} M")
        for tree in trees:
            for name in cases:
                n = counted[(name, tree)]
                print(f"  {tree.name:12s} {name:9s} {n / 1e6:5.0f} M, {n / base:.2f}x the floor")
    if len(trees) == 2:
        first, second = trees
        print(f"\npaired ratio, {second.name} / {first.name} (median of the rounds' ratios):")
        for name in cases:
            ratios = [b / a for a, b in zip(wall[(name, first)], wall[(name, second)], strict=True)]
            ratios_cpu = [
                b / a for a, b in zip(cpu[(name, first)], cpu[(name, second)], strict=True) if a
            ]
            print(
                f"  {name:9s} wall {statistics.median(ratios):.2f}, "
                f"CPU {statistics.median(ratios_cpu):.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
