"""Run a JSONata migration rule on the JVM as Confluent's Java Avro deserializer does.

JsonataMain.java is compiled by javac into .cache/jsonata_jvm against JSONata4Java (resolved
from Maven Central by tests.stack.jsonata) and the avro-1.12.0 jar pyspark bundles (as the
oracle). A missing JDK or jar raises :class:`JsonataJvmUnavailable`: the tests fail, never skip.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.stack.common import CACHE, ComponentUnavailable
from tests.stack.javac import compile_if_stale
from tests.stack.jsonata import jsonata_jars

SOURCE = Path(__file__).with_name("JsonataMain.java")
BUILD = CACHE / "jsonata_jvm"
AVRO_JARS = ("avro-1.12.0.jar", "slf4j-api-2.0.16.jar")  # as tests/oracle/oracle.py


class JsonataJvmUnavailable(RuntimeError):
    """javac/java, the avro jar or JSONata4Java is missing."""


def _classpath() -> str:
    try:
        import pyspark
    except ImportError as exc:
        raise JsonataJvmUnavailable(
            f"pyspark is not installed; its jars/ folder holds {AVRO_JARS[0]}"
        ) from exc
    avro = [Path(pyspark.__file__).parent / "jars" / j for j in AVRO_JARS]
    missing = [str(j) for j in avro if not j.is_file()]
    if missing:
        raise JsonataJvmUnavailable(f"missing: {', '.join(missing)}")
    try:
        jars = jsonata_jars()
    except ComponentUnavailable as exc:
        raise JsonataJvmUnavailable(str(exc)) from exc
    # Avro's Jackson comes from the JSONata4Java resolution (2.20, as Confluent 8.3.1 runs)
    return os.pathsep.join([str(BUILD), *(str(j) for j in avro), *(str(j) for j in jars)])


def build() -> str:
    """Compile JsonataMain.java (when the source changed); return the classpath."""
    cp = _classpath()
    compile_if_stale(SOURCE, BUILD, cp, JsonataJvmUnavailable)
    return cp


def downgrade(
    v2: Any, v1: Any, expr: str, records: list[bytes], *, timeout: float = 600
) -> list[bytes | str]:
    """Each v2 record (Avro binary) through the rule: its v1 Avro binary, or the error text."""
    cp = build()
    request = {
        "v2": v2,
        "v1": v1,
        "expr": expr,
        "records": [base64.b64encode(r).decode("ascii") for r in records],
    }
    done = subprocess.run(
        ["java", "-Xss16m", "-cp", cp, "JsonataMain"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise JsonataJvmUnavailable(f"JsonataMain failed:\n{done.stderr[-4000:]}")
    out: list[bytes | str] = []
    for result in json.loads(done.stdout)["results"]:
        out.append(base64.b64decode(result["ok"]) if "ok" in result else result["error"])
    return out
