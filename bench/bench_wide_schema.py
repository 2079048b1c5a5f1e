"""Memory and time of one very wide schema, per command, as the schema grows (issue 38 item 5).

A record of N int fields (``{"name":"f<i>","type":"int"}``: the densest a schema gets, about
27 bytes a field) is written as v1 of a subject, and v2 adds one field with a default. Each
command runs as its own process (``python -m schemacli``), so its peak resident memory is its
own (``os.wait4``'s ru_maxrss). The curve over several N says how many bytes of memory a byte of
schema costs, and so what input cap the fuzz harness's 2 GiB address space can hold.

    .venv/bin/python bench/bench_wide_schema.py [--fields 25000,100000,200000] [--commands ...]
        [--limit-gib 2]

Prints one row per (command, N): the schema's size, wall time, peak RSS, and RSS per schema byte.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "validate": ["validate", "{v2}"],
    "lint": ["lint", "{v2}", "--select", "E001"],
    "check": ["check", "{v2}", "--subject", "wide-value", "--no-cache"],
    "diff": ["diff", "{v1}", "{v2}"],
    "gate": ["gate", "--no-cache"],
}


def schema(fields: int, extra: bool) -> str:
    """The densest wide record: no white space, short names (27 bytes a field)."""
    items = [f'{{"name":"f{i}","type":"int"}}' for i in range(fields)]
    if extra:
        items.append('{"name":"added","type":"int","default":0}')
    return '{"type":"record","name":"Wide","fields":[' + ",".join(items) + "]}\n"


def run(args: list[str], cwd: Path, limit: int | None) -> tuple[int, float, int]:
    """(exit code, wall seconds, peak RSS in bytes) of ``python -m schemacli *args``, under an
    address-space limit of ``limit`` bytes (the fuzz harness's 2 GiB) when given."""

    def limited() -> None:
        import resource

        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "schemacli", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=limited,  # noqa: PLW1509 - a benchmark's own child
        env={**os.environ, "SCHEMACLI_CACHE_DIR": str(cwd / ".cache")},
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    return os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fields", default="25000,100000,200000")
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--limit-gib", type=float, default=None, help="RLIMIT_AS of each run")
    options = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f}; python {sys.version.split()[0]}", flush=True)
    print("command   fields     MiB   exit   wall s   peak RSS MiB   RSS / schema byte")
    for fields in (int(n) for n in options.fields.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-wide-") as temp:
            project = Path(temp)
            folder = project / "schemas/subjects/wide-value"
            folder.mkdir(parents=True)
            (folder / "v1.avsc").write_text(schema(fields, extra=False))
            v2 = project / "v2.avsc"
            v2.write_text(schema(fields, extra=True))
            (project / "schemacli.toml").write_text('store = "schemas"\n')
            size = v2.stat().st_size
            for name in options.commands.split(","):
                args = [a.format(v1=folder / "v1.avsc", v2=v2) for a in COMMANDS[name]]
                limit = int(options.limit_gib * 2**30) if options.limit_gib else None
                code, wall, rss = run(args, project, limit)
                print(
                    f"{name:<9} {fields:>7} {size / 2**20:>7.1f} {code:>6} {wall:>8.1f} "
                    f"{rss / 2**20:>14.0f} {rss / size:>19.1f}",
                    flush=True,
                )
    print(json.dumps({"commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M")}))


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "?"


if __name__ == "__main__":
    main()
