"""`topics census` and `subjects delete -b` refuse bad input before asking anything (exit 2,
the flag named, no traceback), and a broker that does not answer is exit 3 within the bounded
wait, as a valid document in every format, with no secret printed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from schemacli.app import app
from tests.output_documents import parse

NOWHERE = "127.0.0.1:1"  # nothing listens on port 1


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def census(*args: str):
    return run("topics", "census", *args)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--sample", "0"], "--sample"),
        (["--sample", "-3"], "--sample"),
        (["--sample", "many"], "--sample"),
        (["--sample", "nan"], "--sample"),
        (["--since", "yesterday"], "--since 'yesterday' is neither"),
        (["--until", "2026-13-45"], "--until '2026-13-45' is neither"),
        (["--since", "2026-11-02", "--until", "2026-11-01"], "is after --until"),
        (["--jobs", "0"], "--jobs"),
        (["--read-timeout", "inf"], "--read-timeout"),
        (["--connect-timeout", "0"], "--connect-timeout"),
    ],
)
def test_a_bad_flag_is_a_usage_error_naming_it(args, words):
    r = census("orders", "-b", NOWHERE, *args)
    assert r.exit_code == 2, r.output
    assert words in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("topic", ["", "..", "a b", "x" * 250, "orders/v1"])
def test_a_topic_name_kafka_refuses_is_a_usage_error(topic):
    r = census(topic, "-b", NOWHERE)
    assert r.exit_code == 2, r.output
    assert "TOPIC" in r.output and "Traceback" not in r.output


def test_bootstrap_servers_carrying_credentials_are_refused_unprinted():
    r = census("orders", "-b", "user:s3cret@broker:9092")
    assert r.exit_code == 2
    assert "must not carry credentials" in r.output and "s3cret" not in r.output


def test_a_census_needs_bootstrap_servers():
    r = census("orders")
    assert r.exit_code == 2 and "--bootstrap" in r.output


@pytest.mark.parametrize("kind", ["missing", "directory", "binary", "refused"])
def test_a_bad_kafka_properties_file_is_an_input_error_naming_it(tmp_path, kind):
    props = tmp_path / "kafka.properties"
    if kind == "directory":
        props.mkdir()
    elif kind == "binary":
        props.write_bytes(b"\xff\xfe\x00security.protocol=SSL\n")
    elif kind == "refused":
        props.write_text("security.protocol=SASL_SSL\nlibrdkafka.no.such.setting=1\n")
    r = census("orders", "-b", NOWHERE, "--kafka-properties", str(props))
    assert r.exit_code == 2, r.output
    assert str(props) in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "github", "sarif", "gitlab"])
def test_a_broker_that_does_not_answer_is_exit_3_as_a_document_of_the_format(tmp_path, fmt):
    props = tmp_path / "kafka.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="census" password="pa55-w0rd";\n'
    )
    r = census("orders", "-b", NOWHERE, "--connect-timeout", "1", "--kafka-properties",
               str(props), "-o", fmt)  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "cannot read from Kafka at 127.0.0.1:1" in r.stderr
    assert "pa55-w0rd" not in r.output and "Traceback" not in r.output
    if fmt != "text":
        parse(fmt, r.stdout)


def test_delete_with_topic_but_no_bootstrap_is_a_usage_error():
    r = run("subjects", "delete", "orders-value", "--version", "1", "--yes", "--topic", "orders",
            "--registry", "http://127.0.0.1:1")  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "give --bootstrap too" in r.output


def test_delete_of_a_subject_without_a_topic_name_needs_topic():
    r = run("subjects", "delete", "com.acme.Ride", "--version", "1", "--yes", "-b", NOWHERE,
            "--registry", "http://127.0.0.1:1")  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "--topic" in r.output and "Traceback" not in r.output
