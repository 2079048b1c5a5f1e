"""Cheap, offline look at which stack components can start here (for the pytest header).

It does not start anything: it checks that the tools and cached files each launcher needs are
present, or that the tool to fetch them is.
"""

from __future__ import annotations

import importlib.util
import shutil

from . import kafka, registry, spark
from .browser import probe_browser
from .common import ComponentUnavailable, Readiness, java

REGISTRY_IMPLS = ("apicurio", "axonops")


def _cached_or_mvn(resolved: bool, what: str) -> Readiness:
    if resolved:
        return Readiness(True, f"{what} cached")
    if shutil.which("mvn"):
        return Readiness(True, f"{what} will be resolved with mvn on first use")
    return Readiness(False, f"{what} not cached and `mvn` not on PATH")


def probe(registry_impl: str) -> dict[str, Readiness]:
    """One Readiness per component: spark, kafka, registry (the selected implementation)."""
    try:
        java()
        no_jvm = None
    except ComponentUnavailable as exc:
        no_jvm = Readiness(False, str(exc))

    states: dict[str, Readiness] = {}
    if importlib.util.find_spec("pyspark") is None:
        states["spark"] = Readiness(False, "pyspark not installed (pip install pyspark==4.0.1)")
    else:
        states["spark"] = no_jvm or _cached_or_mvn(
            spark.SPARK_JARS.joinpath(".resolved").is_file(), "spark-avro + spark-sql-kafka jars"
        )
    if importlib.util.find_spec("confluent_kafka") is None:
        states["kafka"] = Readiness(
            False, "confluent-kafka not installed (needed for health checks)"
        )
    else:
        states["kafka"] = no_jvm or _cached_or_mvn(
            kafka.KAFKA_JARS.joinpath(".resolved").is_file(), f"Kafka {kafka.KAFKA_VERSION} jars"
        )
    if registry_impl == "apicurio":
        states["registry"] = no_jvm or _cached_or_mvn(
            registry.apicurio_resolved(), f"Apicurio Registry {registry.APICURIO_VERSION}"
        )
    else:
        states["registry"] = registry.probe_axonops()
    states["browser"] = probe_browser()
    return states
