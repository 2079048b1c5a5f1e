"""A small JVM part shipped as a jar beside its Java sources: the digest of the sources, the digest
the jar's manifest records, and the build (javac, then a reproducible zip).

Three parts use it: the converter's exactly-once writer (``pipeline.jvmjar``), the census's scan
over Kafka's own consumer (``census.jvmscan``) and topics check's scan (``quality.jvmscan``), which
is compiled and run with the census's jar on its classpath (its threads, consumers and progress are
the census's ``Workers``), so its digest covers the census's sources too. Each jar is built by
``scripts/build-jvm`` and committed, so that users need no JDK; a unit test compares each jar's
recorded digest with its sources in the tree.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

DIGEST = "Schemacli-Source-SHA256"
JAVA_RELEASE = "17"  # Spark 4's minimum, and Debian 12's JDK
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the same sources give the same jar


def source_files(sources: Path) -> list[Path]:
    return sorted(sources.rglob("*.java"))


def source_digest(sources: Path, needs: Sequence[Path] = ()) -> str:
    """SHA-256 over the Java sources' paths (relative to ``sources``) and contents, and over the
    digests of ``needs``: the sources of the parts compiled onto its classpath (a change there
    asks for this jar to be built again too)."""
    h = hashlib.sha256()
    for path in source_files(sources):
        h.update(path.relative_to(sources).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    for need in needs:
        h.update(b"needs\0" + source_digest(need).encode() + b"\0")
    return h.hexdigest()


def jar_digest(jar: Path) -> str | None:
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


def build(
    sources: Path,
    classpath: Sequence[Path],
    out: Path,
    javac: str = "javac",
    needs: Sequence[Path] = (),
) -> Path:
    """Compile ``sources`` against ``classpath`` into the jar ``out``, its manifest recording
    :func:`source_digest` of ``sources`` and ``needs``. Raises subprocess.CalledProcessError
    with javac's output when it fails."""
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
                *map(str, source_files(sources)),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        manifest = (
            f"Manifest-Version: 1.0\r\nCreated-By: scripts/build-jvm\r\n"
            f"{DIGEST}: {source_digest(sources, needs)}\r\n\r\n"
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
