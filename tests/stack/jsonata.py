"""The JVM JSONata engine (JSONata4Java, what Confluent's Java serializers run) for the tests.

Resolved from Maven Central once into .cache/jars/jsonata/ (scripts/ci-setup does it on a fresh
machine); tests/jsonata_jvm/runner.py puts these jars beside pyspark's avro-1.12.0 jar.
"""

from __future__ import annotations

import functools
from pathlib import Path

from .common import JARS, STACK_DIR, ComponentUnavailable, maven_copy

JSONATA_POM = STACK_DIR / "jsonata-pom.xml"
JSONATA_JARS = JARS / "jsonata"
JSONATA_VERSION = "2.6.2"  # keep equal to jsonata-pom.xml


@functools.cache
def jsonata_jars() -> list[Path]:
    """JSONata4Java and its runtime dependencies (Jackson, ANTLR, ...). Raises
    ComponentUnavailable when Maven cannot resolve them."""
    jars = maven_copy("jsonata", JSONATA_POM, JSONATA_JARS)
    if not any(j.name == f"JSONata4Java-{JSONATA_VERSION}.jar" for j in jars):
        raise ComponentUnavailable(
            "jsonata",
            f"JSONata4Java-{JSONATA_VERSION}.jar missing from {JSONATA_JARS}; delete that "
            "folder to resolve again",
        )
    return jars
