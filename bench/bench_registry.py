"""The registry road at scale: request counts and times of the registry-backed commands.

    .venv/bin/python bench/bench_registry.py [--sizes 100,300,1000] [--versions 5]
        [--delay-ms 20] [--registry URL] [--json OUT.jsonl]

Starts the stack's registry (Apicurio, in memory; or uses --registry URL, whose subjects it
adds to) and loads the largest size: N subjects x V versions (records of 12-16 fields, each
version adding a field with a default), every tenth subject using a shared record by Confluent
reference (``scale-common-money``, which itself references ``scale-common-currency``: two
levels). Then, for each size (the first N subjects and the shared two), each command runs as a
subprocess against the registry through a counting proxy (tests/stack/countproxy.py), once as
it is and once with --delay-ms added to every request and connection (a far registry),
the two runs of a pair back to back:

* ``pull`` into a new store (cold), and again (nothing new since);
* ``gate --registry`` on the pulled store, and on a copy without the pull's snapshot
  (``registry.json``: every version asked for);
* ``gate --registry --register`` with min(50, N) new versions (deleted again afterwards);
* ``readers list --registry`` with one declared reader per subject;
* ``report --html`` of the pulled store (no request: it reads the store).

Prints one JSON line per run: size, command, delay, seconds, requests, distinct requests,
connections, exit code; ``--json`` appends them to a file. Times vary with the machine's load;
the request counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from schemacli.registry.client import RegistryClient  # noqa: E402
from schemacli.registry.settings import RegistrySettings  # noqa: E402
from tests.stack.countproxy import CountProxy  # noqa: E402
from tests.stack.registryload import (  # noqa: E402
    COMMON,
    NEW_VERSIONS,
    add_new_versions,
    drop_new_versions,
    load,
    subject,
    write_readers,
)


@dataclass(frozen=True)
class Cli:
    """How to run schemacli: this checkout's, or (``source``) another source tree's on this
    checkout's interpreter (``git archive REV | tar -x -C DIR``: a before/after comparison)."""

    source: Path | None = None

    def command(self) -> list[str]:
        if self.source is None:
            return [str(ROOT / ".venv/bin/schemacli")]
        return [sys.executable, "-m", "schemacli"]

    def env(self) -> dict[str, str]:
        if self.source is None:
            return {}
        return {"PYTHONPATH": str(self.source), "PYTHONDONTWRITEBYTECODE": "1"}


def run(cli: Cli, args: Sequence[str], cwd: Path, proxy: CountProxy) -> dict[str, object]:
    env = {**os.environ, "SCHEMACLI_REGISTRY_URL": proxy.url, **cli.env()}
    env.pop("SCHEMACLI_CONFIG", None)
    proxy.take()
    started = time.perf_counter()
    done = subprocess.run([*cli.command(), *args], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    connections = proxy.connections
    seen = proxy.take()
    return {
        "seconds": round(seconds, 2),
        "requests": len(seen),
        "distinct": len(set(seen)),
        "repeated": proxy.repeated(seen),
        "connections": connections,
        "exit": done.returncode,
        "stderr": done.stderr[-400:] if done.returncode not in (0,) else "",
    }


def bench_size(
    cli: Cli, url: str, client: RegistryClient, size: int, versions: int, delay: float, work: Path
) -> list[dict[str, object]]:
    names = [*COMMON, *(subject(i) for i in range(size))]
    out = []
    proxies = {"0": CountProxy(url), f"{delay * 1000:g}": CountProxy(url, delay=delay)}
    stores = {label: work / f"store-{label}" for label in proxies}

    def pair(command: str, args_of) -> None:  # type: ignore[no-untyped-def]
        for label, proxy in proxies.items():
            args = args_of(stores[label], proxy.url)
            result = run(cli, args, work, proxy)
            row = {"size": size, "command": command, "delay_ms": float(label), **result}
            print(json.dumps(row), flush=True)
            out.append(row)

    pair("pull (cold)", lambda s, u: ["pull", *names, "--store", str(s), "--no-levels"])
    pair("pull (nothing new)", lambda s, u: ["pull", *names, "--store", str(s), "--no-levels"])
    pair("gate --registry", lambda s, u: ["gate", "-q", "--store", str(s), "--registry", u])

    def without_snapshot(store: Path, url: str) -> list[str]:
        copy = store.with_name(store.name + "-nosnap")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(store, copy)
        for record in copy.glob("subjects/*/registry.json"):
            record.unlink()
        return ["gate", "-q", "--store", str(copy), "--registry", url]

    pair("gate --registry (no snapshot)", without_snapshot)
    for store in stores.values():
        write_readers(store, names[len(COMMON) :])
    pair("readers list --registry", lambda s, u: ["readers", "list", "--store", str(s),
                                                  "--registry", u, "-o", "json"])  # fmt: skip
    pair("report --html", lambda s, u: ["report", "--html", str(s.with_name(s.name + "-site")),
                                        "--store", str(s), "--no-cache"])  # fmt: skip

    def register(store: Path, url: str) -> list[str]:
        touched = add_new_versions(store, size, versions)
        register.touched = touched  # type: ignore[attr-defined]
        return ["gate", "-q", "--store", str(store), "--registry", url, "--register"]

    for label, proxy in proxies.items():  # one pair, undone after each run
        args = register(stores[label], proxy.url)
        result = run(cli, args, work, proxy)
        command = f"gate --registry --register ({min(NEW_VERSIONS, size)} new)"
        row = {"size": size, "command": command, "delay_ms": float(label), **result}
        print(json.dumps(row), flush=True)
        out.append(row)
        drop_new_versions(client, register.touched, versions)  # type: ignore[attr-defined]
        for name in register.touched:  # type: ignore[attr-defined]
            for extra in (".avsc", ".references.json"):
                (stores[label] / "subjects" / name / f"v{versions + 1}{extra}").unlink(
                    missing_ok=True
                )
    for proxy in proxies.values():
        proxy.close()
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,300,1000")
    parser.add_argument("--versions", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--registry", help="an existing registry (default: start Apicurio)")
    parser.add_argument("--json", type=Path, help="append the result lines here")
    parser.add_argument(
        "--source", type=Path, help="run another source tree's schemacli (before/after)"
    )
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    server = None
    if args.registry is None:
        from tests.stack.registry import start_registry

        server = start_registry("apicurio", Path(tempfile.mkdtemp(prefix="bench-registry-")))
        url = server.url
    else:
        url = args.registry.rstrip("/")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=ROOT).stdout.strip()  # fmt: skip
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": head,
        "machine": f"{cpu_model()}, {os.cpu_count()} cpu, Python {platform.python_version()}",
        "load": os.getloadavg(),
        "registry": "apicurio (started)" if server else url,
        "versions": args.versions,
        "source": str(args.source) if args.source else "this checkout",
    }
    rows: list[dict[str, object]] = []
    cli = Cli(args.source)
    try:
        with RegistryClient(RegistrySettings(url=url)) as client:
            started = time.perf_counter()
            load(client, sizes[-1], args.versions)
            meta["load_seconds"] = round(time.perf_counter() - started, 1)
            print(json.dumps(meta), flush=True)
            with tempfile.TemporaryDirectory(prefix="bench-registry-") as tmp:
                for size in sizes:
                    work = Path(tmp) / str(size)
                    work.mkdir()
                    rows += bench_size(
                        cli, url, client, size, args.versions, args.delay_ms / 1000, work
                    )
    finally:
        if server is not None:
            server.stop()
    meta["load_after"] = os.getloadavg()
    if args.json:
        with args.json.open("a") as out:
            out.write(json.dumps({**meta, "rows": rows}) + "\n")


if __name__ == "__main__":
    main()
