"""The Java oracle: OracleMain.java compiled against the avro 1.12 jar bundled in pyspark.

One long-lived JVM answers JSON lines (see OracleMain.java), so thousands of questions cost
seconds. Used by the differential tests and by bench/bench_compat.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.stack.javac import compile_if_stale

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).with_name("OracleMain.java")
BUILD = ROOT / ".cache" / "oracle"
JARS = (
    "avro-1.12.0.jar",
    "jackson-core-2.18.2.jar",
    "jackson-databind-2.18.2.jar",
    "jackson-annotations-2.18.2.jar",
    "slf4j-api-2.0.16.jar",
)


class OracleUnavailable(RuntimeError):
    """javac/java or the avro jar is missing: the oracle tests fail with this message."""


def _jar_dir() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise OracleUnavailable(
            "pyspark is not installed, and its jars/ folder holds the avro-1.12.0 jar the "
            "oracle runs: pip install 'pyspark==4.0.1' into .venv"
        ) from exc
    return Path(pyspark.__file__).parent / "jars"


def classpath() -> str:
    jars = _jar_dir()
    missing = [j for j in JARS if not (jars / j).is_file()]
    if missing:
        raise OracleUnavailable(f"missing jars in {jars}: {', '.join(missing)}")
    return os.pathsep.join([str(BUILD)] + [str(jars / j) for j in JARS])


def build() -> str:
    """Compile OracleMain.java into .cache/oracle (when the source is newer); the classpath."""
    cp = classpath()
    compile_if_stale(SOURCE, BUILD, cp, OracleUnavailable)
    return cp


class Oracle:
    """A running OracleMain process. Use as a context manager, or call close()."""

    def __init__(self) -> None:
        cp = build()
        self.process = subprocess.Popen(
            ["java", "-Xss16m", "-cp", cp, "OracleMain"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.ask_many([request])[0]

    def ask_many(self, requests: list[dict[str, Any]], chunk: int = 200) -> list[dict[str, Any]]:
        """Send requests in chunks (pipelined) and return the answers in order."""
        answers: list[dict[str, Any]] = []
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        for start in range(0, len(requests), chunk):
            part = requests[start : start + chunk]
            stdin.write("".join(json.dumps(r) + "\n" for r in part))
            stdin.flush()
            for _ in part:
                line = stdout.readline()
                if not line:
                    raise OracleUnavailable("the Java oracle process died")
                answers.append(json.loads(line))
        return answers

    def parse(self, schema: Any) -> dict[str, Any]:
        return self.ask({"op": "parse", "schema": schema})

    def compat(self, reader: Any, writer: Any) -> dict[str, Any]:
        return self.ask({"op": "compat", "reader": reader, "writer": writer})

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=10)

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
