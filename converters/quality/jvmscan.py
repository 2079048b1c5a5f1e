"""``topics check``'s JVM road: the topic read by Kafka's own Java consumer, every value decoded
with its writer schema into a GenericRecord and the rule set run over it with Google's CEL-Java
as Confluent's Java serializer runs it (``QualityScan`` in ``quality/jvm``), in a child process.

Python keeps what needs the broker's metadata and the registry (the ranges: the census's
``scan.layout``; the writer schemas and the rule set) and hands the JVM a plan (JSON); the JVM
answers with one JSON document of counts per writer id and rule. It is run the way the census's
scan is (``census.jvmscan``: the java launcher, the properties file, progress lines, typed
failures), with its own jar, the census's jar after it (QualityScan's threads, consumers,
progress and exit status are the census's ``Workers``: the jar is compiled against it, and its
digest covers the census's sources, :data:`NEEDS`), and its own run-time jars (CEL-Java, Avro,
kafka-clients: ``quality/jvm/pom.xml``) in the first of :func:`jar_dirs` holding a ``cel-*.jar``.
Both jars are package data of their own packages, so the census's is found beside
``census/jvmscan.py`` in a checkout and an installed wheel alike.

The same jar has ``RuleRun``: a rule set over given records (the proof's JVM road).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from converters.census import jvmscan as census_jvm
from converters.census.model import PartitionTally
from schemacli.errors import InputError, NetworkError, SchemacliError

HOME = Path(__file__).resolve().parent / "jvm"
SOURCES = HOME / "src"
JAR = HOME / "schemacli-quality.jar"
# the other part's sources the jar is compiled with (the census's Workers), and our jars on the
# classpath, its own first
NEEDS = (census_jvm.SOURCES,)
OUR_JARS = (JAR, census_jvm.JAR)
POM = HOME / "pom.xml"
SCAN_CLASS = "dev.schemacli.quality.QualityScan"
RUN_CLASS = "dev.schemacli.quality.RuleRun"
JARS_ENV = "SCHEMACLI_QUALITY_JARS"
CEL_VERSION = "0.13.1"  # dev.cel:cel, keep equal to jvm/pom.xml (docs/quality.md#engines)
_CHECKOUT = Path(__file__).resolve().parents[2]
CONSUMER_DEFAULTS = {**census_jvm.CONSUMER_DEFAULTS, "client.id": "schemacli-check"}
JVM_OPTIONS = ("-Xms256m", "-Xmx2g", "-XX:+UseParallelGC", "-Xshare:auto")


class JvmUnavailable(InputError):
    """``--engine jvm`` and the JVM road cannot run here (no java, no run-time jars, no jar)."""


def jar_dirs() -> list[Path]:
    """Where the run-time jars are looked for, in order: ``$SCHEMACLI_QUALITY_JARS``, the
    user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``, ``schemacli/quality``), and a checkout's
    ``.cache/jars/quality`` (filled by scripts/ci-setup)."""
    return census_jvm.jar_dirs_of(JARS_ENV, "quality", _CHECKOUT / ".cache" / "jars" / "quality")


Runtime = census_jvm.Runtime


def runtime() -> Runtime:
    """The JVM road's parts; JvmUnavailable (exit 2) naming the missing one and how to get it."""
    return census_jvm.find_runtime(
        OUR_JARS,
        jar_dirs(),
        ("cel-", "avro-", "kafka-clients-"),
        engine="topics check's JVM engine",
        jar_name="topics check's JVM engine",
        jars_name="CEL-Java, Avro and the Kafka client jars",
        resolve=f"mvn -f {POM} dependency:copy-dependencies -DincludeScope=runtime "
        "-DoutputDirectory=~/.cache/schemacli/quality",
        env=JARS_ENV,
        unavailable=JvmUnavailable,
    )


def available() -> bool:
    try:
        runtime()
    except JvmUnavailable:
        return False
    return True


def plan_document(
    topic: str,
    tallies: list[PartitionTally],
    *,
    writers: Mapping[int, str],
    rule_set: Mapping[str, Any],
    metadata: Mapping[str, Any] | None,
    mode: str,
    threads: int,
    deadline: float,
    examples: int,
) -> dict[str, Any]:
    """What QualityScan reads: the ranges, the writer schemas by id and the rule set."""
    return {
        "topic": topic,
        "deadline_ms": int(deadline * 1000),
        "threads": threads,
        "examples": examples,
        "mode": mode,
        "partitions": [[t.partition, t.start, t.end] for t in tallies],
        "writers": {str(i): text for i, text in writers.items()},
        "ruleSet": dict(rule_set),
        "metadata": dict(metadata or {}),
    }


def read_partitions(
    bootstrap: str,
    plan: dict[str, Any],
    *,
    properties: Mapping[str, str] | None,
    step: Callable[[int], None],
    run: Runtime | None = None,
) -> dict[str, Any]:
    """Run the plan in the JVM, ``step(n)`` as records are read; the JVM's answer (checked:
    :func:`answer`). Raises JvmUnavailable, InputError (the Kafka settings refused),
    NetworkError (Kafka failed, the JVM died or answered nonsense)."""
    text = census_jvm.run_scan(
        run or runtime(),
        JVM_OPTIONS,
        SCAN_CLASS,
        json.dumps(plan),
        census_jvm.properties_text(bootstrap, properties or {}, CONSUMER_DEFAULTS),
        plan["deadline_ms"] / 1000,
        step,
        prefix="schemacli-check-",
        failure=lambda status, words: _failure(bootstrap, status, words),
        nonsense=_nonsense,
    )
    return answer(plan, text)


def _failure(bootstrap: str, status: int, words: list[str]) -> SchemacliError:
    return census_jvm.scan_failure(
        bootstrap,
        status,
        words,
        scan="topics check's JVM scan",
        refused="its plan or its Kafka settings",
        rerun="check",
    )


def _nonsense(what: str) -> NetworkError:
    return NetworkError(
        f"topics check's JVM scan gave {what}; nothing was checked",
        hint="Run again with --engine python to check without the JVM.",
    )


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"count {value!r}")
    return value


def _offsets(value: Any) -> list[tuple[int, int]]:
    out = []
    for pair in value:
        p, o = pair
        out.append((_count(p), _count(o)))
    return out


def answer(plan: Mapping[str, Any], text: bytes) -> dict[str, Any]:
    """The JVM's answer checked and put in the shape both roads give (``Tallies``' dict)."""
    n_rules = len(plan["ruleSet"].get("domainRules") or [])
    asked = {p for p, _, _ in plan["partitions"]}
    try:
        doc = json.loads(text)
        partitions = {}
        for part in doc["partitions"]:
            p = _count(part["partition"])
            if p not in asked or p in partitions:
                raise ValueError(f"partition {p}")
            partitions[p] = (_count(part["scanned"]), part["complete"] is True)
        if set(partitions) != asked:
            raise ValueError(f"no answer for partitions {sorted(asked - set(partitions))}")
        writers = {}
        for key, w in doc["writers"].items():
            rules = []
            for r in w["rules"]:
                first_error = r.get("first_error")
                if first_error is not None and not isinstance(first_error, str):
                    raise ValueError("first_error")
                rules.append(
                    {
                        "pass": _count(r["pass"]),
                        "fail": _count(r["fail"]),
                        "error": _count(r["error"]),
                        "skipped": _count(r["skipped"]),
                        "failed_at": _offsets(r["failed_at"]),
                        "errored_at": _offsets(r["errored_at"]),
                        "first_error": first_error,
                    }
                )
            if len(rules) != n_rules:
                raise ValueError(f"{len(rules)} rules for writer {key}")
            at = w.get("undecodable_at")
            writers[int(key)] = {
                "records": _count(w["records"]),
                "undecodable": _count(w["undecodable"]),
                "undecodable_at": None if at is None else _offsets([at])[0],
                "decode_error": w.get("decode_error"),
                "rules": rules,
            }
        return {
            "partitions": partitions,
            "null": _count(doc["null"]),
            "unframed": _count(doc["unframed"]),
            "unknown": {int(k): _count(v) for k, v in doc["unknown"].items()},
            "writers": writers,
        }
    except (ValueError, KeyError, TypeError) as exc:
        raise _nonsense(f"an unreadable answer ({str(exc)[:200]})") from exc


def run_rules(
    schema: Mapping[str, Any] | str,
    rule_set: Mapping[str, Any],
    records: list[bytes],
    *,
    metadata: Mapping[str, Any] | None = None,
    mode: str = "WRITE",
    timeout: float = 600,
    run: Runtime | None = None,
) -> list[dict[str, Any]]:
    """The rule set over ``records`` (Avro binary with ``schema``) as a Confluent Java
    serializer (WRITE) or deserializer (READ) runs it (``RuleRun``): per record, each rule's
    ``[verdict, action, error]`` in the rule set's order, ``refused`` and ``record`` (the Avro
    binary after the transforms, or None)."""
    results: list[dict[str, Any]] = rule_run(
        schema, rule_set, records, metadata=metadata, mode=mode, timeout=timeout, run=run
    )["results"]
    return results


def rule_run(
    schema: Mapping[str, Any] | str,
    rule_set: Mapping[str, Any],
    records: list[bytes],
    *,
    metadata: Mapping[str, Any] | None = None,
    mode: str = "WRITE",
    closures: bool = True,
    timeout: float = 600,
    run: Runtime | None = None,
) -> dict[str, Any]:
    """RuleRun's whole answer: ``results`` as :func:`run_rules` gives them, and
    ``evaluations``, how many evaluations the compiled closures made (``closures``), gave back
    to CEL-Java (``fallback``) or CEL-Java made alone (``celjava``), and ``compiled_at_run``,
    how many programs were compiled while the records ran rather than ahead of them (the engine
    prepares them from the schema first, as the scan does). ``closures=False`` runs
    CEL-Java's interpreter alone, walking every field for a CEL_FIELD rule: the reference road the
    closures' proof compares with the fast one."""
    import base64

    run = run or runtime()
    request = {
        "schema": json.loads(schema) if isinstance(schema, str) else schema,
        "ruleSet": dict(rule_set),
        "metadata": dict(metadata or {}),
        "mode": mode,
        "closures": closures,
        "records": [base64.b64encode(r).decode("ascii") for r in records],
    }
    done = subprocess.run(
        [run.java, "-cp", os.pathsep.join(map(str, run.classpath)), RUN_CLASS],
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise _nonsense(f"exit status {done.returncode}: {done.stderr.decode()[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    for r in answer["results"]:
        r["record"] = None if r["record"] is None else base64.b64decode(r["record"])
    return answer
