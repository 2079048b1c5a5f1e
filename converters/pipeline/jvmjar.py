"""The converter's JVM writer (``pipeline/jvm``): the jar shipped beside its Java sources.

The exactly-once writer runs on the executors' JVMs (``dev.schemacli.converters.TxSink``, called
from ``pipeline.txsink``), so the job needs our jar on Spark's classpath: ``migrate deploy``
passes it with ``--jars``. It is built from ``pipeline/jvm/src`` by ``scripts/build-jvm`` (javac
against pyspark's jars and kafka-clients) and committed, so that users need no JDK nor Maven;
its manifest records the SHA-256 of the sources it was built from, which a unit test compares
with the sources in the tree.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

HOME = Path(__file__).resolve().parent / "jvm"
SOURCES = HOME / "src"
JAR = HOME / "schemacli-converters.jar"
WRITER_CLASS = "dev.schemacli.converters.TxSink"
DIGEST = "Schemacli-Source-SHA256"
JAVA_RELEASE = "17"  # Spark 4's minimum
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the same sources give the same jar


def source_files() -> list[Path]:
    return sorted(SOURCES.rglob("*.java"))


def source_digest() -> str:
    """SHA-256 over the Java sources' paths and contents."""
    h = hashlib.sha256()
    for path in source_files():
        h.update(path.relative_to(SOURCES).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def jar_digest(jar: Path = JAR) -> str | None:
    """The source digest in the jar's manifest; None without a jar or the attribute."""
    try:
        with zipfile.ZipFile(jar) as z:
            manifest = z.read("META-INF/MANIFEST.MF").decode()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    for line in manifest.splitlines():
        name, _, value = line.partition(":")
        if name == DIGEST:
            return value.strip()
    return None


def build(classpath: Sequence[Path], out: Path = JAR, javac: str = "javac") -> Path:
    """Compile the sources against ``classpath`` (pyspark's jars, kafka-clients) into ``out``.
    Raises subprocess.CalledProcessError with javac's output when it fails."""
    with tempfile.TemporaryDirectory(prefix="schemacli-jvm-") as tmp:
        classes = Path(tmp)
        subprocess.run(
            [
                javac,
                "--release",
                JAVA_RELEASE,
                "-Xlint:all,-path",
                "-Werror",
                "-encoding",
                "UTF-8",
                "-cp",
                ":".join(str(p) for p in classpath),
                "-d",
                str(classes),
                *map(str, source_files()),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        manifest = (
            f"Manifest-Version: 1.0\r\nCreated-By: scripts/build-jvm\r\n"
            f"{DIGEST}: {source_digest()}\r\n\r\n"
        )
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", _EPOCH), manifest)
            for path in sorted(classes.rglob("*.class")):
                info = zipfile.ZipInfo(path.relative_to(classes).as_posix(), _EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
    out.write_bytes(buf.getvalue())
    return out
