"""The exactly-once writer's jar (pipeline/jvm) is the one its sources build, and ships."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from converters import jvmbuild
from converters.pipeline import jvmjar

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_jar_was_built_from_the_sources_in_the_tree():
    # a change to pipeline/jvm/src needs scripts/build-jvm, and the new jar committed with it
    assert jvmjar.jar_digest() == jvmjar.source_digest(), "run scripts/build-jvm and commit the jar"


def test_the_jar_holds_the_writer_class_for_java_17():
    with zipfile.ZipFile(jvmjar.JAR) as z:
        entry = jvmjar.WRITER_CLASS.replace(".", "/") + ".class"
        head = z.read(entry)[:8]
    assert head[:4] == b"\xca\xfe\xba\xbe"
    assert int.from_bytes(head[6:8], "big") == 61  # class file 61: runs on the JVMs Spark 4 needs


def test_a_jar_without_the_manifest_digest_is_not_taken_for_a_build(tmp_path):
    other = tmp_path / "other.jar"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
    assert jvmjar.jar_digest(other) is None
    assert jvmjar.jar_digest(tmp_path / "missing.jar") is None


def test_a_change_to_the_sources_a_part_is_compiled_with_changes_its_digest(tmp_path):
    # topics check's jar is compiled against the census's Workers: a change there must ask
    # for the quality jar to be built again too, not only the census's
    own, needed = tmp_path / "own", tmp_path / "needed"
    for tree in (own, needed):
        (tree / "p").mkdir(parents=True)
    (own / "p" / "Scan.java").write_text("class Scan {}")
    (needed / "p" / "Workers.java").write_text("class Workers {}")
    before = jvmbuild.source_digest(own, [needed])
    assert before != jvmbuild.source_digest(own)
    (needed / "p" / "Workers.java").write_text("class Workers { int threads; }")
    assert jvmbuild.source_digest(own, [needed]) != before


@pytest.mark.slow
def test_the_wheel_ships_the_jar(tmp_path):
    # built from a copy (a build writes build/ and *.egg-info beside the sources), isolated like
    # any user's pip install
    src = tmp_path / "src"
    for name in ("converters", "schemacli", "spark_avro"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("schemacli-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "converters/pipeline/jvm/schemacli-converters.jar" in names
    # the census's JVM scan and the pom naming its Kafka client jars (docs/census.md#engines)
    assert "converters/census/jvm/schemacli-census.jar" in names
    assert "converters/census/jvm/pom.xml" in names
    # topics check's scan and the pom naming its run-time jars (docs/quality.md#engines)
    assert "converters/quality/jvm/schemacli-quality.jar" in names
    assert "converters/quality/jvm/pom.xml" in names
    # installed, topics check's road finds its jar and the census's (Workers) beside their
    # modules, as in a checkout
    site = tmp_path / "site"
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         str(wheel)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    probe = (
        "from converters.quality import jvmscan\n"
        "from converters import jvmbuild\n"
        "for jar in jvmscan.OUR_JARS:\n"
        "    print(jar, jvmbuild.jar_digest(jar) is not None)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.split() == [
        str(site / "converters/quality/jvm/schemacli-quality.jar"),
        "True",
        str(site / "converters/census/jvm/schemacli-census.jar"),
        "True",
    ]
