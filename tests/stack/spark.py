"""Spark with its Avro and Kafka connectors, for tests and the devstack.

pyspark from PyPI ships Spark itself but not ``spark-avro`` nor ``spark-sql-kafka-0-10``. They
are resolved once with Maven (tests/stack/spark-pom.xml) into ``.cache/jars/spark/`` and passed
by ``spark.jars``; a run needs no network (no ``spark.jars.packages``/Ivy at run time).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import JARS, STACK_DIR, ComponentUnavailable, maven_copy

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
