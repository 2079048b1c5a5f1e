"""A --kafka-properties file librdkafka refuses stops deploy before spark-submit: exit 2, the
file and line named, no traceback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from schemacli.app import app
from tests.extras import require

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"


def test_deploy_refuses_a_properties_file_librdkafka_refuses_naming_its_line(tmp_path):
    require("pyspark", "spark")  # the dry run names pyspark's own spark-submit
    props = tmp_path / "kafka.properties"
    props.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsecurity.protocol=TLS\n")
    r = CliRunner().invoke(
        app,
        [
            "migrate", "deploy", str(EXAMPLE), "-b", "localhost:9092", "--registry",
            "http://localhost:8081", "--state-dir", str(tmp_path / "s"), "--kafka-properties",
            str(props), "--dry-run",
        ],
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    assert f"{props}:3" in r.output and "security.protocol" in r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "s").exists()  # nothing written for a deploy that never started
