"""Cheap, offline look at which stack components can start here (for the pytest header).

It does not start anything: it checks that the tools and cached files each launcher needs are
present, or that the tool to fetch them is.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass

from .common import ComponentUnavailable, java

REGISTRY_IMPLS = ("apicurio", "axonops")


@dataclass(frozen=True)
class Readiness:
    ready: bool
    detail: str


def _cached_or_mvn(resolved: bool, what: str) -> Readiness:
    if resolved:
        return Readiness(True, f"{what} cached")
    if shutil.which("mvn"):
        return Readiness(True, f"{what} will be resolved with mvn on first use")
    return Readiness(False, f"{what} not cached and `mvn` not on PATH")


def probe(registry_impl: str) -> dict[str, Readiness]:
    """One Readiness per component (spark for now; kafka and registry follow)."""
    from . import spark

    try:
        java()
    except ComponentUnavailable as exc:
        return {"spark": Readiness(False, str(exc))}
    if importlib.util.find_spec("pyspark") is None:
        return {"spark": Readiness(False, "pyspark not installed (pip install pyspark==4.0.1)")}
    return {
        "spark": _cached_or_mvn(
            spark.SPARK_JARS.joinpath(".resolved").is_file(), "spark-avro + spark-sql-kafka jars"
        )
    }
