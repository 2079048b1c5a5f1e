"""A test's small Java program (the Avro oracle, the JSONata runner): compiled with the JDK's
javac when its source is newer than its class, run with java. A missing JDK or a failed build is
the caller's "unavailable" error, so its tests fail (never skip) with the reason."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def compile_if_stale(
    source: Path, build: Path, classpath: str, unavailable: type[Exception]
) -> None:
    """Compile ``source`` into ``build`` against ``classpath`` unless its class is newer.
    Raises ``unavailable`` when javac or java is missing or javac fails."""
    for tool in ("javac", "java"):
        if shutil.which(tool) is None:
            raise unavailable(f"{tool} not found on PATH: install a JDK (17+)")
    target = build / f"{source.stem}.class"
    if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
        return
    build.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["javac", "-nowarn", "-d", str(build), "-cp", classpath, str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise unavailable(f"javac failed:\n{done.stderr}")
