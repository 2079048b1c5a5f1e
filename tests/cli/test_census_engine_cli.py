"""`topics census --engine`: a bad value is a usage error, the JVM or Spark road that cannot run
here is an input error naming what is missing (exit 2), a broker that does not answer is exit 3
on the JVM road too, with no secret printed; --master (of census and check) goes with --engine
spark only, and a standalone master that does not answer is exit 3 before Kafka is asked."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from converters.census import jvmscan
from schemacli.app import app
from tests.output_documents import parse

FORMATS = ["text", "json", "junit", "github", "sarif", "gitlab"]

NOWHERE = "127.0.0.1:1"  # nothing listens on port 1


def census(*args: str):
    return CliRunner().invoke(app, ["topics", "census", "orders", "-b", NOWHERE, *args])


@pytest.mark.parametrize("value", ["", "java", "JVM", "flink", "auto,jvm"])
def test_an_engine_we_do_not_have_is_a_usage_error(value):
    r = census("--engine", value)
    assert r.exit_code == 2, r.output
    assert "--engine" in r.output and "Traceback" not in r.output


def test_engine_needs_a_value():
    r = census("--engine")
    assert r.exit_code == 2 and "--engine" in r.output


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_jvm_engine_without_java_is_an_input_error_saying_so(monkeypatch, fmt):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    r = census("--engine", "jvm", "-o", fmt)
    assert r.exit_code == 2, r.output
    assert "needs `java`" in r.output and "--engine python" in r.output
    assert "Traceback" not in r.output
    if fmt != "text":
        parse(fmt, r.stdout)  # one valid document of the format, even for the error


def test_the_jvm_engine_without_the_kafka_client_jars_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setattr(jvmscan, "jar_dirs", lambda: [tmp_path / "none", tmp_path])
    r = census("--engine", "jvm")
    assert r.exit_code == 2, r.output
    assert "Kafka client jars" in r.output and str(tmp_path) in r.output
    assert "mvn -f" in r.output and "Traceback" not in r.output


def test_the_jvm_engine_without_its_jar_is_an_input_error(monkeypatch, tmp_path):
    monkeypatch.setattr(jvmscan, "JAR", tmp_path / "gone.jar")
    r = census("--engine", "jvm")
    assert r.exit_code == 2, r.output
    assert "gone.jar" in r.output and "Traceback" not in r.output


def test_auto_without_java_reads_with_python(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    from converters.census.scan import engine_of

    assert engine_of("auto") == "python"
    assert engine_of("python") == "python"


@pytest.fixture
def jvm_road() -> None:
    """The JVM road can run: java, our jar and the Kafka client jars (resolved from Maven Central
    into .cache/jars/census, as scripts/ci-setup does); a failure, never a skip, when not."""
    from tests.stack.kafka import census_jars

    census_jars()
    assert jvmscan.available(), "the JVM road cannot run: java, the jar or kafka-clients missing"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_broker_that_does_not_answer_is_exit_3_on_the_jvm_road(jvm_road, tmp_path, fmt):
    props = tmp_path / "kafka.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="census" password="pa55-w0rd";\n'
    )
    r = census("--engine", "jvm", "--connect-timeout", "1", "--kafka-properties", str(props),
               "-o", fmt)  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "cannot read from Kafka at 127.0.0.1:1" in r.stderr
    assert "pa55-w0rd" not in r.output and "Traceback" not in r.output
    if fmt != "text":
        parse(fmt, r.stdout)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_spark_engine_without_pyspark_is_an_input_error_saying_so(monkeypatch, fmt):
    from converters.census import sparkscan

    monkeypatch.setattr(sparkscan, "available", lambda: False)
    r = census("--engine", "spark", "-o", fmt)
    assert r.exit_code == 2, r.output
    assert "needs pyspark" in r.output and "schemacli[spark]" in r.output
    assert "Traceback" not in r.output
    if fmt != "text":
        parse(fmt, r.stdout)


def topics(command: str, *args: str):
    """``topics census`` or ``topics check`` (the check's registry is never asked: every case
    here is refused before it)."""
    more = ["-r", "http://127.0.0.1:1"] if command == "check" else []
    return CliRunner().invoke(app, ["topics", command, "orders", "-b", NOWHERE, *more, *args])


# The Spark master is one option of both commands, under both of its names.
MASTER_CASES = [(c, n) for c in ("census", "check") for n in ("--master", "--spark-master")]


@pytest.mark.parametrize(("command", "name"), MASTER_CASES)
@pytest.mark.parametrize("engine", ["auto", "jvm", "python"])
def test_master_without_the_spark_engine_is_a_usage_error(command, name, engine):
    r = topics(command, "--engine", engine, name, "local[2]")
    assert r.exit_code == 2, r.output
    assert "--master is for --engine spark" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize(("command", "name"), MASTER_CASES)
@pytest.mark.parametrize(
    ("master", "words"),
    [("mars", "is not a Spark master"), ("spark://h", "not HOST:PORT"), ("local[x]", "is not")],
)
def test_a_master_spark_cannot_take_is_a_usage_error_naming_it(command, name, master, words):
    r = topics(command, "--engine", "spark", name, master)
    assert r.exit_code == 2, r.output
    assert "--master" in r.output and words in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_standalone_master_that_does_not_answer_is_exit_3_before_kafka_is_asked(fmt):
    r = census("--engine", "spark", "--master", "spark://127.0.0.1:1", "--connect-timeout", "1",
               "-o", fmt)  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "the Spark master at spark://127.0.0.1:1 does not answer" in r.stderr
    assert "Traceback" not in r.output
    if fmt != "text":
        parse(fmt, r.stdout)
