"""Spark with its Avro and Kafka connectors, for tests and the devstack.

pyspark from PyPI ships Spark itself but not ``spark-avro`` nor ``spark-sql-kafka-0-10``. They
are resolved once with Maven (tests/stack/spark-pom.xml) into ``.cache/jars/spark/`` and passed
by ``spark.jars``; a run needs no network (no ``spark.jars.packages``/Ivy at run time).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .common import CACHE, JARS, JVM_BASE_OPTS, STACK_DIR, ComponentUnavailable, java, maven_copy

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_POM = STACK_DIR / "spark-pom.xml"
SPARK_JARS = JARS / "spark"

_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+)-(?P<version>\d+(?:\.\d+)+[^/]*)\.jar$")


def _artifact(jar_name: str) -> str:
    match = _VERSIONED_JAR.match(jar_name)
    return match.group("artifact") if match else jar_name


def _pyspark_jars_dir() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise ComponentUnavailable(
            "spark", "pyspark is not installed (pip install pyspark==4.0.1)"
        ) from exc
    return Path(pyspark.__file__).resolve().parent / "jars"


@functools.cache
def spark_jars() -> list[Path]:
    """The connector jars to add to pyspark: spark-avro, spark-sql-kafka and what they need.

    Resolves on first use (mvn, into .cache/jars/spark/) and is cached on disk and in memory.
    Jars whose artifact pyspark already ships (scala-library, hadoop-client, ...) are left out so
    the classpath holds one version of each. Raises ComponentUnavailable if Maven fails.
    """
    shipped = {_artifact(p.name) for p in _pyspark_jars_dir().glob("*.jar")}
    jars = maven_copy(
        "spark", SPARK_POM, SPARK_JARS, keep=lambda jar: _artifact(jar.name) not in shipped
    )
    names = {_artifact(j.name) for j in jars}
    for needed in ("spark-avro_2.13", "spark-sql-kafka-0-10_2.13", "kafka-clients"):
        if needed not in names:
            raise ComponentUnavailable(
                "spark", f"{needed} missing from {SPARK_JARS}; delete that folder to resolve again"
            )
    return jars


def submit_jvm_confs(*, archive_at_exit: Path | None = None) -> tuple[str, ...]:
    """``--conf`` items for a spark-submit the tests start: its driver's and executors' JVMs get
    ``JVM_BASE_OPTS`` (C1 only, serial GC), as the test daemons do. A test's driver lives for
    seconds to a minute and its executors take a few thousand records a batch: C2's compiles
    and G1's threads cost them more CPU than they win back (a deploy on the test cluster took
    half the CPU with these; bench/README.md). The driver maps the class-data archive
    (``driver_archive``) when there is one, or writes it at its exit to ``archive_at_exit``."""
    driver = list(JVM_BASE_OPTS)
    if archive_at_exit is not None:
        driver.append(f"-XX:ArchiveClassesAtExit={archive_at_exit}")
    elif driver_archive().is_file():
        driver.append(f"-XX:SharedArchiveFile={driver_archive()}")
    return (
        "--conf",
        f"spark.driver.extraJavaOptions={' '.join(driver)}",
        "--conf",
        f"spark.executor.extraJavaOptions={' '.join(JVM_BASE_OPTS)}",
    )


@functools.cache
def driver_archive() -> Path:
    """Where the dynamic class-data archive (AppCDS) of the tests' Spark drivers lives: the
    classes a driver loads (Spark core, SQL, Kafka source, py4j), mapped at start instead of read
    and verified from pyspark's jars again by every driver. Named after the JVM and pyspark's
    jars: the JVM refuses an archive made by another JVM or over another class path (and then
    runs without one), so a new name keeps a stale archive from shadowing a new one."""
    import pyspark

    javabin = Path(java()).resolve()
    jars = sorted(_pyspark_jars_dir().glob("*.jar"))
    digest = hashlib.sha256(str(javabin).encode())
    for path in [javabin, *javabin.parent.parent.glob("lib/server/libjvm.so"), *jars]:
        stat = path.stat()
        digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return CACHE / "cds" / f"spark-driver-{pyspark.__version__}-{digest.hexdigest()[:12]}.jsa"


@dataclass
class DriverArchive:
    """The ``--conf`` items of one spark-submit (``confs``) and, when its driver writes the
    class-data archive at its exit, the temporary file it writes (``written``)."""

    confs: tuple[str, ...]
    written: Path | None = None

    def keep(self) -> None:
        """Move the archive the driver wrote into place (``driver_archive``), if it wrote one.
        Call it once the run ended well: the driver has exited, so the file is whole."""
        if self.written is not None and self.written.is_file() and self.written.stat().st_size:
            os.replace(self.written, driver_archive())


@contextlib.contextmanager
def archiving_driver() -> Iterator[DriverArchive]:
    """The JVM settings of one spark-submit whose driver ends on its own: ``submit_jvm_confs``,
    and, while no archive exists and no other process is writing one, the option that has the
    driver write it at its exit (``-XX:ArchiveClassesAtExit``) to a file of this process's,
    removed at the end of the block unless ``DriverArchive.keep`` moved it into place. Detached
    runs, which the tests kill, take ``submit_jvm_confs`` alone (a SIGKILLed JVM writes
    nothing)."""
    archive = driver_archive()
    if archive.is_file():
        yield DriverArchive(submit_jvm_confs())
        return
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another test process's driver is writing it: run without
            yield DriverArchive(submit_jvm_confs())
            return
        if archive.is_file():  # written while this process waited for the lock
            yield DriverArchive(submit_jvm_confs())
            return
        written = archive.with_name(f".{archive.name}.{os.getpid()}")
        written.unlink(missing_ok=True)
        try:
            yield DriverArchive(submit_jvm_confs(archive_at_exit=written), written)
        finally:
            written.unlink(missing_ok=True)


def make_spark_session(app_name: str = "schemacli-tests") -> SparkSession:
    """A local[2] SparkSession with the Avro and Kafka connectors on its classpath.

    UI off, two shuffle partitions, UTC session time zone, bound to loopback, modest driver
    memory. If a session already runs in this process it is returned as is (Spark allows one
    context per JVM; its jars were set when it was created).
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None and SparkContext._gateway is not None:
        # another road's session (the census's, topics check's) ran and stopped in this process:
        # its JVM holds that session's jars on the driver's classpath, not ours (the converter's
        # writer is called through py4j there); a new JVM is launched with these
        SparkContext._gateway.shutdown()
        SparkContext._gateway = None
        SparkContext._jvm = None
    # Keeps Spark off the machine's external interface (and silences its hostname warning).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers (a test's UDFs) run this interpreter, not the first python3 on PATH
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from converters.pipeline.jvmjar import JAR

    # and the converter's exactly-once writer, as `migrate deploy` gives it to spark-submit
    jars = ",".join(str(p) for p in [*spark_jars(), JAR])
    return (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.jars", jars)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.warehouse.dir", str(JARS.parent / "spark-warehouse"))
        .config(
            "spark.driver.extraJavaOptions", "-Dderby.system.home=" + str(JARS.parent / "derby")
        )
        .getOrCreate()
    )
