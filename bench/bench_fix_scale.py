"""Suggested fixes at scale (issue #38, item 2): `diff`, `check` and `gate` of a wide change.

A record of N fields whose candidate changes the type of C of them (``long`` -> ``string``: a
TYPE_MISMATCH both ways, so 2 C findings at FULL, each with its fixes proposed and proven). Each
command runs as a subprocess, nothing cached (``--no-cache``):

* ``diff OLD NEW`` (every level's verdict: BACKWARD, FORWARD and FULL findings with fixes);
* ``check NEW -s wide-value --level FULL`` against a store holding OLD as v1;
* ``gate`` over a store holding OLD as v1 and NEW as v2, at FULL.

The curve runs C = N = 50, 200, 1,000, 5,000 (every field changes), then N = 10,000 with C = 10
(the cost must follow the change, not the width). Targets: 2,000 changed fields < 5 s, 10,000
fields of which 10 changed < 1 s, cost linear in the findings.

``--before PATH`` runs every command also against another checkout's ``schemacli`` (its folder
put first on PYTHONPATH), interleaved with this one (A, B, A, B ...), so both see the same load;
each side's bytecode is compiled once beforehand into a temporary folder
(``PYTHONPYCACHEPREFIX``: nothing written into either checkout), so no run pays for compiling;
``--timeout`` stops a run that takes longer (recorded as ``null``: the quadratic road at
thousands of fields takes hours). Results (CPU seconds of the subprocess, user + sys, and wall)
are printed and appended to bench/results/fix_scale.jsonl as they come, with the date, load
and commit.

    .venv/bin/python bench/bench_fix_scale.py [--sizes 50,200,1000,5000] [--runs 3]
        [--before /path/to/old/checkout] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "fix_scale.jsonl"
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402

COMMANDS = ("diff", "check", "gate")


def pair(fields: int, changed: int) -> tuple[str, str]:
    """(old, new) texts: ``fields`` long fields, the first ``changed`` of them strings in new."""
    old = {
        "type": "record",
        "name": "Wide",
        "namespace": "bench",
        "fields": [{"name": f"f{i}", "type": "long"} for i in range(fields)],
    }
    new = json.loads(json.dumps(old))
    for i in range(changed):
        new["fields"][i]["type"] = "string"
    return json.dumps(old, indent=2) + "\n", json.dumps(new, indent=2) + "\n"


def lay_out(root: Path, old: str, new: str) -> None:
    """``root``: old.avsc, new.avsc, a store with v1 (for check) and one with v1, v2 (gate)."""
    (root / "old.avsc").write_text(old)
    (root / "new.avsc").write_text(new)
    for store, versions in (("checkstore", [old]), ("gatestore", [old, new])):
        folder = root / store / "subjects" / "wide-value"
        folder.mkdir(parents=True)
        for number, text in enumerate(versions, 1):
            (folder / f"v{number}.avsc").write_text(text)
    (root / "schemacli.toml").write_text('default-level = "FULL"\n')


def argv(command: str) -> list[str]:
    if command == "diff":
        return ["diff", "old.avsc", "new.avsc", "-o", "json"]
    if command == "check":
        return [
            "check",
            "new.avsc",
            "-s",
            "wide-value",
            "--level",
            "FULL",
            "--store",
            "checkstore",
            "--no-cache",
            "-o",
            "json",
        ]
    return ["gate", "-q", "--store", "gatestore", "--no-cache", "-o", "json"]


def compiled(package: Path, prefix: Path) -> dict[str, str]:
    """The environment a run of ``package`` gets: its ``schemacli`` first on the path, its
    bytecode compiled beforehand into ``prefix`` and every other module's written there by
    the first (untimed) run: an installed tool has its bytecode, and a machine that sets
    PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run and count that
    time. Nothing is written into the checkout or the interpreter's folders."""
    env = {**os.environ, "PYTHONPATH": str(package), "PYTHONPYCACHEPREFIX": str(prefix)}
    env.pop("SCHEMACLI_CONFIG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(package / "schemacli")],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return env


def run(
    env: dict[str, str], root: Path, command: str, timeout: float
) -> tuple[float, float] | None:
    """(CPU seconds, wall seconds) of one subprocess, or None when it ran past ``timeout``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "schemacli", *argv(command)],
            stdout=out,
            stderr=err,
            cwd=root,
            env=env,
        )
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            _children_cpu()  # forget the killed child's time
            return None
        wall = time.perf_counter() - started
        if child.returncode not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{command} failed ({child.returncode}): {err.read()[-2000:]!r}")
    return _children_cpu(), wall


_CPU_SEEN = [0.0]


def _children_cpu() -> float:
    """CPU seconds (user + sys) of the children reaped since the last call."""
    usage = os.times()
    total = usage.children_user + usage.children_system
    spent = total - _CPU_SEEN[0]
    _CPU_SEEN[0] = total
    return spent


def commit(package: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(package), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "?"
    return done.stdout.strip() or "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,1000,5000")
    parser.add_argument("--wide", type=int, default=10_000, help="fields of the narrow change")
    parser.add_argument("--wide-changed", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--before-label", default=None)
    parser.add_argument("--label", default=None, help="this checkout's label (default: commit)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--commands", default=",".join(COMMANDS))
    args = parser.parse_args()
    stamp = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    packages = {"after": ROOT}
    labels = {"after": args.label or commit(ROOT)}
    if args.before is not None:
        packages["before"] = args.before.resolve()
        labels["before"] = args.before_label or commit(args.before)
    print(
        f"{stamp}  {cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load {os.getloadavg()[0]:.1f}; " + ", ".join(f"{k} = {v}" for k, v in labels.items())
    )
    cases = [(n, n) for n in (int(x) for x in args.sizes.split(",") if x)]
    if args.wide:
        cases.append((args.wide, args.wide_changed))
    commands = [c for c in args.commands.split(",") if c]
    bytecode = tempfile.TemporaryDirectory()
    envs = {
        side: compiled(package, Path(bytecode.name) / side) for side, package in packages.items()
    }
    _children_cpu()  # the compiling is not a run's
    # (side, command) -> the changed fields at which it ran out of time: more is not tried
    given_up: dict[tuple[str, str], int] = {}
    warmed: set[tuple[str, str]] = set()
    for fields, changed in cases:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            lay_out(root, *pair(fields, changed))
            for command in commands:
                times: dict[str, list[tuple[float, float] | None]] = {k: [] for k in packages}
                for side in packages:  # once untimed: the modules it imports compiled
                    if (side, command) not in warmed:
                        run(envs[side], root, command, args.timeout)
                        _children_cpu()
                        warmed.add((side, command))
                for _ in range(args.runs):
                    for side in packages:  # interleaved: A, B, A, B ...
                        if changed >= given_up.get((side, command), changed + 1):
                            times[side].append(None)
                            continue
                        result = run(envs[side], root, command, args.timeout)
                        times[side].append(result)
                        if result is None:
                            given_up[(side, command)] = changed
                row = {
                    "date": stamp,
                    "machine": f"{cpu_model()}, {os.cpu_count()} CPUs",
                    "load": round(os.getloadavg()[0], 1),
                    "fields": fields,
                    "changed": changed,
                    "command": command,
                }
                parts = [f"{command:>5} {fields:>6} fields, {changed:>5} changed:"]
                for side in packages:
                    done = [t for t in times[side] if t is not None]
                    if len(done) < len(times[side]):
                        row[side] = None
                        parts.append(f"{side} ({labels[side]}) > {args.timeout:.0f} s")
                        continue
                    cpu = statistics.median(t[0] for t in done)
                    wall = statistics.median(t[1] for t in done)
                    row[side] = {"commit": labels[side], "cpu": cpu, "wall": wall}
                    parts.append(f"{side} ({labels[side]}) CPU {cpu:.2f} s, wall {wall:.2f} s")
                if row.get("before") and row.get("after"):
                    ratio = row["before"]["cpu"] / row["after"]["cpu"]
                    parts.append(f"before/after {ratio:.1f}x")
                RESULTS.parent.mkdir(exist_ok=True)
                with RESULTS.open("a", encoding="utf-8") as out:  # each row as it comes
                    out.write(json.dumps(row) + "\n")
                print("  ".join(parts), flush=True)
    bytecode.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
