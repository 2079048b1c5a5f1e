"""Sampling the v2 topic for `migrate validate --sample`: an unreachable broker is one clear
error, without librdkafka's retry log on the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from converters.mapping.reader import load
from converters.mapping.sampling import read_samples
from schemacli.errors import ExitCode, NetworkError
from tests.extras import require

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/mappings/taxi-ride-v2-to-v1.yaml"


def test_an_unreachable_broker_is_a_network_error_with_a_hint_and_no_client_log(capfd):
    require("confluent_kafka", "kafka")
    with pytest.raises(NetworkError) as caught:
        read_samples("127.0.0.1:1", load(EXAMPLE), None, 5, timeout=1.0)
    err = caught.value
    assert err.exit_code == ExitCode.REGISTRY_ERROR
    assert "127.0.0.1:1" in err.message and "--bootstrap" in (err.hint or "")
    assert "rdkafka" not in capfd.readouterr().err
