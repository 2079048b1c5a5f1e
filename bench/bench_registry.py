"""Registry-backed commands over many subjects, against a running registry.

    .venv/bin/python bench/bench_registry.py --registry URL [--subjects 100]

Creates N subjects (2 versions each, prefix bench-<random>), then times, as subprocesses:
`schemacli pull` of those subjects, `schemacli gate --registry` over the pulled store with one
new version per subject (checked, not registered), and `schemacli subjects list --versions`.
Prints one JSON line. Deletes the subjects at the end.
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
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schemacli.registry.client import RegistryClient  # noqa: E402
from schemacli.registry.settings import RegistrySettings  # noqa: E402

V1 = (ROOT / "schemas/subjects/taxi-rides-value/v1.avsc").read_text()
V2 = (ROOT / "schemas/subjects/taxi-rides-value/v2.avsc").read_text()


def v3() -> str:
    schema = json.loads(V2)
    schema["fields"].append({"name": "congestion_fee", "type": "float", "default": 0.0})
    return json.dumps(schema, indent=2)


def timed(args: list[str], cwd: Path, url: str) -> tuple[float, int]:
    env = {**os.environ, "SCHEMACLI_REGISTRY_URL": url}
    started = time.perf_counter()
    done = subprocess.run(
        [str(ROOT / ".venv/bin/schemacli"), *args], cwd=cwd, env=env, capture_output=True
    )
    return time.perf_counter() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--registry", required=True)
    parser.add_argument("--subjects", type=int, default=100)
    opts = parser.parse_args()
    client = RegistryClient(RegistrySettings(url=opts.registry.rstrip("/")))
    prefix = f"bench-{uuid.uuid4().hex[:6]}"
    names = [f"{prefix}-{i:04d}-value" for i in range(opts.subjects)]
    started = time.perf_counter()
    for name in names:
        client.register(name, V1)
        client.register(name, V2)
    setup = time.perf_counter() - started
    results: dict[str, object] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, Python {platform.python_version()}",
        "registry": opts.registry,
        "subjects": opts.subjects,
        "register_2_versions_each_s": round(setup, 2),
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        seconds, code = timed(
            ["pull", *names, "--store", "schemas", "--no-levels"], work, opts.registry
        )
        results["pull_s"], results["pull_exit"] = round(seconds, 2), code
        for name in names:
            (work / "schemas/subjects" / name / "v3.avsc").write_text(v3())
        seconds, code = timed(
            ["gate", "--store", "schemas", "--registry", opts.registry, "-q"], work, opts.registry
        )
        results["gate_registry_s"], results["gate_registry_exit"] = round(seconds, 2), code
        seconds, code = timed(
            ["subjects", "list", "--versions", "--prefix", prefix], work, opts.registry
        )
        results["subjects_list_versions_s"], results["subjects_list_exit"] = round(seconds, 2), code
    for name in names:
        client.delete_subject(name)
        client.delete_subject(name, permanent=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
