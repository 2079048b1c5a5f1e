"""Spark for the converter and the census: the version it is built against, the connector
packages the job needs (``--packages`` for ``migrate deploy``), what a ``--master`` may be, how a
session in this process gets the connectors (:func:`connector_conf`), and the local session that
``migrate validate --spark`` and ``migrate replay`` run in.

pyspark is imported inside :func:`local_spark`: this module is cheap to import.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_VERSION = "4.0.1"
PACKAGES = (
    f"org.apache.spark:spark-avro_2.13:{SPARK_VERSION}",
    f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_VERSION}",
)
AVRO_PACKAGE, KAFKA_PACKAGE = PACKAGES
# The masters spark-submit takes: local[N[,F]], yarn, and cluster managers by URL
MASTER = re.compile(r"^(local(\[(\d+|\*)(,\d+)?\])?|yarn|(k8s|spark|mesos)://\S+)$")
JARS_ENV = "SCHEMACLI_SPARK_JARS"  # comma-separated connector jars, instead of Maven at run time


def connector_conf(package: str) -> tuple[str, str]:
    """The setting that gives a session made in this process its connectors: ``spark.jars``
    from ``$SCHEMACLI_SPARK_JARS`` when set (no network at run time), else ``package`` from
    Maven (``spark.jars.packages``)."""
    jars = os.environ.get(JARS_ENV)
    return ("spark.jars", jars) if jars else ("spark.jars.packages", package)


def local_spark(
    app: str = "schemacli-migrate-validate", *, master: str = "local[1]", kafka: bool = False
) -> SparkSession:
    """A Spark session named ``app`` on ``master`` with spark-avro (and spark-sql-kafka with
    ``kafka``; jars from SCHEMACLI_SPARK_JARS or Maven), for ``validate(...,
    spark=SparkDryRun(...))``, replay and ``topics check --engine spark``."""
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config(*connector_conf(",".join(PACKAGES[: 2 if kafka else 1])))
        .getOrCreate()
    )
