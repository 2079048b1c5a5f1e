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

Subjects curve (issue #39 item 1, ``--subjects-curve 1000,2000,5000,10000``): S subjects x 20
versions of records 20-60 fields wide, FULL_TRANSITIVE. One subject in a hundred holds a shared
record type (``commonNNNN-value``); one subject in ten takes it through a declared reference
(``vN.references.json``), one in ten by name from the store's names. Measured per size: cold
(``--no-cache``), the first run with the cache, warm outside git (the stat road), then with the
store committed in a git repository (as a store lives; the git index's road): the first run
there, warm, one subject changed (a version added), and ``--against git:HEAD`` with 10 subjects
changed (the one changed committed, then a version added to 10 subjects), with the cache and
without, and again for 10 other
subjects with the cache that run left (another change on the same base). Targets at 10,000 x 20:
cold < 30 s, warm < 2 s, one changed < 1 s, against 10 changed < 2 s, peak RSS < 1 GiB.

    .venv/bin/python bench/bench_gate_scale.py --subjects-curve 1000,2000
    .venv/bin/python bench/bench_gate_scale.py --write-store DIR --subjects 10000  # to profile
"""

from __future__ import annotations

import argparse
import functools
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
# issue #39 item 1, at 10,000 subjects x 20 versions (CPU seconds; peak RSS in MB)
WIDE_TARGETS = {
    "cold": 30.0,
    "warm_outside_git": 2.0,
    "warm": 2.0,
    "one_changed": 1.0,
    "against_10": 2.0,
    "against_10_no_cache": 2.0,
    "against_10_warm": 2.0,
}
WIDE_SIZE = 10_000
RSS_TARGET_MB = 1024
COMMON_EVERY = 100  # one subject in this many defines a shared record type
CHANGED = 10  # subjects given a new version before `--against git:HEAD`


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


def wide_subjects(subjects: int) -> list[str]:
    """The subjects of a wide store: the shared types' first, then the topics'."""
    commons = max(1, subjects // COMMON_EVERY)
    return [f"common{k:04d}-value" for k in range(commons)] + [
        f"topic{s:05d}-value" for s in range(commons, subjects)
    ]


def wide_record(subjects: list[str], s: int, version: int) -> tuple[dict, list | None]:
    """Subject ``s``'s ``version`` in a wide store, and its references (None: no file).

    20-40 fields in v1 (by subject), one optional field more per version (so up to 60 with a
    shared type); a topic with ``s % 10 == 1`` uses a shared record through a declared
    reference, one with ``s % 10 == 2`` by name (found in the store's names)."""
    commons = max(1, len(subjects) // COMMON_EVERY)
    width = 20 + (s * 7) % 21
    fields: list[dict] = [
        {"name": f"f{i}", "type": TYPES[(s + i) % len(TYPES)]} for i in range(width)
    ]
    references = None
    if s < commons:
        name, namespace = f"Shared{s}", "bench.common"
    else:
        name, namespace = f"Rec{s}", f"bench.topic{s}"
        if s % 10 in (1, 2):
            k = s % commons
            fields.append({"name": "shared", "type": f"bench.common.Shared{k}"})
            if s % 10 == 1:
                references = [
                    {"name": f"bench.common.Shared{k}", "subject": subjects[k], "version": 1}
                ]
    fields += [
        {"name": f"added{v}", "type": ["null", "string"], "default": None}
        for v in range(2, version + 1)
    ]
    record = {"type": "record", "name": name, "namespace": namespace, "fields": fields}
    return record, references


def write_wide_version(store: Path, subjects: list[str], s: int, version: int) -> None:
    folder = store / "subjects" / subjects[s]
    folder.mkdir(parents=True, exist_ok=True)
    record, references = wide_record(subjects, s, version)
    (folder / f"v{version}.avsc").write_text(json.dumps(record, indent=2))
    if references is not None:
        (folder / f"v{version}.references.json").write_text(json.dumps(references, indent=2))


def generate_wide(root: Path, subjects: int, versions: int) -> tuple[Path, list[str]]:
    """``root/schemas`` with ``subjects`` wide subjects (``wide_record``), FULL_TRANSITIVE."""
    store = root / "schemas"
    names = wide_subjects(subjects)
    for s in range(subjects):
        for v in range(1, versions + 1):
            write_wide_version(store, names, s, v)
    (root / "schemacli.toml").write_text('store = "schemas"\ndefault-level = "FULL_TRANSITIVE"\n')
    return store, names


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def wide_scenario(subjects: int, versions: int) -> dict:
    """One size of the subjects curve: cold, first with the cache, warm, one subject changed,
    and --against git:HEAD with ``CHANGED`` subjects changed (with the cache, and without)."""
    with tempfile.TemporaryDirectory() as tmp:
        root, cache = Path(tmp) / "repo", Path(tmp) / "cache"
        store, names = generate_wide(root, subjects, versions)
        out: dict = {
            "mode": "subjects",
            "subjects": subjects,
            "versions": versions,
            "files": len(list(store.glob("subjects/*/*"))),
            "load": [round(os.getloadavg()[0], 1)],
        }

        def step(name: str, *extra: str, cache: Path | None) -> None:
            out[name] = gate(root, *extra, cache=cache)
            cpu, wall, rss = out[name]  # shown as it comes: a 10,000-subject run is long
            print(f"  ({subjects}) {name} {cpu:.2f} s CPU, {wall:.2f} s wall, {rss} MB", flush=True)

        step("cold", "--no-cache", cache=None)
        step("first_with_cache", cache=cache)
        step("warm_outside_git", cache=cache)  # the stat road: a store in no repository
        # A store lives in a repository: from here on it is committed, and the warm runs take
        # the git index's road (docs/store.md); the first run in git records each clean
        # folder's tree id.
        _git(root, "init", "-q")
        _git(root, "add", "schemacli.toml", "schemas")
        _git(root, "commit", "-q", "-m", "the store")
        step("first_in_git", cache=cache)
        step("warm", cache=cache)
        first_topic = max(1, subjects // COMMON_EVERY)
        write_wide_version(store, names, first_topic, versions + 1)
        step("one_changed", cache=cache)
        _git(root, "add", "schemas")
        _git(root, "commit", "-q", "-m", "one more version")
        # ten subjects spread over the store (plain ones and ones with references)
        step_size = max(2, (subjects - first_topic) // CHANGED)
        changed = [first_topic + 1 + i * step_size for i in range(CHANGED)]
        for s in changed:
            write_wide_version(store, names, s, versions + 1)
        step("against_10", "--against", "git:HEAD", cache=cache)
        step("against_10_no_cache", "--against", "git:HEAD", "--no-cache", cache=None)
        # Another change's CI run on the same base, with the cache the first one left (what
        # a CI cache kept between pull requests sees): those 10 versions undone, 10 others
        # subjects changed.
        for s in changed:
            (store / "subjects" / names[s] / f"v{versions + 1}.avsc").unlink()
            (store / "subjects" / names[s] / f"v{versions + 1}.references.json").unlink(
                missing_ok=True
            )
        for s in changed:
            write_wide_version(store, names, s + step_size // 2, versions + 1)
        step("against_10_warm", "--against", "git:HEAD", cache=cache)
        out["load"].append(round(os.getloadavg()[0], 1))
        return out


def wide_report(row: dict) -> None:
    at_target = row["subjects"] == WIDE_SIZE
    parts = [f"{row['subjects']:>6} subjects x {row['versions']} versions, load {row['load']}:"]
    for name in (
        "cold",
        "first_with_cache",
        "warm_outside_git",
        "first_in_git",
        "warm",
        "one_changed",
        "against_10",
        "against_10_no_cache",
        "against_10_warm",
    ):
        cpu, wall, rss = row[name]
        target = WIDE_TARGETS.get(name)
        verdict = ""
        if at_target and target is not None:
            verdict = " met" if cpu < target and rss < RSS_TARGET_MB else " NOT MET"
        parts.append(f"{name} {cpu:.2f} s CPU ({wall:.2f} s wall, {rss} MB){verdict}")
    print("\n  ".join(parts), flush=True)


def gate(root: Path, *extra: str, cache: Path | None) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, peak RSS in MB) of one `schemacli gate` subprocess, from
    its own resource usage (os.wait4)."""
    env = dict(os.environ)
    env.pop("SCHEMACLI_CONFIG", None)
    # An installed schemacli has its bytecode compiled (pip does it): let the first run write
    # it, so that each step measures the gate, not compiling ~150 modules (~1 s of CPU here).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
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
    parser.add_argument(
        "--subjects-curve",
        help="comma-separated subject counts of wide stores (20 versions, references): "
        "issue #39 item 1, e.g. 1000,2000,5000,10000",
    )
    parser.add_argument(
        "--write-store",
        type=Path,
        help="only write a wide store of --subjects x --versions into this new folder "
        "(for a profile), then stop",
    )
    args = parser.parse_args()
    if args.write_store is not None:
        args.write_store.mkdir(parents=True)
        generate_wide(args.write_store, args.subjects, args.versions)
        return 0
    stamp = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    print(f"{stamp}  {machine()}  commit {commit()}  load average {os.getloadavg()[0]:.1f}")
    if args.subjects_curve:
        rows = []
        for subjects in (int(n) for n in args.subjects_curve.split(",")):
            rows.append(wide_scenario(subjects, 20 if args.versions == 100 else args.versions))
            wide_report(rows[-1])
        save(stamp, rows)
        return 0
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
    save(stamp, rows)
    return 0


def commit() -> str:
    """The schemacli commit measured (short hash, ``+dirty`` with uncommitted changes)."""
    here = Path(__file__).resolve().parent
    run = functools.partial(subprocess.run, cwd=here, capture_output=True, text=True, check=False)
    head = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip() or "?"
    dirty = run(["git", "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    return head + ("+dirty" if dirty else "")


def save(stamp: str, rows: list[dict]) -> None:
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a", encoding="utf-8") as out:
        for row in rows:
            out.write(
                json.dumps({"date": stamp, "machine": machine(), "commit": commit(), **row}) + "\n"
            )


if __name__ == "__main__":
    sys.exit(main())
