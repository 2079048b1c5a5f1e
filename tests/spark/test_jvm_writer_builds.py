"""The exactly-once writer's Java sources compile against the Spark and Kafka we pin, into the
classes the shipped jar holds (the jar's digest check is tests/unit/test_jvm_jar.py)."""

from __future__ import annotations

import shutil
import zipfile

import pytest

from converters.pipeline import jvmjar


def test_the_writer_sources_compile_against_pinned_spark_and_kafka_into_the_shipped_classes(
    tmp_path,
):
    from tests.stack.spark import _pyspark_jars_dir, spark_jars

    if shutil.which("javac") is None:
        pytest.fail("javac not found: the writer's sources need a JDK 17+ to compile")
    classpath = sorted(_pyspark_jars_dir().glob("*.jar")) + [
        j for j in spark_jars() if j.name.startswith("kafka-clients-")
    ]
    built = jvmjar.build(classpath, out=tmp_path / "writer.jar")
    assert jvmjar.jar_digest(built) == jvmjar.source_digest()
    with zipfile.ZipFile(built) as new, zipfile.ZipFile(jvmjar.JAR) as shipped:
        assert sorted(new.namelist()) == sorted(shipped.namelist())
