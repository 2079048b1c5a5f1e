"""The --kafka-properties file as librdkafka gets its share: refused settings are input errors
naming the file's line, before any Spark or broker is involved."""

from __future__ import annotations

from pathlib import Path

import pytest

from converters.kafka.settings import librdkafka_refuses, load
from schemacli.errors import ExitCode, InputError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kafka.properties"
    path.write_text(text)
    return path


def test_a_file_both_clients_accept_loads_with_java_names_kept_for_spark(tmp_path: Path):
    path = write(
        tmp_path,
        "# the converter's credentials\n"
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="conv" password="pw";\n'
        "max.poll.records=5000\n",
    )
    props = load(path)
    assert props["kafka.max.poll.records"] == "5000"  # Spark's alone, never shown to librdkafka
    assert props["kafka.security.protocol"] == "SASL_PLAINTEXT"


def test_an_unknown_name_on_a_librdkafka_line_is_an_input_error_at_its_line(tmp_path: Path):
    path = write(tmp_path, "security.protocol=PLAINTEXT\n\nlibrdkafka.fetch.wait.ms=5\n")
    with pytest.raises(InputError) as caught:
        load(path)
    err = caught.value
    assert err.exit_code == ExitCode.INPUT_ERROR
    assert (err.location.source, err.location.line) == (str(path), 3)
    assert '"fetch.wait.ms"' in err.message and err.hint


def test_a_value_librdkafka_refuses_names_the_line_that_set_it(tmp_path: Path):
    path = write(tmp_path, "client.id=conv\nsecurity.protocol=SASL_TLS\n")
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.location.line == 2
    assert "security.protocol" in caught.value.message


def test_a_librdkafka_line_wins_over_the_shared_one_and_is_the_line_named(tmp_path: Path):
    path = write(tmp_path, "socket.timeout.ms=30000\nlibrdkafka.socket.timeout.ms=soon\n")
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.location.line == 2


def test_a_missing_ca_file_is_refused_here_but_left_to_a_driver_on_another_machine(
    tmp_path: Path,
):
    props = {"kafka.security.protocol": "SSL", "kafka.ssl.ca.location": "/nonexistent/ca.pem"}
    refused = librdkafka_refuses(props)
    assert refused is not None and refused[1] == "ssl.ca.location"
    assert librdkafka_refuses(props, files=False) is None


def test_no_file_is_no_settings():
    assert load(None) == {}


def test_every_client_gets_bootstrap_its_role_the_silent_logger_and_the_file_winning_last():
    from converters.kafka.log import KAFKA_LOGGER
    from converters.kafka.settings import client_config

    role = {"group.id": "g", "isolation.level": "read_committed"}
    conf = client_config("b:9092", {"isolation.level": "read_uncommitted"}, role)
    assert conf == {
        "bootstrap.servers": "b:9092",
        "group.id": "g",
        "isolation.level": "read_uncommitted",  # the properties file's word is the last
        "logger": KAFKA_LOGGER,
    }
    assert "logger" not in client_config("b:9092", {}, logger=False)  # the job's driver
    assert "bootstrap.servers" not in client_config(None, {"client.id": "c"})
