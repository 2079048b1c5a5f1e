"""Spark for the converter: the version it is built against, the connector packages the job
needs (``--packages`` for ``migrate deploy``), and the local session that ``migrate validate
--spark`` and ``migrate replay`` run in.

pyspark is imported inside :func:`local_spark`: this module is cheap to import.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_VERSION = "4.0.1"
PACKAGES = (
    f"org.apache.spark:spark-avro_2.13:{SPARK_VERSION}",
    f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_VERSION}",
)


def local_spark(
    app: str = "schemacli-migrate-validate", *, master: str = "local[1]", kafka: bool = False
) -> SparkSession:
    """A Spark session named ``app`` on ``master`` with spark-avro (and spark-sql-kafka with
    ``kafka``; jars from SCHEMACLI_SPARK_JARS or Maven), for ``validate(...,
    spark=SparkDryRun(...))``, replay and ``topics check --engine spark``."""
    from pyspark.sql import SparkSession

    jars = os.environ.get("SCHEMACLI_SPARK_JARS")
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if jars:
        builder = builder.config("spark.jars", jars)
    else:
        builder = builder.config("spark.jars.packages", ",".join(PACKAGES[: 2 if kafka else 1]))
    return builder.getOrCreate()
