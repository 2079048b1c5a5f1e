"""The converter's JVM writer (``pipeline/jvm``): the jar shipped beside its Java sources.

The exactly-once writer runs on the executors' JVMs (``dev.schemacli.converters.TxSink``, called
from ``pipeline.txsink``), so the job needs our jar on Spark's classpath: ``migrate deploy``
passes it with ``--jars``. It is built from ``pipeline/jvm/src`` by ``scripts/build-jvm`` (javac
against pyspark's jars and kafka-clients) and committed, so that users need no JDK nor Maven;
its manifest records the SHA-256 of the sources it was built from, which a unit test compares
with the sources in the tree (the plumbing: ``converters.jvmbuild``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from converters import jvmbuild

HOME = Path(__file__).resolve().parent / "jvm"
SOURCES = HOME / "src"
JAR = HOME / "schemacli-converters.jar"
WRITER_CLASS = "dev.schemacli.converters.TxSink"
JAVA_RELEASE = jvmbuild.JAVA_RELEASE


def source_digest() -> str:
    """SHA-256 over the Java sources' paths and contents."""
    return jvmbuild.source_digest(SOURCES)


def jar_digest(jar: Path = JAR) -> str | None:
    """The source digest in the jar's manifest; None without a jar or the attribute."""
    return jvmbuild.jar_digest(jar)


def build(classpath: Sequence[Path], out: Path = JAR, javac: str = "javac") -> Path:
    """Compile the sources against ``classpath`` (pyspark's jars, kafka-clients) into ``out``.
    Raises subprocess.CalledProcessError with javac's output when it fails."""
    return jvmbuild.build(SOURCES, classpath, out, javac)
