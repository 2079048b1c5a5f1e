"""The census's JVM road: the header-only read by Kafka's own Java consumer (``CensusScan`` in
``census/jvm``), run as a child process, one thread and one consumer per share of the partitions.

Python keeps what needs the broker's metadata (the layout, ``offsets_for_times``, the retention:
``scan.layout`` / ``scan.retention``) and hands the JVM a plan: the topic, each partition's start
and end offsets, the threads, the deadline. The JVM answers with one JSON document (written to a
file: a long answer never blocks on a pipe) of spans per partition, turned here into the same
:class:`PartitionTally` objects the Python road makes, so the document and every output format are
the same whichever road read the data. Progress comes on the JVM's stderr as ``progress N``
lines; a failure as one ``error WORDS`` line and exit status 2 (the Kafka settings refused) or 3
(Kafka failed).

The scan's machinery (the threads over shares of the partitions, each with a consumer of its
own; the progress and ``error`` lines; the exit status) is ``Workers`` in the same jar, which
topics check's scan (``quality.jvmscan``) runs with too: the census's jar is on its classpath.

Where the parts come from: our jar (``census/jvm/schemacli-census.jar``, built by
``scripts/build-jvm`` and committed, its source digest checked by a unit test), ``java`` on PATH
(or ``$JAVA_HOME/bin/java``), and the Kafka client jars (kafka-clients and its codecs,
``census/jvm/pom.xml``) in the first of :func:`jar_dirs` that holds a kafka-clients jar.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from converters import jvmbuild
from converters.census.model import NULL, UNFRAMED, Kind, PartitionTally, Span
from converters.kafka import waits
from converters.kafka.settings import FAILOVER_CONSUMER, with_failover
from schemacli.errors import InputError, NetworkError, SchemacliError

HOME = Path(__file__).resolve().parent / "jvm"
SOURCES = HOME / "src"
JAR = HOME / "schemacli-census.jar"
POM = HOME / "pom.xml"
MAIN_CLASS = "dev.schemacli.census.CensusScan"
JARS_ENV = "SCHEMACLI_KAFKA_JARS"
_CHECKOUT = Path(__file__).resolve().parents[2]
ANSWER_LIMIT = 256 * 1024 * 1024  # a JVM scan's JSON answer (the census's, topics check's)
# the Java consumer's settings for a header-only read (the user's properties win): large fetches
# and polls, as on the Python road (bench/README.md, issue #29), and the bounds that keep a lost
# broker's stall short (kafka.settings.FAILOVER_CONSUMER; docs/census.md)
CONSUMER_DEFAULTS = {
    "enable.auto.commit": "false",
    "isolation.level": "read_uncommitted",
    "auto.offset.reset": "earliest",
    "fetch.max.bytes": str(64 * 1024 * 1024),
    "max.partition.fetch.bytes": str(16 * 1024 * 1024),
    "max.poll.records": "100000",
    "receive.buffer.bytes": str(4 * 1024 * 1024),
    "client.id": "schemacli-census",
    **FAILOVER_CONSUMER,
}
JVM_OPTIONS = ("-Xms256m", "-Xmx1g", "-XX:+UseParallelGC", "-Xshare:auto")


class JvmUnavailable(InputError):
    """``--engine jvm`` and the JVM road cannot run here (no java, no Kafka client jars, no jar)."""


def jar_dirs() -> list[Path]:
    """Where the Kafka client jars are looked for, in order: ``$SCHEMACLI_KAFKA_JARS``, the
    user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``, ``schemacli/kafka-clients``), and a
    checkout's ``.cache/jars/census`` (filled by scripts/ci-setup)."""
    return jar_dirs_of(JARS_ENV, "kafka-clients", _CHECKOUT / ".cache" / "jars" / "census")


def jar_dirs_of(env: str, cache: str, checkout: Path) -> list[Path]:
    """A JVM road's jar directories, in order: ``$env``, the user's cache (``$XDG_CACHE_HOME``
    or ``~/.cache``, ``schemacli/<cache>``), then ``checkout`` (a checkout's jars)."""
    dirs = []
    if os.environ.get(env):
        dirs.append(Path(os.environ[env]))
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    dirs.append(Path(home) / "schemacli" / cache)
    dirs.append(checkout)
    return dirs


@dataclass(frozen=True)
class Runtime:
    """What runs the JVM road: the java launcher and the classpath (our jars first)."""

    java: str
    classpath: tuple[Path, ...]


def find_java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def runtime() -> Runtime:
    """The JVM road's parts; JvmUnavailable (exit 2) naming the missing one and how to get it."""
    return find_runtime(
        (JAR,),
        jar_dirs(),
        ("kafka-clients-",),
        engine="the census's JVM engine",
        jar_name="the census's JVM scan",
        jars_name="the Kafka client jars (kafka-clients and its codecs)",
        resolve=f"mvn -f {POM} dependency:copy-dependencies -DincludeScope=runtime "
        "-DoutputDirectory=~/.cache/schemacli/kafka-clients",
        env=JARS_ENV,
        unavailable=JvmUnavailable,
    )


def find_runtime(
    ours: tuple[Path, ...],
    dirs: list[Path],
    wanted: tuple[str, ...],
    *,
    engine: str,
    jar_name: str,
    jars_name: str,
    resolve: str,
    env: str,
    unavailable: type[InputError],
) -> Runtime:
    """A JVM road's parts (the census's, topics check's): java, ``ours`` (the jars we ship, in
    classpath order: topics check's own, then the census's it runs with), and the first of
    ``dirs`` holding a jar of each ``wanted`` prefix; ``unavailable`` (exit 2) naming the
    missing one and how to get it (``resolve``: the command that fetches the jars)."""
    java = find_java()
    if java is None:
        raise unavailable(
            f"{engine} needs `java` (17 or later), and none is on PATH nor in $JAVA_HOME",
            hint="Install a JRE 17+ (e.g. apt-get install openjdk-17-jre-headless), or take "
            "--engine python.",
        )
    for jar in ours:
        if jvmbuild.jar_digest(jar) is None:
            raise unavailable(
                f"{jar_name} {str(jar)!r} is missing from this installation",
                hint="Reinstall schemacli, or take --engine python.",
            )
    for where in dirs:
        jars = sorted(where.glob("*.jar")) if where.is_dir() else []
        if all(any(j.name.startswith(w) for j in jars) for w in wanted):
            return Runtime(java, (*ours, *jars))
    looked = ", ".join(str(d) for d in dirs)
    raise unavailable(
        f"{engine} needs {jars_name}; none in {looked}",
        hint=f"Resolve them once: {resolve} (or set ${env} to a directory holding them), "
        "or take --engine python.",
    )


def available() -> bool:
    """Whether the JVM road can run here (``--engine auto`` takes it then)."""
    try:
        runtime()
    except JvmUnavailable:
        return False
    return True


def properties_text(
    bootstrap: str,
    properties: Mapping[str, str],
    defaults: Mapping[str, str] = CONSUMER_DEFAULTS,
) -> str:
    """A Java properties file: the defaults (with the failover timeouts a user's settings may
    raise), the user's (Java) settings over them, the bootstrap (also for topics check's scan,
    with its own defaults)."""
    settings = {**with_failover(defaults, properties), "bootstrap.servers": bootstrap}

    def escape(text: str) -> str:  # the JVM reads the file as UTF-8 (CensusScan)
        out = []
        for ch in text:
            if ch in "\\=:#! ":
                out.append("\\" + ch)
            elif ch < " " or ch == "\x7f":
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return "".join(out)

    return "".join(f"{escape(k)}={escape(v)}\n" for k, v in settings.items())


def _plan_text(topic: str, tallies: list[PartitionTally], threads: int, deadline: float) -> str:
    lines = [f"topic\t{topic}", f"deadline_ms\t{int(deadline * 1000)}", f"threads\t{threads}"]
    lines += [f"partition\t{t.partition}\t{t.start}\t{t.end}" for t in tallies]
    return "\n".join(lines) + "\n"


def read_partitions(
    bootstrap: str,
    topic: str,
    tallies: list[PartitionTally],
    *,
    properties: Mapping[str, str] | None,
    threads: int,
    deadline: float,
    step: Callable[[int], None],
    run: Runtime | None = None,
) -> list[PartitionTally]:
    """Read every partition of ``tallies`` over its range in the JVM (``threads`` consumers),
    ``step(n)`` as records are read; the tallies filled in. A partition not read to its end by
    ``deadline`` (time.time()) is marked incomplete. Raises JvmUnavailable, InputError (the
    Kafka settings refused), NetworkError (Kafka failed, the JVM died or answered nonsense)."""
    text = run_scan(
        run or runtime(),
        JVM_OPTIONS,
        MAIN_CLASS,
        _plan_text(topic, tallies, threads, deadline),
        properties_text(bootstrap, properties or {}),
        deadline,
        step,
        prefix="schemacli-census-",
        failure=lambda status, words: _failure(bootstrap, status, words),
        nonsense=_nonsense,
    )
    return _tallies(tallies, text)


def run_scan(
    run: Runtime,
    options: tuple[str, ...],
    main_class: str,
    plan: str,
    properties: str,
    deadline: float,
    step: Callable[[int], None],
    *,
    prefix: str,
    failure: Callable[[int, list[str]], SchemacliError],
    nonsense: Callable[[str], SchemacliError],
) -> bytes:
    """Run a JVM scan (the census's, topics check's): ``main_class PLAN PROPERTIES`` with the
    plan and the Java properties text written to files (the properties owner-only: they may
    hold secrets); its answer (the bytes it wrote to stdout, at most ANSWER_LIMIT). A non-zero
    exit status raises ``failure(status, stderr lines)``, a too large answer ``nonsense``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        plan_file, props, out_file = (
            Path(tmp, "plan"),
            Path(tmp, "consumer.properties"),
            Path(tmp, "out"),
        )
        plan_file.write_text(plan, encoding="utf-8")
        fd = os.open(props, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # may hold secrets
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(properties)
        classpath = os.pathsep.join(map(str, run.classpath))
        command = [run.java, *options, "-cp", classpath, main_class, str(plan_file), str(props)]
        with open(out_file, "wb") as out:
            status, words = run_jvm(command, out, deadline, step)
        if status != 0:
            raise failure(status, words)
        if out_file.stat().st_size > ANSWER_LIMIT:
            raise nonsense("an answer larger than 256 MiB")
        return out_file.read_bytes()


def run_jvm(
    command: list[str], out: IO[bytes], deadline: float, step: Callable[[int], None]
) -> tuple[int, list[str]]:
    """Run a JVM scan (the census's, topics check's), handing its progress lines to ``step``
    (in this thread); its exit status and its other stderr lines (at most 50). Killed when it
    outlives the deadline by a minute (it stops itself at the deadline) or on Ctrl-C."""
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE)
    lines: queue.Queue[bytes | None] = queue.Queue()

    def pump(stream: IO[bytes]) -> None:
        for line in iter(lambda: stream.readline(4096), b""):
            lines.put(line)
        lines.put(None)

    assert proc.stderr is not None
    reader = threading.Thread(target=pump, args=(proc.stderr,), daemon=True)
    reader.start()
    words: list[str] = []
    try:
        while True:
            try:
                line = lines.get(timeout=waits.SLICE)
            except queue.Empty:
                if time.time() > deadline + 60:
                    proc.kill()
                continue
            if line is None:
                break
            if line.startswith(b"progress ") and line[9:].strip().isdigit():
                step(int(line[9:]))
            elif len(words) < 50:
                words.append(line.decode("utf-8", "replace").rstrip())
        return proc.wait(), words
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def _failure(bootstrap: str, status: int, words: list[str]) -> SchemacliError:
    return scan_failure(
        bootstrap,
        status,
        words,
        scan="the census's JVM scan",
        refused="its Kafka settings",
        rerun="read",
    )


def scan_failure(
    bootstrap: str, status: int, words: list[str], *, scan: str, refused: str, rerun: str
) -> SchemacliError:
    """A JVM scan's non-zero exit as a typed error: 2 ``scan`` refused ``refused`` (InputError),
    3 Kafka failed, else the JVM stopped (NetworkError); the words its last ``error`` line says
    (else its last stderr line); the hint: ``--engine python`` to ``rerun`` without the JVM."""
    said = [w.removeprefix("error ") for w in words if w.startswith("error ")]
    what = said[-1] if said else (words[-1] if words else f"exit status {status}")
    if status == 2:
        return InputError(
            f"{scan} refused {refused}: {what}",
            hint="Check the --kafka-properties file (Java client names).",
        )
    if status == 3:
        return NetworkError(
            f"cannot read from Kafka at {bootstrap} (JVM engine): {what}",
            hint="Check --bootstrap and that the broker is up (and the --kafka-properties "
            "file, if any).",
        )
    return NetworkError(
        f"{scan} stopped with exit status {status}: {what}",
        hint=f"Run again with --engine python to {rerun} without the JVM.",
    )


def _nonsense(what: str) -> NetworkError:
    return NetworkError(
        f"the census's JVM scan gave {what}; no census was taken",
        hint="Run again with --engine python to read without the JVM.",
    )


def _kind(value: object) -> Kind:
    """A span's kind as the JVM wrote it: a 32-bit id, \"null\" or \"unframed\"."""
    if isinstance(value, str) and value in (NULL, UNFRAMED):
        return value
    if type(value) is int and 0 <= value < 2**32:
        return value
    raise ValueError(f"kind {value!r}")


def _stamp(value: Any) -> int | None:
    if value is None or type(value) is int:
        return value
    raise ValueError(f"timestamp {value!r}")


def _tallies(tallies: list[PartitionTally], text: bytes) -> list[PartitionTally]:
    """The JVM's answer into ``tallies``: every partition asked for, each once, well formed."""
    by_partition = {t.partition: t for t in tallies}
    seen: set[int] = set()
    try:
        doc = json.loads(text)
        for part in doc["partitions"]:
            tally = by_partition[part["partition"]]
            if tally.partition in seen:
                raise ValueError(f"partition {tally.partition} twice")
            seen.add(tally.partition)
            tally.scanned = int(part["scanned"])
            tally.complete = part["complete"] is True
            for side in ("keys", "values"):
                spans: dict[Kind, Span] = {}
                for kind, count, fo, fts, lo, lts in part[side]:
                    if type(count) is not int or type(fo) is not int or type(lo) is not int:
                        raise ValueError("a span's count or offsets")
                    spans[_kind(kind)] = Span(count, fo, lo, _stamp(fts), _stamp(lts))
                setattr(tally, side, spans)
    except (ValueError, KeyError, TypeError) as exc:
        raise _nonsense(f"an unreadable answer ({str(exc)[:200]})") from exc
    if seen != set(by_partition):
        raise _nonsense(f"no answer for partitions {sorted(set(by_partition) - seen)}")
    return [by_partition[p] for p in sorted(by_partition)]
